"""Roads under the wheels: the terrain a vehicle samples carries the road surface."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scenariogeneration import xodr

from helpers.roads import network_of, xodr_bytes
from vcosim.roads.surface import rasterise
from vcosim.vehicle.terrain import Terrain, TerrainSpec, sample_terrain
from vcosim.vehicle.vehicle import Vehicle

GRADE, CROSS_SLOPE = 0.04, 0.06


@pytest.fixture(scope="module")
def slope_file(tmp_path_factory: pytest.TempPathFactory):
    """A road heading 30 degrees through the origin (s = 40): 4 % grade, 6 % superelevation.

    Positive superelevation lifts the left side. A vehicle settles at the origin, on the road.
    """
    road = xodr.create_road(xodr.Line(120), 1, left_lanes=2, right_lanes=2)
    heading = math.radians(30.0)
    road.planview.set_start_point(-40.0 * math.cos(heading), -40.0 * math.sin(heading), heading)
    road.add_elevation(0, 1.0, GRADE, 0, 0)
    road.add_superelevation(0, math.atan(CROSS_SLOPE), 0, 0, 0)
    path = tmp_path_factory.mktemp("roads") / "slope.xodr"
    path.write_bytes(xodr_bytes(road))
    return path


def test_a_car_on_a_graded_superelevated_road_reads_grade_and_superelevation(slope_file):
    """The ground under the four wheels is the road's: pitch and roll within 0.5 %.

    Placed on the road, the car takes the plane under its wheels. Parked for a second, its
    body also sits on its springs: pitch is the plane's plus the car's own attitude on
    level ground; roll adds the body's lean towards the low side under the weight's sideways
    share, the same as on an exact plane of that slope. The lean follows the load the slope
    shifts to the low wheels, per statics h tan(slope) / track of the weight (nightrider: 2.8 %
    of the slope's angle, 0.0017 rad).
    """
    terrain = TerrainSpec.load(slope_file).build()
    level = Vehicle()
    pitch0 = level.signal("pitch")
    car = Vehicle(terrain=terrain)
    heading = math.radians(30.0)
    x = 20.0 * math.cos(heading) + 1.5 * math.sin(heading)  # s = 60 in lane -1
    y = 20.0 * math.sin(heading) - 1.5 * math.cos(heading)
    car.teleport(x, y, 30.0)
    assert car.signal("pitch") == pytest.approx(-math.atan(GRADE), rel=0.005)
    assert car.signal("roll") == pytest.approx(math.atan(CROSS_SLOPE), rel=0.005)
    car.run_for(1.0)
    assert car.signal("pitch") - pitch0 == pytest.approx(-math.atan(GRADE), rel=0.005)
    lean = car.signal("roll") - math.atan(CROSS_SLOPE)
    assert 0.01 * math.atan(CROSS_SLOPE) < lean < 0.04 * math.atan(CROSS_SLOPE)

    # The same car on an exact plane of this grade and cross slope reads the same.
    xs = np.arange(-20.0, 21.0)
    east, north = np.meshgrid(xs, xs)
    along = east * math.cos(heading) + north * math.sin(heading)
    left = -east * math.sin(heading) + north * math.cos(heading)
    plane = Terrain(GRADE * along + CROSS_SLOPE * left, np.ones_like(east), None, [-20, -20, 1.0])
    exact = Vehicle(terrain=plane)
    exact.teleport(0.0, 0.0, 30.0)
    exact.run_for(1.0)
    assert car.signal("pitch") == pytest.approx(exact.signal("pitch"), rel=1e-3)
    assert car.signal("roll") == pytest.approx(exact.signal("roll"), rel=1e-3)


def test_the_sampled_surface_is_the_roads_height_and_the_terrain_off_it(tmp_path):
    """A curve with lane offset, rising superelevation and a hump, on a ramped height-map."""
    road = xodr.create_road(
        [xodr.Line(20), xodr.Arc(1 / 40, angle=1.2), xodr.Spiral(1 / 40, -1 / 60, 30)],
        1,
        left_lanes=1,
        right_lanes=2,
    )
    road.add_elevation(0, 2.0, 0.02, 0.0005, -0.000004)
    road.add_superelevation(0, 0.0, 0.001, 0, 0)
    road.lanes.add_laneoffset(xodr.LaneOffset(0, 0.5, 0.02, 0, 0))
    path = tmp_path / "curve.xodr"
    path.write_bytes(xodr_bytes(road))
    network = network_of(road)
    ramp = Terrain(
        np.tile(0.01 * np.arange(-100.0, 101.0), (201, 1)),
        np.full((201, 201), 0.7),
        None,
        [-100.0, -100.0, 1.0],
    )
    terrain = ramp.with_road(path, 0.25, friction=0.9)

    curve = network.road(1)
    s = np.linspace(0.5, curve.length - 0.5, 60)
    rng = np.random.default_rng(7)
    low, high = curve.t_range(s)
    t = low + rng.uniform(0.1, 0.9, s.size) * (high - low)
    x, y, z, _ = curve.point(s, t)
    sampled = np.array(
        [sample_terrain(*_arrays(terrain), px, py) for px, py in zip(x, y, strict=True)]
    )
    assert np.abs(sampled[:, 0] - z).max() < 2e-3
    assert np.all(sampled[:, 3] == pytest.approx(0.9))

    located = network.locate(x, y)
    assert np.all(located.road == "1")
    assert np.abs(located.t - t).max() < 1e-6
    assert np.array_equal(located.lane, curve.lane_at(s, t))

    off = (60.0, 80.0)  # far off the road: the height-map's ramp, its friction
    h, _, _, mu = sample_terrain(*_arrays(terrain), *off)
    assert (h, mu) == pytest.approx((0.6, 0.7))
    raster = rasterise(network, 0.5)
    assert raster.road.any() and not raster.road.all()


def _arrays(terrain: Terrain) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return terrain.height, terrain.friction, terrain.grid
