"""Timing metrics of a coupled run, as pure functions over the arrays of the debug logs.

(One module on purpose, past 400 lines: the definitions below are the analysis's
specification, and the functions that implement them are read beside them.)

Inputs: the start time of each physics step, the time and id of each sent message, the time
and id of each *applied* reply (seconds, one clock), and optionally the events log's rows
(dropped replies and timeouts, ``vcosim.analysis.replies.Events``). ``analyse`` computes
everything below and returns a ``Metrics`` (plain numbers, lists and dicts) and a
``Timeline`` (per-event arrays, for plots and for your own analysis). Definitions, exactly
as implemented:

- **Step of an event** (send or receive): the index of the last physics step whose start
  time is ≤ the event's time (−1 for an event before the first step).
- **Re-sends**: a send before the first reply (see start-up) of the same id as the send
  before it: current vcosim, holding at start-up, sends its last message again (older vcosim
  sent id 0 again after each timeout while nobody answered). Re-sends are left out of the
  skips and start no segment by their id; a reply's latency runs from the last copy.
- **Start-up**: everything before the first reply (the first applied one, or a start-up
  reply of the events log): the simulator waited for a controller. A step interval longer
  than 1 s that began before the first reply and ended with it (the reply came after it, or
  in its second half) is a start-up wait, not a timeout, and a reply in its step is not
  counted as blocked; messages sent before the first reply and unanswered are neither lost
  nor superseded, timeouts logged before it are not counted, a segment begun before it is
  not a reset.
- **Observed skips**: (difference between consecutive send steps) − 1, over all consecutive
  sends; the mode and the distribution (skips → count) are reported.
- **Segments and resets**: a timeout resets the simulator's coupling; each reset starts a
  new segment. A new segment starts at a send whose id is not above the previous send's
  (older vcosim restarted its ids at a timeout), re-sends excepted; with an events log, also
  at the first send after a timeout event; without one and if ids never go down, at the
  first send after a timeout (see below). A reply belongs to the segment in force when it
  was applied: the segment of the last send before it, a reply logged at the same time as a
  send counting as before it. ``resets`` counts the segments begun after the first reply.
- **Id pattern**: offset of an applied reply = its id − the id of the last message sent
  before it (same tie rule); distribution, mode and the controller's convention ("direct",
  "previous id", "own counter"): see ``vcosim.analysis.replies``. The *answered id* of a
  reply is the id of the message it answers under that convention (reply id + 1 for
  "previous id", − 1 for "own counter"); the metrics below use it. A start-up reply in the
  events log answers the next unanswered message of its segment.
- **Window (observed)**: the largest number of messages outstanding right after a send,
  outstanding = (id just sent) − (largest id answered in the segment at or before that
  send; the segment's first id − 1 if none); reported for the run and per segment.
- **Reply latency** of each applied reply: in steps, receive step − send step of the message
  it answers in the same segment; in ms, receive time − send time. Replies to an id not
  sent in their segment are counted as ``unmatched``. Distributions: min, median, p90, p99,
  max (numpy's linear percentiles) and a histogram of the steps.
- **Blocking receive**: a reply applied in a send step: a send follows it in the same step,
  or the step was due for a send (at least skips + 1 steps after the previous send, skips =
  the observed mode) while the window was full (outstanding ≥ the observed window). Blocked
  time = receive time − start time of its step; blocking share = total blocked time /
  (last step time − first step time).
- **Timeouts**: intervals between consecutive steps longer than 1 s (the simulator waited for
  a reply that never came), from the first reply on; each with its start (the step that
  waited) and length. Before it they are ``startup_waits``.
- **Duplicates**: applied replies whose id was already applied in the segment. **Stale**:
  applied replies with an id lower than one applied before in the segment (not duplicates).
  (Current vcosim and BeamNG never apply those: see the dropped replies below.)
- **Dropped replies** (events log only): stale (id below the largest applied), duplicate
  (equal to it), start-up (id ≤ 0 before anything was applied: not applied), those dropped
  inside blocking receives (stale and duplicate), and the timeouts preceded by stale or
  duplicate replies dropped since the last send (the controller answered, with old ids).
- **Lost**: sent ids with no answer to them and none to a later id of the segment,
  excluding the last ``window`` messages of the run (their replies may still have been in
  flight). A message answered by no reply but followed by a reply to a later id is
  ``superseded``, not lost (a non-blocking receive applies only the newest reply).
- **Gaps**: intervals between consecutive applied replies longer than 3 × (skips + 1) × dt
  of simulated time (steps between them × dt), each with its start (wall time and step) and
  length (simulated and wall).
- **Real-time factor over time**: consecutive windows of 0.5 s of wall time from the first
  step to the last (the last window takes in a remainder shorter than half a window); per
  window, (step intervals starting in it × dt) / its length, so the length-weighted mean of
  the windows is the overall factor. Overall: (N − 1)·dt / (t_last − t_first). While
  connected: over the steps from the first to the last applied reply, leaving out
  timeouts: (intervals × dt) / (their total length).
- **Causes of the latency**: a reply's latency is the wire, the controller's computation and
  the simulator's own pacing together. ``simulator_ms``: per applied reply, its latency less
  its blocked time, the time from the send until the simulator looked for the reply (its own
  steps, a frame's pause, a lock-step run's next send step): the simulator's part.
  ``fastest_reply``: the shortest latency. The controller's computation cannot take longer
  than its fastest reply (constant work per step, as a step function does), so a fast reply
  proves a fast controller: longer replies then waited on the wire or the machine.
- **Waiting share**: blocked time / the wall time from the first to the last applied reply,
  timeouts left out (the stretch of the real-time factor while connected).
- **Controller shown slow**: the simulator waited for replies at least 25 % of that time
  and even the fastest reply took longer than window × (skips + 1) × dt.
- **Suggested T_ext**: only for a controller shown slow: the p90 reply latency rounded up to
  the next 0.5 ms (None otherwise: no cause for it shows).
- **Verdict**: one plain-language sentence built from the above (``vcosim.analysis.verdict``).
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np

from vcosim.analysis.logs import DUPLICATE, STALE, STARTUP, TIMEOUT
from vcosim.analysis.replies import (
    ANSWER_SHIFT,
    KEY,
    Events,
    classify,
    leading_zero_startups,
    offset_mode,
    reply_offsets,
    startup_answers,
    timeout_boundaries,
    timeouts_after_dropped,
)
from vcosim.analysis.results import (
    DT,
    SLOW_SHARE,
    Distribution,
    IdEvent,
    Interval,
    Metrics,
    ReplyGap,
    Timeline,
)
from vcosim.analysis.verdict import verdict
from vcosim.constants import PHYSICS_DT

TIMEOUT_GAP = 1.0  # s: a longer interval between two steps is a timeout
RTF_WINDOW = 0.5  # s of wall time per real-time-factor window
GAP_FACTOR = 3  # a reply gap is longer than this many controller steps
EXT_TIME_STEP = PHYSICS_DT  # s: the suggested --ext-time is a whole number of physics steps


# -- per-metric functions --------------------------------------------------------------------
def event_steps(step_time: np.ndarray, event_time: np.ndarray) -> np.ndarray:
    """Index of the last physics step whose start time is ≤ each event time (−1: before)."""
    return np.searchsorted(step_time, event_time, side="right").astype(np.int64) - 1


def observed_skips(send_step: np.ndarray) -> tuple[int | None, dict[int, int]]:
    """Mode and distribution of (difference between consecutive send steps) − 1."""
    skips = np.diff(send_step) - 1
    if skips.size == 0:
        return None, {}
    values, counts = np.unique(skips, return_counts=True)
    mode = int(values[np.argmax(counts)])  # the smallest of equally frequent values
    return mode, {int(v): int(c) for v, c in zip(values, counts, strict=True)}


def resends(send_id: np.ndarray) -> np.ndarray:
    """Per send: True if it repeats the id of the send before it."""
    repeat = np.zeros(send_id.shape, dtype=bool)
    repeat[1:] = np.diff(send_id) == 0
    return repeat


def send_segments(
    send_id: np.ndarray,
    send_time: np.ndarray | None = None,
    *,
    timeout_time: np.ndarray | None = None,
    step_time: np.ndarray | None = None,
    timeout_gap: float = TIMEOUT_GAP,
    resent: np.ndarray | None = None,
) -> np.ndarray:
    """Segment index of each send: a new one starts after each reset of the coupling.

    Ids not increasing always mark a reset (older vcosim restarted them), but for ``resent``
    sends (``resends``). Given the send times, so does a timeout between two sends: at
    ``timeout_time`` (the events log's, or the ends of the step intervals counted as timeouts)
    or, without it and if ids never restart, after a step interval longer than ``timeout_gap``.
    """
    send_id = np.asarray(send_id)
    if send_id.size == 0:
        return np.zeros(0, dtype=np.int64)
    new = np.diff(send_id) <= 0
    if resent is not None:
        new &= ~resent[1:]
    if send_time is not None:
        if timeout_time is not None:
            new |= timeout_boundaries(send_time, timeout_time)
        elif step_time is not None and not new.any():
            gap_ends = step_time[1:][np.diff(step_time) > timeout_gap]
            new |= timeout_boundaries(send_time, gap_ends)
    return np.concatenate(([0], np.cumsum(new))).astype(np.int64)


def event_segments(
    send_time: np.ndarray, send_segment: np.ndarray, event_time: np.ndarray
) -> np.ndarray:
    """Segment in force at each event: that of the last send strictly before it (−1: none)."""
    if send_time.size == 0:
        return np.full(event_time.shape, -1, dtype=np.int64)
    starts = np.flatnonzero(np.concatenate(([True], np.diff(send_segment) > 0)))
    return np.searchsorted(send_time[starts], event_time, side="left").astype(np.int64) - 1


def summary(values: np.ndarray) -> Distribution:
    """Count, min, median, p90, p99 and max of a sample (None for an empty one)."""
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0:
        return Distribution(0)
    p = np.percentile(values, [50, 90, 99])
    return Distribution(
        int(values.size),
        float(values.min()),
        float(p[0]),
        float(p[1]),
        float(p[2]),
        float(values.max()),
    )


def intervals_longer_than(times: np.ndarray, limit: float) -> list[tuple[int, float, float]]:
    """(index, start, length) of each interval between consecutive times longer than limit."""
    gaps = np.diff(times)
    return [(int(k), float(times[k]), float(gaps[k])) for k in np.flatnonzero(gaps > limit)]


def realtime_factor(step_time: np.ndarray, dt: float = DT) -> float | None:
    """(N − 1)·dt / (t_last − t_first), None for fewer than two steps."""
    if step_time.size < 2 or step_time[-1] <= step_time[0]:
        return None
    return float((step_time.size - 1) * dt / (step_time[-1] - step_time[0]))


def realtime_factor_series(
    step_time: np.ndarray, dt: float = DT, window: float = RTF_WINDOW
) -> tuple[np.ndarray, np.ndarray]:
    """Window start times and real-time factors over consecutive windows of wall time.

    The windows cover the whole run, the last one ending at the last step (a remainder
    shorter than half a window joins it), and each step interval counts in the window it
    starts in: the windows, weighted by length, average to the overall factor. (Dropping
    an incomplete last window would hide a fast run that follows a long wait.)
    """
    if step_time.size < 2 or step_time[-1] <= step_time[0]:
        return np.zeros(0), np.zeros(0)
    t0, span = step_time[0], step_time[-1] - step_time[0]
    n = max(int(math.floor(span / window + 0.5)), 1)
    edges = t0 + window * np.arange(n + 1, dtype=np.float64)
    edges[-1] = step_time[-1]
    counted = edges.copy()
    counted[-1] = np.inf  # the last window takes every interval left
    intervals = np.diff(np.searchsorted(step_time[:-1], counted, side="left"))
    return edges[:-1], intervals * dt / np.diff(edges)


def connected_intervals(
    step_time: np.ndarray, first: int, last: int, timeout_gap: float = TIMEOUT_GAP
) -> np.ndarray:
    """The step intervals from step ``first`` to step ``last``, timeouts left out."""
    gaps = np.diff(step_time[first : max(last, first) + 1])
    return gaps[gaps <= timeout_gap]


def connected_realtime_factor(
    step_time: np.ndarray, first: int, last: int, dt: float = DT, timeout_gap: float = TIMEOUT_GAP
) -> float | None:
    """Real-time factor over steps ``first``..``last``, timeouts left out."""
    kept = connected_intervals(step_time, first, last, timeout_gap)
    if kept.size == 0 or kept.sum() <= 0:
        return None
    return float(kept.size * dt / kept.sum())


def startup_wait(start: float, length: float, first_answer: float) -> bool:
    """True if a long step interval waited for the first reply, not for a later one.

    It began before the first reply and the first reply ended it: it came after the interval
    (BeamNG's start-up timeouts) or in its second half (vcosim holds until it comes). A reply
    early in a long interval did not end that wait: the wait that followed it timed out.
    """
    return start < first_answer and 2.0 * first_answer >= 2.0 * start + length


def suggested_ext_time(latency_p90: float | None, step: float = EXT_TIME_STEP) -> float | None:
    """The p90 reply latency (s) rounded up to the next multiple of ``step``."""
    if latency_p90 is None:
        return None
    return max(math.ceil(round(latency_p90 / step, 6)), 1) * step


def largest_answered(
    query_time: np.ndarray,
    query_segment: np.ndarray,
    first_id: np.ndarray,
    answers: list[tuple[np.ndarray, np.ndarray]],
    side: Literal["left", "right"],
) -> np.ndarray:
    """Largest id answered in each query's segment by then (its first id − 1 if none).

    ``answers``: (time, segment·KEY + id) streams, times sorted; ``side="right"`` counts an
    answer logged at the query's time, ``"left"`` does not.
    """
    best = first_id[query_segment] - 1
    for times, keys in answers:
        if times.size == 0 or query_time.size == 0:
            continue
        running = np.maximum.accumulate(keys)
        count = np.searchsorted(times, query_time, side=side)
        has = count > 0
        within = running[count[has] - 1] - query_segment[has] * KEY
        best[has] = np.maximum(best[has], within)  # an earlier segment's key is < 0 here
    return best


# -- everything together ---------------------------------------------------------------------
def analyse(
    step_time: np.ndarray,
    send_time: np.ndarray,
    send_id: np.ndarray,
    receive_time: np.ndarray,
    receive_id: np.ndarray,
    *,
    events: Events | np.ndarray | None = None,
    dt: float = DT,
    timeout_gap: float = TIMEOUT_GAP,
    rtf_window: float = RTF_WINDOW,
) -> tuple[Metrics, Timeline]:
    """All metrics of a run from the logs' times and ids (see the module docstring).

    ``events``: the events log (``Events`` or its 5-column array), None without one.
    """
    step_time = np.asarray(step_time, dtype=np.float64)
    send_time = np.asarray(send_time, dtype=np.float64)
    receive_time = np.asarray(receive_time, dtype=np.float64)
    send_id = np.rint(np.asarray(send_id, dtype=np.float64)).astype(np.int64)
    receive_id = np.rint(np.asarray(receive_id, dtype=np.float64)).astype(np.int64)
    ev = events if events is None or isinstance(events, Events) else Events.from_array(events)
    n_steps, n_sends, n_recv = step_time.size, send_time.size, receive_time.size
    m = Metrics(dt=dt, steps=n_steps, sends=n_sends, applied=n_recv)
    if n_steps:
        m.duration = float(step_time[-1] - step_time[0])

    send_step = event_steps(step_time, send_time)
    receive_step = event_steps(step_time, receive_time)
    # Start-up: until the first reply, applied (receive log) or not (events log); the
    # messages sent again meanwhile; the long waits, of the start-up or timeouts.
    replies = [receive_time[:1], ev.time[ev.of(STARTUP)] if ev is not None else np.zeros(0)]
    first_answer = min((float(t.min()) for t in replies if t.size), default=math.inf)
    startup = send_time < first_answer
    resent = resends(send_id) & startup
    m.startup_resends = int(resent.sum())
    m.skips, m.skips_counts = observed_skips(send_step[~resent])
    skips = m.skips if m.skips is not None else 0
    if n_steps and first_answer < math.inf:
        m.startup_time = first_answer - float(step_time[0])
    held_steps, timeout_ends = [], []  # steps whose wait was the start-up's; timeouts' ends
    for step, start, length in intervals_longer_than(step_time, timeout_gap):
        if startup_wait(start, length, first_answer):
            m.startup_waits.append(Interval(start, length))
            held_steps.append(step)
        else:
            m.timeouts.append(Interval(start, length))
            timeout_ends.append(step_time[step + 1])
    m.timeout_time = float(sum(t.length for t in m.timeouts))

    # Segments: at timeouts, logged or seen; older vcosim's show as ids restarting.
    restarts = bool((np.diff(send_id) < 0).any())
    send_seg = send_segments(
        send_id,
        send_time,
        timeout_time=(
            ev.time[ev.of(TIMEOUT)]
            if ev is not None
            else None
            if restarts
            else np.array(timeout_ends)
        ),
        resent=resent,
    )
    m.segments = int(send_seg[-1]) + 1 if n_sends else 0
    if n_sends:
        m.resets = int(np.count_nonzero((np.diff(send_seg) > 0) & ~startup[1:]))
    recv_seg = event_segments(send_time, send_seg, receive_time)
    first_id = send_id[np.searchsorted(send_seg, np.arange(m.segments))]

    # The id pattern, and the message each reply answers.
    # The convention shows in the first segment: after a stall the controller may work
    # through a queued message and lag one more, which shifts later offsets, not the ids.
    offsets, has_prev = reply_offsets(send_time, send_id, receive_time, receive_id)
    _, m.id_offsets = offset_mode(offsets[has_prev])
    first_segment = has_prev & (recv_seg == (recv_seg[has_prev].min() if has_prev.any() else 0))
    m.id_offset, _ = offset_mode(offsets[first_segment])
    zeros = leading_zero_startups(ev, send_time, send_seg) if ev is not None else 0
    m.id_pattern = classify(m.id_offset, zeros)
    answered_id = receive_id + ANSWER_SHIFT.get(m.id_pattern or "", 0)
    send_key = send_seg * KEY + send_id  # increasing; a re-send repeats its key
    recv_key = recv_seg * KEY + answered_id
    running = np.maximum.accumulate(recv_key) if n_recv else recv_key
    startup_time, startup_key = (
        startup_answers(ev, send_time, send_id, send_seg)
        if ev is not None
        else (np.zeros(0), np.zeros(0, np.int64))
    )
    answers = [(receive_time, recv_key), (startup_time, startup_key)]

    # Outstanding after each send and the observed window.
    outstanding = send_id - largest_answered(send_time, send_seg, first_id, answers, "right")
    if n_sends:
        m.window = int(outstanding.max())
        m.window_per_segment = [int(outstanding[send_seg == g].max()) for g in range(m.segments)]
    window = max(m.window or 1, 1)

    # Reply latency, against the message answered (its last copy).
    matched = np.full(n_recv, -1, dtype=np.int64)
    if n_sends and n_recv:
        pos = np.maximum(np.searchsorted(send_key, recv_key, side="right") - 1, 0)
        ok = (send_key[pos] == recv_key) & (recv_seg >= 0)
        matched[ok] = pos[ok]
    ok = matched >= 0
    latency_steps = np.full(n_recv, -1, dtype=np.int64)
    latency = np.full(n_recv, np.nan)
    latency_steps[ok] = receive_step[ok] - send_step[matched[ok]]
    latency[ok] = receive_time[ok] - send_time[matched[ok]]
    m.unmatched = int(n_recv - ok.sum())
    m.latency_steps = summary(latency_steps[ok])
    values, counts = np.unique(latency_steps[ok], return_counts=True)
    m.latency_steps_counts = {int(v): int(c) for v, c in zip(values, counts, strict=True)}
    m.latency_ms = summary(latency[ok] * 1e3)

    # Blocking receives.
    blocking = np.zeros(n_recv, dtype=bool)
    if n_recv and n_sends:
        nxt = np.searchsorted(send_time, receive_time, side="left")  # first send at/after
        has_next = nxt < n_sends
        blocking[has_next] = send_step[nxt[has_next]] == receive_step[has_next]
        prev = nxt - 1
        idx = np.flatnonzero(prev >= 0)
        due = np.zeros(n_recv, dtype=bool)
        due[idx] = receive_step[idx] - send_step[prev[idx]] >= skips + 1
        # outstanding just before the reply: last id sent − largest answered before it
        before = largest_answered(receive_time[idx], send_seg[prev[idx]], first_id, answers, "left")
        full = np.zeros(n_recv, dtype=bool)
        full[idx] = send_id[prev[idx]] - before >= window
        blocking |= due & full
    blocking &= receive_step >= 0
    blocked = np.zeros(n_recv)
    blocked[blocking] = receive_time[blocking] - step_time[receive_step[blocking]]
    blocked[np.isin(receive_step, held_steps)] = 0.0  # the start-up's wait, not a reply's
    m.replies_in_blocking = int(blocking.sum())
    m.blocked_time = float(blocked.sum())
    m.longest_block = float(blocked.max()) if n_recv else 0.0
    m.blocking_share = m.blocked_time / m.duration if m.duration > 0 else 0.0

    # Duplicates, stale, lost, superseded.
    if n_recv:
        valid = recv_seg >= 0
        _, first = np.unique(recv_key, return_index=True)
        duplicate = np.ones(n_recv, dtype=bool)
        duplicate[first] = False
        duplicate &= valid
        stale = np.zeros(n_recv, dtype=bool)
        stale[1:] = recv_key[1:] < running[:-1]
        stale &= valid & ~duplicate
        m.duplicates = [
            IdEvent(int(recv_seg[j]), int(receive_id[j]), float(receive_time[j]))
            for j in np.flatnonzero(duplicate)
        ]
        m.stale = [
            IdEvent(int(recv_seg[j]), int(receive_id[j]), float(receive_time[j]))
            for j in np.flatnonzero(stale)
        ]
    if n_sends:
        largest = first_id - 1
        for keys in (recv_key[(recv_seg >= 0) & (answered_id >= 0)], startup_key):
            np.maximum.at(largest, keys // KEY, keys % KEY)
        answered = np.isin(send_key, recv_key) | np.isin(send_key, startup_key)
        tail = (np.arange(n_sends) >= n_sends - window) | startup
        lost = (send_id > largest[send_seg]) & ~tail
        m.lost = [
            IdEvent(int(send_seg[i]), int(send_id[i]), float(send_time[i]))
            for i in np.flatnonzero(lost)
        ]
        m.superseded = int((~answered & ~lost & ~tail).sum())

    # Replies the simulator did not apply (events log).
    if ev is not None:
        m.events_logged = True
        m.dropped_stale = ev.count(STALE)
        m.dropped_duplicate = ev.count(DUPLICATE)
        m.startup_unapplied = ev.count(STARTUP)
        first_applied = receive_time[0] if n_recv else np.inf
        m.startup_leading = int((ev.of(STARTUP) & (ev.time < first_applied)).sum())
        m.dropped_in_blocking = ev.count(STALE, DUPLICATE, blocking=True)
        m.timeouts_logged = int((ev.of(TIMEOUT) & (ev.time >= first_answer)).sum())
        m.timeouts_after_dropped, m.timeouts_after_stale = timeouts_after_dropped(ev, send_time)

    # Gaps between consecutive applied replies (simulated time).
    if n_recv > 1:
        limit = GAP_FACTOR * (skips + 1)
        step_gaps = np.diff(receive_step)
        for j in np.flatnonzero(step_gaps > limit):
            m.gaps.append(
                ReplyGap(
                    float(receive_time[j]),
                    int(receive_step[j]),
                    int(step_gaps[j]),
                    float(step_gaps[j] * dt),
                    float(receive_time[j + 1] - receive_time[j]),
                )
            )

    # Real-time factor.
    m.rtf = realtime_factor(step_time, dt)
    times, rtfs = realtime_factor_series(step_time, dt, rtf_window)
    m.rtf_times, m.rtf_values = times.tolist(), rtfs.tolist()
    if n_recv:
        first_step, last_step = int(max(receive_step[0], 0)), int(receive_step[-1])
        m.rtf_connected = connected_realtime_factor(
            step_time, first_step, last_step, dt, timeout_gap
        )
        wall = float(connected_intervals(step_time, first_step, last_step, timeout_gap).sum())
        m.waiting_share = min(m.blocked_time / wall, 1.0) if wall > 0 else m.blocking_share

    m.controller_step = (skips + 1) * dt if m.skips is not None else None
    m.fastest_reply = float(latency[ok].min()) if ok.any() else None
    m.simulator_ms = summary((latency[ok] - blocked[ok]) * 1e3)
    m.controller_slow = (
        m.waiting_share >= SLOW_SHARE
        and m.fastest_reply is not None
        and m.fastest_reply > window * (skips + 1) * dt
    )
    p90 = m.latency_ms.p90
    if m.controller_slow and p90 is not None:
        m.suggested_ext_time = suggested_ext_time(p90 / 1e3)
    m.verdict = verdict(m)
    reply_offset = np.where(has_prev, offsets, np.nan)
    timeline = Timeline(
        step_time,
        send_time,
        send_id,
        send_step,
        send_seg,
        outstanding,
        receive_time,
        receive_id,
        receive_step,
        recv_seg,
        matched,
        latency_steps,
        latency,
        blocking,
        blocked,
        reply_offset,
        answered_id,
    )
    return m, timeline


__all__ = [
    "DT",
    "EXT_TIME_STEP",
    "GAP_FACTOR",
    "RTF_WINDOW",
    "SLOW_SHARE",
    "TIMEOUT_GAP",
    "Distribution",
    "Events",
    "IdEvent",
    "Interval",
    "Metrics",
    "ReplyGap",
    "Timeline",
    "analyse",
    "connected_intervals",
    "connected_realtime_factor",
    "event_segments",
    "event_steps",
    "intervals_longer_than",
    "largest_answered",
    "observed_skips",
    "realtime_factor",
    "realtime_factor_series",
    "resends",
    "send_segments",
    "startup_wait",
    "suggested_ext_time",
    "summary",
    "verdict",
]
