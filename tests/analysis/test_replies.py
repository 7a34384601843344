"""Dropped replies, id conventions and resets, from synthetic runs with an events log.

The runs come from ``couple`` (conftest.py): the simulator's coupling rules played against a
scripted controller, so the send, receive and events logs agree as a real run's would.
"""

from __future__ import annotations

import numpy as np
import pytest

from vcosim.analysis import load_run
from vcosim.analysis.logs import EVENTS_LOG
from vcosim.analysis.metrics import analyse
from vcosim.analysis.report import summary_rows

DT = 0.0005
WINDOW_2 = "run with --window 2, or feed the received id straight to the reply"


def previous_id(k: int) -> list[tuple[float, int]]:
    """A Memory block on the id: the reply to message k carries k − 1 (0 for the first two).

    Messages 40 and 80 get an older id (k − 3) and nothing else: the simulator times out.
    """
    if k in (40, 80):
        return [(0.0002, k - 3)]
    return [(0.0002, max(k - 1, 0))]


def test_previous_id_run_names_the_pattern_and_recommends_window_2(tmp_path, coupling, write_run):
    run = load_run(write_run(tmp_path / "run", coupling(previous_id, 1200)))
    m = run.metrics
    assert run.events is not None and run.events["event"][:2].tolist() == [3, 3]
    assert m.id_pattern == "previous id" and m.id_offsets == {-1: 116}
    assert (m.startup_unapplied, m.startup_leading) == (2, 2)
    assert (m.dropped_stale, m.dropped_duplicate, m.dropped_in_blocking) == (2, 0, 0)
    assert (m.timeouts_logged, m.timeouts_after_dropped, m.timeouts_after_stale) == (2, 2, 2)
    # each reply answers the message after its id: 1 step later, none unmatched
    assert m.unmatched == 0 and m.latency_steps_counts == {1: 116}
    assert run.timeline.answered_id[:3].tolist() == [2, 3, 4]
    assert m.window == 1 and m.window_per_segment == [1, 1, 1]  # start-up replies answer too
    assert (m.segments, m.resets) == (3, 2)
    assert [e.id for e in m.lost] == [40, 80]
    assert m.verdict == (
        "replies carry the previous message's id (a Memory block on the id, as in BeamNG's "
        "example models): the first 2 replies carried id 0 and were not applied; controller "
        "answers within 1 step; real time held (1.00×); 2 timeouts after stale replies (the "
        f"simulator waited 2.0 s for an id newer than those applied) — {WINDOW_2}; 2 lost "
        "messages (id 40, 80)"
    )
    assert "--ext-time" not in m.verdict


def test_previous_id_needs_the_start_up_replies_to_be_told_apart(coupling):
    """Without the events log, a reply one id behind is a direct reply landing late."""
    logs = coupling(previous_id, 1200).logs
    m, tl = analyse(logs.steps, logs.send_time, logs.send_id, logs.receive_time, logs.receive_id)
    assert m.id_pattern == "direct" and m.id_offset == -1
    assert m.latency_steps_counts == {11: 114} and m.unmatched == 2
    assert m.dropped_stale is None and WINDOW_2 not in m.verdict
    assert tl.answered_id.tolist() == tl.receive_id.tolist()


def stale_then_silent(k: int) -> list[tuple[float, int]]:
    """Odd messages answered 1.2 ms late; even ones only with an id already applied."""
    if k == 0:
        return [(0.0003, 0)]
    return [(0.0012, k)] if k % 2 else [(0.0003, k - 2)]


def test_stale_replies_in_blocking_receives_are_named_not_the_controllers_speed(
    tmp_path, coupling, write_run
):
    run = coupling(stale_then_silent, 17, skips=0)  # a send every step: every wait blocks
    m = load_run(write_run(tmp_path / "run", run)).metrics
    assert m.applied == 5 and len(m.timeouts) == 5
    assert (m.dropped_stale, m.dropped_in_blocking, m.timeouts_after_stale) == (5, 5, 5)
    assert m.id_pattern == "direct" and m.startup_unapplied == 1
    assert m.verdict == (
        "simulation at 0.79× real time; blocking receives dropped 5 stale replies (ids already "
        "applied); 5 timeouts after stale replies (the simulator waited 2.0 s for an id newer "
        "than those applied) — make the controller answer only the newest message, with that "
        "message's id; 5 lost messages (id 2, 4, 6, 8, 10)"
    )
    assert "--ext-time" not in m.verdict and "slower" not in m.verdict
    # the same logs without the events log: what the analysis could say before
    old = load_run(write_run(tmp_path / "old", run, events=False)).metrics
    assert old.verdict.startswith(
        "controller slower than T_ext: simulation at 0.79× real time, no reply in under 1.2 ms "
        "— raise --ext-time to 1.5 ms"
    )


def test_own_counter_is_classified_and_its_latencies_matched(tmp_path, coupling, write_run):
    run = load_run(write_run(tmp_path / "run", coupling(lambda k: [(0.0002, k + 1)], 1000)))
    m = run.metrics
    assert m.id_pattern == "own counter" and m.id_offsets == {1: 100}
    assert m.unmatched == 0 and m.latency_steps_counts == {1: 100}
    # sent 10 µs into a step, applied by the next step's poll (2 µs into it)
    assert m.latency_ms.median == pytest.approx(0.5 - 0.01 + 0.002, abs=1e-9)
    assert run.timeline.matched_send.tolist() == list(range(100))
    assert m.window == 1 and m.lost == [] and m.superseded == 0
    assert m.verdict == (
        "the controller numbers its replies with its own counter (as BeamNG's FMUs do): "
        "replies are applied by id order, nothing to change; controller answers within 1 "
        "step; real time held (1.00×)"
    )


def silent_once(k: int) -> list[tuple[float, int]]:
    """Echoes each id within a step, but message 30 is never answered."""
    return [] if k == 30 else [(0.0002, k)]


def test_ids_that_keep_counting_reset_at_a_timeout_event(tmp_path, coupling, write_run):
    run = coupling(silent_once, 1000)
    assert np.all(np.diff(run.logs.send_id) == 1)  # no id restarts after the timeout
    loaded = load_run(write_run(tmp_path / "run", run))
    m, tl = loaded.metrics, loaded.timeline
    assert (m.segments, m.resets, m.timeouts_logged) == (2, 1, 1)
    assert tl.send_segment[30:32].tolist() == [0, 1]  # id 31 opens the second segment
    assert m.window_per_segment == [1, 1] and m.unmatched == 0
    assert [e.id for e in m.lost] == [30] and m.timeouts_after_dropped == 0
    assert m.verdict == (
        "controller answers within 1 step; real time held (1.00×); 1 timeout "
        "(up to 2.0 s each: the simulator waited for a reply that never "
        "came); 1 lost message (id 30)"
    )
    # without the events log the 2 s step interval marks the reset (ids keep counting)
    logs = run.logs
    old, old_tl = analyse(
        logs.steps, logs.send_time, logs.send_id, logs.receive_time, logs.receive_id
    )
    assert (old.segments, old.resets) == (2, 1)
    assert old_tl.send_segment.tolist() == tl.send_segment.tolist()


def test_a_long_step_is_no_reset_when_ids_restart(timeout_logs):
    """Older logs show resets as id restarts: a pause without one is not a reset."""
    logs = timeout_logs
    pause = logs.steps[1000]  # in the second segment: ids count up across it

    def late(t: np.ndarray) -> np.ndarray:
        return t + 1.5 * (t >= pause)

    m, tl = analyse(
        late(logs.steps),
        late(logs.send_time),
        logs.send_id,
        late(logs.receive_time),
        logs.receive_id,
    )
    assert len(m.timeouts) == 2 and (m.segments, m.resets) == (2, 1)
    assert m.verdict.startswith("replies land in the next send step's blocking receive")


def test_a_controller_answering_only_id_0_is_told_to_send_the_id(coupling):
    run = coupling(lambda k: [(0.0002, 0)], 200, skips=0)
    logs = run.logs
    m, _ = analyse(
        logs.steps,
        logs.send_time,
        logs.send_id,
        logs.receive_time,
        logs.receive_id,
        events=run.events,
    )
    # the last reply arrives after the last step
    assert m.applied == 0 and m.startup_unapplied == 199 and m.sends == 200
    assert m.verdict == (
        "no reply was applied: the controller answered 199 times, always with "
        "id 0 or below (a reply applies only with an id above 0 and above the "
        "largest applied) — feed the received id straight to the reply"
    )


def test_without_events_log_the_analysis_is_unchanged(tmp_path, window_logs, write_logs):
    folder = write_logs(tmp_path / "run", window_logs)
    plain = load_run(folder)
    assert plain.events is None and not plain.metrics.events_logged
    assert plain.metrics.dropped_stale is None and plain.metrics.timeouts_after_dropped is None
    rows = dict(summary_rows(plain.metrics))
    assert rows["replies not applied (events log)"].startswith("– (no events log")
    assert rows["reply ids (reply id − last id sent)"].startswith("direct (offset -1)")
    # an events log without rows changes nothing but the events fields
    (folder / EVENTS_LOG).write_text("time,event,id,largest,blocking\n")
    empty = load_run(folder)
    assert empty.events is not None and len(empty.events) == 0
    events_fields = {
        "events_logged",
        "dropped_stale",
        "dropped_duplicate",
        "startup_unapplied",
        "startup_leading",
        "dropped_in_blocking",
        "timeouts_logged",
        "timeouts_after_dropped",
        "timeouts_after_stale",
    }
    a, b = plain.metrics.as_dict(), empty.metrics.as_dict()
    assert {k for k in a if a[k] != b[k]} == events_fields
    assert empty.metrics.verdict == plain.metrics.verdict


def test_a_single_applied_reply_is_not_blamed_for_timeouts():
    """Without a "while connected" factor the verdict leaves the timeouts out of its rate."""
    # a send every other step; each second step waits 2 s and times out; ids restart
    steps = np.concatenate([k * 2.001 + np.array([0.0, DT]) for k in range(3)])
    send_time = steps[::2] + 0.0001
    ids = np.zeros(3)
    # one reply, 1.2 ms after its send (longer than the 1 ms period), then silence
    m, _ = analyse(steps, send_time, ids, send_time[:1] + 0.0012, ids[:1])
    assert m.rtf_connected is None and m.rtf < 0.01 and len(m.timeouts) == 2
    assert m.latency_ms.median == pytest.approx(1.2) and m.controller_step == DT * 2
    assert m.verdict == (
        "controller answers within 1 step; real time held (1.00×); 2 timeouts "
        "(up to 2.0 s each: the simulator waited for a reply that never "
        "came); 1 lost message (id 0)"
    )
