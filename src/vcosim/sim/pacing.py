"""How simulation time relates to wall-clock time.

Real time in frames, as fast as possible, or paced only by the coupling (lock-step). Realtime
pacing works like BeamNG.tech: each frame computes the physics steps that bring simulation
time up to the wall-clock time of the next frame, runs them ahead, then waits. A run more than
``max_lag`` behind the wall clock falls into slow motion instead of racing to catch up.

What a late frame does is the run's deadline policy (``OnLate``): catch up and fall into slow
motion as said (``slow``, BeamNG's way: the next frames start at once until the run is on
time), drop the frame slots it overran (``skip``: simulation time forgoes them, and the next
frame has a whole frame's time), or end the run (``stop``).
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, field
from enum import Enum

from vcosim.constants import FRAME_RATE, PHYSICS_DT
from vcosim.stats import Samples


class OnLate(str, Enum):
    """What real-time pacing does when a frame ends after the next one was due."""

    slow = "slow"
    skip = "skip"
    stop = "stop"


class PacingMode(str, Enum):
    """The three ways a simulation can be paced."""

    realtime = "realtime"
    fast = "fast"
    lockstep = "lockstep"


@dataclass
class FrameStats:
    """Frame timing of a run: lateness of each frame start against its schedule.

    The lateness samples take fixed memory (``Samples``), so a run may last for days.
    """

    frames: int = 0
    late_frames: int = 0
    skipped_frames: int = 0
    stopped_late: bool = False
    lateness: Samples = field(default_factory=Samples)

    def summary(self) -> dict[str, float]:
        """Late frames, jitter (standard deviation) and lateness percentiles, in milliseconds."""
        lateness, timed = self.lateness, self.lateness.count > 0  # (none: not real time)
        return {
            "frames": self.frames,
            "late_frames": self.late_frames,
            "skipped_frames": self.skipped_frames,
            "stopped_late": self.stopped_late,
            "frame_jitter_ms": lateness.std * 1e3 if timed else 0.0,
            **{
                f"frame_lateness_{name}_ms": lateness.percentile(q) * 1e3 if timed else 0.0
                for name, q in LATENESS_PERCENTILES.items()
            },
        }


LATENESS_PERCENTILES = {"p50": 50.0, "p99": 99.0, "p999": 99.9, "max": 100.0}
"""The frame lateness figures of a report (``frame_lateness_<name>_ms``)."""


class Pacer:
    """Decides how many physics steps each frame runs, and waits between frames."""

    def __init__(
        self,
        mode: PacingMode | str = PacingMode.fast,
        *,
        frame_rate: float = FRAME_RATE,
        time_dilation: float = 1.0,
        dt: float = PHYSICS_DT,
        max_lag: float = 0.05,
        on_late: OnLate | str = OnLate.slow,
    ) -> None:
        self.mode = PacingMode(mode)
        self.on_late = OnLate(on_late)
        if frame_rate <= 0 or time_dilation <= 0:
            raise ValueError("frame_rate and time_dilation must be positive")
        self.frame_period = 1.0 / frame_rate
        self.time_dilation = time_dilation
        self.dt = dt
        self.max_lag = max_lag
        self.stats = FrameStats()
        self._frames = 0  # frames begun: times come from this count, never from a running sum
        self._deadline = 0.0
        self._wall0 = 0.0
        self._sim0 = 0.0
        self._excused = 0.0  # wall seconds of lag to catch up rather than fall behind for

    @property
    def lockstep(self) -> bool:
        """True when only the coupling paces the run (deterministic)."""
        return self.mode is PacingMode.lockstep

    @property
    def realtime(self) -> bool:
        """True when frames are held to the wall clock."""
        return self.mode is PacingMode.realtime

    def start(self, sim_time: float) -> None:
        """Begin frame scheduling now."""
        self._frames = 0
        self._wall0 = self._deadline = time.perf_counter()
        self._sim0 = sim_time

    @property
    def deadline(self) -> float:
        """Wall time (``perf_counter``) at which the frame being planned is due."""
        return self._deadline

    def steps_for_next_frame(self, step_index: int) -> int:
        """Steps that bring simulation time to the next frame's (dilated) wall-clock time.

        In real time the target follows the wall clock, so a frame after a hiccup runs the
        steps that catch up; more than ``max_lag`` behind (BeamNG's 20 FPS floor: 50 ms), the
        simulation stops owing that time and runs in slow motion instead.
        """
        self._frames += 1
        span = self._frames * self.frame_period
        if not self.realtime:
            target = self._sim0 + span
        else:
            self._deadline = self._wall0 + span
            behind = time.perf_counter() - self._deadline
            if behind > self.max_lag + self._excused:
                shift = behind - self._excused
                self._wall0 += shift
                self._deadline += shift
            if behind <= self.max_lag:
                self._excused = 0.0
            target = self._sim0 + span * self.time_dilation
        return max(math.floor(target / self.dt + 1e-6) - step_index, 0)

    def excuse(self, seconds: float) -> None:
        """Catch up ``seconds`` of lag instead of falling into slow motion for them.

        A coupling that waited out the timeout of a controller that has gone (real time
        only) lost that wait to nobody: the vehicle keeps moving as a real one would, so the
        frames after it run at once until simulation time is back on the wall clock.
        """
        if self.realtime:
            self._excused += seconds

    def end_frame(self) -> None:
        """Record the frame and, in real time, sleep until the next frame is due."""
        self.stats.frames += 1
        if not self.realtime:
            return
        late = time.perf_counter() - self._deadline
        if late > 0.0:
            self.stats.late_frames += 1
            if self.on_late is OnLate.skip:  # the slots it overran go: the next frame gets
                missed = math.ceil(late / self.frame_period)  # a whole one, from now on
                self.stats.skipped_frames += missed
                self._wall0 += missed * self.frame_period
            self.stats.stopped_late = self.on_late is OnLate.stop
        else:
            sleep_until(self._deadline)
        self.stats.lateness.add(time.perf_counter() - self._deadline)


def sleep_until(deadline: float, spin: float = 0.001) -> None:
    """Sleep to within ``spin`` of a perf_counter deadline, then spin: sub-millisecond accuracy.

    The spin lets the process's other threads in on every look where there are any (a
    server thread beside the run, a test's client): a bare loop holds the GIL throughout.
    """
    remaining = deadline - time.perf_counter()
    if remaining > spin:
        time.sleep(remaining - spin)
    if threading.active_count() == 1:
        while time.perf_counter() < deadline:
            pass
    else:  # a bare loop would hold the GIL against the other threads for the whole spin
        while time.perf_counter() < deadline:
            time.sleep(0)
