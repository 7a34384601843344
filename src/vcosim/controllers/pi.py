"""The PI speed law the cruise examples share: effort from the speed error, with anti-windup.

Written once so that ``cruise`` (pedals) and ``cruise-torque`` (wheel torques) hold a speed the
same way and differ only in what the effort drives.
"""

from __future__ import annotations


def pi_step(
    error: float, integral: float, *, kp: float, ki: float, limit: float, dt: float
) -> tuple[float, float]:
    """The effort ``kp * error + ki * integral`` and the integral after this step.

    The integral grows only while the effort is within ``±limit``, or while the error pulls
    it back (anti-windup): a saturated actuator does not wind the integrator up.
    """
    effort = kp * error + ki * integral
    if abs(effort) < limit or effort * error < 0.0:
        integral += error * dt
    return effort, integral
