"""The built-in drivers: speed profiles, lane changes, cut-ins and IDM car following.

All of a world's built-in drivers decide together, once per driver period, over arrays: one
compiled pure-pursuit call steers them along their lanes, and numpy turns each driver's wish
(a speed profile to track, or the IDM's acceleration) into pedals. A driver wants an
acceleration; a small integrator on the acceleration it gets trims the pedals, so gears,
slopes and drag need no model in the driver.
"""

from __future__ import annotations

import math

import numpy as np

from vcosim.vehicle._jit_cache import kernel
from vcosim.vehicle.layout import U_BRAKE, U_STEERING, U_THROTTLE
from vcosim.world.geometry import R_DISTANCE, R_RELATIVE_SPEED, R_TARGET
from vcosim.world.paths import Paths, pure_pursuit
from vcosim.world.spec import IdmDriver, LaneChange, PathDriver, ProfileDriver, VehicleEntry

SPEED_TIME_CONSTANT = 1.0  # s: a profile driver closes a speed error at this pace
THROTTLE_ACCELERATION = 5.0  # m/s2 of a full throttle, roughly (the integrator trims it)
BRAKE_ACCELERATION = 20.0  # m/s2 of a full brake pedal, roughly
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
    ) -> None:
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

    def __len__(self) -> int:
        return int(self.rows.shape[0])

    def command(self, row: int, speed: float, acceleration: float, offset: float) -> None:
        """Drive world row ``row`` from outside (an OpenSCENARIO storyboard).

        It tracks ``speed``, changing at ``acceleration``, ``offset`` m left of its path;
        the row must have a profile driver.
        """
        m = self.position[row]
        self.commands[m] = (speed, acceleration)
        self.offset[m] = offset

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
        offset = self.changes.offsets(time, poses, self.offset)
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
            self.wanted[m] = slope + (target - poses["speed"][rows[m]]) / SPEED_TIME_CONSTANT
        p = self.idm
        seen = self._route_view(readings, poses)
        pedals(
            rows, self.is_idm, p["speed"], p["time_gap"], p["min_gap"], p["max_acceleration"],
            p["comfortable_deceleration"], seen, poses["speed"], self.wanted, self.steering,
            self.last_speed, self.trim, period, inputs,
        )  # fmt: skip

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
    steering, last_speed, trim, period, inputs,
):  # fmt: skip
    """Throttle, brake and steering of every driven row, from the acceleration each wants.

    An IDM driver wants the IDM's acceleration on its range reading (Treiber's formula);
    the others what ``wanted`` says. An integrator on the acceleration got (from the speed
    change over the period) trims the pedals; a car that should not move is held.
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
        trim[m] = min(max(trim[m] + TRIM_GAIN * (want - got) * period, -TRIM_LIMIT), TRIM_LIMIT)
        if want <= 0.0 and v < STANDING:
            trim[m] = 0.0
            throttle, brake = 0.0, HOLD_BRAKE
        else:
            effort = want + trim[m]
            throttle = min(max(effort / THROTTLE_ACCELERATION, 0.0), 1.0)
            brake = min(max(-effort / BRAKE_ACCELERATION, 0.0), 1.0)
        inputs[r, U_THROTTLE] = throttle
        inputs[r, U_BRAKE] = brake
        inputs[r, U_STEERING] = steering[m]


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

    def offsets(self, time: float, poses: dict[str, np.ndarray], base: np.ndarray) -> np.ndarray:
        """Every driven row's lane offset at ``time`` (starting cued changes as they come)."""
        if not self.items:
            return base
        out = base.copy()
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
        return out

    def _gap(self, m: int, target: int, poses: dict[str, np.ndarray]) -> float:
        """Bumper gap (m) of driven row ``m`` ahead of vehicle ``target``, along its heading."""
        row = int(self.rows[m])
        c, s = math.cos(poses["yaw"][target]), math.sin(poses["yaw"][target])
        along = c * (poses["cx"][row] - poses["cx"][target]) + s * (
            poses["cy"][row] - poses["cy"][target]
        )
        return float(along - poses["half_length"][row] - poses["half_length"][target])
