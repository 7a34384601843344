"""A trajectory's schedule: the speed that keeps to its vertices' times.

A FollowTrajectoryAction's trajectory is laid out when the action starts
(``place.layout``: its relative positions, and a clothoid without a start, taken where the
entities are then) and becomes a world path the built-in driver is switched onto; its vertex
times, when it has them, become a schedule of arc length against time that the storyboard
turns into the speed it tracks (here).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from vcosim.openscenario import model as m
from vcosim.openscenario.place import Pose, resolve
from vcosim.roads import RoadNetwork

CATCH_UP = 0.5
"""1/s: ``position`` mode closes a lag behind the trajectory's schedule at this pace."""


def schedule_speed(
    cum: np.ndarray, times: np.ndarray, now: float, arc: float, catch_up: bool
) -> float:
    """The speed that keeps to a schedule of arc lengths ``cum`` at ``times``.

    The speed of the segment the schedule is in now, plus (``catch_up``) a pull towards the
    scheduled arc length; before the first time it drives the first segment's speed, after
    the last time the last segment's.
    """
    k = int(np.clip(np.searchsorted(times, now, side="right") - 1, 0, len(times) - 2))
    span = times[k + 1] - times[k]
    speed = (cum[k + 1] - cum[k]) / span if span > 0 else 0.0
    if catch_up:
        wanted = float(np.interp(now, times, cum))
        speed += CATCH_UP * (wanted - arc)
    return max(speed, 0.0)


def follow_speeds(cum: np.ndarray, times: np.ndarray, start: float) -> np.ndarray:
    """The speed at each vertex of a schedule driven in ``follow`` mode, as esmini drives it.

    From ``start`` (the entity's speed when the action starts) each segment is driven at
    the one acceleration that covers its length in its time (esmini's user guide:
    "constant acceleration per segment ... a continuous speed profile"); a speed that
    would turn negative stops at 0.
    """
    speeds = np.empty(len(times))
    speeds[0] = max(start, 0.0)
    for k in range(len(times) - 1):
        span = times[k + 1] - times[k]
        if span <= 0.0:
            speeds[k + 1] = speeds[k]
            continue
        length = cum[k + 1] - cum[k]
        speeds[k + 1] = max(2.0 * length / span - speeds[k], 0.0)
    return speeds


def follow_speed(times: np.ndarray, speeds: np.ndarray, now: float) -> tuple[float, float]:
    """(speed, its rate) of a ``follow`` schedule at ``now``: the last vertex's after it."""
    k = int(np.clip(np.searchsorted(times, now, side="right") - 1, 0, len(times) - 2))
    span = times[k + 1] - times[k]
    rate = (speeds[k + 1] - speeds[k]) / span if span > 0 else 0.0
    if now >= times[-1]:
        return float(speeds[-1]), 0.0
    return float(speeds[k] + rate * max(now - times[k], 0.0)), float(rate)


def facing(
    trajectory: m.Trajectory,
    network: RoadNetwork | None,
    poses: Mapping[str, Pose],
    arc: float,
    speed: float,
    timed: bool,
) -> int:
    """+1 when the entity faces along the trajectory from ``arc``, -1 when against it.

    esmini's rule (its user guide's table "Trajectory moving and driving direction"): a
    heading the vertex there gives is kept, and says which way it faces; without one the
    entity faces along the trajectory, or (untimed, a negative speed) against it. Untimed it
    then moves ``speed`` times this along the trajectory (a car reversing at -10 m/s with no
    heading given runs the trajectory forwards, its back first); timed, its schedule moves it
    forwards whichever way it faces.
    """
    given = _vertex_heading(trajectory, network, poses, arc)
    if given is None:
        return -1 if speed < 0.0 and not timed else 1
    line, tangent = given
    return -1 if math.cos(line - tangent) < -1e-9 else 1


def _vertex_heading(
    trajectory: m.Trajectory, network: RoadNetwork | None, poses: Mapping[str, Pose], arc: float
) -> tuple[float, float] | None:
    """(the heading a polyline's vertex gives at ``arc``, the polyline's direction there).

    The vertex is the one the segment at ``arc`` starts from (the last one at the end); None
    when that vertex gives no heading (or the shape has none to give: clothoids, NURBS).
    """
    shape = trajectory.shape
    if not isinstance(shape, m.Polyline):
        return None
    where = [resolve(v, network, poses) for v in shape.vertices]
    points = np.array([w[:2] for w in where])
    cum = np.concatenate(([0.0], np.cumsum(np.hypot(*np.diff(points, axis=0).T))))
    k = int(np.clip(np.searchsorted(cum, arc + 1e-6, side="right") - 1, 0, len(cum) - 1))
    vertex = shape.vertices[k]
    given = isinstance(vertex, m.Oriented) or (
        isinstance(vertex, m.WorldPosition) and vertex.h is not None
    )
    if not given:
        return None
    a = min(k, len(cum) - 2)  # the segment from the vertex (into the last vertex at the end)
    while a > 0 and cum[a + 1] - cum[a] < 1e-6:
        a -= 1
    dx, dy = points[a + 1] - points[a]
    return where[k][2], math.atan2(dy, dx)


def reverses(do: m.FollowTrajectoryAction) -> bool:
    """Whether a timed polyline has its entity reverse along some of it.

    esmini's table, row 11: its schedule moves it on, a vertex's heading against the
    segment it starts. Only vertices in world coordinates are looked at: the reader knows
    no road yet.
    """
    shape = do.trajectory.shape
    if do.timing is None or not isinstance(shape, m.Polyline):
        return False
    for a, b in zip(shape.vertices, shape.vertices[1:], strict=False):
        if not isinstance(a, m.WorldPosition) or not isinstance(b, m.WorldPosition):
            continue
        dx, dy = b.x - a.x, b.y - a.y
        along = math.hypot(dx, dy) > 1e-6
        if a.h is not None and along and math.cos(a.h - math.atan2(dy, dx)) < -1e-9:
            return True
    return False
