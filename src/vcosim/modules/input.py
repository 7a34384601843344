"""The input module (the seed's IM): wheel, pedals and buttons to the bus; force feedback back.

A backend gives raw device axes (floats, about -1..1) and buttons; a ``Mapping`` (a TOML file,
validated by pydantic) says which axis is steering, throttle and brake (with inversion, dead
zone and the raw range that means "fully"), and which button shifts, sounds the horn,
switches the camera, starts the engine or quits. Backends:

- ``PygameBackend``: a joystick, gamepad or wheel through pygame-ce (the ``input`` extra);
  SDL's dummy drivers make it importable headless.
- ``KeyboardBackend``: the terminal's keys (w/s throttle and brake, a/d steer, e/q shift,
  h horn, c camera, Escape quit), for a machine without a wheel.
- ``ScriptedBackend``: a list of timed axis/button values, for tests and headless runs.

The module polls at 100 Hz and sends IMFM (pedals, wheel, a pending shift) and IMVM (the wheel
angle) at 25 Hz; a shift rides on the next IMFM with enqueue set, so a pedal update cannot
replace it. Horn → SoundOnce to the sound module, camera → IMVMCamera to the visualisation,
quit → Shutdown to the router's id, which the router passes to every module. ForceFeedback
from the vehicle drives a constant-force effect (evdev, Linux), else rumble, else a one-time
message saying the device has neither.

Time is a tick count (``tick × 10 ms``), so a scripted second gives exactly 25 IMFM whatever
the machine's load; ``pace="fast"`` skips the waiting between ticks (tests).
"""

from __future__ import annotations

import logging
import os
import sys
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from vcosim.bus.catalogue import (
    IMFM,
    IMVM,
    ForceFeedback,
    IMVMCamera,
    ModuleId,
    Shutdown,
    SoundOnce,
)
from vcosim.bus.client import DEFAULT_PORT, BusClient
from vcosim.bus.codec import Codec
from vcosim.errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

log = logging.getLogger("vcosim.input")

POLL_RATE = 100.0
SEND_EVERY = 4  # polls per IMFM: 25 Hz
BUTTONS = ("shift_up", "shift_down", "horn", "camera", "engine_start", "quit")


# -- the mapping ------------------------------------------------------------------------------
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


class Axes(BaseModel):
    """The three driving axes. Steering's ``high`` end turns the wheel right."""

    model_config = ConfigDict(extra="forbid")

    steering: AxisMap = AxisMap(axis=0, dead_zone=0.02)
    throttle: AxisMap = AxisMap(axis=1, low=0.0)
    brake: AxisMap = AxisMap(axis=2, low=0.0)


class Mapping(BaseModel):
    """Axes and buttons of one device, saved as TOML (``vcosim input --mapping FILE``).

    The default fits the keyboard and scripted backends: axis 0 steering -1..1 (+ right),
    axes 1 and 2 throttle and brake 0..1, buttons 0-5 in the order of ``BUTTONS``.
    """

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
            for control in ("steering", "throttle", "brake")
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
        """The mapping as TOML text (``load_mapping`` reads it back)."""
        lines = []
        if self.device is not None:
            lines.append(f"device = {_toml(self.device)}")
        lines += [
            f"steering_lock_deg = {_toml(self.steering_lock_deg)}",
            f"horn_file = {_toml(self.horn_file)}",
        ]
        for control in ("steering", "throttle", "brake"):
            lines += ["", f"[axes.{control}]"]
            lines += [
                f"{k} = {_toml(v)}" for k, v in getattr(self.axes, control).model_dump().items()
            ]
        lines += ["", "[buttons]"]
        lines += [
            f"{k} = {_toml(False if v is None else v)}"
            for k, v in self.buttons.model_dump().items()
        ]
        return "\n".join(lines) + "\n"


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return repr(value)


def load_mapping(path: str | Path) -> Mapping:
    """Read and validate a mapping file; every problem is listed with its key."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError([f"cannot read: {exc}"], str(path)) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError([f"not valid TOML: {exc}"], str(path)) from None
    try:
        mapping = Mapping.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(
            [f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()], str(path)
        ) from None
    problems = [
        f"buttons: {a} and {b} are both button {getattr(mapping.buttons, a)}"
        for i, a in enumerate(BUTTONS)
        for b in BUTTONS[i + 1 :]
        if getattr(mapping.buttons, a) is not None
        and getattr(mapping.buttons, a) == getattr(mapping.buttons, b)
    ]
    if problems:
        raise ConfigError(problems, str(path))
    return mapping


def save_mapping(mapping: Mapping, path: str | Path) -> None:
    """Write a mapping file."""
    Path(path).write_text(mapping.to_toml(), encoding="utf-8")


# -- backends ---------------------------------------------------------------------------------
class Backend(Protocol):
    """A source of raw axes and buttons."""

    name: str
    axes: int
    buttons: int

    def read(self, t: float) -> tuple[Sequence[float], Sequence[bool]]:
        """Raw axis values and button states at time ``t`` (s since the start)."""

    def finished(self, t: float) -> bool:
        """True when the source has nothing more to give (a script at its end)."""

    def quit_requested(self) -> bool:
        """True when the user asked to quit outside the mapping (Escape, window closed)."""

    def rumble(self, strength: float, duration: float) -> bool:
        """Shake the device (0..1) if it can; False if it cannot."""

    def close(self) -> None:
        """Release the device; safe twice."""


@dataclass
class Step:
    """From time ``t`` on, these raw axis values and button states hold."""

    t: float
    axes: list[float]
    buttons: list[bool] = field(default_factory=list)


class ScriptedBackend:
    """Timed axis/button values (tests, headless runs); the script ends after ``end`` s."""

    def __init__(
        self,
        steps: Sequence[Step],
        end: float | None = None,
        name: str = "scripted",
        axes: int = 3,
        buttons: int = 6,
    ) -> None:
        self.steps = sorted(steps, key=lambda s: s.t)
        self.name, self.axes, self.buttons = name, axes, buttons
        self.end = end if end is not None else (self.steps[-1].t if self.steps else 0.0)
        self.rumbles: deque[tuple[float, float]] = deque(maxlen=1000)  # the latest

    @classmethod
    def from_toml(cls, path: str | Path) -> ScriptedBackend:
        """A script file: ``end = 2.0`` and ``[[step]]`` tables with t, axes, buttons."""
        try:
            data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
            steps = [
                Step(
                    float(s["t"]),
                    [float(a) for a in s.get("axes", [])],
                    [bool(b) for b in s.get("buttons", [])],
                )
                for s in data["step"]
            ]
        except (OSError, tomllib.TOMLDecodeError, KeyError, TypeError, ValueError) as exc:
            raise ConfigError([f"{type(exc).__name__}: {exc}"], f"input script {path}") from None
        return cls(steps, data.get("end"))

    def read(self, t: float) -> tuple[Sequence[float], Sequence[bool]]:
        """The last step at or before ``t`` (all zero before the first)."""
        axes, buttons = [0.0] * self.axes, [False] * self.buttons
        for step in self.steps:
            if step.t > t + 1e-9:
                break
            axes[: len(step.axes)] = step.axes
            buttons[: len(step.buttons)] = step.buttons
        return axes, buttons

    def finished(self, t: float) -> bool:
        """True after the script's end."""
        return t > self.end + 1e-9

    def quit_requested(self) -> bool:
        """A script quits through its quit button only."""
        return False

    def rumble(self, strength: float, duration: float) -> bool:
        """Recorded, so tests can see the fallback at work."""
        self.rumbles.append((strength, duration))
        return True

    def close(self) -> None:
        """Nothing to release."""


class KeyboardBackend:
    """The terminal as a wheel: keys set virtual axes that fall back when not repeated.

    A terminal reports key presses, not releases; a held key repeats, so a key counts as
    held for ``hold`` seconds after its last repeat. Axes: 0 steering (-1 left .. 1 right),
    1 throttle, 2 brake (0..1); buttons as in ``BUTTONS``.
    """

    name = "keyboard"
    axes = 3
    buttons = 6
    KEYS: dict[str, tuple[Any, ...]] = {
        "w": ("axis", 1, 1.0),
        "s": ("axis", 2, 1.0),
        "a": ("axis", 0, -1.0),
        "d": ("axis", 0, 1.0),
        "e": ("button", 0),
        "q": ("button", 1),
        "h": ("button", 2),
        "c": ("button", 3),
        "i": ("button", 4),
        "x": ("button", 5),
    }

    def __init__(self, hold: float = 0.15) -> None:
        import termios
        import tty

        self.hold = hold
        self._fd = sys.stdin.fileno()
        self._saved = termios.tcgetattr(self._fd)
        tty.setcbreak(self._fd)
        self._last: dict[str, float] = {}
        self._quit = False
        self._closed = False

    def read(self, t: float) -> tuple[Sequence[float], Sequence[bool]]:
        """Take the keys typed since the last read; held keys keep their effect."""
        import select

        now = time.monotonic()
        while select.select([self._fd], [], [], 0)[0]:
            key = os.read(self._fd, 1).decode("latin-1").lower()
            if key == "\x1b":
                self._quit = True
            self._last[key] = now
        axes, buttons = [0.0, 0.0, 0.0], [False] * 6
        for key, action in self.KEYS.items():
            if now - self._last.get(key, -1e9) <= self.hold:
                if action[0] == "axis":
                    axes[action[1]] += action[2]
                else:
                    buttons[action[1]] = True
        return axes, buttons

    def finished(self, t: float) -> bool:
        """The keyboard never runs out."""
        return False

    def quit_requested(self) -> bool:
        """Escape was pressed."""
        return self._quit

    def rumble(self, strength: float, duration: float) -> bool:
        """A keyboard cannot."""
        return False

    def close(self) -> None:
        """Give the terminal its settings back; safe twice."""
        if not self._closed:
            import termios

            self._closed = True
            termios.tcsetattr(self._fd, termios.TCSADRAIN, self._saved)


def _pygame() -> Any:
    """Import pygame with SDL's dummy drivers where there is no display (headless, tests)."""
    if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
        os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
        os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    import pygame

    pygame.init()
    pygame.joystick.init()
    return pygame


def find_devices() -> list[dict[str, Any]]:
    """The joysticks pygame finds (name, axes, buttons); empty without pygame-ce."""
    try:
        pg = _pygame()
    except ImportError:
        return []
    found = []
    for i in range(pg.joystick.get_count()):
        stick = pg.joystick.Joystick(i)
        found.append(
            {
                "index": i,
                "name": stick.get_name(),
                "axes": stick.get_numaxes(),
                "buttons": stick.get_numbuttons(),
                "hats": stick.get_numhats(),
            }
        )
    return found


class PygameBackend:
    """A joystick, gamepad or wheel through pygame-ce; ``device`` picks one by name."""

    def __init__(self, device: str | None = None) -> None:
        pg = self._pg = _pygame()
        sticks = [pg.joystick.Joystick(i) for i in range(pg.joystick.get_count())]
        chosen = [s for s in sticks if device is None or device.lower() in s.get_name().lower()]
        if not chosen:
            names = ", ".join(s.get_name() for s in sticks) or "none"
            raise ConfigError(
                [f"device: no joystick matches {device!r} (found: {names})"], "input device"
            )
        self.stick = chosen[0]
        self.name = self.stick.get_name()
        self.axes, self.buttons = self.stick.get_numaxes(), self.stick.get_numbuttons()
        self._quit = False
        self._closed = False

    def read(self, t: float) -> tuple[Sequence[float], Sequence[bool]]:
        """Pump SDL's events, then read every axis and button."""
        for event in self._pg.event.get():
            if event.type == self._pg.QUIT or (
                event.type == self._pg.KEYDOWN and event.key == self._pg.K_ESCAPE
            ):
                self._quit = True
        return (
            [self.stick.get_axis(i) for i in range(self.axes)],
            [bool(self.stick.get_button(i)) for i in range(self.buttons)],
        )

    def finished(self, t: float) -> bool:
        """A device never runs out."""
        return False

    def quit_requested(self) -> bool:
        """Escape or the window closed."""
        return self._quit

    def rumble(self, strength: float, duration: float) -> bool:
        """SDL rumble, where the device has it."""
        strength = min(max(strength, 0.0), 1.0)
        return bool(self.stick.rumble(strength, strength, max(1, int(duration * 1000))))

    def close(self) -> None:
        """Release the joystick; safe twice."""
        if not self._closed:
            self._closed = True
            self._pg.joystick.quit()


# -- force feedback ---------------------------------------------------------------------------
class EvdevForce:
    """A constant-force effect on a Linux event device that supports it (python-evdev)."""

    def __init__(self, name: str | None) -> None:
        import evdev
        from evdev import ecodes

        self._evdev, self._ec = evdev, ecodes
        for path in evdev.list_devices():
            dev = evdev.InputDevice(path)
            ff = dev.capabilities().get(ecodes.EV_FF, [])
            if ecodes.FF_CONSTANT in ff and (name is None or name.lower() in dev.name.lower()):
                self.device = dev
                self._effect = -1
                return
            dev.close()
        raise LookupError("no event device with a constant-force effect")

    def apply(self, force: float, duration: float) -> None:
        """Upload (or update) and play the constant force; + turns the wheel left."""
        ev, ec = self._evdev, self._ec
        level = int(max(-1.0, min(1.0, force)) * 32767)
        effect = ev.ff.Effect(
            ec.FF_CONSTANT,
            self._effect,
            0xC000,  # direction: pulls towards the left
            ev.ff.Trigger(0, 0),
            ev.ff.Replay(max(1, int(duration * 1000)), 0),
            ev.ff.EffectType(ff_constant_effect=ev.ff.Constant(level, ev.ff.Envelope(0, 0, 0, 0))),
        )
        self._effect = self.device.upload_effect(effect)
        self.device.write(ec.EV_FF, self._effect, 1)

    def close(self) -> None:
        """Release the device."""
        self.device.close()


class ForceFeedbackOutput:
    """ForceFeedback messages to the device: constant force, else rumble, else said once."""

    def __init__(self, backend: Backend, constant: EvdevForce | None = None) -> None:
        self.backend = backend
        self.constant = constant
        self.kind = "constant force" if constant is not None else "rumble"
        self.applied = 0

    @classmethod
    def open(cls, backend: Backend, device: str | None) -> ForceFeedbackOutput:
        """Try evdev's constant force for the device; otherwise rumble (or nothing)."""
        if isinstance(backend, PygameBackend):
            try:
                return cls(backend, EvdevForce(device or backend.name))
            except (ImportError, OSError, LookupError) as exc:
                log.info("input: no constant-force effect (%s); trying rumble", exc)
        return cls(backend)

    def apply(self, message: ForceFeedback) -> None:
        """Play one ForceFeedback message on whatever the device has."""
        if self.kind == "none":
            return
        if self.constant is not None:
            self.constant.apply(message.force, message.duration)
        elif not self.backend.rumble(abs(message.force), message.duration):
            self.kind = "none"
            log.warning(
                "input: %r has neither a constant-force effect nor rumble; force "
                "feedback is ignored",
                self.backend.name,
            )
            return
        self.applied += 1

    def close(self) -> None:
        """Release the effect's device."""
        if self.constant is not None:
            self.constant.close()


# -- calibration --------------------------------------------------------------------------------
def calibration_wizard(
    backend: Backend,
    ask: Callable[[str], object],
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    button_timeout: float = 10.0,
) -> Mapping:
    """The interactive wizard: the user moves each control when asked; returns the mapping.

    ``ask`` shows a prompt and returns once the user is ready (``input`` in a terminal).
    Axes: the one that moves most between rest and full travel, with the raw values at rest
    and at full travel as its range. Buttons: the first one pressed within ``button_timeout``
    seconds, else not mapped.
    """
    start = clock()

    def snapshot() -> tuple[Sequence[float], Sequence[bool]]:
        return backend.read(clock() - start)

    ask("Leave the wheel centred and the pedals released, then press Enter")
    rest, _ = snapshot()
    ask("Turn the wheel fully LEFT and hold it there, then press Enter")
    left, _ = snapshot()
    ask("Turn the wheel fully RIGHT and hold it there, then press Enter")
    right, _ = snapshot()
    steer = max(range(len(rest)), key=lambda i: abs(right[i] - left[i]))
    axes: dict[str, Any] = {
        "steering": AxisMap(axis=steer, dead_zone=0.02, low=left[steer], high=right[steer])
    }
    used = {steer}
    for pedal in ("throttle", "brake"):
        ask(f"Press the {pedal.upper()} pedal fully and hold it, then press Enter")
        full, _ = snapshot()
        free = [i for i in range(len(rest)) if i not in used] or [0]
        axis = max(free, key=lambda i: abs(full[i] - rest[i]))
        used.add(axis)
        axes[pedal] = AxisMap(axis=axis, dead_zone=0.03, low=rest[axis], high=full[axis])
    buttons: dict[str, int | None] = {}
    for action in BUTTONS:
        ask(
            f"Press Enter, then within {button_timeout:g} s the button for "
            f"{action.replace('_', ' ').upper()} (or wait to leave it unmapped)"
        )
        _, before = snapshot()
        deadline, chosen = clock() + button_timeout, None
        while chosen is None and clock() < deadline:
            _, now = snapshot()
            chosen = next(
                (i for i, b in enumerate(now) if b and not before[i] and i not in buttons.values()),
                None,
            )
            sleep(1.0 / POLL_RATE)
        buttons[action] = chosen
    return Mapping(device=backend.name, axes=Axes(**axes), buttons=ButtonMap(**buttons))


# -- the module -------------------------------------------------------------------------------
@dataclass
class DriverState:
    """The mapped controls after one poll."""

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
        -right * mapping.steering_lock_deg / 2 * 3.141592653589793 / 180,
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


Pace = Literal["realtime", "fast"]


class InputModule:
    """The input module on the bus: polls the backend at 100 Hz, sends at 25 Hz.

    Args:
        backend: where the axes and buttons come from.
        mapping: which axis and button does what (checked against the device first).
        pace: ``realtime`` waits for each 10 ms tick; ``fast`` does not (tests).
    """

    def __init__(
        self,
        backend: Backend,
        mapping: Mapping | None = None,
        host: str = "127.0.0.1",
        port: int = DEFAULT_PORT,
        *,
        module_id: int = ModuleId.INPUT,
        vehicle_id: int = ModuleId.VEHICLE,
        visualisation_id: int = ModuleId.VISUALISATION,
        sound_id: int = ModuleId.SOUND,
        codec: Codec | None = None,
        pace: Pace = "realtime",
        force_feedback: ForceFeedbackOutput | None = None,
    ) -> None:
        self.mapping = mapping if mapping is not None else Mapping()
        self.mapping.check_device(backend.name, backend.axes, backend.buttons)
        self.backend = backend
        self.pace = pace
        self.client = BusClient(module_id, host, port, codec=codec)
        self.vehicle_id, self.visualisation_id, self.sound_id = (
            vehicle_id,
            visualisation_id,
            sound_id,
        )
        self.ffb = force_feedback if force_feedback is not None else ForceFeedbackOutput(backend)
        self.ticks = 0
        self.sent: dict[str, int] = {}
        self.received: dict[str, int] = {}
        self.shutdown = False
        self.quit = False
        self._held: set[str] = set()
        self._shift = 0
        self._said_engine = False

    def connect(self, timeout: float = 5.0) -> None:
        """Join the bus (``run`` does it if needed)."""
        self.client.connect(timeout)

    def run(self, duration: float | None = None) -> dict[str, Any]:
        """Poll and send until quit, Shutdown, the script's end, ``duration`` or Ctrl-C."""
        client, period = self.client, 1.0 / POLL_RATE
        try:
            if not client.connected:
                self.connect()
            start = time.monotonic()
            while not (self.shutdown or self.quit):
                t = self.ticks * period
                if self.backend.finished(t) or (duration is not None and t >= duration):
                    break
                self.tick(t)
                self.ticks += 1
                if self.pace == "realtime":
                    while (left := start + self.ticks * period - time.monotonic()) > 0:
                        client.wait(left)
                        self._drain()
                else:
                    client.poll()
                self._drain()
        finally:
            self.close()
        return self.report()

    def tick(self, t: float) -> None:
        """One 10 ms poll: read, act on button presses, every 4th tick send IMFM and IMVM."""
        axes, buttons = self.backend.read(t)
        state = to_driver(self.mapping, axes, buttons, self._held)
        pressed = state.pressed
        if "shift_up" in pressed:
            self._shift = 1
        if "shift_down" in pressed:
            self._shift = -1
        if "horn" in pressed:
            self._send(SoundOnce(self.mapping.horn_file, 255, to=self.sound_id))
        if "camera" in pressed:
            self._send(IMVMCamera(to=self.visualisation_id))
        if "engine_start" in pressed and not self._said_engine:
            self._said_engine = True
            log.warning(
                "input: the bus has no engine-start message yet; the vehicle starts "
                "with its engine running"
            )
        if "quit" in pressed or self.backend.quit_requested():
            self._send(Shutdown(to=self.client.router_id or 0))  # the router tells everyone
            self.quit = True
            return
        if self.ticks % SEND_EVERY == 0:
            self._send(
                IMFM(
                    state.throttle,
                    state.brake,
                    state.steering,
                    self._shift,
                    to=self.vehicle_id,
                    enqueue=bool(self._shift),
                )
            )
            self._send(IMVM(0.0, 0.0, state.angle, to=self.visualisation_id))
            self._shift = 0

    def _drain(self) -> None:
        while (message := self.client.next_message()) is not None:
            name = type(message).__name__
            self.received[name] = self.received.get(name, 0) + 1
            if isinstance(message, ForceFeedback):
                self.ffb.apply(message)
            elif isinstance(message, Shutdown):
                self.shutdown = True

    def _send(self, message: Any) -> None:
        name = type(message).__name__
        self.sent[name] = self.sent.get(name, 0) + 1
        self.client.send(message)

    def report(self) -> dict[str, Any]:
        """What was polled, sent and received."""
        return {
            "module_id": self.client.module_id,
            "device": self.backend.name,
            "polls": self.ticks,
            "sent": dict(self.sent),
            "received": dict(self.received),
            "force_feedback": f"{self.ffb.kind}, {self.ffb.applied} applied",
            "quit": self.quit,
            "shutdown_received": self.shutdown,
            "malformed": self.client.stats.malformed,
        }

    def close(self) -> None:
        """Release the device and leave the bus; safe twice."""
        try:
            self.ffb.close()
            self.backend.close()
        finally:
            self.client.close()


def open_backend(mapping: Mapping, keyboard: bool, script: Path | None) -> Backend:
    """The scripted backend if asked, a joystick if one exists, else the keyboard."""
    if script is not None:
        return ScriptedBackend.from_toml(script)
    if not keyboard:
        try:
            return PygameBackend(mapping.device)
        except ImportError:
            log.warning(
                "input: pygame-ce is not installed (pip install 'vcosim[input]'); "
                "using the keyboard"
            )
        except ConfigError as exc:
            log.warning("input: %s; using the keyboard", exc.problems[0])
    if not sys.stdin.isatty():
        raise ConfigError(
            ["no joystick and no terminal for the keyboard (use --script FILE for a headless run)"],
            "input device",
        )
    log.info(
        "input: keyboard — w/s throttle/brake, a/d steer, e/q shift, h horn, c camera, Esc quit"
    )
    return KeyboardBackend()


def idle(
    host: str, port: int, *, module_id: int, codec: Codec, duration: float | None = None
) -> dict[str, Any]:
    """Stay on the bus without a device until Shutdown, so ``vcosim drive`` runs headless."""
    from vcosim.interrupts import sigterm_as_interrupt

    end = None if duration is None else time.monotonic() + duration
    with sigterm_as_interrupt(), BusClient(module_id, host, port, codec=codec) as client:
        try:
            while end is None or time.monotonic() < end:
                message = client.next_message(timeout=0.5)
                if isinstance(message, Shutdown):
                    return {"device": None, "shutdown_received": True}
        except KeyboardInterrupt:
            pass
    return {"device": None, "shutdown_received": False}
