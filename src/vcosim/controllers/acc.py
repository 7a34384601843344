"""``acc``: adaptive cruise control on the range sensor in bank H, ready for a car cutting in.

Three layers, the split production ACCs use (an ACC within comfort limits, collision avoidance
beyond them):

- **Target.** The sensor reports the nearest vehicle ahead in the own lane and in each
  neighbouring lane, with its centre's offset from the predicted own path and its lateral
  speed. One counts when it is in the corridor ahead (``|offset| < corridor``) or will be
  within ``cut_in_horizon`` seconds at its lateral speed: a car cutting in is followed from
  the moment it moves over, not once its centre is in the lane. The nearest that counts wins.
- **ACC.** Cruise at ``speed``, or follow at ``standstill_gap + time_gap * speed`` (a
  constant-time-gap policy), down to a stop and away again; the smaller acceleration wins. It
  brakes at most ``comfort_deceleration`` and changes its acceleration at most
  ``comfort_jerk`` per second (ISO 15622 asks ACC for 3.5 m/s² and 2.5–5 m/s³).
- **Collision avoidance.** When keeping ``safety_margin`` to the vehicle ahead needs more
  than the ACC may brake (the gap the comfort jerk's ramp eats counted), the controller brakes
  as hard as needed, up to ``max_deceleration``, at ``emergency_jerk``.

With ``signals`` it also stops for the next traffic light on its route when that is red or
amber and it can stop within the ACC's comfortable deceleration (bank H21-H23, filled when
SUMO's traffic is in the world: docs/traffic.md); one it cannot stop for so, it drives through.

Pedals come from the commanded acceleration, trimmed by an integrator on the acceleration the
car reports. The range sensor arrives in the custom values (layout in ``vcosim.world.bank_h``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from vcosim.tight.views import Controls, SimulatorMessage
from vcosim.world.bank_h import (
    BLOCKS,
    H_DISTANCE,
    H_LATERAL,
    H_LATERAL_SPEED,
    H_RELATIVE_ACCEL,
    H_RELATIVE_SPEED,
    H_SIGNAL_DISTANCE,
    H_SIGNAL_STATE,
    H_SIGNAL_VALID,
    H_VALID,
)

THROTTLE_ACCELERATION = 5.0  # m/s2 of a full throttle, roughly (the trim corrects it)
BRAKE_ACCELERATION = 20.0  # m/s2 of a full brake pedal, roughly


@dataclass
class Acc:
    """A time-gap follower with a set speed that sees cut-ins coming, on throttle and brake."""

    time_gap: float = 1.8  # s, from the front bumper to the rear of the vehicle ahead
    speed: float = 30.0  # m/s: the set speed (as --speed of every example controller)
    standstill_gap: float = 4.0  # m, kept when both stand
    gap_gain: float = 0.25  # 1/s2: acceleration per metre of gap error
    speed_gain: float = 0.8  # 1/s: acceleration per m/s of closing speed (and speed error)
    gap_deceleration: float = 1.5  # m/s2: the most a short gap alone asks: it opens gently
    max_acceleration: float = 2.0  # m/s2
    comfort_deceleration: float = 3.5  # m/s2: the most the ACC itself brakes
    comfort_jerk: float = 5.0  # m/s3: how fast the ACC changes its acceleration
    max_deceleration: float = 8.5  # m/s2: collision avoidance, about what the tyres give
    emergency_jerk: float = 50.0  # m/s3: how fast collision avoidance builds up its braking
    safety_margin: float = 2.0  # m of bumper gap collision avoidance keeps
    corridor: float = 2.2  # m: half-width of the path ahead (two half car widths and a margin)
    cut_in_horizon: float = 3.0  # s: a vehicle that will be in the corridor this soon counts
    trim_gain: float = 1.5  # 1/s
    signals: bool = False  # stop for red and amber traffic lights (bank H21-H23)
    stop_line_gap: float = 1.0  # m short of the stop line it stops at
    trim: float = field(default=0.0, init=False)
    command: float = field(default=math.nan, init=False)  # m/s2 asked for, jerk-limited
    emergency: bool = field(default=False, init=False)  # collision avoidance brakes

    def counts(self, lateral: float, lateral_speed: float) -> bool:
        """Whether a vehicle ``lateral`` m left of the path is in it or soon will be.

        ``lateral_speed`` (m/s, left positive) says how soon.
        """
        inward = -lateral_speed if lateral > 0.0 else lateral_speed
        return abs(lateral) - max(inward, 0.0) * self.cut_in_horizon < self.corridor

    def acc_acceleration(self, speed: float, distance: float, relative_speed: float) -> float:
        """The ACC's acceleration: cruise, or follow the vehicle ``distance`` m ahead."""
        cruise = self.speed_gain * (self.speed - speed)
        if math.isfinite(distance):
            wanted_gap = self.standstill_gap + self.time_gap * max(speed, 0.0)
            gap_term = max(self.gap_gain * (distance - wanted_gap), -self.gap_deceleration)
            follow = gap_term + self.speed_gain * relative_speed
            cruise = min(cruise, follow)
        return min(max(cruise, -self.comfort_deceleration), self.max_acceleration)

    def needed_deceleration(
        self, speed: float, distance: float, relative_speed: float, lead_acceleration: float
    ) -> float:
        """The deceleration (m/s2) that keeps ``safety_margin`` to the vehicle ahead.

        The larger of two: stop closing in on it at its present speed, and stop behind it if
        it brakes to a standstill. First the gap is cut by what closing in eats while the
        comfort jerk builds the ACC's braking up.
        """
        closing = max(-relative_speed, 0.0)
        command = 0.0 if math.isnan(self.command) else self.command
        ramp = max(self.comfort_deceleration + command, 0.0) / self.comfort_jerk
        room = max(distance - self.safety_margin - 0.5 * closing * ramp, 0.01)
        needed = closing * closing / (2.0 * room)
        lead_speed = speed + relative_speed
        if lead_acceleration < 0.0 and lead_speed > 0.0:
            lead_stops_in = lead_speed * lead_speed / (-2.0 * lead_acceleration)
            needed = max(needed, speed * speed / (2.0 * (room + lead_stops_in)))
        return needed

    def signal_acceleration(self, speed: float, custom: object) -> float:
        """What a red or amber light ahead asks: stop ``stop_line_gap`` short of its line.

        It follows the speed that brakes evenly at ``gap_deceleration`` down to the line. Only
        when stopping needs no more than the comfortable
        deceleration (the amber's dilemma: too close to stop, it drives on); a green light, or
        none, asks nothing.
        """
        bank: Any = custom
        state = float(bank[H_SIGNAL_STATE])
        if bank[H_SIGNAL_VALID] < 0.5 or not 0.0 <= state < 2.0:
            return math.inf
        room = float(bank[H_SIGNAL_DISTANCE]) - self.stop_line_gap
        if room <= 0.2:  # at the line: stay
            return -self.comfort_deceleration
        needed = speed * speed / (2.0 * room)
        if needed > self.comfort_deceleration:
            return math.inf
        # track the speed that brakes evenly at gap_deceleration down to the line
        profile = math.sqrt(2.0 * self.gap_deceleration * room)
        return -self.gap_deceleration + self.speed_gain * (profile - speed)

    def __call__(self, msg: SimulatorMessage) -> Controls:
        """One control step from the car's speed and acceleration and the range sensor."""
        speed, got, dt = msg.body.groundspeed, msg.body.accX, msg.dt
        custom = msg.custom
        if math.isnan(self.command):
            self.command = got  # take over from what the car does
        wanted, needed = self.acc_acceleration(speed, math.inf, 0.0), 0.0
        for _, first in BLOCKS.values():  # ahead, and the lanes to the left and the right
            seen = custom[first + H_VALID] > 0.5
            lateral, lateral_speed = custom[first + H_LATERAL], custom[first + H_LATERAL_SPEED]
            if seen and self.counts(float(lateral), float(lateral_speed)):
                distance = float(custom[first + H_DISTANCE])
                relative_speed = float(custom[first + H_RELATIVE_SPEED])
                lead_acceleration = float(custom[first + H_RELATIVE_ACCEL]) + got
                wanted = min(wanted, self.acc_acceleration(speed, distance, relative_speed))
                needed = max(
                    needed,
                    self.needed_deceleration(speed, distance, relative_speed, lead_acceleration),
                )
        if self.signals:
            wanted = min(wanted, self.signal_acceleration(speed, custom))
        self.emergency = needed > self.comfort_deceleration
        if self.emergency:
            wanted = min(wanted, -min(needed, self.max_deceleration))
        if wanted <= 0.0 and speed < 0.3:  # standing and asked to stay: hold the brake
            self.trim, self.command = 0.0, 0.0
            return Controls(throttle=0.0, brake=0.3)
        beyond_comfort = self.emergency or self.command < -self.comfort_deceleration
        jerk = (self.emergency_jerk if beyond_comfort else self.comfort_jerk) * dt
        self.command = min(max(wanted, self.command - jerk), self.command + jerk)
        self.trim = min(max(self.trim + self.trim_gain * (self.command - got) * dt, -3.0), 3.0)
        effort = self.command + self.trim
        return Controls(
            throttle=min(max(effort / THROTTLE_ACCELERATION, 0.0), 1.0),
            brake=min(max(-effort / BRAKE_ACCELERATION, 0.0), 1.0),
        )
