"""The five timing cases of seed 001, SIGTERM with debug logs, lock-step determinism.

The simulator runs as ``vcosim sim`` in its own process (so the controller thread here never
waits for the simulator's GIL); the controller is a raw-socket peer that busy-waits its
"computation time". Thresholds test the mechanism, not the machine.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading

import numpy as np
import pytest

from helpers.forks import vcosim_command
from helpers.peers import RawPeer, coupled, nan_reply, read_log, start_simulator
from vcosim.analysis import load_run
from vcosim.analysis.cases import BUSY, CASES, LoadMeter, cpu_split, evaluate, set_affinity
from vcosim.tight.debuglog import RECEIVE_LOG, SEND_LOG, STEPS_LOG
from vcosim.tight.protocol import SIM_TO_CONTROLLER


@pytest.fixture
def separate_cpus():
    """This thread and the threads it starts (the peer) on one half of the CPUs; yields the
    other half for the simulator. A loopback datagram wakes its receiver on the sender's CPU:
    a peer that then busy-waits would hold the simulator off its CPU."""
    sim_cpus, controller_cpus = cpu_split()
    before = os.sched_getaffinity(0) if controller_cpus else None
    set_affinity(0, controller_cpus)
    yield sim_cpus
    set_affinity(0, before)


ATTEMPTS = 3  # a 1.5 s real-time run can lose its margin to one scheduling hiccup


@pytest.mark.parametrize("case", CASES, ids=lambda case: f"case{case.number}")
def test_the_five_cases_of_seed_001(peers, tmp_path, case, separate_cpus):
    """Each case against the spec's table; retried, since on a shared 2-core machine other
    processes can take the few hundred microseconds of slack a case has (case 4 keeps 6 %
    of T_ext): the mechanism must show in one of the attempts, and every attempt is named
    if none passes."""
    failures, loads = [], []
    for attempt in range(ATTEMPTS):
        folder = tmp_path / f"attempt{attempt}"
        with LoadMeter() as load:
            peer = peers(compute_time=case.compute).start()
            sim = start_simulator(
                peer.port,
                folder,
                "--duration",
                "1.5",
                "--pacing",
                "realtime",
                "--frame-rate",
                "2000",
                "--ext-time",
                str(case.ext_time),
                "--ping-time",
                "0.00001",
            )
            set_affinity(sim.pid, separate_cpus)
            try:
                out, err = sim.communicate(timeout=120)
            except subprocess.TimeoutExpired:  # late real-time runs fall into slow motion
                sim.kill()
                out, err = sim.communicate()
        if sim.returncode == -signal.SIGKILL and load.cpus is not None and load.cpus > BUSY:
            pytest.skip(
                f"case {case.number}: 1.5 s of real time took over 120 s while other "
                f"processes used {load.cpus:.1f} CPUs; real-time cases need an idle machine"
            )
        assert sim.returncode == 0, err
        # observed skips, median landing offset and real-time factor against the spec's
        # table (vcosim.analysis.cases documents the thresholds)
        checks = evaluate(case, load_run(folder).metrics)
        if all(check.passed for check in checks):
            return
        failures.append([c for c in checks if not c.passed])
        loads.append(load.cpus)
        busy = all(cpus is not None and cpus > BUSY for cpus in loads)
        if busy and len(loads) >= 2:
            break  # the machine stays busy: a third attempt would not be judged either
    if busy:
        # Real time cannot be judged while other processes hold the CPUs the case needs;
        # the scheduling itself is checked without wall-clock timing in test_inprocess.py.
        pytest.skip(
            f"case {case.number}: other processes used "
            f"{', '.join(f'{c:.1f}' for c in loads)} CPUs during the attempts; real-time "
            "cases need an idle machine (run `vcosim cases` on one)"
        )
    pytest.fail(
        f"case {case.number} failed {len(loads)} times: {failures} (other processes "
        f"used {loads} CPUs)"
    )


def test_sigterm_leaves_all_three_logs_complete(peers, tmp_path):
    peer = peers().start()
    sim = start_simulator(peer.port, tmp_path, "--pacing", "realtime", "--ext-time", "0.0005")
    assert peer.wait_for(3000, timeout=60), "no coupling"  # 1.5 s at a message a step
    assert sim.poll() is None
    sim.send_signal(signal.SIGTERM)
    out, err = sim.communicate(timeout=30)
    assert sim.returncode == 130, err  # interrupted, with the summary and logs complete
    assert "interrupt" in err
    for name, width in ((SEND_LOG, 1 + SIM_TO_CONTROLLER), (RECEIVE_LOG, 1 + 64), (STEPS_LOG, 1)):
        text = (tmp_path / name).read_text()
        assert text.endswith("\n")
        rows = text.splitlines()[1:]
        assert len(rows) > 1000
        assert {len(row.split(",")) for row in rows} == {width}
    sends = read_log(tmp_path / SEND_LOG)
    assert len(sends) >= len(peer.received) - 1  # nothing sent went unlogged


def test_two_lockstep_runs_give_identical_send_logs(peers, tmp_path):
    def controller(message):
        out = nan_reply(message)
        speed = message[1 + 16]  # groundspeed
        out[1] = min(max(0.6 * (15.0 - speed), 0.0), 1.0)  # throttle
        out[3] = 0.2 * np.sin(message[0] / 200.0)  # steering
        return out

    logs = []
    for run in range(2):
        peer = peers(controller)
        sim, endpoint = coupled(peer, "lockstep", send_skips=4, debug_log=tmp_path / str(run))
        sim.vehicle.step(automatic=1, gear=1)
        sim.run(3.0)
        assert endpoint.report()["applied"] > 1000
        logs.append(read_log(tmp_path / str(run) / SEND_LOG)[:, 1:])  # drop the wall time
    assert logs[0].shape == logs[1].shape and logs[0].shape[0] == 1200
    np.testing.assert_array_equal(logs[0], logs[1])
    assert logs[0][-1, 17] > 3.0  # the car moved (groundspeed), so the runs mean something


def test_without_a_controller_the_run_holds_and_sends_message_0_again(tmp_path):
    peer = RawPeer()
    peer.answering.clear()
    sim, endpoint = coupled(peer, "fast", send_skips=0, timeout=0.05)

    def stop_after_three_resends() -> None:
        peer.wait_for(4, timeout=60)
        sim.stop()  # a hold gives up when its run is asked to stop

    stopper = threading.Thread(target=stop_after_three_resends)
    stopper.start()
    sim.run(0.002)
    stopper.join()
    peer.stop()
    report = endpoint.report()
    assert report["timeouts"] == 0 and report["applied"] == 0
    assert report["sent"] == 1 and report["startup_resends"] >= 3  # message 0, again and again
    assert {int(m[0]) for m in peer.received} == {0}


def test_custom_hooks_from_the_command_line(peers, tmp_path):
    """``vcosim sim --custom-hooks module``: bank H filled, the controller's 50 values seen."""
    (tmp_path / "my_hooks.py").write_text(
        "def fill_custom(sim, bank_h):\n"
        "    bank_h[0] = sim.vehicle.step_index\n"
        "    bank_h[1] = 42.0\n"
        "def on_custom(sim, values):\n"
        "    sim.vehicle.set_inputs(throttle=values[0])\n"
    )

    def reply(message):
        out = nan_reply(message)
        out[14] = 0.25  # the controller's first custom value
        return out

    peer = peers(reply).start()
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    result = subprocess.run(
        [
            *vcosim_command(),
            "sim",
            "--listen-port",
            "0",
            "--controller-port",
            str(peer.port),
            "--pacing",
            "lockstep",
            "--duration",
            "0.5",
            "--custom-hooks",
            "my_hooks",
            "--debug-log",
            str(tmp_path / "logs"),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    sends = read_log(tmp_path / "logs" / SEND_LOG)[:, 1:]  # without the time column
    assert len(sends) == 100 and np.all(sends[:, 62] == 42.0)
    assert np.all(np.diff(sends[:, 61]) == 10)  # the step index, a send every 10 steps
    assert sends[-1, 2] == 0.25  # throttle_input: set by on_custom from the controller's value
