"""What a run measures: the metric columns, their definitions, and the typed row of one run.

Definitions of every metric: ``docs/sweeps.md``. The tracking metrics (settling time,
overshoot, steady-state error) are the step response of the recorded signal, computed as the
demo computes it (``vcosim.scenarios.metrics.step_response``); ``min_realtime_factor`` from
the coupling's timing and the controller's computation time.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

from vcosim.reports import Report
from vcosim.scenarios.metrics import StepResponse

NAN = math.nan


@dataclass(frozen=True)
class Metric:
    """A metric column: its unit, which end is the worst case, and what it is."""

    name: str
    unit: str
    worst: str  # "max", "min" or "abs" (largest magnitude)
    description: str


METRICS = (
    Metric(
        "settling_time",
        "s",
        "max",
        "time after which the signal stays within the band around the target (inf: never)",
    ),
    Metric(
        "overshoot",
        "signal",
        "max",
        "largest excursion beyond the target, in the direction of the step",
    ),
    Metric("overshoot_pct", "%", "max", "overshoot as a percentage of the step"),
    Metric(
        "steady_state_error",
        "signal",
        "abs",
        "target minus the mean of the signal over the last steady_window seconds",
    ),
    Metric("max_lateral_acceleration", "m/s2", "max", "largest |accY| over the run"),
    Metric(
        "min_realtime_factor",
        "-",
        "min",
        "lowest real-time factor the coupling allows with the controller's computation time: "
        ">= 1 keeps real time",
    ),
    Metric(
        "min_time_gap",
        "s",
        "min",
        "a world's ego: smallest bumper gap to the vehicle ahead over its own speed",
    ),
    Metric(
        "min_distance",
        "m",
        "min",
        "a world's ego: smallest gap between its box and any other vehicle's (0: contact)",
    ),
    Metric(
        "min_time_to_collision",
        "s",
        "min",
        "a world's ego: smallest bumper gap to the vehicle ahead over the closing speed "
        "(0 if it collided)",
    ),
    Metric("collision", "-", "max", "a world's ego: 1 if it collided, else 0"),
    Metric(
        "peak_jerk",
        "m/s3",
        "max",
        "a world's ego: largest |d accX / dt| over 10 ms samples (comfort)",
    ),
)
"""The metrics every run yields, in column order (a world's only in runs of a world)."""

WORLD_METRICS = (
    "min_time_gap",
    "min_distance",
    "min_time_to_collision",
    "collision",
    "peak_jerk",
)
"""The metrics of a world's ego (``vcosim.sweep.world``): NaN in runs of a lone car."""

DETAIL_COLUMNS = (
    "final_value",
    "target",
    "step_size",
    "band",
    "controller_step",
    "send_skips",
    "window",
    "compute_time",
    "sent",
    "applied",
)
"""Further columns: the quantities the metrics were computed from."""

TIMING_COLUMNS = (
    "wall_time",
    "sim_speed",
    "compute_time_median",
    "compute_time_p99",
    "compute_time_max",
)
"""Columns measured on the wall clock; they differ between otherwise identical runs."""

RESULT_COLUMNS = (*(m.name for m in METRICS), *DETAIL_COLUMNS, *TIMING_COLUMNS)

MEASURED_COMPUTE_COLUMNS = ("compute_time", "min_realtime_factor")
"""Columns that come from the wall clock too when the computation time is measured."""


@dataclass
class RunMetrics(Report):
    """One run's row: every column of ``RESULT_COLUMNS`` (NaN: not computed for this run).

    ``wall_clock`` names the columns measured on the wall clock in this run: the timing
    columns, and the computation time with what follows from it when it was measured. It is
    not a column: ``to_dict`` gives the columns only.
    """

    settling_time: float = NAN
    overshoot: float = NAN
    overshoot_pct: float = NAN
    steady_state_error: float = NAN
    max_lateral_acceleration: float = NAN
    min_realtime_factor: float = NAN
    min_time_gap: float = NAN
    min_distance: float = NAN
    min_time_to_collision: float = NAN
    collision: float = NAN
    peak_jerk: float = NAN
    final_value: float = NAN
    target: float = NAN
    step_size: float = NAN
    band: float = NAN
    controller_step: float = NAN
    send_skips: float = NAN
    window: float = NAN
    compute_time: float = NAN
    sent: float = NAN
    applied: float = NAN
    wall_time: float = NAN
    sim_speed: float = NAN
    compute_time_median: float = NAN
    compute_time_p99: float = NAN
    compute_time_max: float = NAN
    wall_clock: tuple[str, ...] = field(default=TIMING_COLUMNS, compare=False)

    def column(self, name: str) -> float:
        """The value of the column ``name``."""
        if name not in RESULT_COLUMNS:
            raise KeyError(name)
        return float(getattr(self, name))

    def to_dict(self) -> dict[str, float]:
        """Every column by name, in column order."""
        return {name: float(getattr(self, name)) for name in RESULT_COLUMNS}

    def deterministic(self) -> dict[str, float]:
        """The columns that are the same every time this run is repeated, on any machine."""
        return {k: v for k, v in self.to_dict().items() if k not in self.wall_clock}


def min_realtime_factor(
    controller_step: float, window: int, compute_time: float, ping_time: float
) -> float:
    """The lowest real-time factor a coupling with this timing allows.

    A controller that computes for ``compute_time`` per message keeps up with one message per
    ``controller_step`` only if ``compute_time <= controller_step`` (throughput), and each reply
    must arrive within ``window`` messages: ``compute_time + ping_time <= window *
    controller_step`` (latency). Otherwise every send step waits and simulated time runs slower
    than the wall clock by the larger ratio.
    """
    throughput = controller_step / compute_time if compute_time > 0 else math.inf
    latency = (
        window * controller_step / (compute_time + ping_time)
        if compute_time + ping_time > 0
        else math.inf
    )
    return min(throughput, latency)


def with_tracking(metrics: RunMetrics, response: StepResponse) -> RunMetrics:
    """``metrics`` with the tracking columns filled in from a step response."""
    return dataclasses.replace(
        metrics,
        settling_time=response.settling_time,
        overshoot=response.overshoot,
        overshoot_pct=response.overshoot_pct,
        steady_state_error=response.steady_state_error,
        final_value=response.final_value,
        target=response.target,
        step_size=response.step_size,
        band=response.band,
    )
