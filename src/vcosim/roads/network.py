"""A road network: roads and junctions, where a point is on it, and lanes joined into routes.

Drivers keep to the right of the reference line on roads with ``rule="RHT"`` (the default):
lanes with negative ids run along s, positive ids against it; ``rule="LHT"`` swaps them.
A route is a list of ``(road id, lane id)``, each lane id as it is where the route enters
that road; consecutive entries must be linked (road links, lane links, junction lane links).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from vcosim.errors import ConfigError, UnknownNameError
from vcosim.roads.model import Road

END_TOLERANCE = 1e-3
"""m: a point this close beyond a road's end is on it (files join roads to a few microns)."""

LaneRef = tuple[str, int]


@dataclass(frozen=True)
class Connection:
    """A junction's connecting road, entered from ``incoming`` at its ``contact_point`` end."""

    incoming: str
    road: str
    contact_point: str
    lane_links: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class Junction:
    """Roads meeting; a driver crosses it on one of its connecting roads."""

    id: str
    name: str
    connections: tuple[Connection, ...]


@dataclass(frozen=True)
class RoadPositions:
    """Where points are on the network: one entry per point; road ``""`` is off the roads."""

    road: np.ndarray
    s: np.ndarray
    t: np.ndarray
    lane: np.ndarray
    z: np.ndarray


class RoadNetwork:
    """The roads and junctions of an OpenDRIVE file, with the queries drivers and wheels need."""

    def __init__(self, roads: Sequence[Road], junctions: Sequence[Junction] = ()) -> None:
        self.roads = {road.id: road for road in roads}
        self.junctions = {junction.id: junction for junction in junctions}
        problems = [
            f"road {road.id!r} links to the missing {link.element_type} {link.element_id!r}"
            for road in roads
            for link in (road.predecessor, road.successor)
            if link is not None
            and link.element_id
            not in (self.roads if link.element_type == "road" else self.junctions)
        ]
        problems += [
            f"junction {j.id!r} connects the missing road {rid!r}"
            for j in self.junctions.values()
            for c in j.connections
            for rid in (c.incoming, c.road)
            if rid not in self.roads
        ]
        if problems:
            raise ConfigError(problems, "OpenDRIVE road network")

    def road(self, road_id: str | int) -> Road:
        """The road of this id (OpenDRIVE ids are strings; ``3`` finds ``"3"``)."""
        try:
            return self.roads[str(road_id)]
        except KeyError:
            raise UnknownNameError("road", str(road_id), sorted(self.roads)) from None

    def bounds(self, step: float = 1.0) -> tuple[float, float, float, float]:
        """(x_min, y_min, x_max, y_max) of every road's outermost lane borders."""
        xs, ys = [], []
        for road in self.roads.values():
            s = road.samples(step)
            for t in road.t_range(s):
                x, y, _, _ = road.point(s, t)
                xs.append(x)
                ys.append(y)
        x, y = np.concatenate(xs), np.concatenate(ys)
        return float(x.min()), float(y.min()), float(x.max()), float(y.max())

    # -- points <-> roads -------------------------------------------------------------------
    def position(
        self, road_id: str | int, s: np.ndarray | float, lane: int = 0, offset: float = 0.0
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(x, y, z, heading) on a lane's centre line at ``s`` (lane 0: the lane offset line).

        ``offset`` moves the point to the left of the lane centre (along t). The heading is the
        reference line's (a lane running against s drives the opposite way).
        """
        road = self.road(road_id)
        return road.point(s, road.lane_t(s, lane) + offset)

    def locate(self, x: np.ndarray | float, y: np.ndarray | float) -> RoadPositions:
        """Road, s, t, lane and surface height under world points (x, y).

        Where roads overlap (a junction's connecting roads) the one whose reference line is
        nearest wins. A point on no road's lanes gets road ``""``, lane 0 and NaNs.
        """
        x = np.atleast_1d(np.asarray(x, dtype=float))
        y = np.broadcast_to(np.asarray(y, dtype=float), x.shape)
        best = np.full(x.shape, np.inf)
        found = RoadPositions(
            np.full(x.shape, "", dtype=object),
            np.full(x.shape, np.nan),
            np.full(x.shape, np.nan),
            np.zeros(x.shape, dtype=np.int64),
            np.full(x.shape, np.nan),
        )
        for road in self.roads.values():
            samples = road.samples(2.0)
            sx, sy, _, _ = road.point(samples)
            nearest = np.argmin(np.hypot(x[:, None] - sx, y[:, None] - sy), axis=1)
            s, t, along = road.project(x, y, samples[nearest])
            low, high = road.t_range(s)
            on = (np.abs(along) < END_TOLERANCE) & (t >= low) & (t <= high) & (np.abs(t) < best)
            if not on.any():
                continue
            best[on] = np.abs(t[on])
            found.road[on] = road.id
            found.s[on], found.t[on] = s[on], t[on]
            found.lane[on] = road.lane_at(s[on], t[on])
            found.z[on] = road.point(s[on], t[on])[2]
        return found

    # -- lanes joined up --------------------------------------------------------------------
    def forward(self, road_id: str | int, lane: int) -> bool:
        """True if traffic in this lane runs along s."""
        return (lane < 0) == (self.road(road_id).rule != "LHT")

    def _lane_ids(self, road: Road, lane: int, forward: bool) -> list[int | None]:
        """The lane's id in each section in driving order, from the entry section."""
        order = road.sections if forward else road.sections[::-1]
        ids: list[int | None] = []
        current: int | None = lane
        for section in order:
            ids.append(current)
            here = section.lanes.get(current) if current is not None else None
            if here is not None:
                linked = here.successor if forward else here.predecessor
                current = linked if linked is not None else current
        return ids

    def lane_id_at(self, road_id: str | int, lane: int, s: float) -> int:
        """The id at ``s`` of the lane entered as ``lane``.

        Ids change across lane sections: a lane that opens on the inside renumbers the ones
        beyond it.
        """
        road = self.road(road_id)
        forward = self.forward(road.id, lane)
        ids = self._lane_ids(road, lane, forward)
        k = int(road.section_index(s)[0])
        found = ids[k] if forward else ids[len(ids) - 1 - k]
        return lane if found is None else found

    def next_lanes(self, road_id: str | int, lane: int) -> list[LaneRef]:
        """The lanes a driver in this lane can drive on to where the road ends ahead."""
        road = self.road(road_id)
        forward = self.forward(road.id, lane)
        exit_id = self._lane_ids(road, lane, forward)[-1]
        last = road.sections[-1] if forward else road.sections[0]
        exit_lane = last.lanes.get(exit_id) if exit_id is not None else None
        link = road.successor if forward else road.predecessor
        if exit_lane is None or link is None:
            return []
        if link.element_type == "road":
            target = exit_lane.successor if forward else exit_lane.predecessor
            nxt = self.roads.get(link.element_id)
            if target is None or nxt is None:
                return []
            return [(nxt.id, target)]
        junction = self.junctions.get(link.element_id)
        if junction is None:
            return []
        return [
            (c.road, to)
            for c in junction.connections
            if c.incoming == road.id
            for frm, to in c.lane_links
            if frm == exit_lane.id and self.forward(c.road, to) == (c.contact_point == "start")
        ]

    def route_path(self, route: list[tuple[str | int, int]], step: float = 1.0) -> np.ndarray:
        """The centre line along a route of (road, lane): (x, y, z) rows, ``step`` apart or less.

        Each (road, lane) is driven from where it is entered to where it is left; every step
        must be one :meth:`next_lanes` offers, else the route is refused with every break named.
        """
        legs = [(self.road(r).id, int(lane)) for r, lane in route]
        problems = [
            f"{a} does not lead to {b} (it leads to {self.next_lanes(*a) or 'nothing'})"
            for a, b in zip(legs, legs[1:], strict=False)
            if b not in self.next_lanes(*a)
        ]
        if problems:
            raise ConfigError(problems, "route")
        pieces = []
        for road_id, lane in legs:
            road = self.roads[road_id]
            forward = self.forward(road_id, lane)
            order = range(len(road.sections))
            indices = list(order) if forward else list(order)[::-1]
            for k, lane_id in zip(indices, self._lane_ids(road, lane, forward), strict=True):
                if lane_id is None or lane_id not in road.sections[k].lanes:
                    raise ConfigError([f"lane {lane_id} is not in road {road_id}'s section {k}"])
                _, points = road.lane_centre(lane_id, k, step)
                pieces.append(points if forward else points[::-1])
        path = np.concatenate(pieces)
        keep = np.ones(len(path), dtype=bool)
        keep[1:] = np.hypot(*np.diff(path[:, :2], axis=0).T) > 1e-6
        return path[keep]
