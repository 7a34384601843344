import math

from vcosim.bench.coupling import run_coupling_bench


def test_coupling_bench_reports_every_figure():
    result = run_coupling_bench(seconds=0.3, realtime_seconds=0.5, progress=False)
    for key in (
        "raw_pingpong_blocking_per_s",
        "raw_pingpong_per_s",
        "exchanges_per_s",
        "exchanges_per_s_blocking",
        "realtime_drift_ms_per_10s",
        "frame_lateness_p99_ms",
    ):
        assert math.isfinite(result[key]), key
    assert result["exchanges_per_s"] > 0 and result["raw_pingpong_per_s"] > 0
    assert result["ratio"] == result["exchanges_per_s"] / result["raw_pingpong_per_s"]
    assert result["timeouts"] == 0
    assert set(result["meets_targets"]) == set(result["targets"])
