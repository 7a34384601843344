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

from vcosim.vehicle._jit_cache import kernel
from vcosim.world.geometry import POSE_NAMES
from vcosim.world.others import Signal
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
    hitch: float = 0.0  # m ahead of the tractor's position (negative: behind)
    coupler: float = 0.0  # m ahead of its own position
    centre: float = 0.0  # m: its box's centre ahead of its position (the reference point)
    facing: int = 0  # +1 / -1: faces along / against its line (0: as it moves, see below)
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


@kernel
def points_at(points, cum, starts, ends, s, offset, hint, x, y, heading):  # fmt: skip
    """(x, y, heading) of every object at its arc length ``s`` and ``offset`` on its line.

    The search for each starts at its segment of the last call (``hint``, updated).
    """
    for k in range(s.shape[0]):
        x[k], y[k], heading[k], hint[k] = point_at(
            points, cum, starts[k], ends[k], False, s[k], offset[k], hint[k]
        )


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
        self.towed = [slot for slot, m in enumerate(movers) if m.towed_by is not None]
        self.half_length = np.array([max(m.length, 0.1) / 2 for m in movers])
        self.half_width = np.array([max(m.width, 0.1) / 2 for m in movers])
        self.centre = np.array([m.centre for m in movers])
        self._walking = np.array([m.kind != "vehicle" for m in movers], dtype=bool)
        self._packed_key: tuple[int, ...] = ()
        self._hint = np.zeros(len(movers), dtype=np.int64)
        self._packed = (np.zeros((0, 2)), np.zeros(0), np.zeros(0, np.int64), np.zeros(0, np.int64))
        self.commands = [(m.speed, 0.0, m.offset) for m in movers]
        self._start = 0.0  # the period being interpolated: from here, to _start + period
        self._before = self._table(None)
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
        self._before = self._after = self._table(self._after, override={slot: (x, y, heading)})

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
        self._after = self._table(self._after, world)

    def poses(self, now: float, lights: bool = False) -> dict[str, np.ndarray]:
        """Every object's pose at ``now``, between the period's two ends (no lights to show)."""
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

    def next_signal(self, name: str) -> tuple[float, float] | None:
        """No traffic lights: none ahead of anyone."""
        return None

    def signal_states(self) -> np.ndarray:
        """No traffic lights of their own."""
        return np.zeros(0)

    # -- poses ------------------------------------------------------------------------------
    def _table(
        self,
        before: dict[str, np.ndarray] | None,
        world: World | None = None,
        override: dict[int, tuple[float, float, float]] | None = None,
    ) -> dict[str, np.ndarray]:
        """Every object's pose at the end of the period being moved (or now, at a placement).

        The objects on their lines in one compiled call; trailers after their tractors.
        ``before``: the poses the period starts from (None at the first), for the speeds.
        """
        movers, n = self.movers, len(self.movers)
        table = {key: np.zeros(n) for key in (*POSE_NAMES, "half_length", "half_width")}
        points, cum, starts, ends = self._lines()
        s = np.array([m.s for m in movers])
        offset = np.array([m.offset for m in movers])
        x, y, yaw = table["x"], table["y"], table["yaw"]
        points_at(points, cum, starts, ends, s, offset, self._hint, x, y, yaw)
        speed = np.fromiter((m.speed for m in movers), dtype=float, count=n)
        facing = np.fromiter((m.facing for m in movers), dtype=np.int64, count=n)
        backwards = np.where(facing == 0, (speed < 0.0) & self._walking, facing < 0)
        yaw[backwards] += math.pi  # a pedestrian walking back turns round; a car reverses
        for slot, where in (override or {}).items():
            x[slot], y[slot], yaw[slot] = where
        for slot in self.towed:
            x[slot], y[slot], yaw[slot] = self._towed(movers[slot], slot, table, world, before)
        present = np.array([m.present for m in movers])
        away = np.flatnonzero(~present)
        x[away], y[away] = AWAY + 100.0 * away, AWAY
        table["half_length"][:] = self.half_length
        table["half_width"][:] = self.half_width
        if before is not None:
            vx, vy = (x - before["x"]) / self.period, (y - before["y"]) / self.period
            moving = present & (np.hypot(vx, vy) < 100.0)  # not across a placement
            table["vx"][moving], table["vy"][moving] = vx[moving], vy[moving]
            turn = np.remainder(yaw - before["yaw"] + math.pi, 2 * math.pi) - math.pi
            table["yaw_rate"][moving] = turn[moving] / self.period
        table["speed"][:] = np.hypot(table["vx"], table["vy"])
        acceleration = np.array([m.acceleration for m in movers])
        table["ax"][:], table["ay"][:] = acceleration * np.cos(yaw), acceleration * np.sin(yaw)
        table["cx"], table["cy"] = x + self.centre * np.cos(yaw), y + self.centre * np.sin(yaw)
        return table

    def _lines(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Every object's line packed in one array (again only when one of them changed)."""
        key = tuple(id(m.line) for m in self.movers)
        if key != self._packed_key:
            lines = [m.line for m in self.movers]
            lengths = np.array([len(line) for line in lines], dtype=np.int64)
            starts = np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.int64)
            self._packed = (
                np.concatenate(lines), np.concatenate([m.cum for m in self.movers]),
                starts, starts + lengths,
            )  # fmt: skip
            self._packed_key = key
            self._hint = np.zeros(len(lines), dtype=np.int64)
        return self._packed

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
        if tractor is not None:  # moved already, earlier in this table
            tx, ty, tyaw = table["x"][tractor], table["y"][tractor], table["yaw"][tractor]
        elif world is not None and mover.towed_by in world.index:
            p = world.poses()
            row = world.row(mover.towed_by)
            period = self.period  # a physical tractor: where it will be at the period's end
            tx = float(p["x"][row] + p["vx"][row] * period)
            ty = float(p["y"][row] + p["vy"][row] * period)
            tyaw = float(p["yaw"][row] + p["yaw_rate"][row] * period)
            rear = float(world.geometry["rear"][row])  # its position is its centre of gravity
            tx, ty = tx - rear * math.cos(tyaw), ty - rear * math.sin(tyaw)
        else:
            x, y, yaw = mover.at(mover.s, mover.offset)
            return x, y, yaw
        hx, hy = tx + mover.hitch * math.cos(tyaw), ty + mover.hitch * math.sin(tyaw)
        reach = mover.coupler if mover.coupler > 0.0 else mover.centre + mover.length / 2
        if before is None:
            yaw = tyaw
        else:
            yaw = math.atan2(hy - before["y"][slot], hx - before["x"][slot])
            if math.hypot(hx - before["x"][slot], hy - before["y"][slot]) < 1e-6:
                yaw = float(before["yaw"][slot])
        return hx - reach * math.cos(yaw), hy - reach * math.sin(yaw), yaw
