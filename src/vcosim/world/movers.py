"""Objects that move without physics: where they are is where they are told to be.

Pedestrians, obstacles, and the vehicles vcosim has no physical model of (trucks, buses,
bicycles, motorbikes, trailers) move kinematically: each along a polyline (its lane route, a
trajectory, or straight on along its heading) at the speed and the lateral offset it is
commanded, integrated once a period; a trailer follows its hitch as a tractrix does. The world
sees them as it sees SUMO's cars (``World.Objects``): in its range sensors, its collisions and
every face that reads ``World.others()``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from vcosim.traffic.others import Signal
from vcosim.world.geometry import POSE_NAMES
from vcosim.world.paths import point_at, project

if TYPE_CHECKING:
    from vcosim.world.world import World

AWAY = 1.0e6
"""m: where an object that is not in the world (yet, or any more) is kept, out of every sight."""
STRAIGHT_ON = 10_000.0
"""m: how far the line of an object with no lane to follow reaches ahead of its start."""


@dataclass
class Mover:
    """One kinematic object: what it is, its box, the line it follows and where on it it is."""

    name: str
    kind: str  # vehicle, pedestrian, misc
    category: str
    length: float
    width: float
    height: float
    line: np.ndarray  # (n, 2) points it follows
    s: float = 0.0  # m along the line
    offset: float = 0.0  # m left of the line
    speed: float = 0.0  # m/s along the line (negative: backwards)
    acceleration: float = 0.0
    present: bool = True
    towed_by: str | None = None  # the entity whose hitch it follows (a trailer)
    hitch: float = 0.0  # m ahead of the tractor's centre (negative: behind)
    coupler: float = 0.0  # m ahead of its own centre
    cum: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        self.follow(self.line)

    def follow(self, line: np.ndarray, s: float | None = None) -> None:
        """Follow ``line`` from now, at arc length ``s`` (default: where it is projected)."""
        line = np.asarray(line, dtype=float)
        keep = np.concatenate(([True], np.hypot(*np.diff(line, axis=0).T) > 1e-9))
        self.line = line[keep]
        self.cum = arc_lengths(self.line)
        if s is not None:
            self.s = s

    def locate(self, x: float, y: float) -> tuple[float, float]:
        """(s, offset) of a point on this line."""
        return locate(self.line, self.cum, x, y)

    def at(self, s: float, offset: float) -> tuple[float, float, float]:
        """(x, y, heading) at arc length ``s`` and ``offset`` to the left."""
        x, y, heading, _ = point_at(self.line, self.cum, 0, len(self.line), False, s, offset, 0)
        return float(x), float(y), float(heading)


def arc_lengths(line: np.ndarray) -> np.ndarray:
    """The arc length at each point of a polyline."""
    return np.concatenate(([0.0], np.cumsum(np.hypot(*np.diff(line[:, :2], axis=0).T))))


def locate(line: np.ndarray, cum: np.ndarray, x: float, y: float) -> tuple[float, float]:
    """(s, offset to the left) of the point (x, y) on a polyline with arc lengths ``cum``."""
    s, k = project(line, cum, 0, len(line), False, x, y, -1)
    px, py, heading, _ = point_at(line, cum, 0, len(line), False, s, 0.0, k)
    return float(s), float(-(x - px) * math.sin(heading) + (y - py) * math.cos(heading))


def straight_line(x: float, y: float, heading: float) -> np.ndarray:
    """A line through (x, y) along ``heading``, far ahead and a little behind."""
    c, s = math.cos(heading), math.sin(heading)
    return np.array([[x - c, y - s], [x + STRAIGHT_ON * c, y + STRAIGHT_ON * s]])


class Movers:
    """The world's kinematic objects; commanded by a face (the storyboard) every period."""

    signals: list[Signal]

    def __init__(self, movers: list[Mover], period_steps: int, dt: float) -> None:
        self.movers = movers
        self.period_steps = period_steps
        self.period = period_steps * dt
        self.signals = []
        self.slots = {m.name: slot for slot, m in enumerate(movers)}
        self.commands = [(m.speed, 0.0, m.offset) for m in movers]
        self._start = 0.0  # the period being interpolated: from here, to _start + period
        self._before = self._table()
        self._after = self._before

    def __len__(self) -> int:
        return len(self.movers)

    def command(self, slot: int, speed: float, acceleration: float, offset: float) -> None:
        """What ``slot`` does from the next period: speed (m/s), its rate, lateral offset."""
        self.commands[slot] = (speed, acceleration, offset)

    def place(self, slot: int, x: float, y: float, heading: float, line: np.ndarray) -> None:
        """Put an object at (x, y) now, following ``line`` from there (a teleport, an add)."""
        mover = self.movers[slot]
        mover.follow(line)
        mover.s, mover.offset = mover.locate(x, y)
        mover.present = True
        self._before = self._after = self._table(override={slot: (x, y, heading)})

    # -- the world's Objects ----------------------------------------------------------------
    def advance(self, world: World) -> None:
        """Move every object to the end of the next period, as it was commanded."""
        self._start = world.time
        self._before = self._after
        period = self.period
        for slot, mover in enumerate(self.movers):
            speed, acceleration, offset = self.commands[slot]
            if mover.towed_by is None:
                mover.s += speed * period + 0.5 * acceleration * period * period
                mover.speed, mover.acceleration = speed + acceleration * period, acceleration
                mover.offset = offset
        self._after = self._table(world)

    def poses(self, now: float) -> dict[str, np.ndarray]:
        """Every object's pose at ``now``, between the period's two ends."""
        share = min(max((now - self._start) / self.period, 0.0), 1.0)
        a, b = self._before, self._after
        out = {key: a[key] + (b[key] - a[key]) * share for key in a}
        turn = np.remainder(b["yaw"] - a["yaw"] + math.pi, 2 * math.pi) - math.pi
        out["yaw"] = np.remainder(a["yaw"] + turn * share + math.pi, 2 * math.pi) - math.pi
        return out

    def name(self, slot: int) -> str:
        """The object's name ("" while it is not in the world)."""
        mover = self.movers[slot]
        return mover.name if mover.present else ""

    def slot(self, name: str) -> int | None:
        """The slot of object ``name``; None if there is none such or it is not in the world."""
        slot = self.slots.get(name)
        return slot if slot is not None and self.movers[slot].present else None

    def position(self, slot: int, now: float) -> tuple[float, float]:
        """The centre of the object in ``slot`` at ``now``."""
        p = self.poses(now)
        return float(p["cx"][slot]), float(p["cy"][slot])

    def signal_states(self) -> np.ndarray:
        """No traffic lights of their own."""
        return np.zeros(0)

    # -- poses ------------------------------------------------------------------------------
    def _table(
        self,
        world: World | None = None,
        override: dict[int, tuple[float, float, float]] | None = None,
    ) -> dict[str, np.ndarray]:
        """Every object's pose at the end of the period being moved (or now, at a placement)."""
        n = len(self.movers)
        table = {key: np.zeros(n) for key in (*POSE_NAMES, "half_length", "half_width")}
        before = getattr(self, "_after", None)
        for slot, mover in enumerate(self.movers):
            if override and slot in override:
                x, y, yaw = override[slot]
            elif mover.towed_by is not None:
                x, y, yaw = self._towed(mover, slot, table, world, before)
            else:
                x, y, yaw = mover.at(mover.s, mover.offset)
                if mover.speed < 0.0 and mover.kind != "vehicle":
                    yaw += math.pi  # a pedestrian walking back turns round; a car reverses
            if not mover.present:
                x, y = AWAY + 100.0 * slot, AWAY
            table["x"][slot], table["y"][slot], table["yaw"][slot] = x, y, yaw
            table["half_length"][slot] = max(mover.length, 0.1) / 2
            table["half_width"][slot] = max(mover.width, 0.1) / 2
            if before is not None and mover.present:
                dx, dy = x - before["x"][slot], y - before["y"][slot]
                moved = math.hypot(dx, dy) / self.period
                if moved < 100.0:  # not across a placement
                    table["vx"][slot], table["vy"][slot] = dx / self.period, dy / self.period
                    turn = math.remainder(yaw - before["yaw"][slot], 2 * math.pi)
                    table["yaw_rate"][slot] = turn / self.period
            table["speed"][slot] = math.hypot(table["vx"][slot], table["vy"][slot])
            table["ax"][slot] = mover.acceleration * math.cos(yaw)
            table["ay"][slot] = mover.acceleration * math.sin(yaw)
        table["cx"], table["cy"] = table["x"].copy(), table["y"].copy()
        return table

    def _towed(
        self,
        mover: Mover,
        slot: int,
        table: dict[str, np.ndarray],
        world: World | None,
        before: dict[str, np.ndarray] | None,
    ) -> tuple[float, float, float]:
        """A trailer's pose: its coupler on the hitch, its centre dragged behind (a tractrix)."""
        assert mover.towed_by is not None
        tractor = self.slots.get(mover.towed_by)
        if tractor is not None and tractor < slot:  # moved already, earlier in this table
            tx, ty, tyaw = table["x"][tractor], table["y"][tractor], table["yaw"][tractor]
        elif world is not None and mover.towed_by in world.index:
            p = world.poses()
            row = world.row(mover.towed_by)
            period = self.period  # a physical tractor: where it will be at the period's end
            tx = float(p["x"][row] + p["vx"][row] * period)
            ty = float(p["y"][row] + p["vy"][row] * period)
            tyaw = float(p["yaw"][row] + p["yaw_rate"][row] * period)
        else:
            x, y, yaw = mover.at(mover.s, mover.offset)
            return x, y, yaw
        hx, hy = tx + mover.hitch * math.cos(tyaw), ty + mover.hitch * math.sin(tyaw)
        reach = mover.coupler if mover.coupler > 0.0 else mover.length / 2
        if before is None:
            yaw = tyaw
        else:
            yaw = math.atan2(hy - before["y"][slot], hx - before["x"][slot])
            if math.hypot(hx - before["x"][slot], hy - before["y"][slot]) < 1e-6:
                yaw = float(before["yaw"][slot])
        return hx - reach * math.cos(yaw), hy - reach * math.sin(yaw), yaw
