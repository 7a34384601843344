"""`vcosim bench search`: its figures are there and positive (their size is not asserted)."""

from __future__ import annotations

import math

from vcosim.bench.search import measure_search_bench


def test_the_search_bench_reports_both_rates_and_their_ratio() -> None:
    bench = measure_search_bench(runs=4, workers=1, progress=False, duration=0.5, turns=1)
    report = bench.to_dict()
    assert report["workers"] == 1 and report["runs"] == 4 and report["batch"] == 4
    for key in ("sweep_runs_per_s_per_worker", "search_runs_per_s_per_worker", "search_vs_sweep"):
        assert math.isfinite(report[key]) and report[key] > 0, key
    assert report["search_vs_sweep"] == (
        report["search_runs_per_s_per_worker"] / report["sweep_runs_per_s_per_worker"]
    )
