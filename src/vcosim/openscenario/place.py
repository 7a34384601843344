"""Where OpenSCENARIO positions are: world points and headings on the scenario's road.

(Past 400 lines: positions, routes and trajectory shapes all resolve against the same road
network and entity poses with the same lane rules; the trajectory shapes are the part to
move out next, to ``trajectory.py``.)

A position resolves to (x, y, heading in rad) given the road network and the poses of the
entities it may refer to. Lanes are left and right as a driver in them sees them: with
``rule="RHT"`` lanes with negative ids run along s, so ``dLane = +1`` from lane -2 is -1,
and from -1 it is 1 (across the centre line, the other way).
"""

from __future__ import annotations

import heapq
import logging
import math
from collections.abc import Mapping

import numpy as np

from vcosim.errors import ConfigError
from vcosim.openscenario import model as m
from vcosim.roads import NO_LANE, RoadNetwork

log = logging.getLogger("vcosim.openscenario")

LONGEST_ROUTE = 100
"""Lanes a route runs through at most (a ring road comes round)."""
LaneRef = tuple[str, int]
ROAD_JOINT = 0.01
"""m from a road's end within which a route's waypoint is also on the road it joins."""

HEADING_TOLERANCE = 0.01
"""rad: an absolute orientation this close to the road's heading is the road's."""
AGAINST_LANE = math.pi / 2
"""rad: a car heading further than this from its lane's traffic drives the lane the other way
(as esmini's default controller does: an overtaker on the oncoming lane)."""

Pose = tuple[float, float, float]
"""x, y (m) and heading (rad, anticlockwise from east)."""


class PlaceError(ConfigError):
    """A position that is not on the road (or refers to an entity not on it)."""

    def __init__(self, message: str) -> None:
        super().__init__([message], "OpenSCENARIO position")


def need_road(network: RoadNetwork | None, what: str) -> RoadNetwork:
    """The road network, refused when the scenario has none."""
    if network is None:
        raise PlaceError(f"{what} needs a road: give <RoadNetwork><LogicFile filepath=...>")
    return network


def on_lane(network: RoadNetwork | None, pose: Pose, who: str) -> tuple[str, float, int, float]:
    """(road, s, lane, t) under a pose; refused off every lane."""
    road = need_road(network, f"{who}'s lane")
    where = road.locate(pose[0], pose[1])
    if where.road[0] == "" or int(where.lane[0]) == NO_LANE:
        raise PlaceError(f"{who} at ({pose[0]:.2f}, {pose[1]:.2f}) is on no lane of the road")
    return str(where.road[0]), float(where.s[0]), int(where.lane[0]), float(where.t[0])


def shift_lane(lane: int, dlane: int, forward: bool) -> int:
    """The lane ``dlane`` lanes to the left of ``lane`` as its traffic sees it (0 skipped)."""
    step = 1 if forward else -1
    out = lane
    for _ in range(abs(dlane)):
        out += step if dlane > 0 else -step
        if out == 0:
            out += step if dlane > 0 else -step
    return out


def lane_pose(network: RoadNetwork, road: str, s: float, lane: int, offset: float = 0.0) -> Pose:
    """The point ``offset`` (along t) from a lane's centre at ``s``, heading with its traffic."""
    length = network.road(road).length
    if not 0.0 <= s <= length:
        raise PlaceError(f"s = {s:.2f} m is beyond road {road!r} (0 to {length:.2f} m)")
    x, y, _, heading = network.position(road, s, lane, offset)
    if not math.isfinite(float(x[0])):
        raise PlaceError(f"road {road!r} has no lane {lane} at s = {s:.2f} m")
    turn = 0.0 if network.forward(road, lane) else math.pi
    return float(x[0]), float(y[0]), float(heading[0]) + turn


def resolve(position: m.Position, network: RoadNetwork | None, poses: Mapping[str, Pose]) -> Pose:
    """(x, y, heading) of a position; ``poses`` are the entities' (for relative positions)."""
    if isinstance(position, m.WorldPosition):
        return position.x, position.y, position.h or 0.0
    if isinstance(position, m.Oriented):
        x, y, h = resolve(position.position, network, poses)
        wanted = position.h
        if position.relative and isinstance(position.position, m.LanePosition):
            wanted += h  # to the lane's driving direction there (esmini's, by its traffic rule)
        elif position.relative:  # to the road's s direction there
            where = need_road(network, "a relative orientation").locate(x, y)
            if where.road[0] == "":
                raise PlaceError(f"({x:.2f}, {y:.2f}) is on no road: no heading to be relative to")
            wanted += float(need_road(network, "").road(str(where.road[0])).point(where.s[0])[3][0])
        if abs(math.remainder(wanted - h, 2.0 * math.pi)) <= HEADING_TOLERANCE:
            return x, y, h  # along the lane: exactly its heading
        return x, y, wanted
    if isinstance(position, m.RoutePosition):
        return route_pose(network, position, poses)
    if isinstance(position, m.TrajectoryPosition):
        return trajectory_pose(network, position, poses)
    if isinstance(position, m.RelativeWorldPosition):
        x, y, h = _pose_of(position.entity, poses)
        return x + position.dx, y + position.dy, h
    if isinstance(position, m.RelativeObjectPosition):
        x, y, h = _pose_of(position.entity, poses)
        c, s = math.cos(h), math.sin(h)
        return x + position.dx * c - position.dy * s, y + position.dx * s + position.dy * c, h
    road = need_road(network, type(position).__name__)
    if isinstance(position, m.LanePosition):
        return lane_pose(road, position.road, position.s, position.lane, position.offset)
    if isinstance(position, m.RoadPosition):
        px, py, _, heading = road.road(position.road).point(position.s, position.t)
        return float(px[0]), float(py[0]), float(heading[0])
    if isinstance(position, m.RelativeRoadPosition):
        ref = position.entity
        road_id, s, _, t = on_lane(network, _pose_of(ref, poses), ref)
        along = s + position.ds
        length = road.road(road_id).length
        if not 0.0 <= along <= length:
            raise PlaceError(f"s = {along:.2f} m is beyond road {road_id!r} (0 to {length:.2f} m)")
        px, py, _, heading = road.road(road_id).point(along, t + position.dt)
        return float(px[0]), float(py[0]), float(heading[0])
    ref = position.entity
    road_id, s, lane, _ = on_lane(network, _pose_of(ref, poses), ref)
    forward = road.forward(road_id, lane) or not position.along_lane
    target = shift_lane(lane, position.dlane, forward)
    along = s + (position.ds if forward else -position.ds)
    x, y, h = lane_pose(road, road_id, along, target, position.offset)
    if not position.along_lane and not road.forward(road_id, target):
        h -= math.pi  # along the road's s, not the lane's traffic
    return x, y, h


class NotPlaced(PlaceError):
    """A position relative to an entity that has no place (yet)."""


def _pose_of(name: str, poses: Mapping[str, Pose]) -> Pose:
    if name not in poses:
        raise NotPlaced(f"{name!r} has no place: Init places it relative to itself or to "
                        "entities without one")  # fmt: skip
    return poses[name]


# -- routes ---------------------------------------------------------------------------------
def route(
    network: RoadNetwork, road: str, lane: int, draw: np.random.Generator | None = None
) -> list[LaneRef]:
    """From (road, lane) on along the lanes it leads to (the first at each junction).

    With ``draw``, one of them drawn at random at each junction (a RandomRouteAction).
    """
    legs = [(road, lane)]
    while len(legs) < LONGEST_ROUTE:
        ahead = network.next_lanes(*legs[-1])
        if not ahead:
            break
        nxt = ahead[int(draw.integers(len(ahead)))] if draw is not None else ahead[0]
        if nxt in legs:
            break
        legs.append((str(nxt[0]), int(nxt[1])))
    return legs


def facing_lane(network: RoadNetwork, pose: Pose) -> LaneRef | None:
    """The lane of the road under ``pose`` whose traffic runs the way it faces, nearest first.

    Its own lane where that one does; else the nearest that does (a car parked across its
    lane, or turned against it, takes the road the way it faces, as esmini plans a route by
    roads, its direction from the heading). None off every lane or where no lane runs so.
    """
    try:
        road_id, s, lane, t = on_lane(network, pose, "")
    except PlaceError:
        return None
    road = network.road(road_id)
    along = road.point(s, t)[3]
    ahead = math.cos(pose[2] - float(along[0])) >= 0.0  # faces along the road's s
    lanes = road.section_at(s).lanes
    found = sorted(
        (k for k in lanes if k != 0 and network.forward(road_id, k) == ahead),
        key=lambda k: (abs(k - lane), k),
    )
    return (road_id, found[0]) if found else None


def _neighbours(network: RoadNetwork, road: str, lane: int) -> list[LaneRef]:
    """The lanes of ``road`` a car in ``lane`` could change into (same direction), and it.

    Lanes that begin further along (a highway exit's) count too.
    """
    forward = network.forward(road, lane)
    lanes = {k for section in network.road(road).sections for k in section.lanes}
    return [(road, k) for k in sorted(lanes) if k != 0 and network.forward(road, k) == forward]


def route_line(network: RoadNetwork, legs: list[LaneRef], entry: int | None = None) -> np.ndarray:
    """The centre line (x, y rows) along ``legs``.

    The first road is driven in lane ``entry`` (where the car is) until its route lane
    begins (an exit lane, say), then in that.
    """
    road_id, lane = legs[0]
    road = network.road(road_id)
    forward = network.forward(road_id, lane)
    order = list(range(len(road.sections)))
    pieces = []
    for k in order if forward else order[::-1]:
        lanes = road.sections[k].lanes
        here = lane if lane in lanes else entry if entry in lanes else None
        if here is None:
            raise PlaceError(f"road {road_id!r} has no lane {lane} in its section {k}")
        _, points = road.lane_centre(here, k, 1.0)
        pieces.append(points[:, :2] if forward else points[::-1, :2])
    if len(legs) > 1:
        pieces.append(network.route_path(list(legs[1:]))[:, :2])
    line = np.concatenate(pieces)
    keep = np.concatenate(([True], np.hypot(*np.diff(line, axis=0).T) > 1e-6))
    return line[keep]


def lanes_between(
    network: RoadNetwork, start: LaneRef, road: str, lane: int | None = None
) -> list[LaneRef] | None:
    """The shortest chain of lanes from ``start`` to ``road`` (its ``lane`` if it can).

    A car may take any lane of its start road that runs its way (it changes into it); after
    that it follows the lanes' links. None where no chain reaches ``road``.
    """
    queue: list[tuple[float, int, LaneRef]] = []
    came: dict[LaneRef, LaneRef | None] = {}
    for k, node in enumerate(_neighbours(network, *start)):
        heapq.heappush(queue, (0.0 if node == start else 1.0, k, node))
        came[node] = None
    fallback: LaneRef | None = None
    count = len(queue)
    while queue:
        cost, _, node = heapq.heappop(queue)
        if node[0] == road:
            if lane is None or node[1] == lane:
                fallback = node
                break
            fallback = fallback or node
            continue
        length = network.road(node[0]).length
        for nxt in network.next_lanes(*node):
            ahead = (str(nxt[0]), int(nxt[1]))
            if ahead not in came:
                came[ahead] = node
                count += 1
                heapq.heappush(queue, (cost + length, count, ahead))
    if fallback is None:
        return None
    chain = [fallback]
    while (before := came[chain[-1]]) is not None:
        chain.append(before)
    return chain[::-1]


def _waypoint_lane(network: RoadNetwork, pose: Pose, who: str) -> tuple[str, float, int, float]:
    """(road, s, lane, t) of a route's waypoint.

    One off every lane is taken to the nearest lane, with a warning line (as esmini takes a
    waypoint to its closest road position).
    """
    what = f"a waypoint of {who}'s route"
    try:
        return on_lane(network, pose, what)
    except PlaceError:
        near = nearest_lane(network, pose)
        if near is None:
            raise
    road, s, lane, t = near
    x, y, _ = lane_pose(network, road, s, lane)
    log.warning(
        "%s at (%.2f, %.2f) is on no lane: taken to road %r lane %d at s = %.2f m, %.1f m away",
        what, pose[0], pose[1], road, lane, s, math.hypot(x - pose[0], y - pose[1]),
    )  # fmt: skip
    return near


def nearest_lane(network: RoadNetwork, pose: Pose) -> tuple[str, float, int, float] | None:
    """(road, s, lane, t) of the lane nearest a point off every lane (None: no road has one)."""
    best: tuple[float, tuple[str, float, int, float]] | None = None
    for road in network.roads.values():
        samples = road.samples(2.0)
        sx, sy, _, _ = road.point(samples)
        k = int(np.argmin(np.hypot(pose[0] - sx, pose[1] - sy)))
        s_, t_, _ = road.project(np.array([pose[0]]), np.array([pose[1]]), samples[k : k + 1])
        s = min(max(float(s_[0]), 0.0), road.length)
        low, high = (float(v[0]) for v in road.t_range(s))
        inside = 0.1  # m inside the road's outer edge: on its outermost lane
        t = min(max(float(t_[0]), low + inside), high - inside)
        lane = int(road.lane_at(s, t)[0])
        if lane == NO_LANE or lane == 0:
            continue
        px, py, _, _ = road.point(s, t)
        gap = math.hypot(float(px[0]) - pose[0], float(py[0]) - pose[1])
        if best is None or gap < best[0]:
            best = (gap, (str(road.id), s, lane, t))
    return None if best is None else best[1]


def plan_route(
    network: RoadNetwork | None,
    start: LaneRef | None,
    waypoints: list[Pose],
    who: str,
    draw: np.random.Generator | None = None,
) -> list[LaneRef]:
    """The lanes from ``start`` through every waypoint's road, then on along their links.

    Without ``start``, from the first waypoint's lane; with ``draw``, on beyond the last at
    random (``route``).
    """
    road_net = need_road(network, f"{who}'s route")
    targets = [_waypoint_lane(road_net, pose, who) for pose in waypoints]
    legs = [start] if start is not None else [(targets[0][0], targets[0][2])]
    for road_id, s, lane, _ in targets:
        if legs[-1][0] == road_id:
            continue
        chain = lanes_between(road_net, legs[-1], road_id, lane)
        if chain is None and min(s, road_net.road(road_id).length - s) < ROAD_JOINT:
            # where two roads meet the point may be taken on either: the one it leads on to
            for ahead in road_net.next_lanes(road_id, lane):
                chain = chain or lanes_between(road_net, legs[-1], str(ahead[0]), ahead[1])
        if chain is None:
            raise PlaceError(f"{who}: no way along the roads from road {legs[-1][0]!r} to "
                             f"road {road_id!r}")  # fmt: skip
        legs[-1:] = chain
    return legs[:-1] + route(road_net, *legs[-1], draw)


def route_pose(
    network: RoadNetwork | None,
    position: m.RoutePosition,
    poses: Mapping[str, Pose],
) -> Pose:
    """Where a position along a route is: ``s`` on from its first waypoint (or the entity)."""
    road_net = need_road(network, "a route position")
    firsts = [resolve(w, network, poses) for w in position.route.waypoints]
    legs = plan_route(road_net, None, firsts, f"route {position.route.name!r}")
    line = route_line(road_net, legs)
    cum = np.concatenate(([0.0], np.cumsum(np.hypot(*np.diff(line, axis=0).T))))
    origin = firsts[0] if position.entity is None else _pose_of(position.entity, poses)
    near = int(np.argmin(np.hypot(line[:, 0] - origin[0], line[:, 1] - origin[1])))
    along = float(cum[near]) + position.s
    k = int(np.clip(np.searchsorted(cum, along), 1, len(cum) - 1))
    share = (along - cum[k - 1]) / max(cum[k] - cum[k - 1], 1e-9)
    x, y = line[k - 1, :2] + (line[k, :2] - line[k - 1, :2]) * share
    road_id, s, lane, _ = on_lane(road_net, (float(x), float(y), 0.0), "a route position")
    if position.t is not None:
        road = road_net.road(road_id)
        px, py, _, heading = road.point(s, position.t)
        turn = 0.0 if road_net.forward(road_id, lane) else math.pi
        return float(px[0]), float(py[0]), float(heading[0]) + turn
    return lane_pose(road_net, road_id, s, position.lane or lane, position.offset)


# -- trajectories ---------------------------------------------------------------------------
CLOTHOID_STEP = 0.5
"""m between the points a clothoid is sampled at (its heading is integrated 20 times finer)."""


def layout(
    trajectory: m.Trajectory,
    network: RoadNetwork | None,
    poses: Mapping[str, Pose] | None = None,
    own: Pose = (0.0, 0.0, 0.0),
    repeats: bool = False,
) -> tuple[np.ndarray, np.ndarray | None]:
    """(x, y) rows along the trajectory, and each row's time (None: the shape has none).

    ``poses``: where the entities are (relative positions); ``own``: where the entity that
    follows it is (a clothoid without a start starts there). ``repeats``: a vertex given
    twice is kept (its times say how long the entity stands there), else it is one point.
    """
    points, times = _points(trajectory.shape, network, poses or {}, own)
    if repeats:
        return points, times
    keep = np.ones(len(points), dtype=bool)  # a vertex given twice is one point of the path
    keep[1:] = np.hypot(*np.diff(points, axis=0).T) > 1e-6
    return points[keep], None if times is None else times[keep]


def _points(
    shape: m.Polyline | m.Clothoid | m.ClothoidSpline | m.Nurbs,
    network: RoadNetwork | None,
    poses: Mapping[str, Pose],
    own: Pose,
) -> tuple[np.ndarray, np.ndarray | None]:
    if isinstance(shape, m.Polyline):
        points = np.array([resolve(v, network, poses)[:2] for v in shape.vertices])
        times = None if None in shape.times else np.array(shape.times, dtype=float)
        return points, times
    if isinstance(shape, m.Nurbs):
        return _nurbs(shape, network, poses)
    x, y, h = own if shape.start is None else resolve(shape.start, network, poses)
    if isinstance(shape, m.Clothoid):
        rate = shape.curvature_rate
        segments = [(shape.curvature, shape.curvature + rate * shape.length, shape.length, 0.0)]
    else:
        segments = list(shape.segments)
    restarts = [None, *shape.restarts] if isinstance(shape, m.ClothoidSpline) else []
    pieces = [np.array([[x, y]])]
    for k, (start_curvature, end_curvature, length, turn) in enumerate(segments):
        restart = restarts[k] if k < len(restarts) else None
        if restart is not None:  # it starts where it says (a jump: the path joins the two)
            x, y, h = resolve(restart, network, poses)
            pieces.append(np.array([[x, y]]))
        piece, x, y, h = _clothoid(x, y, h + turn, start_curvature, end_curvature, length)
        pieces.append(piece[1:])
    points = np.concatenate(pieces)
    times = None
    if shape.start_time is not None and shape.stop_time is not None:
        times = np.linspace(shape.start_time, shape.stop_time, len(points))
    return points, times


def _clothoid(
    x0: float, y0: float, h0: float, k0: float, k1: float, length: float
) -> tuple[np.ndarray, float, float, float]:
    """Points every ``CLOTHOID_STEP`` along a clothoid, and the pose at its end.

    Its curvature goes from ``k0`` to ``k1`` over its ``length``.
    """
    n = max(2, math.ceil(length / CLOTHOID_STEP) + 1)
    fine = (n - 1) * 20 + 1
    s = np.linspace(0.0, length, fine)
    heading = h0 + k0 * s + 0.5 * (k1 - k0) / length * s * s
    ds = length / (fine - 1)
    # Trapezoids of the unit tangent over 2.5 cm steps: exact to well under a millimetre.
    dx = ds * (np.cos(heading[1:]) + np.cos(heading[:-1])) / 2
    dy = ds * (np.sin(heading[1:]) + np.sin(heading[:-1])) / 2
    x = x0 + np.concatenate([[0.0], np.cumsum(dx)])
    y = y0 + np.concatenate([[0.0], np.cumsum(dy)])
    return np.column_stack((x, y))[::20], float(x[-1]), float(y[-1]), float(heading[-1])


NURBS_SAMPLES = 400
"""Points a NURBS trajectory is sampled at (evenly in its parameter)."""


def _nurbs(
    shape: m.Nurbs, network: RoadNetwork | None, poses: Mapping[str, Pose]
) -> tuple[np.ndarray, np.ndarray | None]:
    """A NURBS sampled: points (and times, evaluated as a third coordinate) by de Boor."""
    controls = np.array([resolve(p, network, poses)[:2] for p, _, _ in shape.points])
    weights = np.array([w for _, w, _ in shape.points])
    timed = all(t is not None for _, _, t in shape.points)
    times = np.array([t if t is not None else 0.0 for _, _, t in shape.points])
    knots, k = np.array(shape.knots), shape.order
    start, end = knots[k - 1], knots[len(shape.points)]
    samples = []
    for u in np.linspace(start, end, NURBS_SAMPLES):
        span = int(
            np.clip(np.searchsorted(knots, u, side="right") - 1, k - 1, len(shape.points) - 1)
        )
        # de Boor on homogeneous points (x w, y w, t w, w)
        d = [np.array([*controls[j] * weights[j], times[j] * weights[j], weights[j]])
             for j in range(span - k + 1, span + 1)]  # fmt: skip
        for level in range(1, k):
            for j in range(k - 1, level - 1, -1):
                i = j + span - k + 1
                denominator = knots[i + k - level] - knots[i]
                alpha = 0.0 if denominator == 0 else (u - knots[i]) / denominator
                d[j] = (1.0 - alpha) * d[j - 1] + alpha * d[j]
        x, y, t, w = d[k - 1]
        samples.append((x / w, y / w, t / w))
    table = np.array(samples)
    return table[:, :2], table[:, 2] if timed else None


def trajectory_pose(
    network: RoadNetwork | None, position: m.TrajectoryPosition, poses: Mapping[str, Pose]
) -> Pose:
    """Where a position along a trajectory is: ``s`` along it, ``t`` to its left."""
    line, _ = layout(position.trajectory, network, poses)
    cum = np.concatenate(([0.0], np.cumsum(np.hypot(*np.diff(line, axis=0).T))))
    k = int(np.clip(np.searchsorted(cum, position.s), 1, len(cum) - 1))
    dx, dy = line[k] - line[k - 1]
    length = max(math.hypot(dx, dy), 1e-9)
    share = (position.s - cum[k - 1]) / length
    x, y = line[k - 1] + (line[k] - line[k - 1]) * share
    heading = math.atan2(dy, dx)
    return (float(x - position.t * dy / length), float(y + position.t * dx / length), heading)
