import math

from vcosim.bench.bus import measure_bus_bench


def test_bus_bench_reports_every_figure():
    result = measure_bus_bench(seconds=0.2, progress=False).to_dict()
    for key in (
        "direct_rtt_us_median",
        "router_rtt_us_median",
        "added_latency_us",
        "direct_messages_per_s",
        "router_messages_per_s",
        "throughput_ratio",
    ):
        assert math.isfinite(result[key]), key
    assert result["router_messages_per_s"] > 0 and result["router"]["malformed"] == 0
    assert result["router"]["routed"] > 0
