"""`WorldBench`: how its targets and ratio are judged, on made-up results.

The real run (the quick bench's worlds of 1, 10 and 100 cars and one coupled car) is
checked in test_bench_guard.py, which runs every bench once.
"""

from __future__ import annotations

from vcosim.bench.world import WorldBench
from vcosim.bench.world_coupled import CoupledRow


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
    assert "out of reach" in verdict and "2.4x faster" in verdict and "5x" in verdict
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
