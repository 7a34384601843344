import json
import math

from vcosim.bench.coupling import CouplingBench, measure_coupling_bench


def test_coupling_bench_reports_every_figure():
    bench = measure_coupling_bench(seconds=0.3, realtime_seconds=0.5, progress=False)
    assert isinstance(bench, CouplingBench)
    result = bench.to_dict()
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
    assert result["ratio_blocking"] == (
        result["exchanges_per_s_blocking"] / result["raw_pingpong_blocking_per_s"]
    )
    assert result["timeouts"] == 0
    assert set(result["meets_targets"]) == set(result["targets"])
    assert result["realtime_seconds"] == bench.realtime.realtime_seconds > 0
    json.dumps(result)  # the command line prints it as JSON
    assert list(result) == [  # the layout it had when the bench returned a dict
        "raw_pingpong_blocking_per_s",
        "raw_pingpong_per_s",
        "exchanges_per_s",
        "timeouts",
        "exchanges_per_s_blocking",
        "realtime_seconds",
        "realtime_drift_ms",
        "realtime_drift_ms_per_10s",
        "frame_lateness_p99_ms",
        "frame_jitter_ms",
        "late_frames",
        "frames",
        "ratio",
        "ratio_blocking",
        "waiting_strategy",
        "targets",
        "meets_targets",
        "ratios",
        "cores_used_by_others",
        "unjudged",
    ]
    assert result["ratios"] == {
        "lockstep_vs_raw": result["ratio"],
        "blocking_vs_raw_blocking": result["ratio_blocking"],
    }
    assert set(result["cores_used_by_others"]) == {"busy", "blocking"}
    assert set(result["unjudged"]) <= set(result["ratios"])
