"""Conditions that need the road: distances along and across it (``coordinateSystem`` road and
lane), EndOfRoad, Offroad and RelativeClearance, from every entity's tracked road position;
and that no look searches the whole network."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scenariogeneration import xodr

from helpers.roads import network_of
from vcosim.openscenario import model as m
from vcosim.openscenario.conditions import EntityTests, Scene
from vcosim.roads import RoadNetwork
from vcosim.roads.grid import RoadGrid, RoadOffsets

WIDTH = 3.5
RADIUS = 100.0


@pytest.fixture(scope="module")
def network() -> RoadNetwork:
    """Road 1: 100 m east; road 2 joined at its end: a left arc of radius 100 m, a quarter
    circle. Road 3: 100 m east too, 200 m north of them, joined to nothing; its end at
    x = 100 m is a dead end. Two lanes each way, 3.5 m wide."""
    r1 = xodr.create_road(xodr.Line(100), 1, left_lanes=2, right_lanes=2, lane_width=WIDTH)
    r2 = xodr.create_road(
        xodr.Arc(1 / RADIUS, angle=math.pi / 2), 2, left_lanes=2, right_lanes=2, lane_width=WIDTH
    )
    r1.planview.set_start_point(0.0, 0.0, 0.0)
    r1.add_successor(xodr.ElementType.road, 2, xodr.ContactPoint.start)
    r2.add_predecessor(xodr.ElementType.road, 1, xodr.ContactPoint.end)
    r3 = xodr.create_road(xodr.Line(100), 3, left_lanes=2, right_lanes=2, lane_width=WIDTH)
    r3.planview.set_start_point(0.0, 200.0, 0.0)
    return network_of(r1, r2, r3)


def on_arc(s: float, t: float) -> tuple[float, float, float]:
    """(x, y, heading) at (s, t) on road 2 (the arc from (100, 0) heading east)."""
    angle = s / RADIUS
    r = RADIUS - t
    return 100.0 + r * math.sin(angle), RADIUS - r * math.cos(angle), angle


def scene(network: RoadNetwork, cars: dict[str, tuple[float, float, float]], time: float = 0.0,
          speed: float = 10.0) -> Scene:  # fmt: skip
    """Cars (x, y, heading) with 4 m x 2 m boxes centred on their points, at ``speed``."""
    x, y, yaw = (np.array(v) for v in zip(*cars.values(), strict=True))
    n = x.size
    poses = {
        "x": x, "y": y, "yaw": yaw, "cx": x, "cy": y,
        "vx": speed * np.cos(yaw), "vy": speed * np.sin(yaw), "speed": np.full(n, speed),
        "ax": np.zeros(n), "ay": np.zeros(n),
        "half_length": np.full(n, 2.0), "half_width": np.full(n, 1.0),
    }  # fmt: skip
    rows = {name: k for k, name in enumerate(cars)}
    return Scene(time, rows, poses, network, lambda a, b: False, {})


def road_distance(measure: str, system: str = "road", freespace: bool = False):
    return lambda value, rule: m.Distance(value, rule, freespace, measure, None, "B", system)


def test_longitudinal_distance_along_joined_roads_and_lateral_across(network) -> None:
    # A in lane -1 of road 1 at s = 80; B in lane 1 of the arc 40 m along it (60 m on)
    a = (80.0, -1.75, 0.0)
    b = on_arc(40.0, 1.75)
    tests, now = EntityTests(), scene(network, {"A": a, "B": b})
    along, across = road_distance("longitudinal"), road_distance("lateral")
    assert tests.passes(along(60.001, "lessThan"), "A", now)
    assert not tests.passes(along(59.999, "lessThan"), "A", now)
    assert tests.passes(along(60.0, "equalTo"), "A", now)
    assert tests.passes(across(3.5, "equalTo"), "A", now)
    # the lane coordinate system is measured as the road's (as esmini does)
    assert tests.passes(road_distance("longitudinal", "lane")(60.0, "equalTo"), "A", now)
    # in A's own frame B is nearer ahead (the chord of the arc) and farther across
    entity_ahead = road_distance("longitudinal", "entity")
    assert tests.passes(entity_ahead(59.0, "lessThan"), "A", now)
    # freespace: the boxes' 2 m half lengths off along the road
    free = road_distance("longitudinal", freespace=True)
    assert tests.passes(free(56.0, "equalTo"), "A", now)


def test_the_distance_is_seen_from_the_way_the_entity_drives(network) -> None:
    # A drives west in lane 1 at s = 50; B at s = 20 in lane -1: 30 m ahead of A, 3.5 m right
    tests = EntityTests()
    now = scene(network, {"A": (50.0, 1.75, math.pi), "B": (20.0, -1.75, 0.0)})
    assert tests.passes(m.TimeHeadway("B", 3.0, "equalTo", False, "longitudinal", "road"), "A", now)
    assert tests.passes(m.TimeHeadway("A", 3.0, "equalTo", False, "longitudinal", "road"), "B", now)
    # C 10 m behind B the way B drives: B has no headway to it, C has 1 s to B
    later = scene(network, {"B": (20.0, -1.75, 0.0), "C": (10.0, -1.75, 0.0)}, 0.01)
    assert not tests.passes(
        m.TimeHeadway("C", 100.0, "lessThan", False, "longitudinal", "road"), "B", later
    )
    assert tests.passes(
        m.TimeHeadway("B", 1.0, "equalTo", False, "longitudinal", "road"), "C", later
    )
    # both at 10 m/s towards each other: 30 m close at 20 m/s
    ttc = m.TimeToCollision(1.5, "equalTo", False, "B", None, "longitudinal", "road")
    assert tests.passes(ttc, "A", now)
    assert tests.passes(road_distance("lateral")(3.5, "equalTo"), "A", now)


def test_a_road_distance_to_an_unjoined_road_is_infinite(network) -> None:
    tests = EntityTests()
    now = scene(network, {"A": (10.0, -1.75, 0.0), "B": (10.0, 198.25, 0.0)})
    assert tests.passes(road_distance("longitudinal")(1000.0, "greaterThan"), "A", now)
    assert not tests.passes(road_distance("longitudinal")(1000.0, "lessThan"), "A", now)


def test_end_of_road_beyond_the_end_offroad_beside_the_road(network) -> None:
    tests = EntityTests()
    end, off = m.EndOfRoad(0.5), m.Offroad(0.5)
    # A drives off the dead end of road 3 (x = 100 m) at 10 m/s; B leaves road 1 sideways
    for k in range(0, 201):
        t = 0.01 * k
        a = (95.0 + 10.0 * t, 198.25, 0.0)
        b = (50.0 + 10.0 * t, -5.0 - 3.0 * t, -0.3)
        now = scene(network, {"A": a, "B": b}, t)
        fired = {
            "A end": tests.passes(end, "A", now), "A off": tests.passes(off, "A", now),
            "B end": tests.passes(end, "B", now), "B off": tests.passes(off, "B", now),
        }  # fmt: skip
        if t < 1.0:  # A's point passes x = 100 m at 0.5 s, 0.5 s before the end fires
            assert not fired["A end"], t
        if t > 1.02:
            assert fired["A end"], t
        assert not fired["A off"] and not fired["B end"]
        # B's point leaves the lanes (t = -7 m) at 2/3 s, seen at 0.67 s: Offroad 0.5 s later
        assert fired["B off"] == (t > 1.17 - 1e-9), t


def test_no_look_searches_the_whole_network(network, monkeypatch: pytest.MonkeyPatch) -> None:
    tests = EntityTests()
    tests.passes(m.EndOfRoad(0.0), "A", scene(network, {"A": (10.0, -1.75, 0.0)}))

    def refused(*_: object) -> None:
        raise AssertionError("a whole-network search")

    monkeypatch.setattr(RoadNetwork, "locate", refused)
    for k in range(1, 600):  # along road 1 and the arc (157 m), then off the arc's end
        s = 10.0 + 0.5 * k
        pose = (s, -1.75, 0.0) if s <= 100.0 else on_arc(s - 100.0, -1.75)
        now = scene(network, {"A": pose}, 0.01 * k)
        tests.passes(m.EndOfRoad(0.0), "A", now)
        tests.passes(road_distance("longitudinal")(1.0, "lessThan"), "A", now)
    assert tests.where["A"].road == ""


def test_the_grid_finds_what_the_network_search_finds(network) -> None:
    rng = np.random.default_rng(7)
    x, y = rng.uniform(-20.0, 220.0, 2000), rng.uniform(-20.0, 220.0, 2000)
    slow, fast = network.locate(x, y), RoadGrid(network).locate(x, y)
    assert (slow.road != "").sum() > 100
    assert list(slow.road) == list(fast.road)
    on = slow.road != ""
    assert np.allclose(slow.s[on], fast.s[on]) and np.array_equal(slow.lane, fast.lane)


def test_joined_roads_offsets(network) -> None:
    offsets = RoadOffsets(network)
    assert offsets("1", "2") == (100.0, 1.0)
    assert offsets("2", "1") == (-100.0, 1.0)
    assert offsets("1", "3") is None


def clearance(lanes: tuple[tuple[int, int], ...], opposite: bool = False) -> m.RelativeClearance:
    return m.RelativeClearance((), lanes, 20.0, 10.0, False, opposite)


def test_relative_clearance_lanes_and_stretch(network) -> None:
    tests = EntityTests()
    ego = (50.0, -1.75, 0.0)
    ahead = scene(network, {"A": ego, "B": (65.0, -1.75, 0.0)}, 0.01)
    # B 15 m ahead in A's own lane: lane 0 taken, lane -1 (right) clear
    assert not tests.passes(clearance(((0, 0),)), "A", ahead)
    assert tests.passes(clearance(((-1, -1),)), "A", ahead)
    # B 25 m ahead (beyond distanceForward): clear
    far = scene(network, {"A": ego, "B": (75.5, -1.75, 0.0)}, 0.02)
    assert tests.passes(clearance(((0, 0),)), "A", far)
    # B in lane 1 (the other direction, one lane to A's left) 5 m behind
    opposite = scene(network, {"A": ego, "B": (45.0, 1.75, math.pi)}, 0.03)
    assert tests.passes(clearance(((0, 1),)), "A", opposite)  # lane 1 runs the other way
    assert not tests.passes(clearance(((0, 1),), opposite=True), "A", opposite)
    assert not tests.passes(clearance(((1, 1),)), "A", opposite)  # no lane of A's way there
    # lanes that do not exist (three to the right): not clear
    assert not tests.passes(clearance(((-3, -3),)), "A", far)


def test_positions_along_the_road_and_headings_to_it(network, monkeypatch) -> None:
    tests = EntityTests()
    a = (80.0, -1.75, 0.1)  # turned 0.1 rad left of the road
    b = on_arc(40.0, -1.75)
    now = scene(network, {"A": a, "B": b}, 0.0)
    monkeypatch.setattr(RoadNetwork, "locate", lambda *_: pytest.fail("a network search"))
    # a lane position 40 m along the arc: 60 m on along the road, 0 across
    point = m.LanePosition("2", -1, 40.0)
    along = m.Distance(60.0, "equalTo", False, "longitudinal", point, None, "road")
    assert tests.passes(along, "A", now)
    # a position relative to B's lane, one lane to its left: 3.5 m across the road from A
    left_of_b = m.RelativeLanePosition("B", 1, 0.0)
    across = m.Distance(3.5, "equalTo", False, "lateral", left_of_b, None, "road")
    assert tests.passes(across, "A", now)
    assert tests.passes(m.ReachPosition(m.RelativeLanePosition("A", 0, 0.0), 0.01), "A", now)
    # headings: absolute, to the road, to the lane (lane 1 runs against s)
    assert tests.passes(m.Angle(0.1, 0.001, "road"), "A", now)
    assert not tests.passes(m.Angle(0.1, 0.001, "road"), "B", now)
    assert tests.passes(m.Angle(0.0, 0.001, "road"), "B", now)
    later = scene(network, {"A": (80.0, 1.75, math.pi)}, 0.01)
    assert tests.passes(m.Angle(0.0, 0.001, "lane"), "A", later)
    assert tests.passes(m.Angle(math.pi, 0.001, "road"), "A", later)
