"""A reply's latency has three causes: the simulator's own pacing, the wire (with the machine),
and the controller's computation. Advice (an ``--ext-time``) only for the controller, and only
when the logs show it: even its fastest reply took longer than its step.

Synthetic logs with known timing (skips 9, window 1, direct ids)."""

from __future__ import annotations

import numpy as np
import pytest

from vcosim.analysis.metrics import analyse

DT = 0.0005


def lockstep(turnaround: list[float], own_step: float = 0.00002) -> tuple[np.ndarray, ...]:
    """A lock-step run: the simulator sends, runs 9 steps of ``own_step`` wall time each, then
    waits in the next send step until the reply (``turnaround[k]`` after send k) is there."""
    steps, sends, receives = [], [], []
    t = 0.0
    for k in range(len(turnaround)):
        steps.append(t)  # a send step: it waits for the reply to k − 1, takes it, sends k
        if k:
            t = max(t, sends[-1] + turnaround[k - 1]) + 0.000001
            receives.append(t)
        t += 0.000001
        sends.append(t)
        for _ in range(9):
            t += own_step
            steps.append(t)
        t += own_step
    ids = np.arange(len(turnaround), dtype=float)
    return tuple(np.array(v) for v in (steps, sends, ids, receives, ids[:-1]))


def test_an_instant_controller_on_a_busy_machine_gets_no_ext_time_advice():
    """Nine replies in ten wait 8 ms for the machine; every tenth comes at once: the waits are
    not the controller's computation, so no --ext-time is suggested (it was 8.5 ms)."""
    turnaround = [0.00003 if k % 10 == 0 else 0.008 for k in range(400)]
    m, _ = analyse(*lockstep(turnaround))
    assert m.rtf_connected == pytest.approx(0.69, abs=0.02) and m.waiting_share > 0.9
    assert m.fastest_reply == pytest.approx(0.000201, abs=1e-6)  # the simulator's own 9 steps
    assert m.simulator_ms.median == pytest.approx(0.2, abs=0.01)
    assert not m.controller_slow and m.suggested_ext_time is None
    assert "--ext-time" not in m.verdict and "slower" not in m.verdict
    assert m.verdict.startswith(
        "simulation at 0.69× real time, waiting for replies 97 % of the time, but the "
        "controller answered in as little as 0.201 ms: the waits are the wire's or the "
        "machine's (other processes), not its computation's"
    )


def test_a_controller_that_never_answers_within_its_step_is_told_so():
    m, _ = analyse(*lockstep([0.008] * 400))
    assert m.controller_slow and m.suggested_ext_time == pytest.approx(0.0085)
    assert m.verdict == (
        "controller slower than T_ext: simulation at 0.62× real time, no reply in under "
        "8.001 ms — raise --ext-time to 8.5 ms (--ext-time 0.0085) or speed up the controller"
    )


def test_replies_waiting_out_a_frame_pause_are_the_simulators_pacing():
    """Real-time frames of 40 steps (20 ms), run in a burst of 10 µs steps, then a pause: the
    controller answers within a step, but the reply to each frame's last message waits for
    the next frame. Its ~19.6 ms latency (the p90) is the simulator's pacing, not the
    controller's: nothing to change (it suggested --ext-time 20 ms)."""
    frames, per_frame = 100, 40
    k = np.arange(frames * per_frame)
    steps = (k // per_frame) * 0.02 + (k % per_frame) * 0.00001
    send_steps = k[k % 10 == 9]
    send_time = steps[send_steps] + 0.000001
    taken = send_steps[:-1] + 1  # the poll of the next step, in the burst or the next frame
    ids = np.arange(send_steps.size, dtype=float)
    m, _ = analyse(steps, send_time, ids, steps[taken] + 0.000002, ids[:-1])
    assert m.latency_ms.p90 == pytest.approx(19.611, abs=0.001)
    assert m.simulator_ms.p90 == pytest.approx(19.611, abs=0.001) and m.replies_in_blocking == 0
    assert m.fastest_reply == pytest.approx(0.000011)
    assert m.suggested_ext_time is None
    assert m.verdict == "controller answers within 1 step; real time held (1.00×)"
