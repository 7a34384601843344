"""Trajectories laid out in the world: polylines through their vertices, clothoids sampled.

A FollowTrajectoryAction's trajectory is laid out when the action starts (its relative
positions, and a clothoid without a start, taken where the entities are then) and becomes a
world path the built-in driver is switched onto; its vertex times, when it has them, become a
schedule of arc length against time that the storyboard turns into the speed it tracks.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from vcosim.openscenario import model as m
from vcosim.openscenario.place import Pose, resolve
from vcosim.roads import RoadNetwork

CLOTHOID_STEP = 0.5
"""m between the points a clothoid is sampled at (its heading is integrated 20 times finer)."""

CATCH_UP = 0.5
"""1/s: ``position`` mode closes a lag behind the trajectory's schedule at this pace."""


def layout(
    trajectory: m.Trajectory,
    network: RoadNetwork | None,
    poses: Mapping[str, Pose] | None = None,
    own: Pose = (0.0, 0.0, 0.0),
) -> tuple[np.ndarray, np.ndarray | None]:
    """(x, y) rows along the trajectory, and each row's time (None: the shape has none).

    ``poses``: where the entities are (relative positions); ``own``: where the entity that
    follows it is (a clothoid without a start starts there).
    """
    points, times = _points(trajectory.shape, network, poses or {}, own)
    keep = np.ones(len(points), dtype=bool)  # a vertex given twice is one point of the path
    keep[1:] = np.hypot(*np.diff(points, axis=0).T) > 1e-6
    return points[keep], None if times is None else times[keep]


def _points(
    shape: m.Polyline | m.Clothoid | m.ClothoidSpline,
    network: RoadNetwork | None,
    poses: Mapping[str, Pose],
    own: Pose,
) -> tuple[np.ndarray, np.ndarray | None]:
    if isinstance(shape, m.Polyline):
        points = np.array([resolve(v, network, poses)[:2] for v in shape.vertices])
        times = None if None in shape.times else np.array(shape.times, dtype=float)
        return points, times
    x, y, h = own if shape.start is None else resolve(shape.start, network, poses)
    if isinstance(shape, m.Clothoid):
        rate = shape.curvature_rate
        segments = [(shape.curvature, shape.curvature + rate * shape.length, shape.length, 0.0)]
    else:
        segments = list(shape.segments)
    pieces = [np.array([[x, y]])]
    for start_curvature, end_curvature, length, turn in segments:
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
