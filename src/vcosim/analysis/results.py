"""What the analysis of a run produces: plain dataclasses, no behaviour.

Kept apart from ``metrics`` (which computes them) and ``verdict`` (which reads them) so that
neither module imports the other's internals. All names are re-exported by
``vcosim.analysis.metrics``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from vcosim.constants import PHYSICS_DT

DT = PHYSICS_DT  # s, the physics step
SLOW_SHARE = 0.25  # waiting for replies this share of a run makes the controller suspect


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
    """Timing metrics of one run (see ``vcosim.analysis.metrics`` for the exact definitions).

    The fields from ``dropped_stale`` to ``timeouts_after_stale`` come from the events log
    and are None when the run has none (BeamNG's runs, older vcosim runs).
    """

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
    resets: int = 0  # timeouts that reset the coupling: segments begun after the first reply
    startup_time: float | None = None  # s from the first step to the first reply (None: none)
    startup_waits: list[Interval] = field(default_factory=list)  # > 1 s, before the first reply
    startup_resends: int = 0  # sends repeating the send before them in its step
    latency_steps: Distribution = field(default_factory=Distribution)
    latency_steps_counts: dict[int, int] = field(default_factory=dict)
    latency_ms: Distribution = field(default_factory=Distribution)
    unmatched: int = 0  # applied replies to an id not sent in their segment
    replies_in_blocking: int = 0  # applied replies that were blocking receives
    blocked_time: float = 0.0  # s, total
    blocking_share: float = 0.0  # of the run's wall time
    waiting_share: float = 0.0  # of the wall time while connected, timeouts left out
    longest_block: float = 0.0  # s
    timeouts: list[Interval] = field(default_factory=list)  # from the first reply on
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
    # What the latency is made of (see the module doc of ``metrics``).
    fastest_reply: float | None = None  # s: bounds the controller's own computation
    simulator_ms: Distribution = field(default_factory=Distribution)  # the simulator's part
    controller_slow: bool = False  # shown slower than its step
    suggested_ext_time: float | None = None  # s, only for a controller shown slow
    # The controller's id convention, from the applied replies.
    id_offsets: dict[int, int] = field(default_factory=dict)  # reply id − last id sent → count
    id_offset: int | None = None  # the most frequent offset
    id_pattern: str | None = None  # "direct", "previous id", "own counter", "other"
    # From the events log (None without one).
    events_logged: bool = False
    dropped_stale: int | None = None  # replies dropped: id below the largest applied
    dropped_duplicate: int | None = None  # replies dropped: id equal to the largest applied
    startup_unapplied: int | None = None  # id ≤ 0 while nothing was applied yet
    startup_leading: int | None = None  # of those, before the run's first applied reply
    dropped_in_blocking: int | None = None  # stale + duplicate taken by blocking receives
    timeouts_logged: int | None = None  # timeouts the simulator recorded after the first reply
    timeouts_after_dropped: int | None = None  # after stale/duplicate replies to their message
    timeouts_after_stale: int | None = None  # of those, after a stale one
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
    id_offset: np.ndarray  # reply id − id of the last message sent before it (NaN: none)
    answered_id: np.ndarray  # the id of the message each reply answers (id pattern applied)
