"""Built-in drivers: a cut-in on its cue, a lane change on time, IDM traffic on a ring."""

from __future__ import annotations

import math

import pytest

from vcosim.vehicle import VehicleParams
from vcosim.world import World, WorldFile


def test_a_cut_in_starts_when_the_gap_passes_its_cue_and_ends_in_the_ego_lane() -> None:
    world = World(WorldFile.load("examples/worlds/cut-in.toml"))
    ego, cutter = world.vehicles["ego"], world.vehicles["cutter"]
    half_lengths = 2 * (VehicleParams().body.wheelbase / 2 + VehicleParams().wheels.radius)
    gap_at_start = None
    while world.time < 15.0:
        world.run(20)
        begun = any(t is not None for t in world.drivers.changes.begin.values())
        if gap_at_start is None and begun:
            gap_at_start = cutter.signal("posX") - ego.signal("posX") - half_lengths
    # the cue: 8 m ahead of the ego (decided every 10 ms, at 6 m/s closing: within 0.1 m)
    assert gap_at_start == pytest.approx(8.0, abs=0.1)
    assert abs(cutter.signal("posY")) < 0.2  # in the ego's lane now
    assert world.sense("ego").target == "cutter"
    assert world.collisions == []


def test_a_lane_change_on_time_eases_to_its_new_offset() -> None:
    spec = WorldFile.from_dict(
        {
            "paths": {"road": {"points": [[-50, 0], [2000, 0]]}},
            "vehicles": [
                {
                    "name": "changer",
                    "start": {"x": 0, "y": 0, "speed": 15},
                    "driver": {
                        "kind": "profile",
                        "path": "road",
                        "speeds": [[0, 15]],
                        "lane_change": {"offset": 3.5, "at": 1.0, "duration": 3.0},
                    },
                }
            ],
        }
    )
    world = World(spec)
    car = world.vehicles["changer"]
    world.run(2_000)
    assert abs(car.signal("posY")) < 0.05  # still in its lane before the change
    world.run(14_000)
    assert car.signal("posY") == pytest.approx(3.5, abs=0.1)
    assert abs(car.signal("yaw")) < 0.02  # straight again, along the new lane


def test_idm_traffic_on_a_ring_settles_without_collisions() -> None:
    spec = WorldFile.from_dict(
        {
            "paths": {"ring": {"circle": [0, 0, 120]}},
            "traffic": [
                {
                    "name": "car",
                    "count": 20,
                    "spacing": 2 * math.pi * 120 / 20,
                    "speed": 10,
                    "driver": {"kind": "idm", "path": "ring", "speed": 20, "time_gap": 1.5},
                }
            ],
        }
    )
    world = World(spec)
    world.run(20_000)  # 10 s: the last car crosses where the loop closes at once
    assert world.collisions == []
    speeds = [car.signal("groundspeed") for car in world.vehicles.values()]
    # the IDM's equilibrium for a 33 m gap, 4.5 m cars: s0 + v T = gap - length, about 17 m/s
    assert min(speeds) > 10.0 and max(speeds) < 20.5
    radii = [math.hypot(c.signal("posX"), c.signal("posY")) for c in world.vehicles.values()]
    assert max(abs(r - 120.0) for r in radii) < 0.5  # on the lane
    assert world.sense("car005").target == "car006"
