"""The contract bench's figures that ``--quick`` (and so the guard test) leaves out.

The guard test checks the ratio's two rates; here the server-to-port latency and the raw UDP
baselines are measured briefly once, as a full ``vcosim bench contracts`` takes them.
"""

from __future__ import annotations

import math

from vcosim.bench.contracts import DATAGRAM, Delays, latency, raw_stream_per_second, raw_udp


def test_latency_from_server_step_to_client_port_is_measured() -> None:
    delays = latency(0.4)
    assert delays.samples > 0  # up to ~400 updates at 1 ms, fewer on a loaded machine
    assert delays.median is not None and delays.p99 is not None and delays.max is not None
    assert 0 < delays.median <= delays.p99 <= delays.max


def test_raw_udp_baselines_are_measured() -> None:
    assert raw_stream_per_second(0.2) > 0
    arrivals, delays = raw_udp(0.2, paced=True)
    assert 0 < len(arrivals) <= 0.2 / 1e-3 + 1  # at most one datagram per ms
    assert (delays > 0).all() and math.isfinite(Delays.of(delays * 1e3).median or math.nan)
    assert DATAGRAM == 24 + 8 * 20
