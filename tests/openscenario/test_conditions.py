"""Conditions on a hand-made snapshot: distances in the triggering entity's frame, freespace,
time headway and time-to-collision; edges and delays over time."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vcosim.openscenario import model as m
from vcosim.openscenario.conditions import (
    ConditionState,
    EntityTests,
    Scene,
    compare,
    time_to_collision,
)


def scene(time: float = 0.0) -> Scene:
    """A (4 m x 2 m box, 20 m/s east at the origin) and B (same box, 10 m/s, 30 m ahead, 3 m
    to the left, turned 90 degrees)."""
    poses = {
        "x": np.array([0.0, 30.0]), "y": np.array([0.0, 3.0]),
        "yaw": np.array([0.0, math.pi / 2]), "vx": np.array([20.0, 0.0]),
        "vy": np.array([0.0, 10.0]), "speed": np.array([20.0, 10.0]),
        "ax": np.array([-2.0, 0.0]), "ay": np.array([0.0, 0.0]),
        "half_length": np.array([2.0, 2.0]), "half_width": np.array([1.0, 1.0]),
    }  # fmt: skip
    poses["cx"], poses["cy"] = poses["x"], poses["y"]
    return Scene(time, {"A": 0, "B": 1}, poses, None, lambda a, b: False, {"P": "3"})


@pytest.mark.parametrize(
    ("measure", "freespace", "expected"),
    [("longitudinal", False, 30.0), ("lateral", False, 3.0),
     ("cartesian", False, math.hypot(30, 3)), ("longitudinal", True, 27.0),
     ("lateral", True, 0.0), ("cartesian", True, 27.0)],
)  # fmt: skip
def test_relative_distances_in_the_triggering_entitys_frame(
    measure: str, freespace: bool, expected: float
) -> None:
    tests = EntityTests()
    just_over = m.Distance(expected + 1e-3, "lessThan", freespace, measure, entity="B")
    just_under = m.Distance(expected - 1e-3, "lessThan", freespace, measure, entity="B")
    assert tests.passes(just_over, "A", scene()) and not tests.passes(just_under, "A", scene())


def test_headway_time_to_collision_speeds_and_positions() -> None:
    tests, now = EntityTests(), scene()
    # B is 27 m ahead (freespace: 30 - 2 - 1, its box across); A closes at 20 m/s
    assert tests.passes(m.TimeHeadway("B", 1.36, "lessThan", True), "A", now)
    assert not tests.passes(m.TimeHeadway("B", 1.34, "lessThan", True), "A", now)
    ttc = time_to_collision(m.TimeToCollision(0, "lessThan", True, entity="B"), "A", now)
    assert ttc == pytest.approx(27.0 / 20.0)
    assert (
        time_to_collision(m.TimeToCollision(0, "lessThan", False, entity="A"), "B", now) == math.inf
    )
    assert tests.passes(m.RelativeSpeed("B", 9.0, "greaterThan"), "A", now)
    assert tests.passes(m.Speed(20.0, "greaterOrEqual"), "A", now)
    assert tests.passes(m.Acceleration(-1.0, "lessThan"), "A", now)
    assert tests.passes(m.ReachPosition(m.WorldPosition(30.0, 5.0), 2.01), "B", now)
    assert not tests.passes(m.ReachPosition(m.WorldPosition(30.0, 5.0), 1.99), "B", now)
    point = m.RelativeObjectPosition("A", 10.0, 0.0)
    assert tests.passes(m.Distance(8.5, "lessThan", True, "longitudinal", position=point), "A", now)


def test_a_headway_to_an_entity_behind_holds_for_no_rule() -> None:
    """esmini's headway is not defined to one behind (nor when standing): greaterThan does
    not hold either (``multi_lane_changes.xosc`` waits on it until the other is ahead)."""
    tests, now = EntityTests(), scene()
    # from B (heading north at (30, 3)), A is 3 m behind and 30 m to the right
    for rule in ("greaterThan", "lessThan"):
        assert not tests.passes(m.TimeHeadway("A", 1.0, rule, False), "B", now)
    assert tests.passes(m.TimeHeadway("B", 1.0, "greaterThan", False), "A", now)  # 1.5 s
    standing = scene()
    standing.poses["speed"][0] = 0.0
    assert not tests.passes(m.TimeHeadway("B", 1.0, "greaterThan", False), "A", standing)


def condition(edge: str, delay: float = 0.0) -> ConditionState:
    return ConditionState(m.Condition("c", delay, edge, m.SimulationTime(0, "greaterThan"), 1))


@pytest.mark.parametrize(
    ("edge", "expected"),
    [("none", [0, 1, 1, 0, 1]), ("rising", [0, 1, 0, 0, 1]), ("falling", [0, 0, 0, 1, 0]),
     ("risingOrFalling", [0, 1, 0, 1, 1])],
)  # fmt: skip
def test_edges(edge: str, expected: list[int]) -> None:
    state = condition(edge)
    raw = [False, True, True, False, True]
    assert [int(state.update(v, 0.01 * k)) for k, v in enumerate(raw)] == expected


def test_a_delay_reports_the_condition_that_much_later() -> None:
    state = condition("rising", delay=0.03)
    raw = [False, True, True, True, True, True, True]
    got = [int(state.update(v, 0.01 * k)) for k, v in enumerate(raw)]
    assert got == [0, 0, 0, 0, 1, 0, 0]  # the edge at 0.01 s, seen at 0.04 s


def test_rules_compare_within_esminis_margin() -> None:
    assert compare(1.0 + 5e-7, "equalTo", 1.0) and not compare(1.0 + 2e-6, "equalTo", 1.0)
    assert compare(1.0 + 2e-6, "notEqualTo", 1.0) and not compare(1.0, "notEqualTo", 1.0)
    assert not compare(1.0 + 5e-7, "greaterThan", 1.0) and compare(1.0 + 2e-6, "greaterThan", 1.0)
    assert compare(1.0 - 5e-7, "greaterOrEqual", 1.0) and not compare(0.99, "greaterOrEqual", 1.0)
    assert not compare(1.0 - 5e-7, "lessThan", 1.0) and compare(1.0 + 5e-7, "lessOrEqual", 1.0)


def test_speed_and_acceleration_components_in_the_entitys_frame() -> None:
    tests, now = EntityTests(), scene()
    # B heads north at 10 m/s: all of it longitudinal, none lateral, none vertical
    assert tests.passes(m.Speed(10.0, "equalTo", "longitudinal"), "B", now)
    assert tests.passes(m.Speed(0.0, "equalTo", "lateral"), "B", now)
    assert tests.passes(m.Speed(0.0, "equalTo", "vertical"), "B", now)
    assert tests.passes(m.Acceleration(-2.0, "equalTo", "longitudinal"), "A", now)
    assert tests.passes(m.Acceleration(0.0, "equalTo", "lateral"), "A", now)
    # relative, in the reference's frame: A's 20 m/s east is, in B's frame (heading north),
    # 0 along and 20 m/s to the right; B's own 10 m/s along
    assert tests.passes(m.RelativeSpeed("B", -10.0, "equalTo", "longitudinal"), "A", now)
    assert tests.passes(m.RelativeSpeed("B", -20.0, "equalTo", "lateral"), "A", now)
    assert tests.passes(m.RelativeSpeed("A", 10.0, "equalTo", "lateral"), "B", now)
    assert not tests.passes(m.RelativeSpeed("B", 20.0, "equalTo", "longitudinal"), "A", now)


def moving(speed: float, time: float, ax: float = 0.0) -> Scene:
    now = scene(time)
    poses = dict(now.poses)
    poses["speed"] = np.array([speed, 10.0])
    poses["vx"] = np.array([speed, 0.0])
    poses["ax"] = np.array([ax, 0.0])
    return Scene(time, now.rows, poses, None, now.touching, now.parameters)


def test_equal_to_holds_where_the_value_passed_through_it() -> None:
    tests = EntityTests()
    equal = m.Speed(10.0, "equalTo")
    seen = [
        tests.passes(equal, "A", moving(v, 0.01 * k))
        for k, v in enumerate([9.8, 9.9, 10.05, 10.2, 10.0])
    ]
    assert seen == [False, False, True, False, True]  # passed 10 between 9.9 and 10.05
    unequal = m.Acceleration(0.0, "notEqualTo")
    seen = [
        tests.passes(unequal, "A", moving(20, 1 + 0.01 * k, a))
        for k, a in enumerate([-0.3, 0.2, 0.4])
    ]
    assert seen == [True, False, True]


def test_stand_still_for_a_duration_and_the_odometer() -> None:
    tests = EntityTests()
    still = m.StandStill(0.05)
    # A at 10 m/s until 0.1 s, slowing linearly to 0 at 0.2 s, then standing
    speeds = [10.0 if k <= 10 else max(0.0, 10.0 - (k - 10)) for k in range(40)]
    fired = [tests.passes(still, "A", moving(v, 0.01 * k)) for k, v in enumerate(speeds)]
    assert fired.index(True) == 25 and all(fired[25:]) and not any(fired[:25])
    # driven: 0.1 s at 10 m/s, then 0.1 s slowing to 0 (0.5 m): 1.5 m, exact for linear ramps
    assert tests.odometer["A"] == pytest.approx(1.5)
    assert tests.passes(m.TraveledDistance(1.5), "A", moving(0.0, 0.4))
    assert not tests.passes(m.TraveledDistance(1.51), "A", moving(0.0, 0.41))
    moving_again = moving(1.0, 0.42)
    assert not tests.passes(still, "A", moving_again)


def test_collision_by_type_with_the_entities_kinds() -> None:
    now = scene()
    touching = Scene(now.time, now.rows, now.poses, None, lambda a, b: {a, b} == {"A", "B"},
                     {}, {"B": "pedestrian"})  # fmt: skip
    tests = EntityTests()
    assert tests.passes(m.CollisionCondition(None, "pedestrian"), "A", touching)
    assert not tests.passes(m.CollisionCondition(None, "vehicle"), "A", touching)
    assert tests.passes(m.CollisionCondition(None, "vehicle"), "B", touching)  # A is a vehicle
    assert tests.passes(m.CollisionCondition(None), "A", touching)
    assert not tests.passes(m.CollisionCondition(None), "A", now)


def test_time_to_collision_across_and_in_a_straight_line() -> None:
    now = scene()
    # B 3 m to A's left moving away (north) at 10 m/s: no lateral collision; A closes the
    # 30 m longitudinal gap at 20 m/s; the cartesian gap closes at (30 * 20 - 3 * 10) / |gap|
    ttc = lambda measure: time_to_collision(  # noqa: E731
        m.TimeToCollision(0, "lessThan", False, "B", measure=measure), "A", now
    )
    assert ttc("lateral") == math.inf
    assert ttc("longitudinal") == pytest.approx(1.5)
    gap = math.hypot(30.0, 3.0)
    assert ttc("cartesian") == pytest.approx(gap / ((30 * 20 - 3 * 10) / gap))


def test_angles_absolute_to_the_road_and_to_another_entity() -> None:
    tests, now = EntityTests(), scene()
    assert tests.passes(m.Angle(math.pi / 2, 0.01, "world"), "B", now)
    assert not tests.passes(m.Angle(1.5, 0.05, "world"), "B", now)
    assert tests.passes(m.Angle(-math.pi / 2, 0.01, "world", entity="B"), "A", now)
    assert tests.passes(m.Angle(0.0, 0.0, "entity"), "A", now)  # its own frame: 0
