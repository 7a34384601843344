"""Where a car starts on a road network: on a driving lane, facing its traffic.

A road file whose roads do not pass through the origin (most maps) would leave a car started at
(0, 0) off every lane; ``lane_start`` gives the pose of a road position instead (the first
driving lane of the first road at its start when nothing is said), and ``nearest_lane`` names
the lane a pose off every lane was probably meant for.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from vcosim.errors import ConfigError
from vcosim.roads.model import Road
from vcosim.roads.network import RoadNetwork

START_IN = 5.0
"""Metres along a lane from its start where a car is put: its whole length on the road."""
DRIVING = "driving"


@dataclass(frozen=True)
class LanePlace:
    """A point on a lane's centre line: road, lane, s (m), and its distance from a pose (m)."""

    road: str
    lane: int
    s: float
    distance: float = 0.0

    def option(self) -> str:
        """The same place as ``--start-pose`` takes it."""
        return f"road={self.road},lane={self.lane},s={self.s:.1f}"


def driving_lanes(network: RoadNetwork, road: Road, s: float) -> list[int]:
    """The driving lanes at ``s``, those that run along s first, each side from the centre out."""
    section = road.section_at(s)
    ids = [lane.id for lane in (*section.right, *section.left) if lane.type == DRIVING]
    return sorted(ids, key=lambda i: (not network.forward(road.id, i), abs(i)))


def lane_start(
    network: RoadNetwork,
    road_id: str | int | None = None,
    lane: int | None = None,
    s: float | None = None,
) -> tuple[float, float, float]:
    """(x, y, heading in degrees from east) on a driving lane's centre line, facing its traffic.

    No road: the first of the file; no lane: the road's first driving lane (along s first, from
    the centre out); no s: ``START_IN`` metres into the lane from where its traffic enters
    (s = 0 for a lane along s, the road's end for one against it). A road, lane or s that is
    not there (or not a driving lane) is a ``ConfigError`` naming what there is.
    """
    if not network.roads:
        raise ConfigError(["the road network has no roads"], "start on the road")
    road = network.road(road_id) if road_id is not None else next(iter(network.roads.values()))
    where = f"road {road.id!r}"
    if s is not None and not 0.0 <= s <= road.length:
        raise ConfigError(
            [f"s = {s:g} m is beyond {where}, which runs from s = 0 to {road.length:.1f} m"],
            "start on the road",
        )
    probe = s if s is not None else 0.0
    lanes = driving_lanes(network, road, probe)
    if lane is None:
        if not lanes:
            raise ConfigError([f"{where} has no driving lane at s = {probe:g} m"], "start")
        lane = lanes[0]
    forward = network.forward(road.id, lane)
    if s is None:
        margin = min(START_IN, road.length / 2)
        s = margin if forward else road.length - margin
        lanes = driving_lanes(network, road, s)
    if lane not in lanes:
        there = ", ".join(map(str, lanes)) or "none"
        raise ConfigError(
            [f"{where} has no driving lane {lane} at s = {s:g} m (its driving lanes: {there})"],
            "start on the road",
        )
    x, y, _, heading = road.point(s, road.lane_t(s, lane))
    degrees = math.degrees(float(heading[0])) + (0.0 if forward else 180.0)
    return float(x[0]), float(y[0]), (degrees + 180.0) % 360.0 - 180.0


def on_a_driving_lane(network: RoadNetwork, x: float, y: float) -> bool:
    """True if (x, y) is on a driving lane of some road."""
    at = network.locate(x, y)
    road_id, lane = str(at.road[0]), int(at.lane[0])
    if not road_id or lane == 0:
        return False
    section = network.road(road_id).section_at(float(at.s[0]))
    found = section.lanes.get(lane)
    return found is not None and found.type == DRIVING


def nearest_lane(network: RoadNetwork, x: float, y: float, step: float = 1.0) -> LanePlace:
    """The driving lane whose centre line passes nearest (x, y), and the s of that point."""
    best: LanePlace | None = None
    for road in network.roads.values():
        for index, section in enumerate(road.sections):
            for lane in (*section.right, *section.left):
                if lane.type != DRIVING:
                    continue
                s, points = road.lane_centre(lane.id, index, step)
                away = np.hypot(points[:, 0] - x, points[:, 1] - y)
                k = int(np.nanargmin(away)) if np.isfinite(away).any() else -1
                if k >= 0 and (best is None or away[k] < best.distance):
                    best = LanePlace(road.id, lane.id, float(s[k]), float(away[k]))
    if best is None:
        raise ConfigError(["the road network has no driving lane"], "start on the road")
    return best
