"""Named views of the coupling messages, so controllers never index raw slots.

``SimulatorMessage`` wraps the 111 values the simulator sends: ``msg.driver.throttle``,
``msg.body.groundspeed``, ``msg.status.rpm``, ``msg.wheels.FL.angularVelocity``,
``msg.custom[0]``. ``Controls`` is what a step function returns: only the fields it sets are
sent; the rest go as NaN ("leave as it is").
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

import numpy as np

from vcosim.errors import UnknownNameError
from vcosim.tight.protocol import N_CUSTOM, SIM_CUSTOM
from vcosim.vehicle import layout as L

NAN = math.nan


class Slot:
    """A float read from the message at a fixed slot (a descriptor)."""

    def __init__(self, index: int) -> None:
        self.index = index

    def __get__(self, view: _Bank | None, owner: type) -> float:
        if view is None:
            return self  # type: ignore[return-value]
        return float(view._values[self.index])


class _Bank:
    """A group of named slots over the shared message array."""

    __slots__ = ("_values",)

    def __init__(self, values: np.ndarray) -> None:
        self._values = values

    if TYPE_CHECKING:  # the slots are made at import (``_bank``): each reads a float

        def __getattr__(self, name: str) -> float: ...

    def as_dict(self) -> dict[str, float]:
        """Every named slot of the group."""
        return {name: getattr(self, name) for name in self.names()}

    @classmethod
    def names(cls) -> list[str]:
        """The slot names of the group, in wire order."""
        slots = [(v.index, k) for k, v in vars(cls).items() if isinstance(v, Slot)]
        return [name for _, name in sorted(slots)]


def _bank(name: str, first: int, names: Sequence[str], doc: str) -> type[_Bank]:
    namespace: dict[str, Any] = {n: Slot(first + i) for i, n in enumerate(names)}
    namespace.update(__doc__=doc, __slots__=())
    return type(name, (_Bank,), namespace)


# The names come from the vehicle's output layout (banks A-G are slots 1..60 of the message).
DriverControls = _bank(
    "DriverControls",
    1 + L.Y_A,
    L.BANK_NAMES[L.Y_A : L.Y_B],
    "Bank A: pedals and steering as applied, and as asked for (``_input``).",
)
Kinematics = _bank(
    "Kinematics",
    1 + L.Y_B,
    L.BANK_NAMES[L.Y_B : L.Y_C],
    "Bank B: position (m), world velocity (m/s), body acceleration (m/s2), attitude (rad).",
)
Status = _bank(
    "Status",
    1 + L.Y_C,
    L.BANK_NAMES[L.Y_C : L.Y_WHEEL],
    "Bank C: ignition, gear, fuel, engine load, lights, rpm, wheel speed.",
)
WHEEL_FIELDS = (
    "angularVelocity",
    "wheelSpeed",
    "brakingTorque",
    "propulsionTorque",
    "frictionTorque",
    "downForce",
)
WHEEL_NAMES = ("FL", "FR", "RL", "RR")
_WHEEL_TYPES = {
    w: _bank(
        f"Wheel{w}", 37 + 6 * i, WHEEL_FIELDS, f"Bank {'DEFG'[i]}: wheel {w} (rad/s, m/s, N m, N)."
    )
    for i, w in enumerate(WHEEL_NAMES)
}


class Wheels:
    """Banks D-G: ``wheels.FL`` ... ``wheels.RR``, each with the six wheel quantities."""

    __slots__ = ("FL", "FR", "RL", "RR")

    def __init__(self, values: np.ndarray) -> None:
        for w in WHEEL_NAMES:
            setattr(self, w, _WHEEL_TYPES[w](values))

    def __iter__(self):
        return (getattr(self, w) for w in WHEEL_NAMES)


class SimulatorMessage:
    """The 111 values from the simulator, by name.

    Attributes:
        id: The message id.
        driver, body, status: Banks A, B and C.
        wheels: Banks D-G.
        custom: Bank H, the 50 user values (a read-only array).
        time: Controller time (s): messages answered so far times the configured step. The
            wire carries no time; this is the block's count.
        dt: The controller's step (s), from configuration.
        signals: With a BeamNG interface CSV, every value of the message by its BeamNG name
            (``msg.signals["vehicleYawRate"]``); the banks hold the ones they have a slot
            for, NaN elsewhere. Empty with the fixed layout.
    """

    __slots__ = ("values", "driver", "body", "status", "wheels", "custom", "time", "dt", "signals")

    def __init__(self, values: np.ndarray, time: float = 0.0, dt: float = 0.005) -> None:
        self.values = values
        self.driver = DriverControls(values)
        self.body = Kinematics(values)
        self.status = Status(values)
        self.wheels = Wheels(values)
        self.custom = values[SIM_CUSTOM]
        self.time = time
        self.dt = dt
        self.signals: dict[str, float] = {}

    @property
    def id(self) -> int:
        """The message id (slot 0)."""
        return int(self.values[0])

    def __getattr__(self, name: str) -> float:
        """Flat access by the seed's names too: ``msg.rpm``, ``msg.wheelFL_downForce``."""
        index = SLOT_BY_NAME.get(name)
        if index is None:
            raise AttributeError(name)
        return float(self.values[index])


SLOT_BY_NAME = {
    n: i
    for bank in (DriverControls, Kinematics, Status)
    for n, i in ((k, v.index) for k, v in vars(bank).items() if isinstance(v, Slot))
}
SLOT_BY_NAME.update(
    {
        f"wheel{w}_{f}": 37 + 6 * i + j
        for i, w in enumerate(WHEEL_NAMES)
        for j, f in enumerate(WHEEL_FIELDS)
    }
)


NAN4 = (NAN, NAN, NAN, NAN)
"""Four wheels' torques left as they are (a tuple: one shared default cannot change)."""
DRIVE_MODES = {"pedals": 0.0, "torques": 1.0}


@dataclass
class Controls:
    """What a controller sends. Anything left unset goes as NaN: the simulator keeps it.

    Attributes:
        throttle, brake: Pedals in [0, 1].
        steering: In [-1, 1], positive turns left.
        gear: Requested gear -1..5, in the fixed layout's reserved slot 4: applied only by a
            simulator started with ``--gear-slot`` (BeamNG ignores the slot).
        braking_torque, propulsion_torque: Per wheel FL, FR, RL, RR (N m).
        drive_mode: "pedals", "torques" (or 0/1).
        custom: Up to 50 values for the simulator's hook, by position.
    """

    throttle: float = NAN
    brake: float = NAN
    steering: float = NAN
    gear: float = NAN
    braking_torque: Sequence[float] = NAN4
    propulsion_torque: Sequence[float] = NAN4
    drive_mode: str | float = NAN
    custom: Sequence[float] = ()

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> Controls:
        """Build from a dict of field names (unknown names are an error)."""
        for name in values:
            if name not in _CONTROL_NAMES:
                raise UnknownNameError("control output", name, list(_CONTROL_NAMES))
        return cls(**values)

    def write(self, out: np.ndarray) -> None:
        """Fill a 64-value message (all but the id); what is left unset stays NaN."""
        out[1:] = NAN
        out[1], out[2], out[3], out[4] = self.throttle, self.brake, self.steering, self.gear
        if self.braking_torque is not NAN4:
            out[5:9] = self.braking_torque
        if self.propulsion_torque is not NAN4:
            out[9:13] = self.propulsion_torque
        mode = self.drive_mode
        if mode == mode:  # (NaN is not: it stays)
            out[13] = DRIVE_MODES.get(mode, NAN) if isinstance(mode, str) else mode
        if len(self.custom):
            out[14 : 14 + min(len(self.custom), N_CUSTOM)] = self.custom[:N_CUSTOM]


_CONTROL_NAMES = {f.name: None for f in fields(Controls)}  # (a dict: ordered, for the error)


def as_controls(result: Controls | Mapping[str, Any] | None) -> Controls:
    """Normalise what a step function returned (None sends all NaN)."""
    if result is None:
        return Controls()
    if isinstance(result, Controls):
        return result
    return Controls.from_mapping(result)
