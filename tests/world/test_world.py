"""A world of vehicles: collisions within one physics step, range readings, determinism."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from vcosim.errors import VcosimError
from vcosim.vehicle import Vehicle, VehicleParams, VehicleView
from vcosim.world import World, WorldFile

ROAD = {"road": {"points": [[-100, 0], [2000, 0]]}}


def rear_end(**options: Any) -> WorldFile:
    """A car at 10 m/s that never brakes, 20 m behind a car standing on the road."""
    return WorldFile.from_dict(
        {
            "paths": ROAD,
            "vehicles": [
                {
                    "name": "standing",
                    "start": {"x": 30, "y": 0},
                    "driver": {"kind": "profile", "path": "road", "speeds": [[0, 0]]},
                },
                {
                    "name": "follower",
                    "start": {"x": 0, "y": 0, "speed": 10},
                    "driver": {"kind": "profile", "path": "road", "speeds": [[0, 10]]},
                },
            ],
            **options,
        }
    )


def first_overlap_by_brute_force(spec: WorldFile) -> float:
    """The end time of the first step after which the boxes overlap, checked every step."""
    world = World(spec)
    for _ in range(20_000):
        world.step()
        if world.overlap("standing", "follower") > 0.0:
            return world.time
    raise AssertionError("no overlap in 10 s")


def test_a_scripted_rear_end_collision_is_caught_in_the_step_of_first_overlap() -> None:
    world = World(rear_end())
    world.run(8_000)  # 4 s in as few calls as the collision horizon allows
    assert len(world.collisions) == 1
    event = world.collisions[0]
    assert event.time == pytest.approx(first_overlap_by_brute_force(rear_end()), abs=1e-12)
    assert set(event.vehicles) == {"standing", "follower"}
    follower = world.vehicles["follower"]
    assert event.relative_speed == pytest.approx(10.0, abs=0.3)
    assert 0.0 < event.overlap <= event.relative_speed * world.dt * 1.01  # one step's travel
    assert world.report().collided == ["standing", "follower"]
    assert follower.signal("groundspeed") > 5.0  # no contact physics: the run went on


def test_stop_at_collision_ends_the_run_at_the_first_one() -> None:
    world = World(rear_end(stop_at_collision=True))
    world.run(8_000)
    assert world.stop_requested and world.report().stopped_at_collision
    assert world.time == pytest.approx(world.collisions[0].time)


def test_a_world_run_twice_is_identical() -> None:
    def run() -> np.ndarray:
        world = World(WorldFile.load("examples/worlds/platoon.toml"))
        world.run(3_000)
        for _ in range(7):
            world.step()
        world.run(2_993)
        return np.concatenate([world.states.ravel(), world.outputs.ravel()])

    assert np.array_equal(run(), run())


def road_world(cars: list[tuple[str, float, float, float]]) -> World:
    """Cars at 10 m/s along ROAD, each (name, x, lane offset y, the offset it changes to)."""
    return World(
        WorldFile.from_dict(
            {
                "paths": ROAD,
                "vehicles": [
                    {
                        "name": name,
                        "start": {"x": x, "y": y, "speed": 10},
                        "driver": {
                            "kind": "profile",
                            "path": "road",
                            "offset": y,
                            "speeds": [[0, 10]],
                            **(
                                {"lane_change": {"offset": to, "duration": 3.0, "at": 0.0}}
                                if to != y
                                else {}
                            ),
                        },
                    }
                    for name, x, y, to in cars
                ],
            }
        )
    )


def sensor_world() -> World:
    cars = [("ego", 0.0, 0.0), ("ahead", 30.0, 1.0), ("far", 60.0, 0.0), ("behind", -20.0, 0.0)]
    cars.append(("beside", 15.0, 8.0))
    return road_world([(name, x, y, y) for name, x, y in cars])


def expected_gap(world: World, own: str, other: str) -> tuple[float, float]:
    """Bumper gap along ``own``'s heading and lateral offset, from the signals and parameters."""
    params = VehicleParams()
    record = params.pack()[0]
    half_length = params.body.wheelbase / 2 + params.wheels.radius
    offset = (record["a"] - record["b"]) / 2
    centres = {}
    for name in (own, other):
        car = world.vehicles[name]
        yaw = car.signal("yaw")
        x, y = car.signal("posX"), car.signal("posY")
        centres[name] = (x + offset * math.cos(yaw), y + offset * math.sin(yaw), yaw)
    ox, oy, yaw = centres[own]
    tx, ty, _ = centres[other]
    along = math.cos(yaw) * (tx - ox) + math.sin(yaw) * (ty - oy)
    left = -math.sin(yaw) * (tx - ox) + math.cos(yaw) * (ty - oy)
    return along - 2 * half_length, left


@pytest.mark.parametrize("seconds", [0.0, 2.0])
def test_range_sensor_sees_the_nearest_vehicle_in_its_lane_at_the_distance_positions_give(
    seconds: float,
) -> None:
    world = sensor_world()
    world.run(round(seconds / world.dt))
    reading = world.sense("ego")
    assert reading.target == "ahead"  # not "beside" (8 m left), not "far", not "behind"
    distance, lateral = expected_gap(world, "ego", "ahead")
    assert reading.distance == pytest.approx(distance, abs=1e-6)
    assert reading.lateral_offset == pytest.approx(lateral, abs=0.05)
    assert reading.relative_speed == pytest.approx(0.0, abs=0.3)
    assert world.sense("ahead").target == "far"
    assert world.sense("far").target is None and math.isinf(world.sense("far").distance)


def test_a_world_vehicle_reads_and_takes_inputs_but_steps_only_with_its_world() -> None:
    world = sensor_world()
    ego = world.vehicles["ego"]
    ego.set_inputs(throttle=0.5)
    assert world.inputs[world.row("ego"), 0] == 0.5
    assert isinstance(ego, VehicleView) and not isinstance(ego, Vehicle)
    stepping = {n for n in vars(Vehicle) if not n.startswith("_")} - set(dir(VehicleView))
    assert {"step", "run", "run_for", "trace", "reset"} <= stepping
    assert not any(hasattr(ego, name) for name in stepping)  # nothing to call by mistake
    world.run(100)
    assert ego.time == world.time == pytest.approx(0.05)
    assert ego.signal("posX") == world.outputs[world.row("ego"), 10]


def test_range_sensor_sees_the_nearest_vehicle_in_each_neighbouring_lane_with_lateral_speed() -> (
    None
):
    cars = [("ego", 0.0, 0.0, 0.0), ("ahead", 50.0, 0.0, 0.0), ("right", 25.0, -3.5, -3.5)]
    cars.append(("left", 20.0, 3.5, 0.0))  # moves over into the ego's lane from t = 0
    world = road_world(cars)
    world.run(round(1.0 / world.dt))
    lanes = world.sense_lanes("ego")
    assert lanes["ahead"] == world.sense("ego") and lanes["ahead"].target == "ahead"
    assert lanes["left"].target == "left" and lanes["right"].target == "right"
    for lane in ("left", "right"):
        distance, lateral = expected_gap(world, "ego", lanes[lane].target)
        assert lanes[lane].distance == pytest.approx(distance, abs=1e-6)
        assert lanes[lane].lateral_offset == pytest.approx(lateral, abs=0.05)
    assert 1.75 < lanes["left"].lateral_offset < 3.4  # on its way over
    world.run(20)  # 10 ms: the lateral speed is the rate of the lateral offset
    rate = (world.sense("ego", "left").lateral_offset - lanes["left"].lateral_offset) / 0.01
    assert lanes["left"].lateral_speed == pytest.approx(rate, abs=0.05)
    assert lanes["left"].lateral_speed < -0.5
    assert lanes["right"].lateral_speed == pytest.approx(0.0, abs=0.05)
    with pytest.raises(VcosimError, match="lane"):
        world.sense("ego", "middle")
