"""The best run of each local minimum, and the failure region's boundary (issue 48, item 2).

Synthetic objectives over the small search's two ranges, no simulation: the runs are made
as a search logs them, then clustered (``search.basins``) and written (``write_outputs``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from small_searches import small_search

from vcosim.search.basins import failure_share, local_minima, unit_cube
from vcosim.search.config import Range
from vcosim.search.driver import SearchOutcome, SearchRun
from vcosim.search.output import write_outputs

SEARCH = small_search(threshold=0.01)  # controller.kp in [0.05, 2], controller.ki in [0, 1]
KP, KI = "controller.kp", "controller.ki"
WELL_A, WELL_B = np.array([0.2, 0.25]), np.array([0.75, 0.7])  # in the unit square


def two_wells(p: np.ndarray) -> float:
    """Two bowls, the second 0.02 higher: two local minima, the global one at ``WELL_A``."""
    return float(min(((p - WELL_A) ** 2).sum(), ((p - WELL_B) ** 2).sum() + 0.02))


def one_bowl(p: np.ndarray) -> float:
    return float(((p - WELL_A) ** 2).sum())


def runs_of(objective: Callable[[np.ndarray], float], count: int, seed: int) -> list[SearchRun]:
    """``count`` runs at random points, scored by ``objective`` of their unit-square place."""
    points = np.random.default_rng(seed).random((count, 2))
    kp, ki = SEARCH.ranges[KP], SEARCH.ranges[KI]
    runs = []
    for i, p in enumerate(points):
        value = objective(p)
        params = {KP: kp.low + p[0] * (kp.high - kp.low), KI: ki.low + p[1] * (ki.high - ki.low)}
        runs.append(SearchRun(i, 0, params, "ok", "", {}, value, value, value < 0.01))
    return runs


def place(run: SearchRun) -> np.ndarray:
    return unit_cube([run], SEARCH.ranges)[0]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_two_wells_give_two_minima_each_the_best_run_of_its_well(seed: int) -> None:
    runs = runs_of(two_wells, 200, seed)
    minima = local_minima(runs, SEARCH.ranges)
    assert len(minima) == 2, [(m.run.index, m.runs) for m in minima]
    in_b = [
        r
        for r in runs
        if ((place(r) - WELL_B) ** 2).sum() + 0.02 < ((place(r) - WELL_A) ** 2).sum()
    ]
    best_a = min(runs, key=lambda r: r.score or 0.0)
    best_b = min(in_b, key=lambda r: r.score or 0.0)
    assert [m.run.index for m in minima] == [best_a.index, best_b.index]  # the best first
    assert sum(m.runs for m in minima) == len(runs)
    assert all(m.runs > 40 for m in minima)  # each well's basin holds a good share of runs
    assert minima[0].falsifying == sum(r.falsifying for r in runs)  # all are in well A


def test_one_bowl_gives_one_minimum_whose_basin_is_every_run() -> None:
    runs = runs_of(one_bowl, 200, 4)
    [minimum] = local_minima(runs, SEARCH.ranges)
    assert minimum.run.index == min(runs, key=lambda r: r.score or 0.0).index
    assert minimum.runs == 200


def test_runs_without_a_score_are_left_out() -> None:
    runs = runs_of(two_wells, 120, 5)
    for r in runs[::3]:
        r.status, r.value, r.score = "error", None, None
    minima = local_minima(runs, SEARCH.ranges)
    assert sum(m.runs for m in minima) == 80
    assert local_minima(runs[::3], SEARCH.ranges) == []


def test_a_log_range_is_clustered_by_its_logarithm() -> None:
    ranges = {"x": Range(1.0, 1e4, log=True)}
    xs = [1.0, 10.0, 100.0, 1000.0, 10000.0]
    assert unit_cube(
        [SearchRun(i, 0, {"x": x}, "ok", "", {}, 0.0, 0.0, False) for i, x in enumerate(xs)],
        ranges,
    )[:, 0].tolist() == pytest.approx([0.0, 0.25, 0.5, 0.75, 1.0])


def test_the_boundary_estimate_is_the_falsifying_share_of_the_nearest_runs() -> None:
    runs = runs_of(lambda p: float(p[0]), 300, 6)
    for r in runs:
        r.falsifying = place(r)[0] < 0.5
    share = failure_share(runs, SEARCH.ranges, np.array([[0.1, 0.5], [0.9, 0.5], [0.5, 0.5]]))
    assert share[0] == 1.0 and share[1] == 0.0 and 0.0 < share[2] < 1.0


def test_the_summary_lists_each_minimum_and_the_region_plot_is_drawn(tmp_path: Path) -> None:
    outcome = SearchOutcome(SEARCH, runs_of(two_wells, 200, 1))
    write_outputs(outcome, tmp_path, worst=2)
    summary = json.loads((tmp_path / "summary.json").read_text())
    minima = summary["minima"]
    assert [m["run"] for m in minima] == [m.run.index for m in outcome.minima]
    assert len(minima) == 2 and minima[0]["run"] == summary["best"]["run"]
    assert minima[0]["falsifying"] and not minima[1]["falsifying"]
    assert sum(m["basin_runs"] for m in minima) == 200
    assert set(minima[1]["params"]) == {KP, KI}
    for name in ("region.png", "progress.png"):
        assert (tmp_path / name).stat().st_size > 10_000


def test_a_flat_objective_is_one_basin() -> None:
    """Equal scores are no valleys: a plateau (every run capped alike, say) is one minimum."""
    runs = runs_of(lambda p: 1.0, 100, 7)
    [minimum] = local_minima(runs, SEARCH.ranges)
    assert minimum.runs == 100 and minimum.run.index == 0
