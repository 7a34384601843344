"""`measure_world_bench`: the shape and consistency of its result, never the speed it measures.

A small run (worlds of 1 and 10 cars, 1 and 2 coupled cars with their controller processes,
0.05 s per figure) checks every key and that the figures are finite; a made-up result checks
how the targets are judged against the kernel's ceiling.
"""

from __future__ import annotations

import json
import math

import pytest

from vcosim.bench.world import TARGETS, WorldBench, measure_world_bench
from vcosim.bench.world_coupled import CoupledRow

ROW_KEYS = {
    "realtime_factor",
    "kernel_ceiling",
    "world_us_per_vehicle_step",
    "batch_us_per_vehicle_step",
    "serial_us_per_vehicle_step",
    "cost_vs_batch",
}
COUPLED_KEYS = {
    "vehicles",
    "realtime_factor",
    "exchanges_per_s_per_vehicle",
    "timeouts",
    "send_skips",
    "window",
}


@pytest.fixture(scope="module")
def result() -> dict:
    bench = measure_world_bench(seconds=0.05, counts=(1, 10), coupled=(1, 2), progress=False)
    return bench.to_dict()


def positive(value: object) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value) and value > 0


def test_every_size_has_finite_positive_figures(result: dict) -> None:
    assert set(result["sizes"]) == {"1", "10"}
    for size, row in result["sizes"].items():
        assert set(row) == ROW_KEYS, size
        assert all(positive(value) for value in row.values()), (size, row)
        assert row["cost_vs_batch"] == pytest.approx(
            row["world_us_per_vehicle_step"] / row["batch_us_per_vehicle_step"], rel=0.02, abs=0.01
        )
    assert result["collisions"] == {"1": 0, "10": 0}


def test_coupled_rows_ran_lockstep_against_their_controllers(result: dict) -> None:
    assert set(result["coupled"]) == {"1", "2"}
    for size, row in result["coupled"].items():
        assert set(row) == COUPLED_KEYS, size
        assert row["vehicles"] == int(size)
        assert positive(row["realtime_factor"]) and positive(row["exchanges_per_s_per_vehicle"])
        assert row["timeouts"] == 0
        # a reply every send_skips + 1 steps: exchanges follow from the real-time factor, to
        # within the replies of part of a frame (the windows begin and end on frames)
        per_sim_second = 2000 / (row["send_skips"] + 1)
        assert row["exchanges_per_s_per_vehicle"] == pytest.approx(
            row["realtime_factor"] * per_sim_second, rel=0.25
        )


def test_targets_and_json(result: dict) -> None:
    assert result["dt"] == 0.0005
    assert result["targets"] == TARGETS
    assert set(result["meets_targets"]) == set(TARGETS)
    assert result["kernel_ceiling"] == {} and result["verdicts"] == {}  # no 100 or 1000 here
    assert result["ratios"] == {}  # its ratio is the world of 100 cars'
    assert positive(result["cpu_count"])
    json.dumps(result)  # the CLI prints it as JSON


def made_up(world_100: float, batch_100: float, serial_100: float = 0.9e6) -> dict:
    """A result with 100 cars at the given vehicle-steps/s (world, batch, serial kernel)."""
    return WorldBench(
        world_vehicle_steps_per_s={"100": world_100},
        batch_vehicle_steps_per_s={"100": batch_100},
        collisions={"100": 0},
        seconds=1.0,
        serial_vehicle_steps_per_s={"100": serial_100},
        coupled={"1": CoupledRow(1, 15.0, 3000.0, 0, 9, 1)},
    ).to_dict()


def test_a_target_above_the_kernel_ceiling_is_said_to_be_out_of_reach() -> None:
    result = made_up(world_100=0.5e6, batch_100=1.0e6)
    assert result["sizes"]["100"]["realtime_factor"] == 2.5
    assert result["kernel_ceiling"] == {"realtime_factor_100": 5.0}
    assert result["meets_targets"]["realtime_factor_100"] is False
    assert result["ratios"] == {}  # no world on one thread in it
    verdict = result["verdicts"]["realtime_factor_100"]
    assert "out of reach" in verdict and "4.0x faster" in verdict and "5x" in verdict
    assert result["coupled"]["1"]["exchanges_per_s_per_vehicle"] == 3000.0


def test_the_ceiling_is_the_faster_of_the_threaded_and_the_serial_kernel() -> None:
    busy = made_up(world_100=0.8e6, batch_100=0.4e6, serial_100=1.0e6)  # threads lose
    assert busy["sizes"]["100"]["kernel_ceiling"] == 5.0
    assert busy["sizes"]["100"]["serial_us_per_vehicle_step"] == 1.0
    assert busy["sizes"]["100"]["cost_vs_batch"] == 0.5


def test_a_target_under_the_ceiling_blames_the_world_or_is_met() -> None:
    missed = made_up(world_100=2.0e6, batch_100=5.0e6)  # 10x of a 25x ceiling
    assert "the world's overhead is the gap" in missed["verdicts"]["realtime_factor_100"]
    met = made_up(world_100=4.2e6, batch_100=5.0e6)
    assert met["verdicts"]["realtime_factor_100"].endswith(": met")
    assert met["meets_targets"]["realtime_factor_100"] is True


def test_its_ratio_is_the_world_on_one_thread_over_its_kernel_on_one_thread() -> None:
    bench = WorldBench(
        world_vehicle_steps_per_s={"100": 2.0e6},
        batch_vehicle_steps_per_s={"100": 5.0e6},
        collisions={"100": 0},
        seconds=1.0,
        serial_vehicle_steps_per_s={"100": 1.0e6},
        world_one_thread_vehicle_steps_per_s={"100": 0.8e6},
    )
    assert bench.ratios() == {"world_vs_batch": 0.8}  # threads left out of it
    assert bench.to_dict()["world_one_thread_vehicle_steps_per_s"] == {"100": 800000}
