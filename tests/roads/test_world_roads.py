"""A world on an OpenDRIVE road: a driver follows lanes by id through a junction."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scenariogeneration import xodr

from helpers.roads import xodr_bytes
from vcosim.errors import ConfigError
from vcosim.roads import read_xodr
from vcosim.world import World, WorldFile


@pytest.fixture(scope="module")
def junction_file(tmp_path_factory: pytest.TempPathFactory):
    """Road 1 from the west and road 2 from the south into a junction, at 1 m elevation."""
    junction = xodr.CommonJunctionCreator(100, "corner", startnum=100)
    arms = []
    for rid, angle in ((1, 0.0), (2, math.pi / 2)):
        arm = xodr.create_road(xodr.Line(50), rid, left_lanes=1, right_lanes=1)
        arm.add_elevation(0, 1.0, 0, 0, 0)
        junction.add_incoming_road_circular_geometry(arm, 20, angle, "successor")
        arms.append(arm)
    junction.add_connection(1, 2)
    junction.add_constant_elevation(1.0)
    path = tmp_path_factory.mktemp("world") / "corner.xodr"
    path.write_bytes(xodr_bytes(*arms, junctions=(junction,)))
    return path


def world_on(path, lanes) -> WorldFile:
    return WorldFile.from_dict(
        {
            "terrain": {"road": path.name},
            "paths": {"turn": {"lanes": lanes}},
            "vehicles": [
                {
                    "name": "car",
                    "start": {"s": 30.0, "speed": 8.0},
                    "driver": {"kind": "profile", "path": "turn", "speeds": [[0, 8]]},
                }
            ],
        },
        base=path.parent,
    )


def test_a_driver_follows_lanes_by_id_through_a_junction(junction_file):
    network = read_xodr(junction_file)
    ((connecting, lane),) = network.next_lanes(1, -1)
    world = World(world_on(junction_file, [[1, -1], [connecting, lane], ["2", 1]]))
    world.run(14_000)  # 7 s at 8 m/s: 20 m to the junction, through it, on into road 2
    car = world.vehicles["car"]
    x, y = car.signal("posX"), car.signal("posY")
    where = network.locate(x, y)
    assert (where.road[0], where.lane[0]) == ("2", 1)
    assert abs(where.t[0] - 1.5) < 0.3  # near the lane's centre line
    assert math.degrees(car.signal("yaw")) == pytest.approx(-90.0, abs=5.0)  # south
    assert car.signal("posZ") - 1.0 == pytest.approx(car.signal("altitude"), abs=0.05)


def test_a_lane_route_needs_a_road_and_linked_lanes(junction_file):
    with pytest.raises(ConfigError, match="needs a road: give terrain.road"):
        WorldFile.from_dict(
            {
                "paths": {"turn": {"lanes": [[1, -1]]}},
                "vehicles": [
                    {
                        "name": "car",
                        "start": {"s": 0.0},
                        "driver": {"kind": "profile", "path": "turn", "speeds": [[0, 1]]},
                    }
                ],
            }
        )
    with pytest.raises(ConfigError, match=r"paths.turn.lanes: \('1', -1\) does not lead to"):
        World(world_on(junction_file, [[1, -1], [2, 1]]))
    assert np.isfinite(read_xodr(junction_file).road(1).elevation.value(0.0))
