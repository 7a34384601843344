"""What a sweep produced: the finished runs, the worst of each metric, the typed summary.

``SweepOutcome`` is what ``run_sweep`` returns; ``SweepSummary`` its headline figures as
written to ``summary.json``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from vcosim.reports import Report
from vcosim.sweep.config import Scalar, Sweep
from vcosim.sweep.metrics import METRICS, Metric
from vcosim.sweep.runner import RunResult


@dataclass
class SweepOutcome:
    """What a sweep produced: the finished runs in run order and the circumstances."""

    sweep: Sweep
    results: list[RunResult]
    interrupted: bool = False
    wall_time: float = 0.0
    backend: str = ""
    files: list[Path] = field(default_factory=list)

    @property
    def failed(self) -> list[RunResult]:
        """The runs that raised."""
        return [r for r in self.results if r.failed]

    @property
    def total(self) -> int:
        """Runs the sweep has (finished or not)."""
        return len(self.sweep.runs)

    @property
    def ok(self) -> list[RunResult]:
        """The runs that finished without an error."""
        return [r for r in self.results if not r.failed]

    def values(self, name: str) -> np.ndarray:
        """The column ``name`` of the runs that finished without an error."""
        return np.array([r.metrics.column(name) for r in self.ok], dtype=float)


def ranking(values: np.ndarray, metric: Metric) -> np.ndarray:
    """Indices of the finite-or-infinite (not NaN) values, worst first."""
    valid = np.flatnonzero(~np.isnan(values))
    v = values[valid]
    if metric.worst == "min":
        key = v
    elif metric.worst == "abs":
        key = -np.abs(v)
    else:
        key = -v
    return valid[np.argsort(key, kind="stable")]


def worst_cases(outcome: SweepOutcome, count: int) -> dict[str, list[RunResult]]:
    """The ``count`` worst runs of each metric that has values."""
    ok = outcome.ok
    out = {}
    for metric in METRICS:
        order = ranking(outcome.values(metric.name), metric)
        if order.size:
            out[metric.name] = [ok[i] for i in order[:count]]
    return out


def _json_number(value: float) -> float | str | None:
    """JSON has no NaN or infinity: None and "inf"/"-inf" stand in."""
    if math.isfinite(value):
        return value
    return None if math.isnan(value) else ("inf" if value > 0 else "-inf")


@dataclass
class WorstRun(Report):
    """One of the worst runs of a metric."""

    run: int
    value: float
    params: dict[str, Scalar]

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly (inf as "inf", NaN as null)."""
        return {"run": self.run, "value": _json_number(self.value), "params": self.params}


@dataclass
class FailedRun(Report):
    """A run that raised, with its error."""

    run: int
    params: dict[str, Scalar]
    error: str


@dataclass
class SweepSummary(Report):
    """A sweep's headline figures: counts, timing, the worst runs of each metric, failures."""

    name: str
    source: str
    runs: int
    finished: int
    failed: int
    interrupted: bool
    backend: str
    wall_time: float
    worst: dict[str, list[WorstRun]]
    failures: list[FailedRun]

    @classmethod
    def of(cls, outcome: SweepOutcome, worst: int) -> SweepSummary:
        """The summary of ``outcome`` with the ``worst`` worst runs of each metric."""
        return cls(
            name=outcome.sweep.name,
            source=outcome.sweep.source,
            runs=outcome.total,
            finished=len(outcome.results),
            failed=len(outcome.failed),
            interrupted=outcome.interrupted,
            backend=outcome.backend,
            wall_time=outcome.wall_time,
            worst={
                name: [WorstRun(r.index, r.metrics.column(name), r.params) for r in runs]
                for name, runs in worst_cases(outcome, worst).items()
            },
            failures=[FailedRun(r.index, r.params, r.error) for r in outcome.failed],
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly, in the layout of ``summary.json``."""
        return {
            "name": self.name,
            "source": self.source,
            "runs": self.runs,
            "finished": self.finished,
            "failed": self.failed,
            "interrupted": self.interrupted,
            "backend": self.backend,
            "wall_time": self.wall_time,
            "worst": {k: [w.to_dict() for w in v] for k, v in self.worst.items()},
            "failures": [f.to_dict() for f in self.failures],
        }
