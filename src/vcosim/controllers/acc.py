"""``acc``: adaptive cruise control on the range sensor in bank H.

Cruise at ``speed`` (the set speed) until a vehicle ahead is closer than the time gap asks for, then
follow it at ``standstill_gap + time_gap * speed`` (a constant-time-gap policy), down to a
stop and away again. Both laws ask for an acceleration; the smaller wins. Pedals come from
the wished acceleration, trimmed by an integrator on the acceleration the car reports.
The range sensor arrives in the custom values (layout in ``vcosim.world.bank_h``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from vcosim.tight.views import Controls, SimulatorMessage
from vcosim.world.bank_h import H_DISTANCE, H_RELATIVE_SPEED, H_VALID

THROTTLE_ACCELERATION = 5.0  # m/s2 of a full throttle, roughly (the trim corrects it)
BRAKE_ACCELERATION = 20.0  # m/s2 of a full brake pedal, roughly


@dataclass
class Acc:
    """A time-gap follower with a set speed, on throttle and brake."""

    time_gap: float = 1.8  # s, from the front bumper to the rear of the vehicle ahead
    speed: float = 30.0  # m/s: the set speed (as --speed of every example controller)
    standstill_gap: float = 4.0  # m, kept when both stand
    gap_gain: float = 0.25  # 1/s2: acceleration per metre of gap error
    speed_gain: float = 0.8  # 1/s: acceleration per m/s of closing speed (and speed error)
    max_acceleration: float = 2.0  # m/s2
    max_deceleration: float = 8.0  # m/s2
    trim_gain: float = 1.5  # 1/s
    trim: float = 0.0

    def wanted_acceleration(self, speed: float, distance: float, relative_speed: float) -> float:
        """The acceleration asked for: cruise, or follow the vehicle ``distance`` m ahead."""
        cruise = self.speed_gain * (self.speed - speed)
        if math.isfinite(distance):
            wanted_gap = self.standstill_gap + self.time_gap * max(speed, 0.0)
            follow = self.gap_gain * (distance - wanted_gap) + self.speed_gain * relative_speed
            cruise = min(cruise, follow)
        return min(max(cruise, -self.max_deceleration), self.max_acceleration)

    def __call__(self, msg: SimulatorMessage) -> Controls:
        """One control step from the car's speed and the range sensor in bank H."""
        speed = msg.body.groundspeed
        custom = msg.custom
        seen = custom[H_VALID] > 0.5
        distance = float(custom[H_DISTANCE]) if seen else math.inf
        wanted = self.wanted_acceleration(speed, distance, float(custom[H_RELATIVE_SPEED]))
        if wanted <= 0.0 and speed < 0.3:  # standing and asked to stay: hold the brake
            self.trim = 0.0
            return Controls(throttle=0.0, brake=0.3)
        got = msg.body.accX
        self.trim = min(max(self.trim + self.trim_gain * (wanted - got) * msg.dt, -3.0), 3.0)
        effort = wanted + self.trim
        return Controls(
            throttle=min(max(effort / THROTTLE_ACCELERATION, 0.0), 1.0),
            brake=min(max(-effort / BRAKE_ACCELERATION, 0.0), 1.0),
        )
