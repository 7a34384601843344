"""`measure_physics_bench`: the shape and consistency of its result, never the speed it measures."""

from __future__ import annotations

import json
import math

import pytest

from vcosim.bench.physics import RATIOS, PhysicsBench, measure_physics_bench

RATES = ("kernel_steps_per_s", "stepwise_steps_per_s", "commonroad_mb_steps_per_s")


@pytest.fixture(scope="module")
def bench() -> PhysicsBench:
    return measure_physics_bench(seconds=0.2, progress=False)


@pytest.fixture(scope="module")
def result(bench: PhysicsBench) -> dict:
    return bench.to_dict()


def positive(value: object) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value) and value > 0


def test_rates_are_positive_and_finite(result: dict) -> None:
    for key in (*RATES, "realtime_factor", "kernel_vs_commonroad", "stepwise_vs_commonroad"):
        assert positive(result[key]), key
    assert set(result["batch_vehicle_steps_per_s"]) == {"64", "1024"}
    assert all(positive(v) for v in result["batch_vehicle_steps_per_s"].values())


def test_ratios_are_quotients_of_the_rates(result: dict) -> None:
    cr = result["commonroad_mb_steps_per_s"]
    for ratio, rate in (
        ("kernel_vs_commonroad", "kernel_steps_per_s"),
        ("stepwise_vs_commonroad", "stepwise_steps_per_s"),
    ):
        assert result[ratio] == pytest.approx(result[rate] / cr, rel=1e-3, abs=1e-3)
    assert result["realtime_factor"] == pytest.approx(
        result["kernel_steps_per_s"] / 2000, rel=1e-3, abs=0.1
    )
    one_thread = result["batch_one_thread_vehicle_steps_per_s"]["64"]
    assert set(result["ratios"]) == set(RATIOS)
    assert result["ratios"]["batch_vs_kernel"] == pytest.approx(
        one_thread / result["kernel_steps_per_s"], rel=1e-3, abs=1e-3
    )
    for ratio in ("kernel_vs_commonroad", "stepwise_vs_commonroad"):
        assert result["ratios"][ratio] == result[ratio]


def test_context_targets_and_json(result: dict) -> None:
    assert result["dt"] == 0.0005
    assert positive(result["cpu_count"])
    for key in ("python", "numba", "machine"):
        assert isinstance(result[key], str) and result[key]
    assert result["targets"] == {"kernel_vs_commonroad": 10, "stepwise_vs_commonroad": 5}
    assert set(result["meets_targets"]) == set(result["targets"])
    for name, target in result["targets"].items():
        assert result["meets_targets"][name] is (result[name] >= target)
    json.dumps(result)  # the CLI prints it as JSON


def test_json_layout_is_the_one_the_command_printed(bench: PhysicsBench, result: dict) -> None:
    assert list(result) == [
        "kernel_steps_per_s",
        "stepwise_steps_per_s",
        "realtime_factor",
        "commonroad_mb_steps_per_s",
        "kernel_vs_commonroad",
        "stepwise_vs_commonroad",
        "batch_vehicle_steps_per_s",
        "batch_one_thread_vehicle_steps_per_s",
        "dt",
        "seconds",
        "repeats",
        "cpu_count",
        "numba_threads",
        "python",
        "numba",
        "machine",
        "cpu",
        "targets",
        "meets_targets",
        "ratios",
    ]
    assert result["kernel_steps_per_s"] == round(bench.kernel_steps_per_s, 1)
    assert all(isinstance(v, int) for v in result["batch_vehicle_steps_per_s"].values())


def test_rejects_a_non_positive_budget() -> None:
    with pytest.raises(ValueError):
        measure_physics_bench(seconds=0, progress=False)
    with pytest.raises(ValueError):
        measure_physics_bench(seconds=-1.0, progress=False)
