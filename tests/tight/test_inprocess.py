"""The in-process coupling against the UDP one: same schedule, same values."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from helpers.peers import read_log
from vcosim.analysis import load_run
from vcosim.analysis.cases import CASES, evaluate
from vcosim.controllers import example
from vcosim.sim.face import Face
from vcosim.sim.pacing import Pacer
from vcosim.sim.simulation import Simulation
from vcosim.tight import ControllerBlock
from vcosim.tight.debuglog import RECEIVE_LOG, SEND_LOG
from vcosim.tight.endpoint import CouplingConfig, CouplingReport, SimulatorEndpoint
from vcosim.tight.inprocess import couple_in_process
from vcosim.vehicle import Vehicle


def driving_sim(pacing: str = "lockstep") -> Simulation:
    car = Vehicle(engine_running=True)
    car.step(automatic=1, gear=1)
    return Simulation(car, Pacer(pacing, dt=car.dt))


@pytest.mark.parametrize("memory", [False, True])
@pytest.mark.parametrize("ext_time", [0.0005, 0.005])
def test_in_process_equals_udp_lockstep_value_for_value(tmp_path, memory, ext_time):
    seconds = 4.0
    # UDP: the controller block in a thread, blocking waits on both sides (one GIL).
    block = ControllerBlock(
        example("cruise", speed=12.0),
        listen_port=0,
        sim_port=0,
        spin=0.0,
        step=ext_time,
        memory=memory,
    )
    udp = driving_sim()
    udp.attach(
        "coupling",
        SimulatorEndpoint(
            CouplingConfig(
                listen_port=0,
                controller_port=block.address[1],
                ext_time=ext_time,
                spin=0.0,
                debug_log=tmp_path / "udp",
            )
        ),
    )
    thread = threading.Thread(target=block.run, daemon=True)
    thread.start()
    udp_report = udp.run(seconds)
    block.stop()
    thread.join(timeout=5)
    # In process: the same controller, no sockets.
    local = driving_sim()
    couple_in_process(
        local,
        example("cruise", speed=12.0),
        CouplingConfig(ext_time=ext_time, debug_log=tmp_path / "local"),
        memory=memory,
    )
    local_report = local.run(seconds)

    for log in (SEND_LOG, RECEIVE_LOG):
        a, b = read_log(tmp_path / "udp" / log), read_log(tmp_path / "local" / log)
        assert a.shape == b.shape and a.shape[0] > 500
        np.testing.assert_array_equal(a[:, 1:], b[:, 1:])  # all but the wall-clock time
    np.testing.assert_array_equal(udp.vehicle.outputs, local.vehicle.outputs)
    assert udp_report.faces["coupling"]["applied"] == local_report.faces["coupling"]["applied"]
    assert local.vehicle.signal("groundspeed") > 4.0  # the controller really drove


def test_simulated_computation_time_delays_replies_in_fast_pacing():
    arrivals: list[int] = []
    sim = driving_sim("fast")
    endpoint = couple_in_process(
        sim, example("cruise", speed=5.0), CouplingConfig(ext_time=0.005), compute_time=0.0012
    )
    endpoint.on_custom = lambda s, custom: arrivals.append(s.vehicle.step_index)
    first = sim.vehicle.step_index
    sim.run(0.5)
    # Sends every 10 steps from the first; each reply lands 3 steps later (1.2 ms -> 3 steps);
    # the reply to message 0 carries id 0 and is never applied (as in BeamNG).
    assert [a - first for a in arrivals[:3]] == [13, 23, 33]
    assert sim.faces["coupling"].report()["applied"] == 99


@pytest.mark.parametrize("case", CASES, ids=lambda case: f"case{case.number}")
def test_the_five_cases_schedule_without_wall_clock_timing(tmp_path, case):
    """The scheduling side of the five cases, independent of how busy the machine is: the
    controller's computation time is simulated in whole steps, so skips and where replies
    land are exact (the real-time factor needs real time: test_timing.py, vcosim cases)."""
    sim = driving_sim("fast")
    couple_in_process(
        sim,
        lambda msg: None,
        CouplingConfig(ext_time=case.ext_time, ping_time=0.00001, debug_log=tmp_path),
        compute_time=case.compute,
    )
    sim.run(0.5)
    checks = [c for c in evaluate(case, load_run(tmp_path).metrics) if c.name != "real-time factor"]
    assert len(checks) == 2 and all(c.passed for c in checks), checks


def test_applying_a_reply_after_the_message_it_lets_go_changes_nothing(tmp_path):
    """Without debug logs or a bank H hook the lock-step endpoint sends first, then applies."""
    runs = []
    for debug_log in (tmp_path / "in-order", None):  # debug logs keep apply-then-send
        sim = driving_sim()
        endpoint = couple_in_process(
            sim, example("cruise", speed=12.0), CouplingConfig(ext_time=0.0005, debug_log=debug_log)
        )
        sim.run(2.0)
        assert endpoint._apply_first is (debug_log is not None)
        assert 0.0 <= sim.live["coupling_latency_ms"] < 1e3
        runs.append((sim.vehicle.state.copy(), endpoint.report()))
    (first, first_report), (later, later_report) = runs
    np.testing.assert_array_equal(first, later)
    assert first_report.applied == later_report.applied > 3000
    assert later_report.clamped == first_report.clamped


class StepWatch(Face):
    """A face with a step hook and no ``quiet_steps``: the host steps one by one."""

    def after_step(self, sim: Simulation) -> None:
        pass


def stepped_in_chunks(one_by_one: bool) -> tuple[np.ndarray, CouplingReport, list[int]]:
    """2 s of lock-step cruise, a message every 10 steps: the state, the report, and the
    sizes of the host's ``run(k)`` calls (with a ``StepWatch``: none, every step alone)."""
    sim = driving_sim()
    endpoint = couple_in_process(sim, example("cruise", speed=12.0), CouplingConfig(ext_time=0.005))
    if one_by_one:
        sim.attach("watch", StepWatch())
    chunks: list[int] = []
    run = sim.vehicle.run
    sim.vehicle.run = lambda steps, **kw: (chunks.append(steps), run(steps, **kw))[1]  # type: ignore[method-assign]
    sim.run(2.0)
    return sim.vehicle.state.copy(), endpoint.report(), chunks


def test_a_lockstep_coupling_steps_between_its_messages_in_one_call():
    (quiet, quiet_report, chunks), (stepped, stepped_report, none) = map(
        stepped_in_chunks, (False, True)
    )
    # (a frame's end cuts a run short: the pacer's frames need not be whole messages)
    assert max(chunks) == 10 and chunks.count(10) > 300 and none == []
    np.testing.assert_array_equal(quiet, stepped)
    assert quiet_report.applied == stepped_report.applied > 350
    assert quiet_report.sent == stepped_report.sent
