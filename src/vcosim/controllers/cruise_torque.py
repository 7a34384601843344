"""``cruise-torque``: hold a target speed with the four wheel torques (seed 000, example 2).

The same PI law as ``cruise`` (``vcosim.controllers.pi``), but its effort is a torque at every
wheel: propulsion when positive, braking when negative. The vehicle's powertrain and brakes are
bypassed (drive mode "torques").
"""

from __future__ import annotations

from dataclasses import dataclass

from vcosim.controllers.pi import pi_step
from vcosim.tight.views import Controls, SimulatorMessage


@dataclass
class CruiseTorque:
    """PI speed control through per-wheel propulsion and braking torques."""

    speed: float = 20.0  # target (m/s)
    kp: float = 150.0  # N m per wheel per m/s of error
    ki: float = 40.0  # N m per wheel per m of accumulated error
    max_torque: float = 600.0  # N m per wheel
    integral: float = 0.0

    def __call__(self, msg: SimulatorMessage) -> Controls:
        """One control step: the same torque at every wheel, driving or braking."""
        error = self.speed - msg.body.groundspeed
        torque, self.integral = pi_step(
            error, self.integral, kp=self.kp, ki=self.ki, limit=self.max_torque, dt=msg.dt
        )
        torque = min(max(torque, -self.max_torque), self.max_torque)
        drive, braking = max(torque, 0.0), max(-torque, 0.0)
        return Controls(
            drive_mode="torques", propulsion_torque=(drive,) * 4, braking_torque=(braking,) * 4
        )
