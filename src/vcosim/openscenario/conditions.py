"""Conditions and triggers: what the storyboard tests every driver period, on a snapshot.

(Past 400 lines: every condition of the supported subset is tested on one ``Scene`` snapshot;
split, each would derive the snapshot's distances again.)

A :class:`Scene` is the world at one instant (poses, boxes, speeds of every entity). Distances
between entities are measured in the triggering entity's frame (``coordinateSystem="entity"``):
longitudinal along its heading, lateral across it, cartesian both; ``freespace`` takes the
boxes' extents off (the cartesian freespace distance is the hypotenuse of the two, exact for
boxes that are aligned). In the road's frame (``road``, and ``lane`` measured as ``road``, as
esmini does) longitudinal is along the road's s (along joined roads, in the direction the
triggering entity drives) and lateral across its t, from each entity's tracked road position
(:mod:`vcosim.openscenario.onroad`: no network search). Rules compare within esmini's margin
(:data:`SMALL`). Edges and delays are per condition, as the standard says: ``rising``
is true at the first evaluation a test passes after one it failed; the first evaluation is no
edge. A delay reports a condition's value that many seconds late.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from vcosim.openscenario import model as m
from vcosim.openscenario.onroad import OFF, OnRoad, Whereabouts, on_verge, relative_point
from vcosim.openscenario.place import Pose, resolve
from vcosim.roads import NO_LANE, RoadNetwork

SMALL = 1e-6
"""The margin of every rule, esmini's ``SMALL_NUMBER``: ``equalTo`` holds within it,
``greaterThan`` needs the value that much above (``greaterOrEqual``: at most that much below)."""
EQUAL = SMALL
ANGULAR_TOLERANCE = 0.05
"""rad: a ReachPosition given with an orientation holds within this of its heading (esmini's)."""
STAND_STILL = 1e-3
"""m/s: an entity slower than this stands still (esmini's ``STAND_STILL_THRESHOLD``)."""
SYSTEMS = ("entity", "road", "lane")
"""The coordinate systems distances are measured in (``lane`` is measured as ``road``)."""
KINDS = ("vehicle", "pedestrian", "miscellaneous")
"""The kinds of entity a ``CollisionCondition`` ``ByType`` names."""


@dataclass
class Scene:
    """Every entity's state at ``time``, by name; ``kinds``: each entity's kind (else vehicle)."""

    time: float
    rows: Mapping[str, int]
    poses: Mapping[str, np.ndarray]
    network: RoadNetwork | None
    touching: Callable[[str, str], bool]
    parameters: Mapping[str, str]
    kinds: Mapping[str, str] = field(default_factory=dict)

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

    def component(self, key: str, name: str, direction: str | None, frame: str = "") -> float:
        """A vector's (``v`` velocity, ``a`` acceleration) component in ``frame``'s frame.

        ``direction`` longitudinal (along the heading), lateral (to the left) or vertical (0:
        the world is seen in plan); None: the speed, or the acceleration along the heading.
        """
        if direction is None and key == "v":
            return self.value("speed", name)
        if direction == "vertical":
            return 0.0
        yaw = self.value("yaw", frame or name)
        x, y = self.value(key + "x", name), self.value(key + "y", name)
        if direction == "lateral":
            return -x * math.sin(yaw) + y * math.cos(yaw)
        return x * math.cos(yaw) + y * math.sin(yaw)

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
        return shrink(ahead, reach_x), shrink(left, reach_y)

    def point_offsets(self, a: str, point: Pose, freespace: bool) -> tuple[float, float]:
        """(ahead, left) of a point in ``a``'s frame (freespace: from ``a``'s box)."""
        x, y, yaw = self.pose(a)
        if freespace:
            x, y = self.value("cx", a), self.value("cy", a)
        dx, dy = point[0] - x, point[1] - y
        ahead = dx * math.cos(yaw) + dy * math.sin(yaw)
        left = -dx * math.sin(yaw) + dy * math.cos(yaw)
        if freespace:
            ahead = shrink(ahead, self.value("half_length", a))
            left = shrink(left, self.value("half_width", a))
        return ahead, left

    def box_on_road(self, name: str, heading: float) -> tuple[float, float, float, float]:
        """An entity's box on a road heading ``heading`` where it is.

        (along, across): its centre from its reference point along and across the road;
        (reach along, reach across): its half extents along and across the road.
        """
        dx = self.value("cx", name) - self.value("x", name)
        dy = self.value("cy", name) - self.value("y", name)
        c, s = math.cos(heading), math.sin(heading)
        turn = self.value("yaw", name) - heading
        tc, ts = abs(math.cos(turn)), abs(math.sin(turn))
        hl, hw = self.value("half_length", name), self.value("half_width", name)
        return dx * c + dy * s, -dx * s + dy * c, hl * tc + hw * ts, hl * ts + hw * tc


def shrink(gap: float, reach: float) -> float:
    """A signed gap less ``reach`` (0 where that overlaps)."""
    return math.copysign(max(abs(gap) - reach, 0.0), gap)


def compare(value: float, rule: str, target: float) -> bool:
    """``value rule target`` (``rule`` one of OpenSCENARIO's), within :data:`SMALL` as esmini."""
    if rule == "greaterThan":
        return value > target + SMALL
    if rule == "lessThan":
        return value < target - SMALL
    if rule == "greaterOrEqual":
        return value >= target - SMALL
    if rule == "lessOrEqual":
        return value <= target + SMALL
    if rule == "notEqualTo":
        return abs(value - target) >= SMALL
    return abs(value - target) < SMALL


def distance(measure: str, ahead: float, left: float) -> float:
    """The distance of a kind from (ahead, left) offsets."""
    if measure == "longitudinal":
        return abs(ahead)
    if measure == "lateral":
        return abs(left)
    return math.hypot(ahead, left)


def time_gap(gap: float, speed: float) -> float:
    """Seconds to cover ``gap`` (m, ahead) at ``speed``; inf when not ahead or not moving."""
    return gap / speed if gap >= 0.0 and speed > SMALL else math.inf


def headway_gap(measure: str, ahead: float, left: float) -> float:
    """The gap a time headway covers: ahead, across, or the distance signed by ahead (esmini)."""
    if measure == "longitudinal":
        return ahead
    if measure == "lateral":
        return abs(left)
    return math.copysign(math.hypot(ahead, left), ahead)


def closing_time(measure: str, gap: tuple[float, float], rate: tuple[float, float]) -> float:
    """Seconds until a gap (ahead, left) closes at its rate of change; inf: it does not."""
    ahead, left = gap
    if measure == "longitudinal":
        return time_gap(ahead, -rate[0]) if ahead >= 0.0 else math.inf
    if measure == "lateral":
        return time_gap(abs(left), -math.copysign(1.0, left) * rate[1])
    size = math.hypot(ahead, left)
    if size < SMALL:
        return 0.0
    return time_gap(size, -(ahead * rate[0] + left * rate[1]) / size)


class EntityTests:
    """The tests of entity conditions, with the state some keep (timers, odometers).

    :meth:`look` (once per look, before the tests; :meth:`passes` calls it too) keeps every
    entity's odometer (its speed integrated between looks, trapezoidal), since when it stands
    still, and, once a test wanted road positions, where it is on the road and since when it
    is off every lane.
    """

    def __init__(self) -> None:
        self.time: float | None = None
        self.odometer: dict[str, float] = {}
        self.speed: dict[str, float] = {}
        self.standing_since: dict[str, float] = {}
        self.off_since: dict[str, float] = {}
        self.beyond_since: dict[str, float] = {}
        self.verges: dict[str, bool] = {}
        """By road: whether it has a lane of type none (``onroad.on_verge``)."""
        self.whereabouts: Whereabouts | None = None
        self.where: dict[str, OnRoad] = {}
        self.where_time: float | None = None
        self.detail = False
        self.crossing: dict[tuple[m.EntityTest, str], tuple[float, float | None, float]] = {}
        """(test, entity): (the look, the value's offset at the look before, at this one)."""
        self.points: dict[m.Position, Pose] = {}

    # -- the state kept from look to look ---------------------------------------------------
    def look(self, scene: Scene) -> None:
        """Odometers and stand-still timers (road positions too, once wanted) at this look."""
        now = scene.time
        if self.time is not None and now <= self.time:
            return
        dt = 0.0 if self.time is None else now - self.time
        speeds = scene.poses["speed"]
        for name, row in scene.rows.items():
            v = abs(float(speeds[row]))
            self.odometer[name] = self.odometer.get(name, 0.0) + 0.5 * dt * (
                v + self.speed.get(name, v)
            )
            self.speed[name] = v
            if v < STAND_STILL:
                self.standing_since.setdefault(name, now)
            else:
                self.standing_since.pop(name, None)
        self.time = now
        if self.whereabouts is not None:
            self.located(scene)

    def located(self, scene: Scene, detail: bool = False) -> dict[str, OnRoad]:
        """Every entity's road position at this look (found once per look).

        ``detail``: with lanes and road headings (distances along the road, lanes around);
        once asked for, every later look has them.
        """
        if scene.network is None:
            return self.where
        wanted = detail and not self.detail
        self.detail = self.detail or detail
        if self.where_time == scene.time and not wanted:
            return self.where
        if self.whereabouts is None:
            self.whereabouts = Whereabouts(scene.network)
        self.where = self.whereabouts.look(scene.rows, scene.poses, self.detail)
        if self.where_time == scene.time:
            return self.where  # the same look again, in detail: the timers are set
        self.where_time = scene.time
        for name, at in self.where.items():
            off_side = (not at.road and not at.beyond) or on_verge(scene.network, at, self.verges)
            for since, off in ((self.off_since, off_side), (self.beyond_since, at.beyond)):
                if off:
                    since.setdefault(name, scene.time)
                else:
                    since.pop(name, None)
        return self.where

    @staticmethod
    def lasted(since: dict[str, float], who: str, now: float, duration: float) -> bool:
        """True when ``who`` has been in a state (since ``since[who]``) for ``duration``."""
        return who in since and now - since[who] >= duration - SMALL

    # -- the tests --------------------------------------------------------------------------
    def passes(self, test: m.EntityTest, who: str, scene: Scene) -> bool:
        """True when entity ``who`` passes ``test`` in ``scene``."""
        self.look(scene)
        now = scene.time
        if isinstance(test, (m.Speed, m.Acceleration, m.RelativeSpeed)):
            return self._compare_rate(test, who, scene)
        if isinstance(test, m.ReachPosition):
            point = self._point(test.position, scene)
            here = scene.pose(who)
            if point is None or math.hypot(here[0] - point[0], here[1] - point[1]) > test.tolerance:
                return False
            if not isinstance(test.position, m.Oriented):
                return True
            # the heading too, as esmini checks a position given with an orientation
            wanted = test.position.h + (point[2] if test.position.relative else 0.0)
            return abs(math.remainder(here[2] - wanted, math.tau)) < ANGULAR_TOLERANCE
        if isinstance(test, m.Distance):
            gap = self._gap(who, test.entity, test.position, test.freespace, test.system, scene)
            value = math.inf if gap is None else distance(test.measure, *gap)
            return compare(value, test.rule, test.value)
        if isinstance(test, m.TimeHeadway):
            gap = self._gap(who, test.entity, None, test.freespace, test.system, scene)
            speed = scene.value("speed", who)
            if gap is None:  # no way between them: a headway beyond every value (esmini)
                return compare(math.inf, test.rule, test.value)
            covered = headway_gap(test.measure, *gap)
            if covered < 0.0 or speed < SMALL:  # behind, or standing: no headway, no rule holds
                return False
            return compare(covered / speed, test.rule, test.value)
        if isinstance(test, m.TimeToCollision):
            return compare(self.time_to_collision(test, who, scene), test.rule, test.value)
        if isinstance(test, m.CollisionCondition):
            if test.entity is not None:
                return scene.touching(who, test.entity)
            return any(
                scene.touching(who, other)
                for other in scene.rows
                if other != who
                and (test.kind is None or scene.kinds.get(other, "vehicle") == test.kind)
            )
        if isinstance(test, m.StandStill):
            return self.lasted(self.standing_since, who, now, test.duration)
        if isinstance(test, m.TraveledDistance):
            return self.odometer.get(who, 0.0) >= test.value - SMALL
        if isinstance(test, m.Offroad):
            self.located(scene)
            return self.lasted(self.off_since, who, now, test.duration)
        if isinstance(test, m.EndOfRoad):
            self.located(scene)
            return self.lasted(self.beyond_since, who, now, test.duration)
        if isinstance(test, m.RelativeClearance):
            return self._clear(test, who, scene)
        return self._angle(test, who, scene)

    def _compare_rate(
        self, test: m.Speed | m.Acceleration | m.RelativeSpeed, who: str, scene: Scene
    ) -> bool:
        """A speed, acceleration or relative speed; ``equalTo`` also where it passed the value.

        A physical car's speed is seen every 10 ms and is seldom within :data:`SMALL` of a
        value; it is equal to it where it went through it since the look before.
        """
        if isinstance(test, m.RelativeSpeed):
            if test.direction is None:
                value = scene.value("speed", who) - scene.value("speed", test.entity)
            else:
                value = scene.component("v", who, test.direction, test.entity) - scene.component(
                    "v", test.entity, test.direction
                )  # in the reference entity's frame, as esmini
        else:
            value = scene.component("v" if isinstance(test, m.Speed) else "a", who, test.direction)
        if test.rule not in ("equalTo", "notEqualTo"):
            return compare(value, test.rule, test.value)
        off = value - test.value
        key = (test, who)  # equal tests of an entity see the same values
        seen, before, _ = self.crossing.get(key, (scene.time, None, off))
        if seen != scene.time:  # the last look's value is the one before this look's
            before = self.crossing[key][2]
        self.crossing[key] = (scene.time, before, off)
        equal = abs(off) < SMALL or (before is not None and (before < 0.0) != (off < 0.0))
        return equal == (test.rule == "equalTo")

    # -- distances --------------------------------------------------------------------------
    def _point(self, position: m.Position, scene: Scene) -> Pose | None:
        """A position's pose now (None: it is nowhere); a fixed one is resolved once.

        A position relative to an entity's lane or road is taken from its tracking.
        """
        while isinstance(position, m.Oriented):  # a heading does not move a point
            position = position.position
        if isinstance(position, (m.RelativeLanePosition, m.RelativeRoadPosition)):
            where = self.located(scene, detail=True).get(position.entity, OFF)
            if scene.network is None or not where.road:
                return None
            return relative_point(position, where, scene.network)
        if isinstance(position, m.RelativeObjectPosition):
            return resolve(position, scene.network, scene.all_poses())
        if position not in self.points:
            self.points[position] = resolve(position, scene.network, {})
        return self.points[position]

    def _gap(
        self,
        who: str,
        entity: str | None,
        position: m.Position | None,
        freespace: bool,
        system: str,
        scene: Scene,
    ) -> tuple[float, float] | None:
        """(ahead, left) of an entity or a position from ``who`` (None: no such distance)."""
        if system == "entity":
            if entity is not None:
                return scene.offsets(who, entity, freespace)
            assert position is not None
            point = self._point(position, scene)
            return None if point is None else scene.point_offsets(who, point, freespace)
        return self._road_gap(who, entity, position, freespace, scene)[0]

    def _road_gap(
        self,
        who: str,
        entity: str | None,
        position: m.Position | None,
        freespace: bool,
        scene: Scene,
    ) -> tuple[tuple[float, float] | None, tuple[float, float]]:
        """(ahead, left) along and across the road from ``who``, and their rates of change.

        Along joined roads, in the direction ``who`` drives; None where either is off the
        lanes or the roads are not joined.
        """
        where = self.located(scene, detail=True)
        if self.whereabouts is None:
            return None, (0.0, 0.0)
        a = where.get(who, OFF)
        if entity is not None:
            b = where.get(entity, OFF)
        else:
            assert position is not None
            point = self._point(position, scene)
            while isinstance(position, m.Oriented):
                position = position.position
            if isinstance(position, (m.WorldPosition, m.LanePosition, m.RoadPosition)):
                b = self.whereabouts.fixed(position)
            else:
                b = OFF if point is None else self.whereabouts.locate(point[0], point[1])
        joined = self.whereabouts.along(a, b)
        if joined is None:
            return None, (0.0, 0.0)
        ds, dt, sign = joined
        facing = 1.0 if math.cos(scene.value("yaw", who) - a.heading) >= 0.0 else -1.0
        ua = (math.cos(a.heading), math.sin(a.heading))
        va = (scene.value("vx", who), scene.value("vy", who))
        rate_s = -(va[0] * ua[0] + va[1] * ua[1])
        rate_t = -(-va[0] * ua[1] + va[1] * ua[0])
        reach_s = reach_t = 0.0
        if freespace:
            along, across, reach_s, reach_t = scene.box_on_road(who, a.heading)
            ds, dt = ds - along, dt - across
        if entity is not None:
            ub = (math.cos(b.heading), math.sin(b.heading))
            vb = (scene.value("vx", entity), scene.value("vy", entity))
            rate_s += sign * (vb[0] * ub[0] + vb[1] * ub[1])
            rate_t += sign * (-vb[0] * ub[1] + vb[1] * ub[0])
            if freespace:
                along, across, reach_b_s, reach_b_t = scene.box_on_road(entity, b.heading)
                ds, dt = ds + sign * along, dt + sign * across
                reach_s, reach_t = reach_s + reach_b_s, reach_t + reach_b_t
        gap = (facing * shrink(ds, reach_s), facing * shrink(dt, reach_t))
        return gap, (facing * rate_s, facing * rate_t)

    def time_to_collision(self, test: m.TimeToCollision, who: str, scene: Scene) -> float:
        """Seconds until ``who`` closes the gap to the target at today's speeds (inf: never)."""
        if test.system != "entity":
            gap, rate = self._road_gap(who, test.entity, test.position, test.freespace, scene)
            return math.inf if gap is None else closing_time(test.measure, gap, rate)
        own = (scene.component("v", who, "longitudinal"), scene.component("v", who, "lateral"))
        if test.entity is not None:
            gap = scene.offsets(who, test.entity, test.freespace)
            other = (
                scene.component("v", test.entity, "longitudinal", who),
                scene.component("v", test.entity, "lateral", who),
            )
            rate = (other[0] - own[0], other[1] - own[1])
        else:
            assert test.position is not None
            point = self._point(test.position, scene)
            if point is None:
                return math.inf
            gap = scene.point_offsets(who, point, test.freespace)
            rate = (-own[0], -own[1])
        return closing_time(test.measure, gap, rate)

    # -- lanes around -----------------------------------------------------------------------
    def _clear(self, test: m.RelativeClearance, who: str, scene: Scene) -> bool:
        """True when no entity is in the lanes and the stretch around ``who``.

        As esmini: the lanes must exist (a driving lane in the ranges where ``who`` is), and
        an entity counts when its road position is within the stretch and its lane within a
        range (of ``who``'s direction unless ``opposite``).
        """
        where = self.located(scene, detail=True)
        a = where.get(who, OFF)
        network = scene.network
        if not a.road or a.lane in (0, NO_LANE) or self.whereabouts is None or network is None:
            return False
        facing = 1 if math.cos(scene.value("yaw", who) - a.heading) >= 0.0 else -1

        def counted(lane: int) -> bool:
            """A lane (an id of ``a``'s road) lies in a range and runs the way it must."""
            left = facing * (_lane_index(lane) - _lane_index(a.lane))
            same_way = (lane < 0) == (a.lane < 0)
            in_range = not test.lanes or any(low <= left <= high for low, high in test.lanes)
            return in_range and (test.opposite or same_way)

        section = network.roads[a.road].section_at(a.s)
        driving = [lid for lid, lane in section.lanes.items() if lid and lane.type == "driving"]
        if not any(counted(lid) for lid in driving):
            return False
        for other in test.entities or tuple(scene.rows):
            b = where.get(other, OFF)
            if other == who or b.lane in (0, NO_LANE):
                continue
            gap, _ = self._road_gap(who, other, None, test.freespace, scene)
            joined = self.whereabouts.along(a, b)
            if gap is None or joined is None:
                continue
            if not -test.backward - SMALL <= gap[0] <= test.forward + SMALL:
                continue
            lane_b = b.lane if joined[2] > 0 else -b.lane  # its lane as ``a``'s road counts
            if counted(lane_b):
                return False
        return True

    # -- headings ---------------------------------------------------------------------------
    def _angle(self, test: m.Angle, who: str, scene: Scene) -> bool:
        """The heading (absolute, to the road or lane, or to an entity) within the tolerance."""
        heading = scene.value("yaw", who)
        if test.entity is not None:
            angle = heading - scene.value("yaw", test.entity)
        elif test.system == "entity":
            angle = 0.0  # its own frame (as esmini)
        elif test.system in ("road", "lane"):
            at = self.located(scene, detail=True).get(who, OFF)
            if not at.road:
                return False
            angle = heading - at.heading
            if test.system == "lane" and scene.network is not None and at.lane != 0:
                angle -= 0.0 if scene.network.forward(at.road, at.lane) else math.pi
        else:
            angle = heading
        off = abs(math.remainder(angle - test.value, 2.0 * math.pi))
        return off < test.tolerance + SMALL


def _lane_index(lane: int) -> int:
    """Lane ids counted across without the centre lane 0 (-2, -1, 1, 2 -> -2, -1, 0, 1)."""
    return lane if lane < 0 else lane - 1


def time_to_collision(test: m.TimeToCollision, who: str, scene: Scene) -> float:
    """Seconds until ``who`` reaches the target at today's speeds (inf: never)."""
    return EntityTests().time_to_collision(test, who, scene)


class ConditionState:
    """One condition's edge and delay over time.

    The edge is seen at every look (:meth:`look`); the delay counts only the looks at which
    its trigger listens (:meth:`listen`: while its element waits), as esmini's timer, which
    starts again when the element waits for another execution (:meth:`rearm`).
    """

    def __init__(self, condition: m.Condition) -> None:
        self.condition = condition
        self.last: bool | None = None
        self.edged = False
        """The test's result through its edge at the latest look."""
        self.history: deque[tuple[float, bool]] = deque()
        self.value = False
        self.heard: float | None = None
        """The look at which the trigger last listened."""

    def update(self, raw: bool, now: float) -> bool:
        """The condition's value at ``now``, given its test's ``raw`` result."""
        self.look(raw)
        return self.listen(now)

    def look(self, raw: bool) -> None:
        """The test's ``raw`` result at this look, through the condition's edge."""
        edge, last = self.condition.edge, self.last
        self.last = raw
        if edge == "none":
            self.edged = raw
        elif last is None:
            self.edged = False
        elif edge == "rising":
            self.edged = raw and not last
        elif edge == "falling":
            self.edged = last and not raw
        else:
            self.edged = raw != last

    def listen(self, now: float) -> bool:
        """The condition's value at ``now`` for a trigger that listens (once per look)."""
        if self.heard == now:
            return self.value
        self.heard = now
        edge, edged, delay = self.condition.edge, self.edged, self.condition.delay
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

    def rearm(self) -> None:
        """Its element waits for another execution: the delay's history and value are gone."""
        self.history.clear()
        self.value = False


def all_conditions(trigger: m.Trigger | None) -> list[m.Condition]:
    """Every condition of a trigger (none for no trigger)."""
    return [] if trigger is None else [c for group in trigger.groups for c in group]
