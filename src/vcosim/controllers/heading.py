"""``heading``: hold a desired yaw angle with the steering (seed 000, example 3).

PD control of the heading error (wrapped to +-180 degrees) with the yaw rate as the D term,
taken from the difference of consecutive yaw angles. Optionally it also holds a speed with the
pedals (``speed``), so it can drive alone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from vcosim.controllers.cruise import Cruise
from vcosim.tight.views import Controls, SimulatorMessage


@dataclass
class Heading:
    """Steer to a heading (degrees, counter-clockwise from +x)."""

    heading: float = 30.0
    speed: float | None = 10.0  # also hold this speed (m/s); None leaves the pedals alone
    kp: float = 1.2  # steering per rad of heading error
    kd: float = 0.3  # steering per rad/s of yaw rate
    max_steering: float = 0.6
    _previous_yaw: float | None = None

    def __post_init__(self) -> None:
        self._cruise = Cruise(self.speed) if self.speed is not None else None

    def __call__(self, msg: SimulatorMessage) -> Controls:
        """One control step: steer against the heading error, damped by the yaw rate."""
        yaw = msg.body.yaw
        rate = 0.0 if self._previous_yaw is None else wrap(yaw - self._previous_yaw) / msg.dt
        self._previous_yaw = yaw
        error = wrap(math.radians(self.heading) - yaw)
        steering = min(max(self.kp * error - self.kd * rate, -self.max_steering), self.max_steering)
        controls = self._cruise(msg) if self._cruise is not None else Controls()
        controls.steering = steering
        return controls


def wrap(angle: float) -> float:
    """An angle wrapped to [-pi, pi)."""
    return (angle + math.pi) % (2.0 * math.pi) - math.pi
