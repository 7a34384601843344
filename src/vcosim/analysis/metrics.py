"""Timing metrics of a coupled run, as pure functions over the arrays of the three debug logs.

Inputs: the start time of each physics step, the time and id of each sent message, the time
and id of each *applied* reply (seconds, one clock). ``analyse`` computes everything below
and returns a ``Metrics`` (plain numbers, lists and dicts) and a ``Timeline`` (per-event
arrays, for plots and for your own analysis). Definitions, exactly as implemented:

- **Step of an event** (send or receive): the index of the last physics step whose start
  time is ≤ the event's time (−1 for an event before the first step).
- **Observed skips**: (difference between consecutive send steps) − 1, over all consecutive
  sends; the mode and the distribution (skips → count) are reported.
- **Segments and resets**: ids count up by one per send; a send whose id is not greater than
  the previous send's id starts a new segment (the simulator reset its counters after a
  timeout). ``resets`` = segments − 1. (An id *equal* to the previous one counts as a reset
  too: a simulator that keeps timing out before any reply re-sends id 0.) A reply belongs
  to the segment in force when it was applied: the segment of the last send at or before
  it in time, a reply logged at the same time as a send counting as before it.
- **Window (observed)**: the largest number of messages outstanding right after a send,
  outstanding = (id just sent) − (largest id applied in the segment at or before that send,
  −1 if none); reported for the run and per segment.
- **Reply latency** of each applied reply: in steps, receive step − send step of the message
  with that id in the same segment; in ms, receive time − send time. Replies to an id not
  sent in their segment are counted as ``unmatched``. Distributions: min, median, p90, p99,
  max (numpy's linear percentiles) and a histogram of the steps.
- **Blocking receive**: a reply applied in a send step: a send follows it in the same step,
  or the step was due for a send (at least skips + 1 steps after the previous send, skips =
  the observed mode) while the window was full (outstanding ≥ the observed window). Blocked
  time = receive time − start time of its step; blocking share = total blocked time /
  (last step time − first step time).
- **Timeouts**: intervals between consecutive steps longer than 1 s (the simulator waited for
  a reply that never came); each with its start (the step that waited) and length.
- **Duplicates**: applied replies whose id was already applied in the segment. **Stale**:
  applied replies with an id lower than one applied before in the segment (not duplicates).
- **Lost**: sent ids with no applied reply to them and none to a later id of the segment,
  excluding the last ``window`` messages of the run (their replies may still have been in
  flight). A message answered by no reply but followed by a reply to a later id is
  ``superseded``, not lost (a non-blocking receive applies only the newest reply).
- **Gaps**: intervals between consecutive applied replies longer than 3 × (skips + 1) × dt
  of simulated time (steps between them × dt), each with its start (wall time and step) and
  length (simulated and wall).
- **Real-time factor over time**: in consecutive windows of 0.5 s of wall time from the
  first step, (steps starting in the window × dt) / 0.5 s (complete windows only; a run
  shorter than one window gives one window over the run). Overall: (N − 1)·dt / (t_last −
  t_first). While connected: over the steps from the first to the last applied reply,
  leaving out timeouts: (intervals × dt) / (their total length).
- **Suggested T_ext**: the p90 reply latency in ms rounded up to the next 0.5 ms.
- **Verdict**: one plain-language sentence built from the above (see ``verdict``).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

DT = 0.0005  # s, the physics step
TIMEOUT_GAP = 1.0  # s: a longer interval between two steps is a timeout
RTF_WINDOW = 0.5  # s of wall time per real-time-factor window
GAP_FACTOR = 3  # a reply gap is longer than this many controller steps
EXT_TIME_STEP = 0.0005  # s: the suggested --ext-time is rounded up to a multiple of this
_KEY = 1 << 32  # (segment, id) -> segment * _KEY + id


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


def send_segments(send_id: np.ndarray) -> np.ndarray:
    """Segment index of each send: a new one starts at an id not greater than the previous."""
    if send_id.size == 0:
        return np.zeros(0, dtype=np.int64)
    resets = np.concatenate(([0], (np.diff(send_id) <= 0).astype(np.int64)))
    return np.cumsum(resets)


def event_segments(send_time: np.ndarray, send_segment: np.ndarray,
                   event_time: np.ndarray) -> np.ndarray:
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
    return Distribution(int(values.size), float(values.min()), float(p[0]), float(p[1]),
                        float(p[2]), float(values.max()))


def intervals_longer_than(times: np.ndarray, limit: float) -> list[tuple[int, float, float]]:
    """(index, start, length) of each interval between consecutive times longer than limit."""
    gaps = np.diff(times)
    return [(int(k), float(times[k]), float(gaps[k])) for k in np.flatnonzero(gaps > limit)]


def realtime_factor(step_time: np.ndarray, dt: float = DT) -> float | None:
    """(N − 1)·dt / (t_last − t_first), None for fewer than two steps."""
    if step_time.size < 2 or step_time[-1] <= step_time[0]:
        return None
    return float((step_time.size - 1) * dt / (step_time[-1] - step_time[0]))


def realtime_factor_series(step_time: np.ndarray, dt: float = DT, window: float = RTF_WINDOW
                           ) -> tuple[np.ndarray, np.ndarray]:
    """Window start times and real-time factors over consecutive windows of wall time."""
    if step_time.size < 2:
        return np.zeros(0), np.zeros(0)
    t0, span = step_time[0], step_time[-1] - step_time[0]
    n = int(math.floor(span / window))
    if n == 0:
        rtf = realtime_factor(step_time, dt)
        return np.array([t0]), np.array([rtf if rtf is not None else 0.0])
    edges = t0 + window * np.arange(n + 1)
    counts = np.diff(np.searchsorted(step_time, edges, side="left"))
    return edges[:-1], counts * dt / window


def connected_realtime_factor(step_time: np.ndarray, first: int, last: int, dt: float = DT,
                              timeout_gap: float = TIMEOUT_GAP) -> float | None:
    """Real-time factor over steps ``first``..``last``, timeouts left out."""
    if last <= first:
        return None
    gaps = np.diff(step_time[first:last + 1])
    kept = gaps[gaps <= timeout_gap]
    if kept.size == 0 or kept.sum() <= 0:
        return None
    return float(kept.size * dt / kept.sum())


def suggested_ext_time(latency_p90: float | None, step: float = EXT_TIME_STEP) -> float | None:
    """The p90 reply latency (s) rounded up to the next multiple of ``step``."""
    if latency_p90 is None:
        return None
    return max(math.ceil(round(latency_p90 / step, 6)), 1) * step


# -- the results -----------------------------------------------------------------------------
@dataclass
class Distribution:
    """Count, min, median, p90, p99, max of a sample (all None when it is empty)."""

    count: int = 0
    min: float | None = None
    median: float | None = None
    p90: float | None = None
    p99: float | None = None
    max: float | None = None


@dataclass
class Interval:
    """A stretch of time: its start (wall s, log clock) and length (s)."""

    start: float
    length: float


@dataclass
class ReplyGap:
    """An interval between consecutive applied replies: the controller did not answer."""

    start: float  # wall time of the reply before the gap (s, log clock)
    start_step: int  # its physics step
    steps: int  # physics steps to the next applied reply
    length: float  # simulated length, steps × dt (s)
    wall_length: float  # wall time to the next applied reply (s)


@dataclass
class IdEvent:
    """A message id of interest (duplicate, stale, lost) and where it is."""

    segment: int
    id: int
    time: float  # when it was applied (duplicate, stale) or sent (lost)


@dataclass
class Metrics:
    """Timing metrics of one run (see the module docstring for the exact definitions)."""

    dt: float = DT
    steps: int = 0
    sends: int = 0
    applied: int = 0
    duration: float = 0.0  # wall time from the first to the last step (s)
    skips: int | None = None  # mode of the observed skips
    skips_counts: dict[int, int] = field(default_factory=dict)
    window: int | None = None  # observed, largest over the run
    window_per_segment: list[int] = field(default_factory=list)
    segments: int = 0
    resets: int = 0
    latency_steps: Distribution = field(default_factory=Distribution)
    latency_steps_counts: dict[int, int] = field(default_factory=dict)
    latency_ms: Distribution = field(default_factory=Distribution)
    unmatched: int = 0  # applied replies to an id not sent in their segment
    replies_in_blocking: int = 0  # applied replies that were blocking receives
    blocked_time: float = 0.0  # s, total
    blocking_share: float = 0.0  # of the run's wall time
    longest_block: float = 0.0  # s
    timeouts: list[Interval] = field(default_factory=list)
    timeout_time: float = 0.0  # s, total
    duplicates: list[IdEvent] = field(default_factory=list)
    stale: list[IdEvent] = field(default_factory=list)
    lost: list[IdEvent] = field(default_factory=list)
    superseded: int = 0
    gaps: list[ReplyGap] = field(default_factory=list)
    rtf: float | None = None  # overall real-time factor
    rtf_connected: float | None = None  # from the first to the last reply, timeouts left out
    rtf_times: list[float] = field(default_factory=list)  # window starts (s, log clock)
    rtf_values: list[float] = field(default_factory=list)
    controller_step: float | None = None  # (skips + 1) dt: the T_ext the schedule implies
    suggested_ext_time: float | None = None  # s
    verdict: str = ""

    def as_dict(self) -> dict[str, Any]:
        """JSON-friendly copy."""
        return asdict(self)


@dataclass
class Timeline:
    """Per-event arrays of a run (index-aligned with the logs' rows)."""

    step_time: np.ndarray
    send_time: np.ndarray
    send_id: np.ndarray
    send_step: np.ndarray
    send_segment: np.ndarray
    outstanding: np.ndarray  # after each send
    receive_time: np.ndarray
    receive_id: np.ndarray
    receive_step: np.ndarray
    receive_segment: np.ndarray
    matched_send: np.ndarray  # index of the send each reply answers, −1 if none
    latency_steps: np.ndarray  # −1 where unmatched
    latency: np.ndarray  # s, NaN where unmatched
    blocking: np.ndarray  # bool per reply
    blocked_time: np.ndarray  # s per reply (0 where not blocking)


# -- everything together ---------------------------------------------------------------------
def analyse(step_time: np.ndarray, send_time: np.ndarray, send_id: np.ndarray,
            receive_time: np.ndarray, receive_id: np.ndarray, *, dt: float = DT,
            timeout_gap: float = TIMEOUT_GAP, rtf_window: float = RTF_WINDOW,
            ) -> tuple[Metrics, Timeline]:
    """All metrics of a run from the three logs' times and ids (see the module docstring)."""
    step_time = np.asarray(step_time, dtype=np.float64)
    send_time = np.asarray(send_time, dtype=np.float64)
    receive_time = np.asarray(receive_time, dtype=np.float64)
    send_id = np.rint(np.asarray(send_id, dtype=np.float64)).astype(np.int64)
    receive_id = np.rint(np.asarray(receive_id, dtype=np.float64)).astype(np.int64)
    n_steps, n_sends, n_recv = step_time.size, send_time.size, receive_time.size
    m = Metrics(dt=dt, steps=n_steps, sends=n_sends, applied=n_recv)
    if n_steps:
        m.duration = float(step_time[-1] - step_time[0])

    send_step = event_steps(step_time, send_time)
    receive_step = event_steps(step_time, receive_time)
    m.skips, m.skips_counts = observed_skips(send_step)
    skips = m.skips if m.skips is not None else 0

    # Segments, and the largest id applied so far in each reply's segment.
    send_seg = send_segments(send_id)
    m.segments = int(send_seg[-1]) + 1 if n_sends else 0
    m.resets = max(m.segments - 1, 0)
    recv_seg = event_segments(send_time, send_seg, receive_time)
    send_key = send_seg * _KEY + send_id  # strictly increasing
    recv_key = recv_seg * _KEY + receive_id
    running = np.maximum.accumulate(recv_key) if n_recv else recv_key

    # Outstanding after each send and the observed window.
    before = np.searchsorted(receive_time, send_time, side="right")  # replies at or before
    applied_before = np.full(n_sends, -1, dtype=np.int64)
    has = before > 0
    within = running[before[has] - 1] - send_seg[has] * _KEY
    applied_before[has] = np.where(within >= 0, within, -1)
    outstanding = send_id - applied_before
    if n_sends:
        m.window = int(outstanding.max())
        m.window_per_segment = [int(outstanding[send_seg == g].max())
                                for g in range(m.segments)]
    window = max(m.window or 1, 1)

    # Reply latency.
    matched = np.full(n_recv, -1, dtype=np.int64)
    if n_sends and n_recv:
        pos = np.minimum(np.searchsorted(send_key, recv_key), n_sends - 1)
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
        has_prev = prev >= 0
        due = np.zeros(n_recv, dtype=bool)
        due[has_prev] = receive_step[has_prev] - send_step[prev[has_prev]] >= skips + 1
        # outstanding just before the reply: last id sent − largest applied before it
        idx = np.flatnonzero(has_prev)
        last_applied = np.full(idx.size, -1, dtype=np.int64)
        earlier = idx > 0
        seg_of_prev = send_seg[prev[idx]]
        w = running[idx[earlier] - 1] - seg_of_prev[earlier] * _KEY
        last_applied[earlier] = np.where(w >= 0, w, -1)
        full = np.zeros(n_recv, dtype=bool)
        full[idx] = send_id[prev[idx]] - last_applied >= window
        blocking |= due & full
    blocking &= receive_step >= 0
    blocked = np.zeros(n_recv)
    blocked[blocking] = receive_time[blocking] - step_time[receive_step[blocking]]
    m.replies_in_blocking = int(blocking.sum())
    m.blocked_time = float(blocked.sum())
    m.longest_block = float(blocked.max()) if n_recv else 0.0
    m.blocking_share = m.blocked_time / m.duration if m.duration > 0 else 0.0

    # Timeouts.
    m.timeouts = [Interval(start, length)
                  for _, start, length in intervals_longer_than(step_time, timeout_gap)]
    m.timeout_time = float(sum(t.length for t in m.timeouts))

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
        m.duplicates = [IdEvent(int(recv_seg[j]), int(receive_id[j]), float(receive_time[j]))
                        for j in np.flatnonzero(duplicate)]
        m.stale = [IdEvent(int(recv_seg[j]), int(receive_id[j]), float(receive_time[j]))
                   for j in np.flatnonzero(stale)]
    if n_sends:
        largest = np.full(m.segments, -1, dtype=np.int64)
        valid = recv_seg >= 0
        np.maximum.at(largest, recv_seg[valid], receive_id[valid])
        answered = np.isin(send_key, recv_key)
        tail = np.arange(n_sends) >= n_sends - window
        lost = (send_id > largest[send_seg]) & ~tail
        m.lost = [IdEvent(int(send_seg[i]), int(send_id[i]), float(send_time[i]))
                  for i in np.flatnonzero(lost)]
        m.superseded = int((~answered & ~lost & ~tail).sum())

    # Gaps between consecutive applied replies (simulated time).
    if n_recv > 1:
        limit = GAP_FACTOR * (skips + 1)
        step_gaps = np.diff(receive_step)
        for j in np.flatnonzero(step_gaps > limit):
            m.gaps.append(ReplyGap(float(receive_time[j]), int(receive_step[j]),
                                   int(step_gaps[j]), float(step_gaps[j] * dt),
                                   float(receive_time[j + 1] - receive_time[j])))

    # Real-time factor.
    m.rtf = realtime_factor(step_time, dt)
    times, rtfs = realtime_factor_series(step_time, dt, rtf_window)
    m.rtf_times, m.rtf_values = times.tolist(), rtfs.tolist()
    if n_recv:
        first, last = int(max(receive_step[0], 0)), int(receive_step[-1])
        m.rtf_connected = connected_realtime_factor(step_time, first, last, dt, timeout_gap)

    m.controller_step = (skips + 1) * dt if m.skips is not None else None
    p90 = m.latency_ms.p90
    m.suggested_ext_time = suggested_ext_time(p90 / 1e3 if p90 is not None else None)
    m.verdict = verdict(m)
    timeline = Timeline(step_time, send_time, send_id, send_step, send_seg, outstanding,
                        receive_time, receive_id, receive_step, recv_seg, matched,
                        latency_steps, latency, blocking, blocked)
    return m, timeline


# -- the verdict -----------------------------------------------------------------------------
HELD = 0.85  # a real-time factor above this is "real time held" (the cases' threshold)
FASTER = 1.1  # above this, "faster than real time"
LITTLE_MARGIN = 0.8  # a controller needing this share of T_ext has little margin


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:g} ms"


def _count(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word if n == 1 else (plural or word + 's')}"


def verdict(m: Metrics) -> str:
    """One plain-language sentence about the run, from its metrics.

    The first clause says where replies land (median latency in steps against the observed
    skips) or, if the simulation ran slower than real time (factor ≤ 0.85 while connected),
    whether the controller is to blame (median latency above ``(skips + 1)·dt`` or blocking
    ≥ 25 % of the time: suggest an ``--ext-time``) or the simulator. Then the real-time
    factor, the margin when replies land in the next send step's blocking receive, and any
    timeouts, gaps, lost, duplicate or stale ids.
    """
    if m.sends == 0:
        return (f"no message was sent in {m.steps} physics steps: the coupling was off or "
                "never due to send")
    timeouts = ""
    if m.timeouts:
        longest = max(t.length for t in m.timeouts)
        timeouts = (f"{_count(len(m.timeouts), 'timeout')} (up to {longest:.1f} s each: the "
                    "simulator waited for a reply that never came)")
    if m.applied == 0:
        if not m.timeouts:
            return f"no controller answered: only sends ({m.sends})"
        longest = max(t.length for t in m.timeouts)
        return (f"no controller answered: only sends and {len(m.timeouts)} × {longest:.0f} s "
                "timeouts")
    skips = m.skips if m.skips is not None else 0
    period = (skips + 1) * m.dt
    rtf = m.rtf_connected if m.rtf_connected is not None else (m.rtf or 0.0)
    landing = m.latency_steps.median
    need = (m.latency_ms.median or 0.0) / 1e3 / period
    parts: list[str] = []
    if rtf <= HELD:
        slow_controller = need > 1.0 or m.blocking_share >= 0.25
        if slow_controller:
            text = f"controller slower than T_ext: simulation at {rtf:.2f}× real time — "
            ext = m.suggested_ext_time
            if ext is not None and ext > period + 1e-12:
                text += f"raise --ext-time to {_ms(ext)} (--ext-time {ext:g}) or speed up " \
                        "the controller"
            else:
                text += "speed up the controller"
            parts.append(text)
        else:
            parts.append(f"simulation at {rtf:.2f}× real time although the controller "
                         f"answers in time (blocking {m.blocking_share * 100:.0f} % of the "
                         "time): the simulator cannot keep up on this machine")
    else:
        if landing is None:
            where = f"{_count(m.unmatched, 'reply', 'replies')} to ids that were never sent"
        elif landing <= 1:
            where = "controller answers within 1 step"
        elif landing < skips + 1:
            in_blocking = m.replies_in_blocking / max(m.applied, 1)
            kind = "non-blocking steps" if in_blocking < 0.5 else "blocking receives"
            where = f"replies land {landing:g} steps after the send, in {kind}"
        elif landing == skips + 1:
            where = "replies land in the next send step's blocking receive"
        else:
            where = (f"replies land {landing:g} steps after the send ({landing / (skips + 1):.1f}"
                     f" send periods, window {m.window})")
        speed = (f"faster than real time ({rtf:.2f}×)" if rtf > FASTER
                 else f"real time held ({rtf:.2f}×)")
        text = f"{where}; {speed}"
        if landing is not None and landing == skips + 1 and skips > 0 and need >= LITTLE_MARGIN:
            text += f", little margin: the controller needs {need * 100:.0f} % of T_ext"
        parts.append(text)
    if timeouts:
        parts.append(timeouts)
    if m.gaps:
        longest_gap = max(g.length for g in m.gaps)
        parts.append(f"{_count(len(m.gaps), 'gap')} where the controller did not answer "
                     f"(longest {_ms(longest_gap)} of simulated time)")
    for items, one, many in ((m.lost, "lost message", "lost messages"),
                             (m.duplicates, "duplicate reply", "duplicate replies"),
                             (m.stale, "stale reply", "stale replies")):
        if items:
            ids = ", ".join(str(e.id) for e in items[:5]) + (", …" if len(items) > 5 else "")
            parts.append(f"{_count(len(items), one, many)} (id {ids})")
    if m.unmatched:
        parts.append(f"{_count(m.unmatched, 'reply', 'replies')} to an id never sent")
    return "; ".join(parts)
