"""Every wait of the coupling expires on time whatever junk arrives (issue 45, B).

The reproduction: 100 refused datagrams a second from a local port. The simulator's compiled
wait went on after each one without reading the clock, so its deadline never came: no
start-up re-send (a controller started after the simulator got nothing), no timeout. Over
real UDP on loopback; the tests wait on events (messages arriving, a run ending), never on
a fixed sleep, with generous guards only against a hang.
"""

from __future__ import annotations

import threading

import numpy as np

from helpers.junk import Junk
from helpers.peers import coupled, nan_reply
from vcosim.sim.pacing import Pacer
from vcosim.sim.simulation import Simulation
from vcosim.tight import ControllerBlock, Controls
from vcosim.tight.endpoint import CouplingConfig, SimulatorEndpoint
from vcosim.vehicle import Vehicle

HANG = 60.0  # s: a guard against a hang, not a measure of speed


def run_in_thread(sim: Simulation, seconds: float) -> threading.Thread:
    thread = threading.Thread(target=sim.run, args=(seconds,), daemon=True)
    thread.start()
    return thread


def test_the_startup_resend_goes_out_while_junk_arrives(peers) -> None:
    peer = peers()
    peer.answering.clear()  # the controller is not there yet: the run holds and re-sends
    sim, endpoint = coupled(peer, "lockstep", send_skips=0, spin=0.0, timeout=0.2)
    try:
        with Junk(endpoint.address) as junk:
            thread = run_in_thread(sim, 0.01)
            assert peer.wait_for(4, timeout=HANG), f"{len(peer.received)} message(s) arrived"
            assert junk.sent > 0
            peer.answering.set()  # the controller comes: the next re-send is answered
            thread.join(HANG)
        assert not thread.is_alive()
    finally:
        sim.stop()
        endpoint.close()
    report = endpoint.report()
    assert report["startup_resends"] >= 3 and report["applied"] > 0, report
    assert report["malformed"] > 0 and report["timeouts"] == 0, report


def test_a_timeout_comes_while_junk_arrives(peers) -> None:
    answered = [0]

    def first_ten(message: np.ndarray) -> np.ndarray | None:
        answered[0] += 1
        return nan_reply(message) if answered[0] <= 10 else None

    peer = peers(first_ten)
    sim, endpoint = coupled(peer, "lockstep", send_skips=0, spin=0.0, timeout=0.05)
    try:
        with Junk(endpoint.address):
            thread = run_in_thread(sim, 0.02)  # 40 steps: the last 30 without a controller
            thread.join(HANG)
        assert not thread.is_alive(), "the run never ended: the timeout did not come"
    finally:
        sim.stop()
        endpoint.close()
    report = endpoint.report()
    assert report["timeouts"] >= 10 and report["applied"] >= 9, report


def test_a_controller_block_ends_while_junk_arrives() -> None:
    """The block's idle exit comes though junk reaches it after its simulator has gone."""
    block = ControllerBlock(
        lambda msg: Controls(throttle=0.1), listen_port=0, sim_port=0, idle_exit=0.3
    )
    car = Vehicle(engine_running=True)
    sim = Simulation(car, Pacer("lockstep", dt=car.dt))
    endpoint = sim.attach(
        "coupling",
        SimulatorEndpoint(CouplingConfig(listen_port=0, controller_port=block.address[1])),
    )
    reports = []
    thread = threading.Thread(target=lambda: reports.append(block.run()), daemon=True)
    with Junk(block.address):
        thread.start()
        sim.run(0.05)
        endpoint.close()
        thread.join(HANG)
    assert not thread.is_alive()
    (report,) = reports
    assert report.simulator_ended and report.answered == 10, report
    assert report.malformed + report.rejected_peers > 0, report
