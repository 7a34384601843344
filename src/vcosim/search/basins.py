"""The local minima of a search: its runs grouped into basins, the best run of each.

A search that converges on one critical case hides the others: the engineer wants every
distinct way the function fails. The runs are grouped as ToMATo groups points by density
(Chazal, Guibas, Oudot and Skraba, "Persistence-based clustering in Riemannian manifolds",
2013), here by the objective, in the parameter space scaled to the unit cube (a log range by
its logarithm):

- the graph: each run joined to its ``k`` nearest runs (both ways);
- the runs taken best first, each joins the basin of its best neighbour taken already (its
  steepest descent), or starts a basin (a local minimum of the graph) if none is;
- where a run touches two basins it is the pass between them: the basin of the worse
  minimum is merged into the other unless its minimum lies more than ``PROMINENCE`` of the
  objective's spread below that pass. A dip the sampling made (a run whose few neighbours
  happen all to be worse) is not deep, and goes; a second valley is, and stays.

The spread is from the best score to the 90th percentile (capped and failed runs aside).
Pure numpy and a union-find (a search's few thousand runs take well under a second).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from vcosim.search.config import Range

if TYPE_CHECKING:  # (the driver's outcome lists its minima: it imports this module)
    from vcosim.search.driver import SearchRun

PROMINENCE = 0.2
"""How deep a valley must be below its pass to count, as a share of the objective's spread."""
SPREAD_QUANTILE = 90
"""The percentile of the scores the spread reaches to (the worst runs may be capped)."""


@dataclass(frozen=True)
class Minimum:
    """A local minimum of the objective: the best run of its basin, and the basin's size."""

    run: SearchRun
    runs: int  # runs whose descent ends here (the minimum's among them)
    falsifying: int  # of those, the falsifying ones

    def to_dict(self) -> dict[str, object]:
        """Its entry in ``summary.json``."""
        r = self.run
        return {
            "run": r.index,
            "value": r.value,
            "params": r.params,
            "falsifying": r.falsifying,
            "basin_runs": self.runs,
            "basin_falsifying": self.falsifying,
        }


def unit_cube(runs: Sequence[SearchRun], ranges: Mapping[str, Range]) -> np.ndarray:
    """Each run's parameters scaled to [0, 1] by their ranges (log ranges by the logarithm)."""
    columns = []
    for name, r in ranges.items():
        values = np.array([float(run.params[name]) for run in runs], dtype=float)
        low, high = r.low, r.high
        if r.log:
            values, low, high = np.log(values), math.log(low), math.log(high)
        span = high - low
        columns.append((values - low) / span if span > 0 else np.zeros_like(values))
    return np.column_stack(columns) if columns else np.zeros((len(runs), 0))


def neighbours(dimensions: int, count: int) -> int:
    """The nearest runs each run is joined to: 4 per dimension, at least 8.

    Fewer joins leave dips where the sampling is sparse: of 180 random samples of three
    two-well functions (docs/search.md), 172 came out with both wells and no other with 4
    per dimension, 105 with 2.
    """
    return max(0, min(count - 1, max(8, 4 * dimensions)))


def local_minima(
    runs: Sequence[SearchRun], ranges: Mapping[str, Range], prominence: float = PROMINENCE
) -> list[Minimum]:
    """The local minima of the runs' scores, the best first (runs without a score left out)."""
    scored = [r for r in runs if r.score is not None and math.isfinite(r.score)]
    if not scored:
        return []
    scored.sort(key=lambda r: (r.score, r.index))  # best first: better = earlier
    score = np.array([r.score for r in scored], dtype=float)
    tau = prominence * float(np.percentile(score, SPREAD_QUANTILE) - score[0])
    below = _graph(unit_cube(scored, ranges))
    parent = list(range(len(scored)))  # union-find; a basin's root is its minimum

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, taken in enumerate(below):
        if not taken:
            continue  # a minimum of the graph: a basin of its own so far
        here = root(min(taken))  # the best neighbour's basin: the steepest way down
        parent[i] = here
        for j in taken:
            other = root(j)
            if other != here and score[max(other, here)] >= score[i] - tau:  # a shallow dip
                here = min(other, here)
                parent[max(other, root(i))] = here
    basin = np.array([root(i) for i in range(len(scored))])
    return [
        Minimum(
            scored[m],
            int((basin == m).sum()),
            sum(scored[j].falsifying for j in np.flatnonzero(basin == m)),
        )
        for m in sorted(set(basin.tolist()))
    ]


def _graph(points: np.ndarray) -> list[list[int]]:
    """For each run (best first), its better neighbours: of the k nearest either way."""
    n = len(points)
    k = neighbours(points.shape[1], n)
    below: list[set[int]] = [set() for _ in range(n)]
    for i in range(n):
        distance = np.sqrt(((points - points[i]) ** 2).sum(axis=1))
        distance[i] = math.inf
        for j in np.argpartition(distance, k - 1)[:k].tolist() if k else []:
            below[max(i, j)].add(min(i, j))
    return [sorted(b) for b in below]


def failure_share(
    runs: Sequence[SearchRun], ranges: Mapping[str, Range], grid: np.ndarray
) -> np.ndarray:
    """The share of falsifying runs among the ``k`` nearest to each point of ``grid``.

    ``grid`` holds points in the unit cube of ``ranges`` (one row each). Its 0.5 contour is
    the estimate of the failure region's boundary a k-nearest-neighbour vote gives; over
    two of more parameters it is that boundary's shadow on the two.
    """
    scored = [r for r in runs if r.score is not None]
    if not scored:
        return np.full(len(grid), math.nan)
    points = unit_cube(scored, ranges)
    bad = np.array([r.falsifying for r in scored], dtype=float)
    k = max(1, neighbours(points.shape[1], len(scored) + 1))
    share = np.empty(len(grid))
    for start in range(0, len(grid), 256):
        block = grid[start : start + 256]
        distance = ((block[:, None, :] - points[None, :, :]) ** 2).sum(axis=2)
        nearest = np.argpartition(distance, k - 1, axis=1)[:, :k]
        share[start : start + 256] = bad[nearest].mean(axis=1)
    return share
