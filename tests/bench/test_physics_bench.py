"""`PhysicsBench`: its ratios and JSON on made-up rates (the real run: test_bench_guard.py)."""

from __future__ import annotations

import pytest

from vcosim.bench.physics import RATIOS, PhysicsBench, measure_physics_bench

MACHINE = {
    "cpu_count": 2,
    "numba_threads": 2,
    "python": "3",
    "numba": "0",
    "machine": "x",
    "cpu": "y",
}


def made_up() -> PhysicsBench:
    return PhysicsBench(
        kernel_steps_per_s=1_000_000.04,
        stepwise_steps_per_s=60_000.0,
        commonroad_mb_steps_per_s=40_000.0,
        batch_vehicle_steps_per_s={"64": 1_500_000.4, "1024": 2_000_000.0},
        batch_one_thread_vehicle_steps_per_s={"64": 900_000.0},
        seconds=0.2,
        machine=MACHINE,
    )


def test_ratios_are_the_quotients_of_the_rates_higher_is_faster() -> None:
    assert made_up().ratios() == {
        "kernel_vs_commonroad": 25.0,
        "stepwise_vs_commonroad": 1.5,
        "batch_vs_kernel": 0.9,  # the batch of 64 on one thread
    }
    assert set(made_up().ratios()) == set(RATIOS)


def test_json_rounds_the_rates_and_judges_the_targets() -> None:
    result = made_up().to_dict()
    assert result["kernel_steps_per_s"] == 1_000_000.0 and result["realtime_factor"] == 500.0
    assert result["batch_vehicle_steps_per_s"] == {"64": 1_500_000, "1024": 2_000_000}
    assert result["meets_targets"] == {
        "kernel_vs_commonroad": True,
        "stepwise_vs_commonroad": False,
    }
    assert result["ratios"]["kernel_vs_commonroad"] == result["kernel_vs_commonroad"]


def test_rejects_a_non_positive_budget() -> None:
    with pytest.raises(ValueError):
        measure_physics_bench(seconds=0, progress=False)
    with pytest.raises(ValueError):
        measure_physics_bench(seconds=-1.0, progress=False)
