"""Trajectories laid out in the world: polylines through their vertices, clothoids sampled.

A FollowTrajectoryAction's trajectory becomes a world path (``trajectory_path``) when the
scenario's world is built, so the built-in driver can be switched onto it; its vertex times,
when it has them, become a schedule of arc length against time that the storyboard turns into
the speed the driver tracks.
"""

from __future__ import annotations

import math

import numpy as np

from vcosim.openscenario import model as m
from vcosim.openscenario.place import resolve
from vcosim.roads import RoadNetwork

CLOTHOID_STEP = 0.5
"""m between the points a clothoid is sampled at (its heading is integrated 20 times finer)."""

CATCH_UP = 0.5
"""1/s: ``position`` mode closes a lag behind the trajectory's schedule at this pace."""


def trajectory_path(index: int) -> str:
    """The world path a scenario's trajectory ``index`` is laid out as."""
    return f"~trajectory {index}"


def layout(
    trajectory: m.Trajectory, network: RoadNetwork | None
) -> tuple[np.ndarray, np.ndarray | None]:
    """(x, y) rows along the trajectory, and each row's time (None: the shape has none)."""
    points, times = _points(trajectory.shape, network)
    keep = np.ones(len(points), dtype=bool)  # a vertex given twice is one point of the path
    keep[1:] = np.hypot(*np.diff(points, axis=0).T) > 1e-6
    return points[keep], None if times is None else times[keep]


def _points(
    shape: m.Polyline | m.Clothoid, network: RoadNetwork | None
) -> tuple[np.ndarray, np.ndarray | None]:
    if isinstance(shape, m.Polyline):
        points = np.array([resolve(v, network, {})[:2] for v in shape.vertices])
        times = None if None in shape.times else np.array(shape.times, dtype=float)
        return points, times
    x0, y0, h0 = resolve(shape.start, network, {})
    n = max(2, math.ceil(shape.length / CLOTHOID_STEP) + 1)
    fine = (n - 1) * 20 + 1
    s = np.linspace(0.0, shape.length, fine)
    heading = h0 + shape.curvature * s + 0.5 * shape.curvature_rate * s * s
    ds = shape.length / (fine - 1)
    # Trapezoids of the unit tangent over 2.5 cm steps: exact to well under a millimetre.
    dx = ds * (np.cos(heading[1:]) + np.cos(heading[:-1])) / 2
    dy = ds * (np.sin(heading[1:]) + np.sin(heading[:-1])) / 2
    x = x0 + np.concatenate([[0.0], np.cumsum(dx)])
    y = y0 + np.concatenate([[0.0], np.cumsum(dy)])
    points = np.column_stack((x, y))[::20]
    times = None
    if shape.start_time is not None and shape.stop_time is not None:
        times = np.linspace(shape.start_time, shape.stop_time, len(points))
    return points, times


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
