"""The NightRider message catalogue: every message type of the bus, in one place.

(Past 400 lines on purpose: it is the catalogue; every message type of the bus is here, so that
adding one touches this file and nothing else, as said below.)

A message type is one decorated dataclass below: its type number, whether a receiver queues it
by default, and its parameters with their types and ranges. The codec, the router's checks,
the logger's JSON schemas and the CSV columns are all derived from these classes, so adding a
message type touches this file and nothing else::

    @message_type(13, enqueue=False)
    class Horn(Message):
        pressed: int = param(0, 1)  # 1 while the horn is pressed

Parameters are ``int``, ``float`` or non-empty ``str``; values are checked when a message is
made, so a message that exists is a valid one.
"""

from __future__ import annotations

import math
import operator
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from enum import IntEnum
from typing import Any, ClassVar, TypeVar, get_type_hints

from vcosim.errors import ConfigError, ProtocolError

if sys.version_info >= (3, 11):
    from typing import dataclass_transform
else:  # pragma: no cover
    from typing_extensions import dataclass_transform


MAX_MODULE_ID = 65535
"""The largest module id: the codec refuses longer numbers before it converts them."""


class ModuleId(IntEnum):
    """Default module ids on the bus (every module takes its id as an option)."""

    ROUTER = 0
    VEHICLE = 16
    INPUT = 17
    VISUALISATION = 18
    SOUND = 19
    LOGGING = 20
    REPLAY = 21
    WORLD = 22


WORLD_VEHICLE_BASE = 64
"""A world's externally driven vehicles other than the ego join the bus as 64 + their row."""


@dataclass(frozen=True)
class Param:
    """One parameter of a message type: name, Python type, the allowed closed range, unit.

    The unit is written as FMI writes it (``m``, ``rad``, ``m/s``, ``Hz``; ``1`` for a count,
    a level or a flag), as in ``vcosim.vehicle.signals``: ``vcosim plot`` labels its axes
    with it.
    """

    name: str
    kind: type
    low: float | None = None
    high: float | None = None
    unit: str = "1"

    def check(self, owner: str, value: Any) -> Any:
        """The value converted to this parameter's type; a clear ProtocolError if it cannot be."""
        where = f"{owner}.{self.name}"
        if self.kind is str:
            if not isinstance(value, str) or not value:
                raise ProtocolError(f"{where}: expected a non-empty text, got {value!r}")
            try:
                value.encode("latin-1")
            except UnicodeEncodeError:
                raise ProtocolError(f"{where}: {value!r} is not Latin-1 text") from None
            return value
        if isinstance(value, bool):
            raise ProtocolError(f"{where}: expected a number, got {value!r}")
        if self.kind is int:
            try:
                value = operator.index(value)
            except TypeError:
                raise ProtocolError(f"{where}: expected an integer, got {value!r}") from None
        else:
            try:
                value = float(value)
            except (TypeError, ValueError):
                raise ProtocolError(f"{where}: expected a number, got {value!r}") from None
            if not math.isfinite(value):
                raise ProtocolError(f"{where}: {value!r} is not a finite number")
        if (self.low is not None and value < self.low) or (
            self.high is not None and value > self.high
        ):
            raise ProtocolError(f"{where}: {value!r} is out of range {self._range()}")
        return value

    def _range(self) -> str:
        low = "" if self.low is None else f"{self.low:g}"
        high = "" if self.high is None else f"{self.high:g}"
        return f"{low}..{high}"

    def json_schema(self) -> dict[str, Any]:
        """The parameter as a JSON-schema property (for the logger's MCAP schemas)."""
        schema: dict[str, Any] = {
            "type": {int: "integer", float: "number", str: "string"}[self.kind]
        }
        if self.low is not None:
            schema["minimum"] = self.low
        if self.high is not None:
            schema["maximum"] = self.high
        return schema


def param(low: float | None = None, high: float | None = None, unit: str = "1") -> Any:
    """A required message parameter, optionally limited to ``low..high`` (inclusive)."""
    return field(metadata={"range": (low, high), "unit": unit})


@dataclass(frozen=True)
class Message:
    """Base of every bus message: the common part (destination and enqueue flag) and checks.

    ``to`` is the receiving module's id. ``enqueue`` tells the receiver to append the message
    to its queue (True) or to let it replace an unread message of the same type (False, the
    latest value wins); each type has its own default.
    """

    type_id: ClassVar[int] = 0
    params: ClassVar[tuple[Param, ...]] = ()

    to: int = field(default=0, kw_only=True)
    enqueue: bool = field(default=False, kw_only=True)

    def __post_init__(self) -> None:
        name = type(self).__name__
        try:
            to = operator.index(self.to)
        except TypeError:
            raise ProtocolError(f"{name}.to: expected a module id, got {self.to!r}") from None
        if not 0 <= to <= MAX_MODULE_ID or isinstance(self.to, bool):
            raise ProtocolError(
                f"{name}.to: expected a module id 0..{MAX_MODULE_ID}, got {self.to!r}"
            )
        object.__setattr__(self, "to", to)
        object.__setattr__(self, "enqueue", bool(self.enqueue))
        for p in self.params:
            object.__setattr__(self, p.name, p.check(name, getattr(self, p.name)))

    @property
    def values(self) -> tuple[Any, ...]:
        """The parameters in wire order."""
        return tuple(getattr(self, p.name) for p in self.params)

    def as_dict(self) -> dict[str, Any]:
        """The common part and the parameters by name (JSON-friendly)."""
        return {
            "type": self.type_id,
            "to": self.to,
            "enqueue": self.enqueue,
            **{p.name: getattr(self, p.name) for p in self.params},
        }


CATALOGUE: dict[int, type[Message]] = {}
"""Every message type by type number."""

BY_NAME: dict[str, type[Message]] = {}
"""Every message type by class name."""

M = TypeVar("M", bound=Message)


@dataclass_transform(frozen_default=True, field_specifiers=(field, param))
def message_type(type_id: int, *, enqueue: bool = False) -> Callable[[type[M]], type[M]]:
    """Make a class a message type: a frozen dataclass, registered under ``type_id``.

    ``enqueue`` is the type's default for the receiving side: queue every message (True, for
    events that must not be lost) or keep only the latest unread one (False, for states).
    """

    def register(cls: type[M]) -> type[M]:
        if type_id in CATALOGUE or cls.__name__ in BY_NAME:
            raise ConfigError(
                [f"{cls.__name__} (type {type_id}) is already taken"], "message catalogue"
            )
        # The per-type default of the inherited ``enqueue`` field: re-declare it on the class.
        cls.__annotations__ = {**cls.__dict__.get("__annotations__", {}), "enqueue": "bool"}
        cls.enqueue = field(default=enqueue, kw_only=True)
        cls = dataclass(frozen=True)(cls)
        hints = get_type_hints(cls)
        cls.type_id = type_id
        cls.params = tuple(
            Param(
                f.name,
                hints[f.name],
                low=f.metadata.get("range", (None, None))[0],
                high=f.metadata.get("range", (None, None))[1],
                unit=f.metadata.get("unit", "1"),
            )
            for f in fields(cls)
            if f.name not in ("to", "enqueue")
        )
        CATALOGUE[type_id] = cls
        BY_NAME[cls.__name__] = cls
        return cls

    return register


def lookup(name_or_id: str | int) -> type[Message]:
    """A message type by class name or type number; unknown ones list the valid names."""
    from vcosim.errors import UnknownNameError

    if isinstance(name_or_id, int) or str(name_or_id).isdigit():
        cls = CATALOGUE.get(int(name_or_id))
    else:
        cls = BY_NAME.get(str(name_or_id))
    if cls is None:
        raise UnknownNameError("message type", str(name_or_id), list(BY_NAME))
    return cls


# --- the catalogue -------------------------------------------------------------------------


@message_type(1, enqueue=True)
class Shutdown(Message):
    """End the module; sent to the router's id, the router passes it to every module."""


@message_type(2)
class ForceFeedback(Message):
    """Torque on the steering wheel, in [-1, 1] of full scale (positive turns it left)."""

    force: float = param(-1.0, 1.0)
    duration: float = param(0.0, unit="s")


@message_type(3)
class IMVM(Message):
    """Input to visualisation: a pointer position and the steering-wheel angle (rad, + left)."""

    x: float = param()
    y: float = param()
    angle: float = param(unit="rad")


@message_type(4)
class IMFM(Message):
    """Driver inputs to the vehicle: pedals and wheel 0-255 (wheel 128 centred), shift -1/0/1."""

    throttle: int = param(0, 255)
    brake: int = param(0, 255)
    steering: int = param(0, 255)
    shift: int = param(-1, 1)


@message_type(5, enqueue=True)
class IMVMCamera(Message):
    """Switch the visualisation to its next camera."""


@message_type(6)
class FMVM(Message):
    """Vehicle pose to the visualisation: position (m), roll/pitch/yaw (rad), speed (m/s)."""

    x: float = param(unit="m")
    y: float = param(unit="m")
    z: float = param(unit="m")
    roll: float = param(unit="rad")
    pitch: float = param(unit="rad")
    yaw: float = param(unit="rad")
    speed: float = param(unit="m/s")


@message_type(7)
class VMFM(Message):
    """Ground under each wheel from the visualisation: height (m) and friction, FL FR RL RR."""

    height_fl: float = param(unit="m")
    height_fr: float = param(unit="m")
    height_rl: float = param(unit="m")
    height_rr: float = param(unit="m")
    friction_fl: float = param(0.0)
    friction_fr: float = param(0.0)
    friction_rl: float = param(0.0)
    friction_rr: float = param(0.0)


@message_type(8, enqueue=True)
class SoundOnce(Message):
    """Play a sound file once at a volume 0-255."""

    file: str = param()
    volume: int = param(0, 255)


@message_type(9, enqueue=True)
class SoundCont(Message):
    """Play a sound file continuously, or change its playback frequency (Hz) and volume."""

    file: str = param()
    frequency: int = param(100, 705600, unit="Hz")
    volume: int = param(0, 255)


@message_type(10, enqueue=True)
class SoundStop(Message):
    """Stop a continuously playing sound file."""

    file: str = param()


@message_type(11)
class FMLM(Message):
    """Engine and skid sound from the vehicle: volumes 0-255, playback frequencies (Hz)."""

    engine_volume: int = param(0, 255)
    engine_frequency: int = param(100, 705600, unit="Hz")
    skid_volume: int = param(0, 255)
    skid_frequency: int = param(100, 705600, unit="Hz")


@message_type(12)
class EngineStatus(Message):
    """Five free values for debugging.

    vcosim's vehicle module uses them to tell the visualisation (10 Hz) the live figures of
    the run: ``a`` gear (-1 R, 0 N, 1-5), ``b`` real-time factor, ``c`` the tight coupling's
    reply latency in ms (-1: no coupling or no reply yet), ``d`` coupling connected (0/1),
    ``e`` engine running (0/1). See docs/bus.md.
    """

    a: float = param()
    b: float = param()
    c: float = param(unit="ms")
    d: float = param()
    e: float = param()


@message_type(14, enqueue=True)
class WorldVehicle(Message):
    """A vehicle of a world: its row (the key of its WorldPose), name, box and ego flag.

    ``length`` and ``width`` (m) are its box (docs/worlds.md: collisions), whose centre lies
    ``offset`` metres ahead of the pose's point; ``ego`` is 1 for the vehicle whose FMVM the
    visualisation gets. Sent at start and again every second, so late joiners learn them.
    """

    row: int = param(0, MAX_MODULE_ID)
    name: str = param()
    length: float = param(0.0, unit="m")
    width: float = param(0.0, unit="m")
    ego: int = param(0, 1)
    offset: float = param(unit="m")


@message_type(15, enqueue=True)
class WorldPose(Message):
    """The pose of a world's vehicle ``row``: position (m), roll/pitch/yaw (rad), speed (m/s).

    Then its engine speed (rpm) and engaged gear (-1 R, 0 N, 1...), so a viewer shows any
    vehicle's dials, a built-in driver's too (it has no vehicle module of its own). Queued by
    default: a receiver must not let one vehicle's pose replace another's.
    """

    row: int = param(0, MAX_MODULE_ID)
    x: float = param(unit="m")
    y: float = param(unit="m")
    z: float = param(unit="m")
    roll: float = param(unit="rad")
    pitch: float = param(unit="rad")
    yaw: float = param(unit="rad")
    speed: float = param(unit="m/s")
    rpm: float = param(unit="1/min")
    gear: int = param(-1)


@message_type(16, enqueue=True)
class WorldSignal(Message):
    """A traffic light's head of a world (SUMO's, docs/traffic.md) and its state now.

    ``index`` keys the head (0, 1, ... in the world's order), ``name`` is its light and link
    (``"C.3"``); it stands at its lane's stop line (x, y, ``z`` up, facing ``yaw``, rad: the
    heading of the traffic it stops). ``state``: 0 red, 1 amber (or red-amber), 2 green, -1
    off. Sent at start, again every announcement period, and whenever the state changes.
    """

    index: int = param(0, MAX_MODULE_ID)
    name: str = param()
    x: float = param(unit="m")
    y: float = param(unit="m")
    z: float = param(unit="m")
    yaw: float = param(unit="rad")
    state: int = param(-1, 2)


@message_type(20, enqueue=True)
class RoadPosition(Message):
    """Where a vehicle ``row`` is on the run's OpenDRIVE road: road id, s and t (m), lane id.

    Sent with the vehicle's pose (a world's: after its WorldPose, 20 Hz; a lone car as row 0,
    20 Hz) when the run drives on an OpenDRIVE road. ``road`` ``-`` and ``lane`` 0: off every
    road's lanes (``s`` and ``t`` are then 0). Queued like WorldPose.
    """

    row: int = param(0, MAX_MODULE_ID)
    road: str = param()
    s: float = param(unit="m")
    t: float = param(unit="m")
    lane: int = param()
