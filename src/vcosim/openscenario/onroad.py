"""Where the storyboard's entities are on the road, looked for from where they were.

Conditions in the road's or the lane's coordinates (``coordinateSystem="road"``), EndOfRoad,
Offroad and RelativeClearance need every entity's road position (road, s, t, lane) at every
look. :class:`Whereabouts` keeps each entity's road and s from the look before and projects
it there (two Newton steps, the entities of a road together); an entity that left its road is
looked for on the roads near it only (:class:`vcosim.roads.grid.RoadGrid`): no look searches the
whole network. Distances along the road are measured along joined roads
(:class:`vcosim.roads.grid.RoadOffsets`), from the triggering entity, in the direction it
drives.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from vcosim.openscenario import model as m
from vcosim.openscenario.place import Pose, lane_pose, resolve, shift_lane
from vcosim.roads import NO_LANE, RoadNetwork
from vcosim.roads.grid import STEP, RoadGrid, RoadOffsets
from vcosim.roads.network import END_TOLERANCE


@dataclass(frozen=True)
class OnRoad:
    """A point's road position: ``road`` "" off every lane.

    ``heading`` is the road's reference line's there; ``beyond`` (off every lane): the point
    has left the road it was on past one of its ends (an end of the road, not its side).
    """

    road: str
    s: float
    t: float
    lane: int
    heading: float
    beyond: bool = False


OFF = OnRoad("", math.nan, math.nan, 0, math.nan)
STEPS = 2
"""Newton steps projecting an entity onto its road from its last s (10 ms of travel away)."""
MARGIN = 0.25
"""m: nearer a road's outer edge than this, whether a point is on a lane is worked out exactly
(its edges interpolated between samples 2 m apart are off by far less where lanes taper)."""


class Whereabouts:
    """Road positions of the entities of a scene, each looked for from where it was last."""

    def __init__(self, network: RoadNetwork) -> None:
        self.network = network
        self.grid = RoadGrid(network)
        self.offsets = RoadOffsets(network)
        self._last: dict[str, tuple[str, float]] = {}
        self._points: dict[m.Position, OnRoad] = {}
        self._edges: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = {}

    def look(
        self, rows: Mapping[str, int], poses: Mapping[str, np.ndarray], detail: bool = True
    ) -> dict[str, OnRoad]:
        """Every entity's road position now.

        The entities on a road at the last look are projected onto it together, from their
        last s (:data:`STEPS` Newton steps); those off its lanes now (past an end: ``beyond``)
        are looked for on the roads near them. Without ``detail`` (what EndOfRoad and
        Offroad need) an entity well within its road's width is on it, lane 0 and heading
        NaN: its lane is only found near the road's edges (:data:`MARGIN`).
        """
        x, y = poses["x"], poses["y"]
        out: dict[str, OnRoad] = {}
        beyond: dict[str, bool] = {}
        groups: dict[str, list[str]] = {}
        for name in rows:
            if name in self._last:
                groups.setdefault(self._last[name][0], []).append(name)
        for road_id, names in groups.items():
            road = self.network.roads[road_id]
            k = np.array([rows[n] for n in names])
            s, t, along = road.project(
                x[k], y[k], np.array([self._last[n][1] for n in names]), STEPS
            )
            lane = np.zeros(s.size, dtype=np.int64)
            heading = np.full(s.size, math.nan)
            ends = np.abs(along) < END_TOLERANCE
            if detail:
                lane, heading = road.lane_at(s, t), road.plan.pose(s)[2]
                on = ends & (lane != NO_LANE)
            else:  # lane 0: not looked for
                on = ends & self._inside(road_id, s, t)
                unsure = ends & ~on
                if unsure.any():
                    lane[unsure] = road.lane_at(s[unsure], t[unsure])
                    on |= unsure & (lane != NO_LANE)
            for j, name in enumerate(names):
                if on[j]:
                    self._last[name] = (road_id, float(s[j]))
                    out[name] = OnRoad(
                        road_id, float(s[j]), float(t[j]), int(lane[j]), float(heading[j])
                    )
                else:
                    beyond[name] = not ends[j]
        for name, row in rows.items():
            if name not in out:
                found = self.locate(float(x[row]), float(y[row]))
                if found.road:
                    self._last[name] = (found.road, found.s)
                    out[name] = found
                else:
                    out[name] = OnRoad("", math.nan, math.nan, 0, math.nan, beyond.get(name, False))
        return out

    def _inside(self, road_id: str, s: np.ndarray, t: np.ndarray) -> np.ndarray:
        """True where (s, t) is surely within the road's lanes (:data:`MARGIN` inside).

        From the road's outer edges sampled every :data:`vcosim.roads.grid.STEP` m and
        interpolated; not sure across a lane section's start (where lanes change at once).
        """
        if road_id not in self._edges:
            road = self.network.roads[road_id]
            at = road.samples(STEP)
            low, high = road.t_range(at)
            section = road.section_index(at)
            self._edges[road_id] = (at, low, high, section[1:] == section[:-1])
        at, low, high, smooth = self._edges[road_id]
        k = np.clip(np.searchsorted(at, s, side="right") - 1, 0, max(smooth.size - 1, 0))
        within = (t > np.interp(s, at, low) + MARGIN) & (t < np.interp(s, at, high) - MARGIN)
        return within & (smooth[k] if smooth.size else False)

    def locate(self, x: float, y: float) -> OnRoad:
        """The road position of a point, searched for on the roads near it only."""
        found = self.grid.locate(x, y)
        road = str(found.road[0])
        if not road:
            return OFF
        s = float(found.s[0])
        heading = float(self.network.roads[road].plan.pose(np.array([s]))[2][0])
        return OnRoad(road, s, float(found.t[0]), int(found.lane[0]), heading)

    def fixed(self, position: m.Position) -> OnRoad:
        """A fixed position's road position, found once."""
        if position not in self._points:
            x, y, _ = resolve(position, self.network, {})
            self._points[position] = self.locate(x, y)
        return self._points[position]

    def along(self, a: OnRoad, b: OnRoad) -> tuple[float, float, float] | None:
        """(ds, dt, sign): ``b`` from ``a`` along and across ``a``'s road (None: not joined).

        ``sign`` is -1 where ``b``'s road runs against ``a``'s.
        """
        if not a.road or not b.road:
            return None
        joined = self.offsets(a.road, b.road)
        if joined is None:
            return None
        shift, sign = joined
        return shift + sign * b.s - a.s, sign * b.t - a.t, sign


def relative_point(
    position: m.RelativeLanePosition | m.RelativeRoadPosition, where: OnRoad, network: RoadNetwork
) -> Pose | None:
    """The pose of a position relative to an entity at ``where`` (None: it is off the road)."""
    if not where.road:
        return None
    road = network.roads[where.road]
    if isinstance(position, m.RelativeRoadPosition):
        along = where.s + position.ds
        if not 0.0 <= along <= road.length:
            return None
        x, y, _, heading = road.point(along, where.t + position.dt)
        return float(x[0]), float(y[0]), float(heading[0])
    if where.lane == NO_LANE:
        return None
    forward = network.forward(where.road, where.lane) or not position.along_lane
    lane = shift_lane(where.lane, position.dlane, forward)
    along = where.s + (position.ds if forward else -position.ds)
    if not 0.0 <= along <= road.length or not math.isfinite(float(road.lane_t(along, lane)[0])):
        return None
    px, py, h = lane_pose(network, where.road, along, lane, position.offset)
    if not position.along_lane and not network.forward(where.road, lane):
        h -= math.pi  # along the road's s (``ds``), not the lane's traffic
    return px, py, h


def on_verge(network: RoadNetwork, at: OnRoad, verges: dict[str, bool]) -> bool:
    """Whether ``at`` is on a lane of type ``none`` (OffroadCondition counts it off the road).

    OpenDRIVE's ``none`` lane is the space beyond a road's outer edge, there so that a
    driver who has left the road is still on the map; esmini leaves it out of the road's
    width for the same condition (``Position::IsOffRoad``). ``verges`` keeps, by road,
    whether the road has such a lane at all (most have none: no lane is looked for).
    """
    if not at.road:
        return False
    road = network.roads[at.road]
    has = verges.get(at.road)
    if has is None:
        has = verges[at.road] = any(
            lane.type == "none"
            for section in road.sections
            for lane in (*section.left, *section.right)
        )
    if not has:
        return False
    lane = at.lane or int(road.lane_at(at.s, at.t)[0])
    found = road.section_at(at.s).lanes.get(lane) if lane != NO_LANE else None
    return found is not None and found.type == "none"
