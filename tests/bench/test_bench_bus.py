"""`measure_bus_bench`: the typed report, its JSON layout, and the figures' consistency."""

import json

import pytest

from vcosim.bench.bus import WINDOW, BusBench, measure_bus_bench


def test_bus_bench_report_and_its_json_layout():
    bench = measure_bus_bench(seconds=0.2, progress=False)
    assert isinstance(bench, BusBench) and bench.window == WINDOW
    assert bench.direct.lost == bench.routed.lost == 0
    assert bench.routed.rtt_us_p99 >= bench.routed.rtt_us_median > 0
    result = json.loads(json.dumps(bench.to_dict()))
    assert list(result) == [
        "message",
        "window",
        "seconds",
        "direct_rtt_us_median",
        "direct_rtt_us_p99",
        "router_rtt_us_median",
        "router_rtt_us_p99",
        "added_latency_us",
        "direct_messages_per_s",
        "router_messages_per_s",
        "throughput_ratio",
        "lost",
        "router",
        "ratios",
        "cores_used_by_others",
        "unjudged",
    ]
    assert result["ratios"] == {"router_vs_direct": result["throughput_ratio"]}
    assert set(result["unjudged"]) <= {"router_vs_direct"}
    assert result["message"].startswith("IMFM, ") and result["seconds"] == 0.2
    assert result["added_latency_us"] == pytest.approx(
        (result["router_rtt_us_median"] - result["direct_rtt_us_median"]) / 2
    )
    assert result["throughput_ratio"] == pytest.approx(
        result["router_messages_per_s"] / result["direct_messages_per_s"]
    )
    assert set(result["router"]) == {"routed", "malformed", "unknown_destination"}
