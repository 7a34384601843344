"""Start-up is not a fault: a simulator waiting for its controller, as vcosim and BeamNG do it.

Synthetic logs with known timing: vcosim's hold (its last message sent again until the
first reply) and BeamNG's Lua (a timeout and a new message every 2 s, stepping on).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from vcosim.analysis.metrics import Interval, analyse

DT = 0.0005
STARTUP = 3  # the events log's code of a start-up reply


def lockstep_exchanges(steps: np.ndarray, first: int, ids: range) -> tuple[list, list, list]:
    """Message k of ``ids`` at step ``first + 10·(k − ids[0])``; its reply applied in the
    next send step, just before that step's send (lock-step, direct ids)."""
    send_time, receive_time, receive_id = [], [], []
    for j, k in enumerate(ids):
        step = first + 10 * j
        if j:  # the reply to the message before, then this message
            receive_time.append(steps[step] + 0.00002)
            receive_id.append(k - 1)
        send_time.append(steps[step] + 0.00003)
    return send_time, receive_time, receive_id


def vcosim_hold() -> tuple[np.ndarray, ...]:
    """Message 0 at step 0; step 10 holds 4 s, sending it again twice; the third copy is
    answered with id 0 (a start-up reply: never applied), then exchanges every 10 steps."""
    held = 10 * DT
    answer = held + 4.0 + 0.0001
    steps = np.concatenate((np.arange(11) * DT, answer + 0.0001 + np.arange(990) * DT))
    send_time, receive_time, receive_id = lockstep_exchanges(steps, 20, range(2, 100))
    send_time = [0.00001, held + 2.0, held + 4.0, answer + 0.00005, *send_time]
    send_id = [0, 0, 0, 1, *range(2, 100)]
    receive_time, receive_id = [steps[20] + 0.00002, *receive_time], [1, *receive_id]
    events = np.array([[answer, STARTUP, 0, 0, 1]])
    return (
        steps,
        np.array(send_time),
        np.array(send_id, float),
        np.array(receive_time),
        (np.array(receive_id, float)),
        events,
    )


@pytest.mark.parametrize("with_events", [True, False])
def test_vcosim_holding_for_its_controller_is_start_up(with_events):
    steps, send_time, send_id, receive_time, receive_id, events = vcosim_hold()
    m, _ = analyse(
        steps, send_time, send_id, receive_time, receive_id, events=events if with_events else None
    )
    assert m.startup_resends == 2
    assert m.skips == 9 and m.skips_counts == {9: 99}  # the copies are not sends of their own
    assert m.startup_waits == [Interval(pytest.approx(10 * DT), pytest.approx(4.0002))]
    assert m.timeouts == [] and m.resets == 0 and m.lost == [] and m.superseded == 0
    first_reply = events[0, 0] if with_events else receive_time[0]  # the first applied
    assert m.startup_time == pytest.approx(first_reply)
    assert m.latency_steps_counts == {10: 98} and m.unmatched == 0
    assert "timeout" not in m.verdict and "lost" not in m.verdict


def beamng_log(answers: Callable[[int], bool], n_steps: int = 1100) -> tuple[np.ndarray, ...]:
    """BeamNG's Lua, skips 9 and window 1, against a controller that answers message k (in
    the next send step, lock-step fashion) if ``answers(k)``: a send step with the window full
    blocks; no reply within 2 s resets, and the next step sends a new message."""
    steps, sends, receives = [], [], []
    t, next_id, waiting, since = 0.0, 0, False, 9
    for _ in range(n_steps):
        steps.append(t)
        if since < 9:
            since += 1
        elif not waiting or answers(next_id - 1):
            if waiting:
                receives.append((t + 0.00002, next_id - 1))
            sends.append((t + 0.00003, next_id))
            next_id, waiting, since = next_id + 1, True, 0
        else:
            t, waiting = t + 2.0, False  # the timeout
        t += DT
    (send_time, send_id), (receive_time, receive_id) = (
        zip(*sends, strict=True),
        zip(*receives, strict=True),
    )
    return tuple(np.array(v, float) for v in (steps, send_time, send_id, receive_time, receive_id))


def test_beamng_timing_out_before_its_controller_answers_is_start_up():
    steps, send_time, send_id, receive_time, receive_id = beamng_log(lambda k: k >= 2)
    m, _ = analyse(steps, send_time, send_id, receive_time, receive_id)
    assert [w.start for w in m.startup_waits] == pytest.approx([steps[10], steps[21]])
    assert m.timeouts == [] and m.lost == [] and m.superseded == 0
    assert m.segments == 1 and m.resets == 0  # waits before the first reply reset nothing
    assert "timeout" not in m.verdict and "lost" not in m.verdict


def test_a_timeout_after_the_first_reply_is_still_one():
    steps, send_time, send_id, receive_time, receive_id = beamng_log(lambda k: 2 <= k != 50)
    m, _ = analyse(steps, send_time, send_id, receive_time, receive_id)
    assert len(m.startup_waits) == 2 and len(m.timeouts) == 1 and m.resets == 1
    assert [e.id for e in m.lost] == [50]
