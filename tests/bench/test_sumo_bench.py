"""``vcosim bench sumo``: SUMO alone and vcosim+SUMO in one run, their CPU times and ratio."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("libsumo")

from vcosim.bench.sumo import measure_sumo_bench  # noqa: E402


def test_a_run_gives_the_cpu_time_of_sumo_alone_and_coupled_and_their_ratio() -> None:
    bench = measure_sumo_bench(
        sizes=(60,), seconds=0.3, warmup=0.2, radii=(None,), settings=((0.01, None),), repeats=2
    )
    (row,) = bench.sizes
    assert row.in_sumo > 10 and row.present == pytest.approx(row.in_sumo, abs=1.0)  # all in it
    assert row.cpu_us_per_vehicle_step > 0 and row.alone_cpu_us_per_vehicle_step > 0
    assert row.cpu_ratio == pytest.approx(
        row.alone_cpu_us_per_vehicle_step / row.cpu_us_per_vehicle_step
    )
    assert math.isfinite(row.cpu_ratio) and row.cpu_ratio > 0
    assert "cpu_ratio" in bench.to_dict()["sizes"][0]
