"""``cruise``: hold a target speed with the pedals (seed 000, example 1).

A PI controller on ground speed (``vcosim.controllers.pi``). Positive effort is throttle,
negative effort is brake; the integrator only integrates while the effort is not saturated
(anti-windup).
"""

from __future__ import annotations

from dataclasses import dataclass

from vcosim.controllers.pi import pi_step
from vcosim.tight.views import Controls, SimulatorMessage


@dataclass
class Cruise:
    """PI speed control through throttle and brake."""

    speed: float = 20.0  # target (m/s)
    kp: float = 0.25  # effort per m/s of error
    ki: float = 0.08  # effort per m of accumulated error
    brake_gain: float = 0.5  # brake per unit of negative effort
    integral: float = 0.0

    def __call__(self, msg: SimulatorMessage) -> Controls:
        """One control step: throttle for positive effort, brake for negative."""
        error = self.speed - msg.body.groundspeed
        effort, self.integral = pi_step(
            error, self.integral, kp=self.kp, ki=self.ki, limit=1.0, dt=msg.dt
        )
        return Controls(
            throttle=min(max(effort, 0.0), 1.0), brake=min(max(-effort * self.brake_gain, 0.0), 1.0)
        )
