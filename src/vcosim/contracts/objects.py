"""What the contract server serves: named objects, their readable, writable and function properties.

(Past 400 lines: every object's readable, writable and function properties, each with its check,
are one catalogue that the server serves and the docs are read against.)

Objects: the vehicle (``"Vehicle_A"`` unless renamed) or, in a world, every vehicle by its
name; ``"World"`` (the origin, and the simulation's time) and fixed named points
(``"Origin"`` always, more by configuration).
In a world with SUMO's traffic also its traffic lights' heads by name (``"C.3"``: light C,
link 3; their stop line's point and ``state``) and any SUMO car by its id while it is in the
world (its box's centre on the ground; NaN once it has left).

- Readable on the vehicle: every signal of ``vehicle.layout.SIGNAL_NAMES`` (the bank
  quantities of the tight coupling, then the extras), the vectors ``position``, ``velocity``,
  ``acceleration``, ``attitude``, ``wheel_angular_velocity``, ``wheel_speed``, and ``X``,
  ``Y``, ``Z``.
- Writable on the vehicle: the driver's inputs (``throttle``, ``brake``, ``clutch``,
  ``parkingbrake``, ``steering``, ``gear``, ``ignition``, lights, indicators, ``automatic``,
  ``drive_mode``) and the wheel torques (``propulsion_torque``, ``braking_torque`` as 4 values,
  or ``propulsion_torque_FL`` ... one each).
- Functions (on every object, ``params`` names the other one): ``DISTANCE`` (alias
  ``VSAP_DISTANCE``), the horizontal distance; ``DISTANCE_3D``. ``params`` is an object name
  or a point given as ``"X,Y"`` or ``"X,Y,Z"`` (metres, each within ±1e7).

Names match exactly, or case-insensitively when that is unambiguous. A request that cannot be
served returns the reason as a string; the server sends it back as the field's refusal.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Protocol

import numpy as np

from vcosim.contracts.limits import MAX_COORDINATE, coordinates, point_problem
from vcosim.vehicle import VehicleView
from vcosim.vehicle import layout as L
from vcosim.vehicle.inputs import CATALOGUE, Kind

Position = Callable[[], tuple[float, float, float]]
WORLD = "World"
ORIGIN = "Origin"


class Fleet(Protocol):
    """Vehicles whose arrays are the rows of one array each (a ``vcosim.world.World``)."""

    names: list[str]
    outputs: np.ndarray
    inputs: np.ndarray
    objects: Any  # SUMO's traffic (``vcosim.world.world.Objects``), or None

    def others(self) -> Any:
        """Its objects now (``vcosim.world.others.Others``): SUMO's cars, traffic lights."""
        ...

    def object_position(self, name: str) -> tuple[float, float, float] | None:
        """Where object ``name`` (a SUMO car) is now; None when it is not there."""
        ...


@dataclass(frozen=True)
class Reader:
    """How to read a property: vehicle output slots (fast), or a function of nothing."""

    width: int
    signals: tuple[int, ...] = ()
    function: Callable[[], tuple[float, ...]] | None = None


@dataclass(frozen=True)
class Writer:
    """Where a written property goes in the vehicle's inputs, and how values are limited.

    ``kind`` and the range are the input's (``vcosim.vehicle.inputs``): ``real`` values are
    clamped to [low, high]; ``integer`` ones clamped and rounded; ``switch`` ones clamped and
    become 0 or 1 (at 0.5). ``input`` is the catalogue's name of the input written.
    """

    targets: tuple[int, ...]
    low: float
    high: float
    kind: Kind = "real"
    input: str = ""

    @property
    def width(self) -> int:
        """Values the property takes."""
        return len(self.targets)


NOT_WRITABLE = frozenset({"ground_from_inputs", "ground_height", "ground_friction"})
"""Inputs a contract does not write: the ground comes from the terrain or the bus's viewer."""


def _writers() -> dict[str, Writer]:
    """Every catalogue input but the ground's, and each wheel of a per-wheel one by itself."""
    w: dict[str, Writer] = {}
    for i in CATALOGUE:
        if i.name in NOT_WRITABLE:
            continue
        w[i.name] = Writer(i.targets, i.low, i.high, i.kind, i.name)
    for i in CATALOGUE:
        if i.width > 1 and i.name not in NOT_WRITABLE:
            for k, target in enumerate(i.targets):
                w[i.element_name(k)] = Writer((target,), i.low, i.high, i.kind, i.name)
    return w


WRITERS = _writers()


def _vectors() -> dict[str, tuple[str, ...]]:
    v = {
        "position": ("posX", "posY", "posZ"),
        "velocity": ("velX", "velY", "velZ"),
        "acceleration": ("accX", "accY", "accZ"),
        "attitude": ("roll", "pitch", "yaw"),
        "wheel_angular_velocity": tuple(f"wheel{w}_angularVelocity" for w in L.WHEELS),
        "wheel_speed": tuple(f"wheel{w}_wheelSpeed" for w in L.WHEELS),
        "X": ("posX",),
        "Y": ("posY",),
        "Z": ("posZ",),
    }
    v.update({name: (name,) for name in L.SIGNAL_NAMES})
    return v


VEHICLE_READABLE = _vectors()
FUNCTIONS = {"DISTANCE": False, "VSAP_DISTANCE": False, "DISTANCE_3D": True}  # name -> 3-D?
POINT_READABLE = {"posX": 1, "posY": 1, "posZ": 1, "position": 3}
"""What a fixed point (``Origin``, a named point) has: name -> width."""
WORLD_READABLE = {**POINT_READABLE, "time": 1, "step_index": 1}
"""What ``World`` has: name -> width."""
SIGNAL_READABLE = {**POINT_READABLE, "state": 1}
"""What a traffic light's head has (``"C.3"``): its stop line's point and its state (0 red,
1 amber, 2 green, -1 off)."""
GONE = (math.nan, math.nan, math.nan)
"""The position of a world object (a SUMO car) that is not in the world (left, or not yet)."""


def _lookup(name: str, names: Mapping[str, object]) -> str | None:
    """The canonical name: exact, else the one case-insensitive match (if only one)."""
    if name in names:
        return name
    matches = [n for n in names if n.lower() == name.lower()]
    return matches[0] if len(matches) == 1 else None


def _close(name: str, valid: list[str]) -> str:
    """``"; did you mean 'x'?"`` for the closest valid name, or "" (about 1 ms: use sparingly)."""
    close = difflib.get_close_matches(name, valid, n=1)
    if not close:
        close = difflib.get_close_matches(name.lower(), [v.lower() for v in valid], n=1)
        close = [v for v in valid if close and v.lower() == close[0]][:1]
    return f"; did you mean {close[0]!r}?" if close else ""


class Catalogue:
    """The objects of one simulation and how to read, write and call their properties.

    ``hints``: how many more unknown names get a "did you mean" (each costs about a
    millisecond); the server allows a few per HELLO, so a HELLO of hundreds of unknown names
    costs little.
    """

    hints = 1 << 30

    def __init__(
        self,
        vehicle: VehicleView,
        vehicle_name: str = "Vehicle_A",
        points: Mapping[str, tuple[float, ...]] | None = None,
        *,
        world: Fleet | None = None,
    ) -> None:
        self.vehicle_name = vehicle_name
        self._vehicle = vehicle
        self.outputs: np.ndarray = vehicle.outputs
        """Every served vehicle's outputs in one array: readers' ``signals`` index it."""
        self.inputs: np.ndarray = vehicle.input_array
        """Every served vehicle's inputs in one array: writers' ``targets`` index it."""
        self._rows = {vehicle_name: 0}
        if world is not None:  # the vehicles are rows of the world's arrays: index them flat
            self.outputs, self.inputs = world.outputs.reshape(-1), world.inputs.reshape(-1)
            assert np.shares_memory(self.outputs, world.outputs), "a world's arrays are whole"
            self._rows = {name: row for row, name in enumerate(world.names)}
        self._positions: dict[str, Position] = {
            name: _position(self.outputs, row * L.N_OUTPUTS + L.Y_B)
            for name, row in self._rows.items()
        }
        self._positions[WORLD] = lambda: (0.0, 0.0, 0.0)
        self._world = world
        self._signals: dict[str, int] = {}  # a traffic light's head -> its index
        if world is not None:
            for index, head in enumerate(world.others().signals):
                self._signals[head.name] = index
                self._positions[head.name] = _fixed((head.x, head.y, 0.0))
        fixed = {ORIGIN: (0.0, 0.0, 0.0), **(points or {})}
        for name, xyz in fixed.items():
            if name in self._rows:
                raise ValueError(f"point {name!r}: a vehicle has that name")
            point = _point(xyz)
            if point is None:
                raise ValueError(f"point {name!r}: give 2 or 3 coordinates, not {xyz!r}")
            self._positions[name] = _fixed(point)

    @property
    def objects(self) -> list[str]:
        """Every object name, the vehicle first."""
        return list(self._positions)

    def reader(self, obj: str | None, prop: str, params: str | None, size: int) -> Reader | str:
        """How to read ``obj.prop(params)`` as ``size`` values, or why it cannot be read."""
        name, reason = self._object(obj)
        if name is None:
            return reason
        function = _lookup(prop, FUNCTIONS)
        if function is not None:
            return self._function(name, function, params, size)
        if params is not None:
            return f"{prop!r} of {name} is not a function; it takes no params"
        if name in self._rows:
            canonical = _lookup(prop, VEHICLE_READABLE)
            if canonical is None:
                return self._unknown("property", prop, name, [*VEHICLE_READABLE, *FUNCTIONS])
            first = self._rows[name] * L.N_OUTPUTS
            slots = tuple(first + L.SIGNAL_INDEX[s] for s in VEHICLE_READABLE[canonical])
            reader = Reader(len(slots), signals=slots)
        else:
            reader_or_reason = self._fixed_reader(name, prop)
            if isinstance(reader_or_reason, str):
                return reader_or_reason
            reader = reader_or_reason
        if reader.width != size:
            return f"{prop!r} of {name} has {reader.width} value(s); the field asks for {size}"
        return reader

    def writer(self, obj: str | None, prop: str, params: str | None, size: int) -> Writer | str:
        """Where ``obj.prop`` is written as ``size`` values, or why it cannot be written."""
        found, reason = self._object(obj)
        if found is None:
            return reason
        if found not in self._rows:
            return f"{found} has no writable properties"
        canonical = _lookup(prop, WRITERS)
        if canonical is None:
            if _lookup(prop, VEHICLE_READABLE) is not None or _lookup(prop, FUNCTIONS):
                return f"{prop!r} of {found} is read-only (writable: {', '.join(WRITERS)})"
            return self._unknown("writable property", prop, found, list(WRITERS))
        if params is not None:
            return f"{prop!r} of {found} takes no params"
        writer = WRITERS[canonical]
        if writer.width != size:
            return f"{prop!r} of {found} takes {writer.width} value(s); the field has {size}"
        first = self._rows[found] * L.N_INPUTS
        return replace(writer, targets=tuple(first + t for t in writer.targets))

    # -- helpers ----------------------------------------------------------------------------
    def _unknown(self, kind: str, name: str, of: str, valid: list[str]) -> str:
        return f"unknown {kind} {name!r} of {of}{self._hint(name, valid)}"

    def _hint(self, name: str, valid: list[str]) -> str:
        if self.hints <= 0:
            return ""
        self.hints -= 1
        return _close(name, valid)

    def _object(self, obj: str | None) -> tuple[str | None, str]:
        """(the canonical object name, "") or (None, why there is none)."""
        if obj is None:
            return None, "no remoteObject given"
        canonical = _lookup(obj, self._positions)
        if canonical is None and self._moving(obj):
            return obj, ""
        if canonical is None:
            hint = self._hint(obj, self.objects)
            return None, f"unknown object {obj!r}{hint} (objects: {', '.join(self.objects)})"
        return canonical, ""

    def _moving(self, name: str) -> bool:
        """Whether ``name`` is one of the world's objects now (a SUMO car).

        If so it is served from now on, its position the world's (``GONE`` while it is gone).
        """
        world = self._world
        if world is None or world.object_position(name) is None:
            return False
        self._positions[name] = lambda: world.object_position(name) or GONE
        return True

    def _fixed_reader(self, name: str, prop: str) -> Reader | str:
        position = self._positions[name]
        readable = (
            WORLD_READABLE
            if name == WORLD
            else SIGNAL_READABLE
            if name in self._signals
            else POINT_READABLE
        )
        canonical = _lookup(prop, readable)
        if canonical is None:
            return self._unknown("property", prop, name, [*readable, *FUNCTIONS])
        vehicle = self._vehicle
        read: Callable[[], tuple[float, ...]]
        if canonical == "time":
            read = lambda: (vehicle.time,)  # noqa: E731
        elif canonical == "step_index":
            read = lambda: (float(vehicle.step_index),)  # noqa: E731
        elif canonical == "position":
            read = position
        elif canonical == "state":
            world, index = self._world, self._signals[name]
            assert world is not None
            read = lambda: (float(world.objects.signal_states()[index]),)  # noqa: E731
        else:  # posX, posY, posZ
            axis = "XYZ".index(canonical[-1])
            read = lambda: position()[axis : axis + 1]  # noqa: E731
        return Reader(readable[canonical], function=read)

    def _function(self, name: str, function: str, params: str | None, size: int) -> Reader | str:
        if params is None or not params.strip():
            return (
                f"{function} needs params: another object ({', '.join(self.objects)}) or a "
                f'point "X,Y" or "X,Y,Z"'
            )
        other = _point(params)
        problem = point_problem(params)
        if problem is not None:
            return f"{function} params {params!r}: {problem}"
        if other is None:
            target, reason = self._object(params.strip())
            if target is None:
                return f'{function} params: {reason}, or give a point "X,Y" or "X,Y,Z"'
            there = self._positions[target]
        else:
            there = _fixed(other)
        here = self._positions[name]
        if size != 1:
            return f"{function} has 1 value; the field asks for {size}"
        if FUNCTIONS[function]:

            def distance() -> tuple[float, ...]:
                return (math.dist(here(), there()),)
        else:

            def distance() -> tuple[float, ...]:
                (x0, y0, _), (x1, y1, _) = here(), there()
                return (math.hypot(x1 - x0, y1 - y0),)

        return Reader(1, function=distance)


def field_problem(
    obj: str | None, prop: str, params: str | None, size: int, *, written: bool
) -> tuple[str, str] | None:
    """Why no server could serve this field, as far as its names tell: (key, reason), or None.

    Vehicles and named points are the server's to know, but which properties there are, how
    many values each has and which are writable is the same on every server: a client checks
    its file with this before it connects, so a misspelt property is refused before the run
    instead of reading its invalidValue through it. ``key`` is the field's key at fault
    (``propertyName``, ``arraySize`` or ``params``).
    """
    of = f" of {obj}" if obj else ""
    fixed = _lookup(obj, {WORLD: 0, ORIGIN: 0}) if obj else None
    function = _lookup(prop, FUNCTIONS)
    if function is not None:
        if written:
            return "propertyName", f"{function}{of} is a function: it is read, not written"
        if size != 1:
            return "arraySize", f"{function} has 1 value; the field asks for {size}"
        return None  # its params are checked with the field's others
    if params is not None:
        return "params", f"{prop!r}{of} is not a function; it takes no params"
    if written:
        if fixed is not None:
            return "remoteObject", f"{fixed} has no writable properties"
        canonical = _lookup(prop, WRITERS)
        if canonical is None:
            if _lookup(prop, VEHICLE_READABLE) is not None:
                return "propertyName", f"{prop!r}{of} is read-only (writable: {', '.join(WRITERS)})"
            return (
                "propertyName",
                f"unknown writable property {prop!r}{of}{_close(prop, [*WRITERS])}",
            )
        width = WRITERS[canonical].width
    else:
        readable = (
            WORLD_READABLE
            if fixed == WORLD
            else POINT_READABLE
            if fixed == ORIGIN
            else {**{n: len(s) for n, s in VEHICLE_READABLE.items()}, **SIGNAL_READABLE}
        )
        canonical = _lookup(prop, readable)
        if canonical is None:
            hint = _close(prop, [*readable, *FUNCTIONS])
            return "propertyName", f"unknown property {prop!r}{of}{hint}"
        width = readable[canonical]
    if width != size:
        return "arraySize", f"{canonical!r} has {width} value(s); the field asks for {size}"
    return None


def _position(outputs: np.ndarray, at: int) -> Position:
    """The position function of the vehicle whose ``posX`` is ``outputs[at]``."""

    def position() -> tuple[float, float, float]:
        return float(outputs[at]), float(outputs[at + 1]), float(outputs[at + 2])

    return position


def _fixed(point: tuple[float, float, float]) -> Position:
    """The position function of a point that does not move."""
    return lambda: point


def _point(value: object) -> tuple[float, float, float] | None:
    """A point from ``"X,Y"``/``"X,Y,Z"`` or a 2- or 3-sequence; None if it is not one.

    Coordinates beyond ``MAX_COORDINATE`` (or not finite) make no point: a distance to one
    would overflow.
    """
    xyz = coordinates(value)
    if xyz is None or not all(abs(c) <= MAX_COORDINATE for c in xyz):  # (False for NaN)
        return None
    return (xyz[0], xyz[1], xyz[2] if len(xyz) == 3 else 0.0)
