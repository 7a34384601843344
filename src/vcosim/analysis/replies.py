"""Replies the simulator did not apply, and how the controller numbers its replies.

The receive log holds only applied replies, so on its own it cannot tell a controller that
did not answer from one whose answers were dropped. vcosim's events log
(``vcosimCouplingEvents.csv``, see ``vcosim.analysis.logs``) records the dropped replies and
the timeouts; this module turns it, with the send and receive logs, into:

- **Segments from timeouts.** A timeout resets the simulator's send counter and its largest
  applied id but not the message ids, so a reset no longer shows as ids restarting: a send
  after a timeout event starts a new segment.
- **The id pattern.** Offset of an applied reply = its id − the id of the last message sent
  before it (a reply logged at the same time as a send counts as before it, as for
  segments). The most frequent offset classifies the controller:

  | pattern | offset | the reply to message k carries | seen with |
  | --- | --- | --- | --- |
  | direct | 0 (or below: replies landing after later sends) | k | a controller echoing the id |
  | previous id | −1, and a segment starts with ≥ 2 start-up replies of id 0 | k − 1 | a
    Simulink Memory block on the id (BeamNG's example models) |
  | own counter | +1 | k + 1 | BeamNG's FMI FMUs: their own reply counter |
  | other | ≥ 2 | | |

  Without an events log a −1 offset stays "direct": a direct controller whose replies land
  after the next send looks the same in the send and receive logs.
- **Start-up answers.** A start-up reply (id ≤ 0 before anything is applied) is not applied
  but counts as an answer: the j-th in a segment answers the segment's j-th message.
- **Timeouts after dropped replies.** A timeout preceded, since the last send before it, by
  dropped stale or duplicate replies (in the blocking receive or in the polls before it):
  the controller did answer, but with ids already applied, so the simulator waited for a
  newer one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vcosim.analysis.logs import DUPLICATE, EVENTS_NAMES, STALE, STARTUP, TIMEOUT

DIRECT, PREVIOUS_ID, OWN_COUNTER, OTHER = "direct", "previous id", "own counter", "other"
# answered id = reply id + this
ANSWER_SHIFT: dict[str, int] = {DIRECT: 0, PREVIOUS_ID: 1, OWN_COUNTER: -1, OTHER: 0}
KEY = 1 << 32  # (segment, id) -> segment * KEY + id
PREVIOUS_ID_STARTUPS = 2  # start-up replies of id 0 a segment starts with for "previous id"


@dataclass(frozen=True)
class Events:
    """The rows of an events log as arrays (see ``vcosim.analysis.logs`` for the codes)."""

    time: np.ndarray
    code: np.ndarray  # int
    id: np.ndarray  # int
    largest: np.ndarray  # int
    blocking: np.ndarray  # bool

    @classmethod
    def from_array(cls, data: np.ndarray) -> Events:
        """From the 5 columns of ``vcosimCouplingEvents.csv`` (time, event, id, …)."""
        data = np.asarray(data, dtype=np.float64).reshape(-1, len(EVENTS_NAMES))
        whole = np.rint(data[:, 1:]).astype(np.int64)
        return cls(data[:, 0].copy(), whole[:, 0], whole[:, 1], whole[:, 2], whole[:, 3] != 0)

    def of(self, *codes: int) -> np.ndarray:
        """Mask of the rows with one of ``codes``."""
        return np.isin(self.code, codes)

    def count(self, *codes: int, blocking: bool | None = None) -> int:
        """Rows with one of ``codes`` (and, if given, that blocking flag)."""
        mask = self.of(*codes)
        if blocking is not None:
            mask &= self.blocking == blocking
        return int(mask.sum())


def timeout_boundaries(send_time: np.ndarray, timeout_time: np.ndarray) -> np.ndarray:
    """Per send after the first: True if a timeout lies between it and the previous send.

    A timeout logged at the same time as a send counts as before it (the send follows).
    """
    done = np.searchsorted(np.sort(timeout_time), send_time, side="right")
    return np.diff(done) > 0


def reply_offsets(
    send_time: np.ndarray, send_id: np.ndarray, receive_time: np.ndarray, receive_id: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Each reply's id − the id of the last message sent before it, and where that exists."""
    prev = np.searchsorted(send_time, receive_time, side="left") - 1
    has = prev >= 0
    offsets = np.zeros(receive_time.shape, dtype=np.int64)
    offsets[has] = receive_id[has] - send_id[prev[has]]
    return offsets, has


def offset_mode(offsets: np.ndarray) -> tuple[int | None, dict[int, int]]:
    """The most frequent offset (ties: the one nearest 0, then the lower) and all counts."""
    if offsets.size == 0:
        return None, {}
    values, counts = np.unique(offsets, return_counts=True)
    distribution = {int(v): int(c) for v, c in zip(values, counts, strict=True)}
    mode = min(distribution, key=lambda v: (-distribution[v], abs(v), v))
    return mode, distribution


def leading_zero_startups(events: Events, send_time: np.ndarray, send_segment: np.ndarray) -> int:
    """The most start-up replies of id 0 received in one segment."""
    mask = events.of(STARTUP) & (events.id == 0)
    if not mask.any() or send_time.size == 0:
        return 0
    segment = _segment_at(send_time, send_segment, events.time[mask])
    segment = segment[segment >= 0]
    return int(np.bincount(segment).max()) if segment.size else 0


def classify(mode: int | None, zero_startups: int) -> str | None:
    """The id pattern from the most frequent offset and the start-up replies of id 0."""
    if mode is None:
        return None
    if mode == 1:
        return OWN_COUNTER
    if mode == -1 and zero_startups >= PREVIOUS_ID_STARTUPS:
        return PREVIOUS_ID
    return DIRECT if mode <= 0 else OTHER


def startup_answers(
    events: Events, send_time: np.ndarray, send_id: np.ndarray, send_segment: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Time and (segment, id) key of the message each start-up reply answers.

    The j-th start-up reply of a segment answers its j-th message (never a later one than
    the last sent before the reply). Replies before any send are left out.
    """
    mask = events.of(STARTUP)
    times = events.time[mask]
    if times.size == 0 or send_time.size == 0:
        return np.zeros(0), np.zeros(0, dtype=np.int64)
    order = np.argsort(times, kind="stable")
    times = times[order]
    prev = np.searchsorted(send_time, times, side="left") - 1
    keep = prev >= 0
    times, prev = times[keep], prev[keep]
    segment = send_segment[prev]
    seg_first = np.searchsorted(send_segment, segment, side="left")  # first send of segment
    _, first_pos, inverse = np.unique(segment, return_index=True, return_inverse=True)
    rank = np.arange(segment.size) - first_pos[inverse]
    answered = np.minimum(seg_first + rank, prev)
    return times, segment * KEY + send_id[answered]


def timeouts_after_dropped(events: Events, send_time: np.ndarray) -> tuple[int, int]:
    """Timeouts preceded by dropped stale or duplicate replies; of those, by a stale one.

    Counted are replies dropped after the last send before the timeout (the message the
    simulator waited an answer to), in polls or in the blocking receive.
    """
    timeout_time = events.time[events.of(TIMEOUT)]
    if timeout_time.size == 0:
        return 0, 0
    prev = np.searchsorted(send_time, timeout_time, side="left") - 1
    since = np.full(timeout_time.shape, -np.inf)
    since[prev >= 0] = send_time[prev[prev >= 0]]
    counts = []
    for codes in ((STALE, DUPLICATE), (STALE,)):
        dropped = np.sort(events.time[events.of(*codes)])
        n = np.searchsorted(dropped, timeout_time, side="right") - np.searchsorted(
            dropped, since, side="right"
        )
        counts.append(int((n > 0).sum()))
    return counts[0], counts[1]


def _segment_at(send_time: np.ndarray, send_segment: np.ndarray, times: np.ndarray) -> np.ndarray:
    """Segment of the last send strictly before each time (−1: none)."""
    prev = np.searchsorted(send_time, times, side="left") - 1
    segment = np.full(times.shape, -1, dtype=np.int64)
    segment[prev >= 0] = send_segment[prev[prev >= 0]]
    return segment
