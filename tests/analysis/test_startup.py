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


STEP = 0.00002  # s of wall time a lock-step simulator takes per physics step


def lockstep_exchanges(steps: np.ndarray, first: int, ids: range) -> tuple[list, list, list]:
    """Message k of ``ids`` at step ``first + 10·(k − ids[0])``; its reply, there already,
    taken in the next send step just before that step's send (lock-step, direct ids)."""
    send_time, receive_time, receive_id = [], [], []
    for j, k in enumerate(ids):
        step = first + 10 * j
        if j:  # the reply to the message before, then this message
            receive_time.append(steps[step] + 0.000001)
            receive_id.append(k - 1)
        send_time.append(steps[step] + 0.000002)
    return send_time, receive_time, receive_id


def vcosim_hold() -> tuple[np.ndarray, ...]:
    """Lock-step: message 0 at step 0; step 10 holds 4 s, sending it again twice; the third
    copy is answered with id 0 (a start-up reply: never applied), then message 1 goes, and
    every 10 steps a reply and a message."""
    held = 10 * STEP
    answer = held + 4.0 + 0.0001
    steps = np.concatenate((np.arange(11) * STEP, answer + 0.00001 + np.arange(990) * STEP))
    send_time, receive_time, receive_id = lockstep_exchanges(steps, 20, range(2, 100))
    send_time = [0.000002, held + 2.0, held + 4.0, answer + 0.000002, *send_time]
    send_id = [0, 0, 0, 1, *range(2, 100)]
    receive_time, receive_id = [steps[20] + 0.000001, *receive_time], [1, *receive_id]
    events = np.array([[answer, STARTUP, 0, 0, 1]])
    return (
        steps,
        np.array(send_time),
        np.array(send_id, float),
        np.array(receive_time),
        np.array(receive_id, float),
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
    assert m.startup_waits == [Interval(pytest.approx(10 * STEP), pytest.approx(4.00011))]
    assert m.timeouts == [] and m.resets == 0 and m.lost == [] and m.superseded == 0
    first_reply = events[0, 0] if with_events else receive_time[0]  # the first applied
    assert m.startup_time == pytest.approx(first_reply)
    assert m.latency_steps_counts == {10: 98} and m.unmatched == 0
    assert m.verdict == (
        "replies land in the next send step's blocking receive; faster than real time (25.00×)"
    )


def beamng_log(answers: Callable[[int], bool], n_steps: int = 1100) -> tuple[np.ndarray, ...]:
    """BeamNG's Lua in real time, skips 9 and window 1, against a controller that answers
    message k within a step if ``answers(k)`` (taken by the next step's poll): a send step
    with the message unanswered blocks; no reply within 2 s resets, the next step sends."""
    steps, sends, receives = [], [], []
    t, next_id, outstanding, since = 0.0, 0, False, 9
    for _ in range(n_steps):
        steps.append(t)
        if outstanding and since == 0 and answers(next_id - 1):  # the step after the send
            receives.append((t + 0.00002, next_id - 1))
            outstanding = False
        if since < 9:
            since += 1
        elif not outstanding:
            sends.append((t + 0.00003, next_id))
            next_id, outstanding, since = next_id + 1, True, 0
        else:
            t, outstanding = t + 2.0, False  # the blocking receive timed out
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
    assert m.verdict == "controller answers within 1 step; real time held (1.00×)"


def test_a_timeout_after_the_first_reply_is_still_one():
    steps, send_time, send_id, receive_time, receive_id = beamng_log(lambda k: 2 <= k != 50)
    m, _ = analyse(steps, send_time, send_id, receive_time, receive_id)
    assert len(m.startup_waits) == 2 and len(m.timeouts) == 1 and m.resets == 1
    assert [e.id for e in m.lost] == [50]
