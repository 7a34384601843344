"""A stream of fuzzed datagrams from ever new ports never takes the coupling (issue 29, item 5).

The reproductions of tests/tight/test_stray_peers.py send one stray; here a fuzzer sends
150 while the peers are coupled (after they have met: before it, a stray with a
plausible id from the peer's own host may win the pin, as documented): random ids from 0 to
1e300 and beyond (NaN, infinities, negatives), random lengths, every value a random double,
the steering +1. Each side's real peer must keep control, every message answered.
"""

from __future__ import annotations

import random
import socket
import threading

import numpy as np

from helpers.peers import RawPeer, coupled
from tight.test_stray_peers import STRAY_AT, straight_ahead
from vcosim.sim.face import Face
from vcosim.sim.pacing import Pacer
from vcosim.sim.simulation import Simulation
from vcosim.tight import ControllerBlock, Controls
from vcosim.tight.endpoint import CouplingConfig, SimulatorEndpoint
from vcosim.tight.protocol import CONTROLLER_TO_SIM, SIM_TO_CONTROLLER
from vcosim.vehicle import Vehicle

IDS = [0.0, 1.0, 2.0, 1e6, 2.0**53, 1e15, 1e300, -1.0, np.nan, np.inf, -np.inf, 5e-324]


def fuzzed(rng: random.Random, length: int) -> bytes:
    """One datagram: about ``length`` doubles, a hostile id first, the steering +1."""
    values = np.array([rng.uniform(-1e9, 1e9) for _ in range(length)])
    values[0] = rng.choice(IDS) if rng.random() < 0.7 else rng.uniform(0, 1e12)
    if length > 3:
        values[3] = 1.0
    data = values.astype("<f8").tobytes()
    cut = rng.choice([len(data), len(data), len(data) - rng.randint(1, 7), 8, 1])
    return data[: max(cut, 1)]


def spray(to: tuple[str, int], length: int, count: int, seed: int) -> None:
    """``count`` fuzzed datagrams to ``to``, each from a fresh port of 127.0.0.1."""
    rng = random.Random(seed)
    for _ in range(count):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            sock.sendto(fuzzed(rng, rng.choice([length, length, 1, length * 2])), to)


def test_150_fuzzed_replies_do_not_steer_the_car() -> None:
    def reply(message: np.ndarray) -> np.ndarray:
        if message[0] == STRAY_AT:  # coupled: the fuzzer sprays while the peers talk
            spray(endpoint.address, CONTROLLER_TO_SIM, 150, seed=29)
        return straight_ahead(message)

    peer = RawPeer(reply)
    sim, endpoint = coupled(peer, "lockstep", send_skips=0, spin=0.0)
    steered = []

    class Watch(Face):
        def after_step(self, s: Simulation) -> None:
            steered.append(s.vehicle.inputs["steering"])

    sim.attach("watch", Watch())
    try:
        sim.run(0.1)
    finally:
        peer.stop()
        endpoint.close()
    report = endpoint.report()
    assert len(steered) == 200 and max(steered) == 0.0
    assert report["timeouts"] == report["stale"] == 0, report
    assert report["applied"] == 198, report  # every real reply, and no other
    refused = report["rejected_peers"] + report["implausible_id"] + report["malformed"]
    assert refused > 0, report  # (how many: as many as the socket buffer kept)


def test_150_fuzzed_messages_do_not_take_the_controller_block() -> None:
    taken = [0]

    def step(msg) -> Controls:
        taken[0] += 1
        if taken[0] == STRAY_AT:
            spray(block.address, SIM_TO_CONTROLLER, 150, seed=31)
        return Controls(throttle=0.1)

    block = ControllerBlock(step, listen_port=0, sim_port=0, spin=0.0, idle_exit=0.5)
    car = Vehicle(engine_running=True)
    car.set_inputs(automatic=1, gear=1)
    sim = Simulation(car, Pacer("lockstep", dt=car.dt))
    endpoint = sim.attach(
        "coupling",
        SimulatorEndpoint(
            CouplingConfig(listen_port=0, controller_port=block.address[1], spin=0.0)
        ),
    )
    reports = []
    thread = threading.Thread(target=lambda: reports.append(block.run()), daemon=True)
    thread.start()
    sim.run(0.5)
    thread.join(timeout=60)
    endpoint.close()
    assert not thread.is_alive()
    (block_report,) = reports
    coupling = endpoint.report()
    assert block_report.answered == 100 and block_report.resets == 0, block_report
    assert coupling["timeouts"] == 0 and coupling["applied"] == 98, coupling
    refused = block_report.rejected_peers + block_report.implausible_id + block_report.malformed
    assert refused > 0, block_report
