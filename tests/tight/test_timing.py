"""The five timing cases of seed 001, SIGTERM with debug logs, lock-step determinism.

The simulator runs as ``vcosim sim`` in its own process (so the controller thread here never
waits for the simulator's GIL); the controller is a raw-socket peer that busy-waits its
"computation time". Thresholds test the mechanism, not the machine.
"""

from __future__ import annotations

import signal

import numpy as np
import pytest

from helpers.peers import RawPeer, coupled, nan_reply, read_log, start_simulator
from vcosim.tight.debuglog import RECEIVE_LOG, SEND_LOG, STEPS_LOG
from vcosim.tight.protocol import SIM_TO_CONTROLLER

DT = 0.0005


def landing_offsets(log_dir) -> tuple[np.ndarray, np.ndarray, float]:
    """Steps between consecutive sends, steps from each send to its reply, real-time factor."""
    steps = read_log(log_dir / STEPS_LOG)[:, 0]
    sends, receives = read_log(log_dir / SEND_LOG), read_log(log_dir / RECEIVE_LOG)
    send_step = np.searchsorted(steps, sends[:, 0], side="right") - 1
    receive_step = np.searchsorted(steps, receives[:, 0], side="right") - 1
    step_of_id = dict(zip(sends[:, 1].astype(int), send_step, strict=False))
    lands = np.array([r - step_of_id[int(i)] for i, r in zip(receives[:, 1], receive_step,
                                                             strict=True)])
    rtf = (len(steps) - 1) * DT / (steps[-1] - steps[0])
    return np.diff(send_step), lands, rtf


CASES = {
    # case: (T_ext, controller computation time)
    1: (0.0005, 0.0),
    2: (0.005, 0.0),
    3: (0.005, 0.001),
    4: (0.005, 0.0047),
    5: (0.0005, 0.001),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_five_cases_of_seed_001(peers, tmp_path, case):
    ext_time, compute = CASES[case]
    peer = peers(compute_time=compute).start()
    sim = start_simulator(peer.port, tmp_path, "--duration", "1.5", "--pacing", "realtime",
                          "--frame-rate", "2000", "--ext-time", str(ext_time),
                          "--ping-time", "0.00001")
    out, err = sim.communicate(timeout=60)
    assert sim.returncode == 0, err
    between_sends, lands, rtf = landing_offsets(tmp_path)
    skips = 0 if ext_time == 0.0005 else 9
    assert np.median(between_sends) == skips + 1
    median = np.median(lands)
    if case == 1:
        assert median == 1 and rtf > 0.85  # each step blocks for the reply, real time held
    elif case == 2:
        assert median == 1 and rtf > 0.85  # lands in the step right after the send
    elif case == 3:
        assert 2 <= median <= 5 and rtf > 0.85  # a few steps later, in a non-blocking step
    elif case == 4:
        assert median == 10 and rtf > 0.85  # in the next send step's blocking receive
    else:
        assert median == 1 and rtf <= 0.7  # every step waits ~1 ms: slower than real time


def test_sigterm_leaves_all_three_logs_complete(peers, tmp_path):
    peer = peers().start()
    sim = start_simulator(peer.port, tmp_path, "--pacing", "realtime", "--ext-time", "0.0005")
    assert peer.wait_for(3000, timeout=60), "no coupling"  # 1.5 s at a message a step
    assert sim.poll() is None
    sim.send_signal(signal.SIGTERM)
    out, err = sim.communicate(timeout=30)
    assert sim.returncode == 0, err
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


def test_run_without_a_peer_keeps_stepping(tmp_path):
    peer = RawPeer()
    peer.answering.clear()
    sim, endpoint = coupled(peer, "fast", send_skips=0, timeout=0.05)
    report = sim.run(0.01)
    peer.stop()
    assert report.steps == 20
    assert endpoint.report()["timeouts"] == 10  # send, time out and reset, send, ...
