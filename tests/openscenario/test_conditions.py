"""Conditions on a hand-made snapshot: distances in the triggering entity's frame, freespace,
time headway and time-to-collision; edges and delays over time."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vcosim.openscenario import model as m
from vcosim.openscenario.conditions import ConditionState, EntityTests, Scene, time_to_collision


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
