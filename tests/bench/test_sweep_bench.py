import math

from vcosim.bench.sweep import measure_sweep_bench


def test_sweep_bench_reports_rates_and_scaling():
    result = measure_sweep_bench(runs=2, max_workers=2, progress=False, duration=0.2).to_dict()
    assert set(result["workers"]) == {"1", "2"}
    for figures in result["workers"].values():
        assert figures["runs"] == 2 and figures["runs_per_s"] > 0
    assert result["scaling_1_to_2"] == (
        result["workers"]["2"]["runs_per_s"] / result["workers"]["1"]["runs_per_s"]
    )
    assert math.isfinite(result["parallel_efficiency"])
    assert result["ratios"] == {
        "one_worker_vs_in_process": result["workers"]["1"]["runs_per_s"]
        / result["in_process_runs_per_s"]
    }
    assert result["single_run"]["realtime_factor"] > 0
