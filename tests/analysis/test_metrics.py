"""Every metric on synthetic logs whose timing is known exactly (see conftest.py)."""

from __future__ import annotations

import numpy as np
import pytest

from vcosim.analysis import load_run
from vcosim.analysis.metrics import (
    IdEvent,
    Interval,
    ReplyGap,
    analyse,
    event_steps,
    realtime_factor_series,
    suggested_ext_time,
)

DT = 0.0005
approx = pytest.approx


def test_step_of_an_event_is_the_last_step_started_at_or_before_it():
    steps = np.array([0.0, 0.5, 1.0, 1.5])
    events = np.array([-0.1, 0.0, 0.2, 0.5, 1.49, 1.5, 9.0])
    assert event_steps(steps, events).tolist() == [-1, 0, 0, 1, 2, 3, 3]


def test_suggested_ext_time_rounds_p90_up_to_half_milliseconds():
    assert suggested_ext_time(0.00105) == approx(0.0015)
    assert suggested_ext_time(0.0010) == approx(0.0010)
    assert suggested_ext_time(0.0000001) == approx(0.0005)
    assert suggested_ext_time(None) is None


def test_timeout_run_every_metric(tmp_path, timeout_logs, write_logs):
    run = load_run(write_logs(tmp_path / "run", timeout_logs))
    m = run.metrics
    assert (m.steps, m.sends, m.applied) == (2401, 240, 239)
    assert m.duration == approx(3.1997, abs=1e-12)
    # skips: 10 steps between sends, 11 across the timeout
    assert m.skips == 9 and m.skips_counts == {9: 238, 10: 1}
    assert m.controller_step == approx(0.005)
    # one reset (id 0 after id 39), one outstanding message at most in each segment
    assert (m.segments, m.resets) == (2, 1)
    assert m.window == 1 and m.window_per_segment == [1, 1]
    # latency: 39 × 3 steps (1.6 ms), 199 × 10 steps (4.95 ms), the duplicate 12 steps (6.1 ms)
    assert m.latency_steps_counts == {3: 39, 10: 199, 12: 1}
    assert (
        m.latency_steps.count,
        m.latency_steps.min,
        m.latency_steps.median,
        m.latency_steps.p90,
        m.latency_steps.p99,
        m.latency_steps.max,
    ) == (239, 3, 10, 10, 10, 12)
    assert m.latency_ms.min == approx(1.6, abs=1e-9)
    assert m.latency_ms.median == approx(4.95, abs=1e-9)
    assert m.latency_ms.p90 == approx(4.95, abs=1e-9)
    assert m.latency_ms.max == approx(6.1, abs=1e-9)
    assert m.unmatched == 0
    # blocking: the 199 replies of segment 2 land 0.05 ms into a send step
    assert m.replies_in_blocking == 199
    assert run.timeline.blocking.sum() == 199
    assert m.blocked_time == approx(199 * 0.00005, abs=1e-9)
    assert m.longest_block == approx(0.00005, abs=1e-9)
    assert m.blocking_share == approx(199 * 0.00005 / 3.1997, abs=1e-9)
    # the 2 s wait of step 400
    assert m.timeouts == [Interval(approx(0.2), approx(2.0002, abs=1e-12))]
    assert m.timeout_time == approx(2.0002, abs=1e-12)
    # id 100 applied twice; id 39 lost; id 199 (the run's last) excluded as in flight
    assert [(e.segment, e.id) for e in m.duplicates] == [(1, 100)]
    assert m.stale == []
    assert m.lost == [IdEvent(0, 39, approx(390 * DT + 0.0001))]
    assert m.superseded == 0
    assert m.gaps == []  # 28 steps across the timeout: not more than 3 × 10
    # real-time factor: 2400 intervals in 3.1997 s; per 0.5 s: 401 steps, nothing, 600, then
    # the last window runs to the end (2.5 .. 3.1997 s: 1399 intervals)
    assert m.rtf == approx(2400 * DT / 3.1997, abs=1e-12)
    assert m.rtf_times == approx([0.0, 0.5, 1.0, 1.5, 2.0, 2.5])
    assert m.rtf_values == approx([0.401, 0.0, 0.0, 0.0, 0.6, 1399 * DT / 0.6997], abs=1e-12)
    assert m.rtf_connected == approx(1.0, abs=1e-9)
    # while connected: steps 3 (the first reply) to 2391 (the last), the timeout left out
    assert m.waiting_share == approx(199 * 0.00005 / (2387 * DT), abs=1e-9)
    # causes: the first segment's replies (1.6 ms) show the controller can answer in 1.6 ms,
    # so the second's 4.95 ms are the simulator's own steps (4.9 ms) and 50 µs of waiting
    assert m.fastest_reply == approx(0.0016, abs=1e-12)
    assert (m.simulator_ms.min, m.simulator_ms.median) == (approx(1.6), approx(4.9))
    assert not m.controller_slow and m.suggested_ext_time is None
    assert m.verdict == (
        "replies land in the next send step's blocking receive; real time held (1.00×); "
        "1 timeout (up to 2.0 s each: the simulator waited for a reply that never came); "
        "1 lost message (id 39); 1 duplicate reply (id 100)"
    )
    # per-event timeline, aligned with the logs' rows
    tl = run.timeline
    assert tl.send_step[:3].tolist() == [0, 10, 20] and tl.send_step[40] == 401
    assert tl.send_segment[39:41].tolist() == [0, 1]
    assert tl.latency_steps[:3].tolist() == [3, 3, 3]
    assert tl.matched_send[39] == 40  # the first reply of segment 2 answers its id 0


def test_window_run_every_metric(window_logs):
    logs = window_logs
    m, tl = analyse(logs.steps, logs.send_time, logs.send_id, logs.receive_time, logs.receive_id)
    assert (m.steps, m.sends, m.applied) == (1000, 200, 177)
    assert m.skips == 4 and m.skips_counts == {4: 199}
    assert (m.segments, m.resets) == (1, 0)
    # after send 61 (step 305) the newest applied reply is still 49; after send 199, 185
    assert m.window == 14
    assert tl.outstanding[[0, 1, 2, 61, 62, 199]].tolist() == [1, 2, 2, 12, 2, 14]
    assert m.unmatched == 1  # the reply logged before any send
    assert m.latency_steps_counts == {7: 175, 13: 1}
    assert m.latency_ms.median == approx(3.6, abs=1e-9)
    assert m.latency_ms.max == approx(6.7, abs=1e-9)
    # a reply in a send step is a blocking receive, by definition: only the one before send 0
    assert m.replies_in_blocking == 1 and tl.blocking[0]
    assert m.blocked_time == approx(0.00005) and m.blocking_share == approx(0.00005 / 0.4995)
    assert m.timeouts == []
    assert m.duplicates == []
    assert m.stale == [IdEvent(0, 45, approx(238 * DT + 0.0003))]
    # 186..199 unanswered at the end: the last `window` (14) may be in flight, not lost
    assert m.lost == []
    assert m.superseded == 10  # 50..59: no reply, but 60 was answered
    assert m.gaps == [
        ReplyGap(approx(252 * DT + 0.0002), 252, 55, approx(55 * DT), approx(55 * DT, abs=1e-12))
    ]
    assert m.rtf == approx(1.0) and m.rtf_connected == approx(1.0)
    assert m.rtf_values == approx([1.0])  # shorter than one window: the whole run
    assert m.verdict == (
        "replies land 7 steps after the send (1.4 send periods, window 14); real time held "
        "(1.00×); 1 gap where the controller did not answer (longest 27.5 ms of simulated "
        "time); 1 stale reply (id 45); 1 reply to an id never sent"
    )


def test_controller_that_answers_within_a_step_in_real_time():
    steps = np.arange(2000) * DT
    send_time = steps[::10] + 0.0001
    receive_time = steps[1::10] + 0.0001
    ids = np.arange(200.0)
    m, _ = analyse(steps, send_time, ids, receive_time, ids)
    assert m.latency_steps.median == 1 and m.replies_in_blocking == 0
    assert m.verdict == "controller answers within 1 step; real time held (1.00×)"


def test_replies_a_few_steps_later_in_non_blocking_steps():
    steps = np.arange(2000) * DT
    ids = np.arange(200.0)
    m, _ = analyse(steps, steps[::10] + 0.0001, ids, steps[3::10] + 0.0001, ids)
    assert m.verdict == (
        "replies land 3 steps after the send, in non-blocking steps; real time held (1.00×)"
    )


def test_controller_slower_than_ext_time():
    steps = np.arange(1000) * 0.001  # every step waits: 1 ms of wall time per 0.5 ms step
    ids = np.arange(999.0)
    send_time = steps[:-1] + 0.00095
    receive_time = steps[1:] + 0.0009  # 0.9 ms into the next step, then its send
    m, _ = analyse(steps, send_time, ids, receive_time, ids)
    assert m.skips == 0 and m.window == 1
    assert m.replies_in_blocking == 999
    assert m.blocking_share == approx(999 * 0.0009 / 0.999)
    assert m.rtf == approx(0.5)
    assert m.latency_ms.p90 == approx(0.95)
    assert m.verdict == (
        "controller slower than T_ext: simulation at 0.50× real time, no reply in under "
        "0.95 ms — raise --ext-time to 1 ms (--ext-time 0.001) or speed up the controller"
    )


def test_no_controller_is_all_start_up_not_timeouts_or_lost_messages():
    # older vcosim: send, block 2 s, time out, next step sends id 0 again (ids restart)
    steps = np.concatenate([k * 2.001 + np.array([0.0, DT]) for k in range(4)])
    send_time = steps[::2] + 0.0001
    m, _ = analyse(steps, send_time, np.zeros(4), np.zeros(0), np.zeros(0))
    assert m.applied == 0 and m.resets == 0 and m.startup_resends == 3
    assert m.timeouts == [] and len(m.startup_waits) == 3 and m.startup_time is None
    assert m.lost == [] and m.superseded == 0  # nobody was there to lose them
    assert m.verdict == "no controller answered: only sends (4), 6.0 s waiting for one"


def test_realtime_factor_windows_count_step_intervals_starting_in_each():
    steps = np.concatenate((np.arange(1000) * DT, 0.7 + np.arange(800) * DT))
    times, values = realtime_factor_series(steps, DT, 0.5)
    # [0, 0.5): 1000 intervals (the last one up to 0.7 s); the last window, 0.5 .. 1.0995 s
    # (the 0.0995 s left over joins it): 799
    assert times.tolist() == approx([0.0, 0.5])
    assert values.tolist() == approx([1.0, 799 * DT / 0.5995])
    # a remainder of at least half a window is a window of its own
    times, values = realtime_factor_series(steps[:1200], DT, 0.5)  # span 0.7995 s
    assert times.tolist() == approx([0.0, 0.5])
    assert values.tolist() == approx([1.0, 199 * DT / 0.2995])
