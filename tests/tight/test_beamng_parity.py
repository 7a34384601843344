"""BeamNG parity: controllers wired like BeamNG's real ones drive a vcosim vehicle unchanged.

Each peer (tests/helpers/beamng_peers.py) runs a PI cruise to 20 m/s for 8000 steps of 5 ms
(40 s simulated) over real UDP on loopback, in lock-step, at window 1 and window 2. Each
answers from another port than the one it listens on, as BeamNG's S-functions do: the
simulator's default (any port of the controller's host until one is heard) must take it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from helpers.beamng_peers import BeamngLikePeer
from vcosim.sim.pacing import Pacer
from vcosim.sim.simulation import Simulation
from vcosim.tight.endpoint import CouplingConfig, SimulatorEndpoint
from vcosim.vehicle import Vehicle

EXAMPLES = Path(__file__).parents[2] / "examples" / "beamng"
STEPS = 8000  # controller steps of 5 ms
PEERS = {
    "first S-function, Memory on id and controls": dict(ids="previous", memory=True),
    "first S-function, no Memory": dict(ids="direct", memory=False),
    "first S-function, custom one double early": dict(ids="previous", early_custom=True),
    "FMU, own reply counter, gear 0": dict(ids="counter", memory=True),
    "CSV S-function, 2 + 2 signals": dict(ids="direct", id_filter=False, layout="csv"),
}


def run_coupled(
    peer: BeamngLikePeer, window: int, name: str = "", **config: object
) -> tuple[Simulation, dict]:
    """Couple ``peer`` to a lock-step simulation for STEPS controller steps."""
    car = Vehicle(engine_running=True)
    car.set_inputs(automatic=1, gear=1)  # selector in D: pedals are enough
    sim = Simulation(car, Pacer("lockstep", dt=car.dt))
    endpoint = sim.attach(
        "coupling",
        SimulatorEndpoint(
            CouplingConfig(
                listen_port=0,
                controller_port=peer.port,
                ext_time=0.005,
                window=window,
                spin=0.0,
                **config,
            )
        ),
    )
    peer.start(endpoint.address)
    try:
        sim.run(STEPS * 0.005)
    finally:
        peer.stop()
        endpoint.close()
    report = endpoint.report()
    figures = {
        "answered": peer.stats.replies,
        "speed": sim.vehicle.signal("groundspeed"),
        **{
            k: report[k]
            for k in (
                "sent",
                "applied",
                "stale",
                "duplicate",
                "startup_unapplied",
                "timeouts",
                "malformed",
                "rejected_peers",
                "implausible_id",
            )
        },
    }
    if os.environ.get("VCOSIM_PARITY_FIGURES"):  # the figures for a closing note
        with open(os.environ["VCOSIM_PARITY_FIGURES"], "a") as out:
            out.write(json.dumps({"peer": name, "window": window, **figures}) + "\n")
    return sim, figures


@pytest.mark.parametrize("window", [1, 2])
@pytest.mark.parametrize("name", list(PEERS))
def test_peer_holds_the_cruise_speed_without_timeouts(name, window):
    options = dict(PEERS[name])
    layout = options.get("layout", "fixed")
    config = {"interface": EXAMPLES / "throttle.csv"} if layout == "csv" else {}
    peer = BeamngLikePeer(**options)
    sim, figures = run_coupled(peer, window, name, **config)
    assert figures["timeouts"] == 0, figures
    assert figures["sent"] == STEPS
    assert figures["answered"] >= STEPS - window - 1  # every message answered but the last
    assert figures["applied"] >= STEPS - window - 3, figures
    assert abs(figures["speed"] - 20.0) < 0.5, figures
    assert sim.vehicle.inputs["gear"] == 1.0  # slot 4 (0 from these peers) is ignored
    assert figures["malformed"] == figures["rejected_peers"] == figures["implausible_id"] == 0
    if options.get("ids") == "previous":
        assert figures["startup_unapplied"] == 2  # the first two replies both carry id 0
    else:
        assert figures["startup_unapplied"] <= 1  # id 0 back for message 0, or none


@pytest.mark.parametrize("window", [1, 2])
def test_a_peer_that_stalls_3_s_recovers_within_one_timeout(window):
    peer = BeamngLikePeer(ids="previous", memory=True, stall_at=3000, stall=3.0)
    _, figures = run_coupled(peer, window, "first S-function, stalls 3 s")
    assert figures["timeouts"] == 1, figures
    assert figures["rejected_peers"] == figures["implausible_id"] == 0, figures
    assert figures["applied"] >= STEPS - 10, figures
    assert abs(figures["speed"] - 20.0) < 0.5, figures


def test_the_garbage_double_of_the_early_custom_peer_is_harmless():
    received: list[float] = []
    peer = BeamngLikePeer(ids="previous", early_custom=True)
    car = Vehicle(engine_running=True)
    car.set_inputs(automatic=1, gear=1)
    sim = Simulation(car, Pacer("lockstep", dt=car.dt))
    endpoint = sim.attach(
        "coupling",
        SimulatorEndpoint(
            CouplingConfig(listen_port=0, controller_port=peer.port, spin=0.0),
            on_custom=lambda s, custom: received.append(float(custom[-1])),
        ),
    )
    peer.start(endpoint.address)
    try:
        sim.run(2.0)
    finally:
        peer.stop()
        endpoint.close()
    assert len(received) >= 390 and len(set(received)) > 300  # the garbage reached the hook
    assert sim.vehicle.inputs["drive_mode"] == "pedals"  # custom[0] = 0 over the mode slot
    assert sim.vehicle.signal("groundspeed") > 5.0
