"""The built-in drivers: speed profiles, lane changes, cut-ins and IDM car following.

All of a world's built-in drivers decide together, once per driver period, over arrays: one
compiled pure-pursuit call steers them along their lanes, and numpy turns each driver's wish
(a speed profile to track, or the IDM's acceleration) into pedals. A driver wants an
acceleration. A profile driver finds the pedals for it in its vehicle's pedal map (what each
throttle gives at each speed, measured on the vehicle itself once); an IDM driver uses a fixed
gain. A small integrator on the acceleration it gets trims what the map or gain misses
(slopes, load).

A car an outside face commands (an OpenSCENARIO storyboard) follows a kinematic reference, its
"ghost": the commanded speed integrated into a distance, as esmini's default controller moves
an entity. The driver tracks the ghost's distance and speed with the command's rate as
feed-forward, so the car is where the storyboard puts it whenever the car can follow; the
distance term's pull is bounded (``CATCH_UP``) and the ghost is re-anchored no more than
``GHOST_LEASH`` ahead of (or behind) the car, so a car that could not follow (a demand above
its engine's reach) does not race to make up the distance afterwards.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from vcosim.vehicle._jit_cache import kernel
from vcosim.vehicle.layout import U_BRAKE, U_STEERING, U_THROTTLE
from vcosim.world.geometry import R_DISTANCE, R_RELATIVE_SPEED, R_TARGET
from vcosim.world.paths import Paths, pure_pursuit
from vcosim.world.pedal_map import SPEED_STEP, THROTTLES, pedal_map
from vcosim.world.spec import IdmDriver, LaneChange, PathDriver, ProfileDriver, VehicleEntry

if TYPE_CHECKING:
    from vcosim.vehicle.params import VehicleParams

SPEED_TIME_CONSTANT = 1.0  # s: a profile driver closes a speed error at this pace
GHOST_TIME_CONSTANT = 0.5  # s: a commanded car closes its speed error to its ghost at this pace
GHOST_GAIN = 1.0  # 1/s: speed (m/s) a commanded car adds per metre it is behind its ghost
CATCH_UP = 2.0  # m/s: at most this much faster (slower) than commanded to reach its ghost
GHOST_LEASH = 3.0  # m: the ghost is re-anchored when further than this from its car
PREVIEW = 1.0  # s: at most this far ahead a driver steers for its changing offset
PREVIEW_SHARE = 0.75  # of the time to its pure-pursuit aim point (more overshoots the lane)
THROTTLE_ACCELERATION = 5.0  # m/s2 of a full throttle, roughly (an IDM driver's; trimmed)
BRAKE_ACCELERATION = 20.0  # m/s2 of a full brake pedal, roughly (an IDM driver's)
TRIM_GAIN = 2.0  # 1/s: how fast the integrator trims the acceleration error
TRIM_LIMIT = 3.0  # m/s2
HOLD_BRAKE = 0.3  # brake that holds a car standing
STANDING = 0.3  # m/s: below this a car that should not move is held


class Drivers:
    """Every built-in driver of a world (rows of the world's arrays), deciding together."""

    def __init__(
        self,
        entries: list[VehicleEntry],
        rows: list[int],
        paths: Paths,
        geometry: dict[str, np.ndarray],
        names: list[str],
        params: list[VehicleParams] | None = None,
    ) -> None:
        """``params``: each driven row's vehicle (its pedal map); None: the fixed gains."""
        n = len(rows)
        self.rows = np.asarray(rows, dtype=np.int64)
        self.position = {int(row): m for m, row in enumerate(self.rows)}
        """Each driven world row's place among the drivers."""
        self.paths = paths
        self.geometry = geometry
        drivers = [entry.driver for entry in entries]
        driven = [d for d in drivers if isinstance(d, PathDriver)]
        self.path_of = np.array([paths.index[d.path] for d in driven], dtype=np.int64)
        self.offset = np.array([d.offset for d in driven], dtype=np.float64)
        self.hint = np.full(n, -1, dtype=np.int64)
        self.arc = np.zeros(n)
        self.steering = np.zeros(n)
        self.trim = np.zeros(n)
        self.last_speed = np.full(n, np.nan)
        self.changes = _LaneChanges(drivers, self.rows, names)
        self.profiles = [
            (m, np.array(d.speeds, dtype=float))
            for m, d in enumerate(drivers)
            if isinstance(d, ProfileDriver)
        ]
        self.is_idm = np.array([isinstance(d, IdmDriver) for d in driven], dtype=np.bool_)
        self._maps(params, drivers)
        self.drift = np.zeros(n)
        """Each commanded row's offset rate (m/s to the left): where the lane change goes."""
        self.ghost = np.zeros(n)
        """Metres each commanded car's ghost is ahead of it (negative: behind)."""
        self.ghost_at = np.full(n, np.nan)
        """When each ghost last moved (nan: not yet commanded)."""
        self.ghost_command = np.zeros((n, 2))
        """The command each ghost moved by since (speed m/s, rate m/s2)."""
        self.ghost_speed = np.zeros(n)
        """Each commanded car's speed when its ghost last moved."""
        self.wanted = np.zeros(n)
        self.stops = [m for m, d in enumerate(driven) if isinstance(d, IdmDriver) and d.stop_at_end]
        """IDM drivers that stop at their path's end: route drivers (``_route_view``)."""
        self.overlooked: set[int] = set()
        """World rows (objects: props) a route driver does not brake for: CARLA's agents
        brake for vehicles and walkers, not props (the storyboard names its MiscObjects)."""
        self.seen = np.zeros(0)
        self.commands: dict[int, tuple[float, float]] = {}
        """Driven rows (by position here) a face drives: (speed m/s, its rate m/s2)."""
        self.idm = {
            key: np.array(
                [getattr(d, key) if isinstance(d, IdmDriver) else 0.0 for d in driven],
                dtype=np.float64,
            )
            for key in (
                "speed",
                "time_gap",
                "min_gap",
                "max_acceleration",
                "comfortable_deceleration",
            )
        }

    def _maps(self, params: list[VehicleParams] | None, drivers: Sequence[object]) -> None:
        """Each profile driver's pedal map (one per distinct vehicle); IDM rows keep -1."""
        n = len(drivers)
        self.map_of = np.full(n, -1, dtype=np.int64)
        self.brake_gain = np.full(n, BRAKE_ACCELERATION)
        found: dict[int, int] = {}
        tables: list[np.ndarray] = []
        for m, driver in enumerate(drivers):
            if params is None or not isinstance(driver, ProfileDriver):
                continue
            key = id(params[m])  # rows of one kind of car share its parameters
            if key not in found:
                found[key] = len(tables)
                tables.append(pedal_map(params[m]).net)
            self.map_of[m] = found[key]
            self.brake_gain[m] = pedal_map(params[m]).brake_gain
        shape = (len(tables), *tables[0].shape) if tables else (0, 1, len(THROTTLES))
        self.maps = np.stack(tables) if tables else np.zeros(shape)
        self.throttles = np.array(THROTTLES, dtype=np.float64)

    def __len__(self) -> int:
        return int(self.rows.shape[0])

    def command(
        self, row: int, speed: float, acceleration: float, offset: float, drift: float = 0.0
    ) -> None:
        """Drive world row ``row`` from outside (an OpenSCENARIO storyboard).

        It tracks ``speed``, changing at ``acceleration``, ``offset`` m left of its path,
        the offset changing at ``drift`` m/s; the row must have a profile driver.
        """
        m = self.position[row]
        self.commands[m] = (speed, acceleration)
        self.offset[m] = offset
        self.drift[m] = drift

    def decide(
        self,
        time: float,
        period: float,
        poses: dict[str, np.ndarray],
        readings: np.ndarray,
        inputs: np.ndarray,
    ) -> None:
        """Set pedals and steering of every driven row for the next ``period`` seconds."""
        if not len(self):
            return
        rows, g = self.rows, self.geometry
        offset, easing = self.changes.offsets(time, poses, self.offset)
        if self.commands or easing is not None:  # aim where the offset will be at the aim point
            drift = self.drift if easing is None else self.drift + easing
            speed = poses["speed"][rows]
            preview = np.minimum(
                PREVIEW_SHARE * np.maximum(5.0, 0.8 * speed) / np.maximum(speed, 0.1), PREVIEW
            )
            offset = offset + drift * preview
        pure_pursuit(
            rows, self.path_of, offset, poses["x"], poses["y"], poses["yaw"], poses["speed"],
            g["rear"], g["wheelbase"], g["max_steer"], self.paths.points, self.paths.cum,
            self.paths.starts, self.paths.ends, self.paths.closed, self.hint, self.steering,
            self.arc,
        )  # fmt: skip
        for m, profile in self.profiles:
            if m in self.commands:
                continue  # driven from outside: its own profile is not followed
            target, slope = _profile(profile, time)
            self.wanted[m] = slope + (target - poses["speed"][rows[m]]) / SPEED_TIME_CONSTANT
        for m, (target, slope) in self.commands.items():
            self.wanted[m] = self._follow_ghost(m, time, target, slope, poses["speed"][rows[m]])
        p = self.idm
        seen = self._route_view(readings, poses)
        pedals(
            rows, self.is_idm, p["speed"], p["time_gap"], p["min_gap"], p["max_acceleration"],
            p["comfortable_deceleration"], seen, poses["speed"], self.wanted, self.steering,
            self.last_speed, self.trim, period, self.map_of, self.maps, self.throttles,
            SPEED_STEP, self.brake_gain, inputs,
        )  # fmt: skip

    def _follow_ghost(self, m: int, time: float, target: float, slope: float, v: float) -> float:
        """The acceleration commanded car ``m`` wants to stay with its ghost.

        The ghost moved since the last decision by the command then in force (its speed and
        rate), the car by its mean speed; the difference is how far the car fell behind.
        """
        before = self.ghost_at[m]
        if not math.isnan(before) and time > before:
            dt = time - before
            speed, rate = self.ghost_command[m]
            self.ghost[m] += (speed + 0.5 * rate * dt) * dt - 0.5 * (self.ghost_speed[m] + v) * dt
        self.ghost_at[m] = time
        self.ghost_command[m] = target, slope
        self.ghost_speed[m] = v
        if target <= 0.0 and slope <= 0.0 and v < STANDING:
            self.ghost[m] = 0.0  # told to stand: it stands where it is
        self.ghost[m] = min(max(self.ghost[m], -GHOST_LEASH), GHOST_LEASH)
        pull = min(max(GHOST_GAIN * self.ghost[m], -CATCH_UP), CATCH_UP)
        return slope + (target + pull - v) / GHOST_TIME_CONSTANT

    def _route_view(self, readings: np.ndarray, poses: dict[str, np.ndarray]) -> np.ndarray:
        """The range readings as route drivers take them: their path's end a standing car.

        Their IDM then stops them there as behind a car (it needs no second rule); a prop
        (``overlooked``) seen nearest is driven past.
        """
        if not self.stops:
            return readings
        if self.seen.shape != readings.shape:
            self.seen = np.empty_like(readings)
        np.copyto(self.seen, readings)
        paths, g = self.paths, self.geometry
        for m in self.stops:
            r, q = int(self.rows[m]), int(self.path_of[m])
            if int(self.seen[r, R_TARGET]) in self.overlooked:
                self.seen[r, R_DISTANCE] = math.inf
            front = self.arc[m] + g["rear"][r] + poses["half_length"][r]  # s of its bumper
            gap = max(float(paths.cum[paths.ends[q] - 1] - front), 0.0)
            if gap < self.seen[r, R_DISTANCE]:
                self.seen[r, R_DISTANCE] = gap
                self.seen[r, R_RELATIVE_SPEED] = -poses["speed"][r]
        return self.seen


@kernel
def pedals(
    rows, is_idm, v0, time_gap, min_gap, max_acc, comfortable, readings, speed, wanted,
    steering, last_speed, trim, period, map_of, maps, throttles, speed_step, brake_gain,
    inputs,
):  # fmt: skip
    """Throttle, brake and steering of every driven row, from the acceleration each wants.

    An IDM driver wants the IDM's acceleration on its range reading (Treiber's formula);
    the others what ``wanted`` says. A row with a pedal map (``map_of`` >= 0) takes the
    throttle the map gives for that acceleration at its speed, or the brake for what coasting
    does not take off; the others a fixed gain. An integrator on the acceleration got (from
    the speed change over the period) trims the pedals; a car that should not move is held.
    """
    for m in range(rows.shape[0]):
        r = rows[m]
        v = speed[r]
        want = wanted[m]
        if is_idm[m]:
            gap = readings[r, R_DISTANCE]
            closing = -readings[r, R_RELATIVE_SPEED] if math.isfinite(gap) else 0.0
            root = 2.0 * math.sqrt(max_acc[m] * comfortable[m])
            desired = min_gap[m] + max(v * time_gap[m] + v * closing / root, 0.0)
            free = 1.0 - (v / max(v0[m], 0.1)) ** 4
            want = max_acc[m] * (free - (desired / max(gap, 0.1)) ** 2)
        got = want if math.isnan(last_speed[m]) else (v - last_speed[m]) / period
        last_speed[m] = v
        step = TRIM_GAIN * (want - got) * period
        if map_of[m] >= 0 and (
            (inputs[r, U_THROTTLE] >= 1.0 and step > 0.0)
            or (inputs[r, U_BRAKE] >= 1.0 and step < 0.0)
        ):
            step = 0.0  # a pedal at its stop: the trim would only wind up
        trim[m] = min(max(trim[m] + step, -TRIM_LIMIT), TRIM_LIMIT)
        if want <= 0.0 and v < STANDING:
            trim[m] = 0.0
            throttle, brake = 0.0, HOLD_BRAKE
        elif map_of[m] < 0:
            effort = want + trim[m]
            throttle = min(max(effort / THROTTLE_ACCELERATION, 0.0), 1.0)
            brake = min(max(-effort / BRAKE_ACCELERATION, 0.0), 1.0)
        else:
            throttle, brake = _from_map(
                maps[map_of[m]], throttles, speed_step, brake_gain[m], v, want + trim[m]
            )
        inputs[r, U_THROTTLE] = throttle
        inputs[r, U_BRAKE] = brake
        inputs[r, U_STEERING] = steering[m]


@kernel
def _from_map(net, throttles, speed_step, brake_gain, v, effort):  # fmt: skip
    """(throttle, brake) for acceleration ``effort`` at speed ``v`` from a pedal map."""
    x = min(max(v / speed_step, 0.0), net.shape[0] - 1.000001)
    i = int(x)
    f = x - i
    low = net[i, 0] * (1.0 - f) + net[i + 1, 0] * f
    if effort <= low:
        return 0.0, min((low - effort) / brake_gain, 1.0)
    for j in range(1, throttles.shape[0]):
        high = net[i, j] * (1.0 - f) + net[i + 1, j] * f
        if effort <= high:
            share = (effort - low) / (high - low) if high > low else 1.0
            return throttles[j - 1] + share * (throttles[j] - throttles[j - 1]), 0.0
        low = high
    return 1.0, 0.0


def _profile(profile: np.ndarray, time: float) -> tuple[float, float]:
    """Speed of a (time, speed) profile at ``time``, and its slope there (held after the end)."""
    times, speeds = profile[:, 0], profile[:, 1]
    target = float(np.interp(time, times, speeds))
    k = int(np.searchsorted(times, time, side="right"))
    if k == 0 or k >= len(times):
        return target, 0.0
    return target, float((speeds[k] - speeds[k - 1]) / (times[k] - times[k - 1]))


class _LaneChanges:
    """Lane offsets in time: each lane change eases from the old offset to its new one."""

    def __init__(self, drivers: list, rows: np.ndarray, names: list[str]) -> None:
        self.rows = rows
        self.items: list[tuple[int, LaneChange, int | None]] = []
        for m, driver in enumerate(drivers):
            change = driver.lane_change if isinstance(driver, PathDriver) else None
            if change is not None:
                cue = None if change.ahead_of is None else names.index(change.ahead_of)
                self.items.append((m, change, cue))
        self.begin = {m: change.at for m, change, _ in self.items}
        self.side: dict[int, float] = {}

    def offsets(
        self, time: float, poses: dict[str, np.ndarray], base: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """Every driven row's lane offset at ``time``, and its rate (m/s; None: no changes).

        Cued changes start as their cue comes.
        """
        if not self.items:
            return base, None
        out = base.copy()
        rate = np.zeros_like(base)
        for m, change, target in self.items:
            begin = self.begin[m]
            if begin is None and target is not None:
                side = math.copysign(1.0, self._gap(m, target, poses) - change.gap)
                if self.side.setdefault(m, side) != side:
                    begin = self.begin[m] = time
            if begin is None:
                continue
            done = min(max((time - begin) / change.duration, 0.0), 1.0)
            ease = done * done * (3.0 - 2.0 * done)
            out[m] = base[m] + (change.offset - base[m]) * ease
            rate[m] = (change.offset - base[m]) * 6.0 * done * (1.0 - done) / change.duration
        return out, rate

    def _gap(self, m: int, target: int, poses: dict[str, np.ndarray]) -> float:
        """Bumper gap (m) of driven row ``m`` ahead of vehicle ``target``, along its heading."""
        row = int(self.rows[m])
        c, s = math.cos(poses["yaw"][target]), math.sin(poses["yaw"][target])
        along = c * (poses["cx"][row] - poses["cx"][target]) + s * (
            poses["cy"][row] - poses["cy"][target]
        )
        return float(along - poses["half_length"][row] - poses["half_length"][target])
