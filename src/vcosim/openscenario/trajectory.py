"""A trajectory's schedule: the speed that keeps to its vertices' times.

A FollowTrajectoryAction's trajectory is laid out when the action starts
(``place.layout``: its relative positions, and a clothoid without a start, taken where the
entities are then) and becomes a world path the built-in driver is switched onto; its vertex
times, when it has them, become a schedule of arc length against time that the storyboard
turns into the speed it tracks (here).
"""

from __future__ import annotations

import numpy as np

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
