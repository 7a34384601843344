"""Conditions and triggers: what the storyboard tests every driver period, on a snapshot.

A :class:`Scene` is the world at one instant (poses, boxes, speeds of every entity). Distances
between entities are measured in the triggering entity's frame (``coordinateSystem="entity"``):
longitudinal along its heading, lateral across it, cartesian both; ``freespace`` takes the
boxes' extents off (the cartesian freespace distance is the hypotenuse of the two, exact for
boxes that are aligned). Edges and delays are per condition, as the standard says: ``rising``
is true at the first evaluation a test passes after one it failed; the first evaluation is no
edge. A delay reports a condition's value that many seconds late.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from vcosim.openscenario import model as m
from vcosim.openscenario.place import Pose, resolve
from vcosim.roads import RoadNetwork

EQUAL = 1e-6
"""How close two numbers are for the ``equalTo`` rule."""


@dataclass
class Scene:
    """Every entity's state at ``time``, by name."""

    time: float
    rows: Mapping[str, int]
    poses: Mapping[str, np.ndarray]
    network: RoadNetwork | None
    touching: Callable[[str, str], bool]
    parameters: Mapping[str, str]

    def pose(self, name: str) -> Pose:
        """(x, y, heading) of an entity."""
        r = self.rows[name]
        return float(self.poses["x"][r]), float(self.poses["y"][r]), float(self.poses["yaw"][r])

    def all_poses(self) -> dict[str, Pose]:
        """Every entity's pose (what relative positions refer to)."""
        return {name: self.pose(name) for name in self.rows}

    def value(self, key: str, name: str) -> float:
        """One pose figure (``POSE_NAMES``, box half sizes) of an entity."""
        return float(self.poses[key][self.rows[name]])

    def along(self, name: str, frame: str) -> float:
        """``name``'s velocity along ``frame``'s heading."""
        yaw = self.value("yaw", frame)
        return self.value("vx", name) * math.cos(yaw) + self.value("vy", name) * math.sin(yaw)

    def offsets(self, a: str, b: str, freespace: bool) -> tuple[float, float]:
        """(ahead, left) of ``b`` in ``a``'s frame, signed.

        With ``freespace`` the gaps between the boxes (0 where they overlap in that
        direction), else between the reference points.
        """
        key_x, key_y = ("cx", "cy") if freespace else ("x", "y")
        yaw = self.value("yaw", a)
        dx = self.value(key_x, b) - self.value(key_x, a)
        dy = self.value(key_y, b) - self.value(key_y, a)
        ahead = dx * math.cos(yaw) + dy * math.sin(yaw)
        left = -dx * math.sin(yaw) + dy * math.cos(yaw)
        if not freespace:
            return ahead, left
        turn = self.value("yaw", b) - yaw
        c, s = abs(math.cos(turn)), abs(math.sin(turn))
        hl_b, hw_b = self.value("half_length", b), self.value("half_width", b)
        reach_x = self.value("half_length", a) + hl_b * c + hw_b * s
        reach_y = self.value("half_width", a) + hl_b * s + hw_b * c
        return (
            math.copysign(max(abs(ahead) - reach_x, 0.0), ahead),
            math.copysign(max(abs(left) - reach_y, 0.0), left),
        )

    def point_offsets(self, a: str, point: Pose, freespace: bool) -> tuple[float, float]:
        """(ahead, left) of a point in ``a``'s frame (freespace: from ``a``'s box)."""
        x, y, yaw = self.pose(a)
        if freespace:
            x, y = self.value("cx", a), self.value("cy", a)
        dx, dy = point[0] - x, point[1] - y
        ahead = dx * math.cos(yaw) + dy * math.sin(yaw)
        left = -dx * math.sin(yaw) + dy * math.cos(yaw)
        if freespace:
            reach_x, reach_y = self.value("half_length", a), self.value("half_width", a)
            ahead = math.copysign(max(abs(ahead) - reach_x, 0.0), ahead)
            left = math.copysign(max(abs(left) - reach_y, 0.0), left)
        return ahead, left


def compare(value: float, rule: str, target: float) -> bool:
    """``value rule target`` (``rule`` one of OpenSCENARIO's)."""
    if rule == "greaterThan":
        return value > target
    if rule == "lessThan":
        return value < target
    if rule == "greaterOrEqual":
        return value >= target
    if rule == "lessOrEqual":
        return value <= target
    if rule == "notEqualTo":
        return abs(value - target) > EQUAL
    return abs(value - target) <= EQUAL


def distance(measure: str, ahead: float, left: float) -> float:
    """The distance of a kind from (ahead, left) offsets."""
    if measure == "longitudinal":
        return abs(ahead)
    if measure == "lateral":
        return abs(left)
    return math.hypot(ahead, left)


def time_gap(gap: float, speed: float) -> float:
    """Seconds to cover ``gap`` (m, ahead) at ``speed``; inf when not ahead or not moving."""
    return gap / speed if gap >= 0.0 and speed > 1e-6 else math.inf


class EntityTests:
    """The tests of entity conditions, with the state some of them keep (EndOfRoad's timer)."""

    def __init__(self) -> None:
        self.off_road_since: dict[tuple[int, str], float] = {}

    def passes(self, test: m.EntityTest, who: str, scene: Scene) -> bool:
        """True when entity ``who`` passes ``test`` in ``scene``."""
        if isinstance(test, m.Speed):
            return compare(scene.value("speed", who), test.rule, test.value)
        if isinstance(test, m.Acceleration):
            yaw = scene.value("yaw", who)
            along = scene.value("ax", who) * math.cos(yaw) + scene.value("ay", who) * math.sin(yaw)
            return compare(along, test.rule, test.value)
        if isinstance(test, m.RelativeSpeed):
            relative = scene.value("speed", who) - scene.value("speed", test.entity)
            return compare(relative, test.rule, test.value)
        if isinstance(test, m.ReachPosition):
            x, y, _ = resolve(test.position, scene.network, scene.all_poses())
            here = scene.pose(who)
            return math.hypot(here[0] - x, here[1] - y) <= test.tolerance
        if isinstance(test, m.Distance):
            if test.entity is not None:
                ahead, left = scene.offsets(who, test.entity, test.freespace)
            else:
                assert test.position is not None
                point = resolve(test.position, scene.network, scene.all_poses())
                ahead, left = scene.point_offsets(who, point, test.freespace)
            return compare(distance(test.measure, ahead, left), test.rule, test.value)
        if isinstance(test, m.TimeHeadway):
            ahead, _ = scene.offsets(who, test.entity, test.freespace)
            return compare(time_gap(ahead, scene.value("speed", who)), test.rule, test.value)
        if isinstance(test, m.TimeToCollision):
            return compare(time_to_collision(test, who, scene), test.rule, test.value)
        if isinstance(test, m.CollisionCondition):
            return test.entity is not None and scene.touching(who, test.entity)
        return self._end_of_road(test, who, scene)

    def _end_of_road(self, test: m.EndOfRoad, who: str, scene: Scene) -> bool:
        if scene.network is None:
            return False
        x, y, _ = scene.pose(who)
        key = (id(test), who)
        if scene.network.locate(x, y).road[0] != "":
            self.off_road_since.pop(key, None)
            return False
        since = self.off_road_since.setdefault(key, scene.time)
        return scene.time - since >= test.duration


def time_to_collision(test: m.TimeToCollision, who: str, scene: Scene) -> float:
    """Seconds until ``who`` reaches the target ahead at today's speeds (inf: never)."""
    if test.entity is not None:
        ahead, _ = scene.offsets(who, test.entity, test.freespace)
        closing = scene.along(who, who) - scene.along(test.entity, who)
    else:
        assert test.position is not None
        point = resolve(test.position, scene.network, scene.all_poses())
        ahead, _ = scene.point_offsets(who, point, test.freespace)
        closing = scene.along(who, who)
    return time_gap(ahead, closing)


class ConditionState:
    """One condition's edge and delay over time."""

    def __init__(self, condition: m.Condition) -> None:
        self.condition = condition
        self.last: bool | None = None
        self.history: deque[tuple[float, bool]] = deque()
        self.value = False

    def update(self, raw: bool, now: float) -> bool:
        """The condition's value at ``now``, given its test's ``raw`` result."""
        edge, last = self.condition.edge, self.last
        self.last = raw
        if edge == "none":
            edged = raw
        elif last is None:
            edged = False
        elif edge == "rising":
            edged = raw and not last
        elif edge == "falling":
            edged = last and not raw
        else:
            edged = raw != last
        delay = self.condition.delay
        if delay <= 0.0:
            self.value = edged
            return edged
        self.history.append((now, edged))
        due = []
        while self.history and self.history[0][0] <= now - delay + 1e-9:
            due.append(self.history.popleft()[1])
        # a level (edge none) is its latest due value; an edge is not lost between two looks
        self.value = (
            (due[-1] if edge == "none" else any(due))
            if due
            else (self.value if edge == "none" else False)
        )
        return self.value


def all_conditions(trigger: m.Trigger | None) -> list[m.Condition]:
    """Every condition of a trigger (none for no trigger)."""
    return [] if trigger is None else [c for group in trigger.groups for c in group]
