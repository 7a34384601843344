"""What the storyboard's private actions do to a driven vehicle: ramps of speed and offset.

A storyboard vehicle has three channels, each a :class:`Ramp` in time: its speed, its lane
(as an offset from the path it follows, the lane it started in) and its lane offset (from
that lane's centre). An action takes its channel over (the action running there before ends,
overridden) and ends when its ramp has arrived. The built-in driver tracks the ramp's speed
and slope, and steers along the path at the two offsets added.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from vcosim.openscenario import model as m
from vcosim.openscenario.speed_profile import Piece

STANDING = 0.1
"""m/s: below this a lane change over a distance is timed at this speed."""


@dataclass
class Ramp:
    """From ``start`` at ``t0`` to ``end`` over ``duration`` s along a dynamics shape."""

    t0: float
    start: float
    end: float
    duration: float = 0.0
    shape: str = "step"

    @classmethod
    def hold(cls, value: float) -> Ramp:
        """A ramp that stays at ``value``."""
        return cls(0.0, value, value)

    def at(self, now: float) -> tuple[float, float]:
        """(value, rate per second) at ``now``."""
        if self.duration <= 0.0 or now >= self.t0 + self.duration:
            return self.end, 0.0
        tau = max(now - self.t0, 0.0) / self.duration
        f, slope = shape(self.shape, tau)
        span = self.end - self.start
        return self.start + span * f, span * slope / self.duration

    def arrived(self, now: float) -> bool:
        """True once the ramp is at its end."""
        return now >= self.t0 + self.duration - 1e-9

    def frozen(self, now: float) -> Ramp:
        """Held where it is at ``now`` (an action stopped halfway)."""
        return Ramp.hold(self.at(now)[0])


def shape(name: str, tau: float) -> tuple[float, float]:
    """A dynamics shape at ``tau`` (0 to 1) and its derivative in tau."""
    if name == "linear":
        return tau, 1.0
    if name == "cubic":
        return tau * tau * (3.0 - 2.0 * tau), 6.0 * tau * (1.0 - tau)
    if name == "sinusoidal":
        return (1.0 - math.cos(math.pi * tau)) / 2.0, math.pi / 2.0 * math.sin(math.pi * tau)
    return 1.0, 0.0  # step


def instant(dynamics: m.Dynamics) -> bool:
    """Whether a transition happens at once: a ``step``, or no time or distance to take.

    esmini takes a transition over 0 s or 0 m as a step (``instant_lane_change.xosc``'s
    linear speed over 0 s starts its car at speed).
    """
    return dynamics.shape == "step" or (dynamics.dimension != "rate" and dynamics.value <= 0.0)


def speed_duration(dynamics: m.Dynamics, start: float, end: float) -> float:
    """Seconds a speed change takes: given, over a distance (at the mean speed), or a rate.

    A rate is the shape's peak acceleration, as esmini takes it (a sinusoidal change from 20
    to 0 m/s at 3 m/s² takes 10.5 s, not 6.7: ``synchronize.xosc`` asserts 9.93 m/s 5.26 s
    in).
    """
    if dynamics.shape == "step":
        return 0.0
    if dynamics.dimension == "time":
        return dynamics.value
    if dynamics.dimension == "rate":
        rate = abs(dynamics.value)  # a deceleration may be given as a negative rate
        peak = PEAK_RATE.get(dynamics.shape, 1.0)
        return peak * abs(end - start) / rate if rate > 0 else 0.0
    mean = (start + end) / 2.0
    return dynamics.value / mean if mean > 0 else 0.0


PEAK_RATE = {"linear": 1.0, "cubic": 1.5, "sinusoidal": math.pi / 2}
"""A shape's peak rate of change over its mean rate (d / T)."""


def change_duration(dynamics: m.Dynamics, speed: float, across: float = 0.0) -> float:
    """Seconds a lane change takes: given, over a distance at today's speed, or at a rate.

    A rate is the largest lateral speed (m/s), reached mid-way: ``across`` m take
    ``peak * across / rate`` (the shape's peak over its mean).
    """
    if dynamics.shape == "step":
        return 0.0
    if dynamics.dimension == "time":
        return dynamics.value
    if dynamics.dimension == "rate":
        return PEAK_RATE[dynamics.shape] * abs(across) / max(abs(dynamics.value), 1e-6)
    return dynamics.value / max(speed, STANDING)


def offset_duration(action: m.LaneOffsetAction, change: float) -> float:
    """Seconds a lane offset change takes within its maximum lateral acceleration.

    The shapes' peak accelerations: cubic 6 d / T², sinusoidal π² d / (2 T²); linear is
    timed as cubic (its own has no bound).
    """
    a, d = action.max_lateral_acc, abs(change)
    if action.shape == "step" or d == 0.0 or a <= 0.0:
        return 0.0
    if action.shape == "sinusoidal":
        return math.pi * math.sqrt(d / (2.0 * a))
    return math.sqrt(6.0 * d / a)


CHANNELS = {
    m.SpeedAction: "speed",
    m.LaneChangeAction: "lane",
    m.LaneOffsetAction: "offset",
    m.TeleportAction: None,
    m.FollowTrajectoryAction: "lane",
    m.ActivateControllerAction: None,
    m.AssignRouteAction: None,
    m.RandomRouteAction: None,
    m.AcquirePositionAction: "lane",
    m.LongitudinalDistanceAction: "speed",
    m.SpeedProfileAction: "speed",
    m.LateralDistanceAction: "lane",
    m.SynchronizeAction: "speed",
    m.OverrideAction: None,
    m.NoEffectAction: None,
}
"""The channel each action drives (a teleport none: it is done at once)."""


class Run:
    """One action on one actor: ``done`` when its ramp has arrived or it was overridden."""

    def __init__(self, action: m.Action, actor: str, channel: str | None, ramp: Ramp | None):
        self.action = action
        self.actor = actor
        self.channel = channel
        self.ramp = ramp
        self.done = ramp is None
        self.overridden = False
        do = action.action
        self.continuous = isinstance(do, (m.SpeedAction, m.LaneOffsetAction)) and do.continuous

    def update(self, now: float) -> None:
        """Done once its ramp has arrived (a continuous one only when stopped or overridden)."""
        if self.continuous:
            return
        if not self.done and self.ramp is not None and self.ramp.arrived(now):
            self.done = True


class TrajectoryRun(Run):
    """A FollowTrajectoryAction on one actor: done when the actor reaches the path's end.

    ``times`` (absolute simulation times of the path's points) make it drive the speed too.
    """

    def __init__(
        self,
        action: m.Action,
        actor: str,
        path: int,
        cum: np.ndarray,
        times: np.ndarray | None,
        catch_up: bool,
    ) -> None:
        super().__init__(action, actor, "lane", Ramp.hold(0.0))
        self.path, self.cum, self.times, self.catch_up = path, cum, times, catch_up
        self.facing = 1
        """+1 / -1: the actor faces along / against the path (untimed, it moves its speed
        times this along it: ``trajectory.facing``)."""
        self.speeds: np.ndarray | None = None
        """``follow`` mode: the speed at each of ``times`` (``trajectory.follow_speeds``)."""

    def update(self, now: float) -> None:
        """Ended by the storyboard (the path's end, an override or a stop), not by a ramp."""


class RouteRun(Run):
    """An AcquirePositionAction on one actor: done at ``arrive`` m along its new path."""

    def __init__(self, action: m.Action, actor: str, arrive: float) -> None:
        super().__init__(action, actor, "lane", Ramp.hold(0.0))
        self.arrive = arrive

    def update(self, now: float) -> None:
        """Ended by the storyboard (arrived, overridden or stopped), not by a ramp."""


class SteeredRun(Run):
    """An action whose speed the storyboard sets at every look: a distance, a meeting."""

    def __init__(self, action: m.Action, actor: str, speed: float, channel: str = "speed") -> None:
        super().__init__(action, actor, channel, Ramp.hold(speed))
        self.speed = speed  # the last value commanded (a speed, or a lateral offset)
        self.profile: list[Piece] | None = None  # a speed profile's
        self.aside: float | None = None  # a lateral distance kept as it was
        self.across = 0.0  # a lateral distance's lateral speed (m/s, to the actor's left)

    def update(self, now: float) -> None:
        """Ended by the storyboard, not by a ramp."""


class Channels:
    """A driven vehicle's three ramps and the runs that own them."""

    def __init__(self, speed: float, lane: float) -> None:
        self.ramps = {"speed": Ramp.hold(speed), "lane": Ramp.hold(lane), "offset": Ramp.hold(0.0)}
        self.owners: dict[str, Run] = {}
        self.rate = 0.0
        """The speed's rate last commanded (m/s2): what esmini's entity accelerates at."""
        self.offset_rate = 0.0
        """The offset's rate last commanded (m/s, to the left): the steering's preview."""
        self.sent: tuple[float, float] | None = None
        """(time, speed) last commanded: the entity's speed as esmini would have it."""
        self.rise = math.inf
        self.fall = math.inf
        """m/s2 the commanded speed may change by at most (a SpeedAction's: the entity's
        Performance, as esmini holds each step of it; a ramp whose end moves, a relative
        target, can ask for more than its start allowed for)."""

    def take(self, run: Run) -> None:
        """``run`` drives its channel from now on (the one driving it ends, overridden)."""
        assert run.channel is not None and run.ramp is not None
        before = self.owners.get(run.channel)
        if before is not None and not before.done:
            before.done = before.overridden = True
        self.owners[run.channel] = run
        self.ramps[run.channel] = run.ramp

    def stop(self, run: Run, now: float) -> None:
        """An action stopped by the storyboard: its channel holds where it got to."""
        if run.channel is not None and self.owners.get(run.channel) is run:
            self.ramps[run.channel] = self.ramps[run.channel].frozen(now)
        run.done = True

    def command(self, now: float) -> tuple[float, float, float]:
        """(speed, its rate, offset from the path) the driver is to follow at ``now``.

        The speed may be negative (backwards): a kinematic object takes it, a car's driver
        stops at 0.
        """
        speed, rate = self.ramps["speed"].at(now)
        if self.sent is not None and now > self.sent[0]:
            dt = now - self.sent[0]
            if speed > self.sent[1] + self.rise * dt:
                speed, rate = self.sent[1] + self.rise * dt, self.rise
            elif speed < self.sent[1] - self.fall * dt:
                speed, rate = self.sent[1] - self.fall * dt, -self.fall
        self.rate = rate
        self.sent = (now, speed)
        lane, across = self.ramps["lane"].at(now)
        offset, drift = self.ramps["offset"].at(now)
        self.offset_rate = across + drift
        return speed, rate, lane + offset
