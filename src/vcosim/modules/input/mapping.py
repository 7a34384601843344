"""The mapping: which device axis and button does what, validated by pydantic, kept as TOML.

The default fits the keyboard and scripted backends: axis 0 steering -1..1 (+ right), axes 1
and 2 throttle and brake 0..1, buttons 0-5 in the order of ``BUTTONS``. ``to_driver`` turns
raw device values into the bus's scales through a mapping.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomli_w
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from vcosim.config import read_toml, validation_problems
from vcosim.errors import ConfigError

BUTTONS = ("shift_up", "shift_down", "horn", "camera", "engine_start", "quit")
CONTROLS = ("steering", "throttle", "brake")


class AxisMap(BaseModel):
    """One control on one device axis: raw ``low`` → none/left, raw ``high`` → full/right."""

    model_config = ConfigDict(extra="forbid")

    axis: int = Field(ge=0)
    invert: bool = False
    dead_zone: float = Field(0.0, ge=0.0, lt=0.5)
    low: float = -1.0
    high: float = 1.0

    def fraction(self, raw: float) -> float:
        """Where ``raw`` lies between ``low`` and ``high``, 0..1 (inverted if asked)."""
        span = self.high - self.low
        f = min(max((raw - self.low) / span, 0.0), 1.0) if span else 0.0
        return 1.0 - f if self.invert else f

    def pedal(self, raw: float) -> float:
        """A pedal 0..1; the dead zone swallows a pedal resting just above zero."""
        f = self.fraction(raw)
        return 0.0 if f <= self.dead_zone else (f - self.dead_zone) / (1.0 - self.dead_zone)

    def centred(self, raw: float) -> float:
        """A wheel -1 (low) .. +1 (high); the dead zone is around the centre."""
        v = 2.0 * self.fraction(raw) - 1.0
        if abs(v) <= self.dead_zone:
            return 0.0
        return (abs(v) - self.dead_zone) / (1.0 - self.dead_zone) * (1.0 if v > 0 else -1.0)


class ButtonMap(BaseModel):
    """Device button numbers for each action (None, ``false`` in the file: not mapped)."""

    model_config = ConfigDict(extra="forbid")

    @field_validator("*", mode="before")
    @classmethod
    def _unmapped(cls, value: Any) -> Any:
        """TOML has no null: ``false`` means "no button for this action"."""
        return None if value is False else value

    shift_up: int | None = Field(0, ge=0)
    shift_down: int | None = Field(1, ge=0)
    horn: int | None = Field(2, ge=0)
    camera: int | None = Field(3, ge=0)
    engine_start: int | None = Field(4, ge=0)
    quit: int | None = Field(5, ge=0)

    @model_validator(mode="after")
    def _one_action_per_button(self) -> ButtonMap:
        """A button pressed for two actions would do both: every clash is named."""
        clashes = [
            f"{a} and {b} are both button {getattr(self, a)}"
            for i, a in enumerate(BUTTONS)
            for b in BUTTONS[i + 1 :]
            if getattr(self, a) is not None and getattr(self, a) == getattr(self, b)
        ]
        if clashes:
            raise ValueError("; ".join(clashes))
        return self


class Axes(BaseModel):
    """The three driving axes. Steering's ``high`` end turns the wheel right."""

    model_config = ConfigDict(extra="forbid")

    steering: AxisMap = AxisMap(axis=0, dead_zone=0.02)
    throttle: AxisMap = AxisMap(axis=1, low=0.0)
    brake: AxisMap = AxisMap(axis=2, low=0.0)


class Mapping(BaseModel):
    """Axes and buttons of one device, saved as TOML (``vcosim input --mapping FILE``)."""

    model_config = ConfigDict(extra="forbid")

    device: str | None = None  # part of the device's name; None: the first one found
    steering_lock_deg: float = Field(900.0, gt=0.0)  # wheel rotation lock to lock (IMVM angle)
    horn_file: str = "horn.wav"
    axes: Axes = Axes()
    buttons: ButtonMap = ButtonMap()

    def check_device(self, name: str, axes: int, buttons: int) -> None:
        """Every mapped axis and button exists on the device; otherwise every problem, named."""
        problems = [
            f"axes.{control}.axis: axis {getattr(self.axes, control).axis} does not exist on "
            f"{name!r} (it has {axes} axes: 0..{axes - 1})"
            for control in CONTROLS
            if getattr(self.axes, control).axis >= axes
        ]
        problems += [
            f"buttons.{action}: button {number} does not exist on {name!r} (it has {buttons} "
            f"buttons: 0..{buttons - 1})"
            for action in BUTTONS
            if (number := getattr(self.buttons, action)) is not None and number >= buttons
        ]
        if problems:
            raise ConfigError(problems, f"input mapping for {name!r}")

    def to_toml(self) -> str:
        """The mapping as TOML text (``load_mapping`` reads it back); unmapped is ``false``."""
        data = self.model_dump(exclude_none=True, exclude={"buttons"})
        data["buttons"] = {k: False if v is None else v for k, v in self.buttons}
        return tomli_w.dumps(data)


def load_mapping(path: str | Path) -> Mapping:
    """Read and validate a mapping file; every problem is listed with its key."""
    data = read_toml(path)
    try:
        return Mapping.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(validation_problems(exc), str(path)) from None


def save_mapping(mapping: Mapping, path: str | Path) -> None:
    """Write a mapping file."""
    Path(path).write_text(mapping.to_toml(), encoding="utf-8")


@dataclass
class DriverState:
    """The mapped controls after one poll, on the bus's scales."""

    throttle: int = 0
    brake: int = 0
    steering: int = 128
    angle: float = 0.0  # steering-wheel angle, rad, + left
    pressed: set[str] = field(default_factory=set)  # actions whose button went down now


def to_driver(
    mapping: Mapping, axes: Sequence[float], buttons: Sequence[bool], held: set[str]
) -> DriverState:
    """Raw device values → IMFM scales (0-255, wheel 128 centred, 0 = full left) and edges.

    ``held`` is the set of actions held at the previous poll; it is updated in place.
    """
    a = mapping.axes
    right = a.steering.centred(axes[a.steering.axis])  # + right, as joysticks report it
    wheel = round(128 + right * (127.0 if right >= 0 else 128.0))
    state = DriverState(
        round(255 * a.throttle.pedal(axes[a.throttle.axis])),
        round(255 * a.brake.pedal(axes[a.brake.axis])),
        wheel,
        -right * mapping.steering_lock_deg / 2 * math.pi / 180,
    )
    now = {
        act
        for act in BUTTONS
        if (n := getattr(mapping.buttons, act)) is not None and n < len(buttons) and buttons[n]
    }
    state.pressed = now - held
    held.clear()
    held.update(now)
    return state
