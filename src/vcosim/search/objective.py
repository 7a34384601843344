"""What a search minimises: a run metric towards its worst end, or a requirement's robustness.

Every objective is turned into a *score* to minimise: a metric whose worst case is its minimum
(``min_time_to_collision``) as it is, one whose worst is its maximum (``peak_jerk``) negated,
a requirement's robustness as it is. A run falsifies when its score is below the threshold's
(a time to collision under 1 s; a jerk above 10 m/s³; a robustness below 0). The method sees
the score clipped to ±``cap`` (a time to collision of inf is ``cap``); the results keep the
value as measured.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from vcosim.errors import UnknownNameError
from vcosim.search.stl import Formula, robustness, signal_names
from vcosim.sweep.config.sections import DERIVED_SIGNALS
from vcosim.sweep.faces import SignalSpec
from vcosim.sweep.metrics import Metric
from vcosim.sweep.runner import RunResult
from vcosim.vehicle import layout as L


def check_signals(formula: Formula) -> list[str]:
    """A problem for each signal of ``formula`` that no run records."""
    valid = (*L.SIGNAL_NAMES, *DERIVED_SIGNALS)
    return [
        str(UnknownNameError("signal", name, valid))
        for name in signal_names(formula)
        if name not in valid
    ]


@dataclass(frozen=True)
class Objective:
    """A metric or a requirement, with the threshold under which a run falsifies."""

    metric: Metric | None
    requirement: Formula | None
    threshold: float
    cap: float = 1000.0
    signals_every: int = 20

    @property
    def name(self) -> str:
        """The metric's name, or ``robustness``."""
        return self.metric.name if self.metric is not None else "robustness"

    def signals(self) -> SignalSpec | None:
        """The signals each run must record for the requirement (None for a metric)."""
        if self.requirement is None:
            return None
        return SignalSpec(tuple(signal_names(self.requirement)), self.signals_every)

    def value(self, result: RunResult) -> float | None:
        """The run's metric or robustness as measured; None for a failed run."""
        if result.failed:
            return None
        if self.metric is not None:
            return result.metrics.column(self.metric.name)
        assert self.requirement is not None and result.signals is not None
        time = result.signals["time"]
        dt = float(time[1] - time[0]) if time.size > 1 else 1.0
        return robustness(self.requirement, result.signals, dt)

    def score(self, value: float) -> float:
        """``value`` as the number to minimise, clipped to ±cap (NaN: not measured, cap)."""
        if math.isnan(value):
            return self.cap
        worst = self.metric.worst if self.metric is not None else "min"
        signed = value if worst == "min" else (-abs(value) if worst == "abs" else -value)
        return max(-self.cap, min(self.cap, signed))

    def falsifies(self, value: float | None) -> bool:
        """True when ``value`` is on the failing side of the threshold."""
        if value is None or math.isnan(value):
            return False
        return self.score(value) < self.score(self.threshold)
