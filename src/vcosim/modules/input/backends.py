"""Where raw axes and buttons come from: a script, the terminal's keys, or a joystick.

- ``ScriptedBackend``: a list of timed axis/button values, for tests and headless runs.
- ``KeyboardBackend``: the terminal's keys (w/s throttle and brake, a/d steer, e/q shift,
  h horn, c camera, Escape quit), for a machine without a wheel.
- ``PygameBackend``: a joystick, gamepad or wheel through pygame-ce (the ``input`` extra);
  SDL's dummy drivers make it importable headless.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import field
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic.dataclasses import dataclass

from vcosim.config import read_toml, validation_problems
from vcosim.errors import ConfigError
from vcosim.extras import install_command
from vcosim.modules.input.mapping import Mapping

log = logging.getLogger("vcosim.input")

POLL_RATE = 100.0
"""Devices are read at 100 Hz (the module's tick, the wizard's poll)."""


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


# -- a script ---------------------------------------------------------------------------------
@dataclass(config=ConfigDict(extra="forbid"))
class Step:
    """From time ``t`` on, these raw axis values and button states hold."""

    t: float
    axes: list[float] = field(default_factory=list)
    buttons: list[bool] = field(default_factory=list)


class ScriptFile(BaseModel):
    """A script file: ``end = 2.0`` (default: the last step) and ``[[step]]`` tables."""

    model_config = ConfigDict(extra="forbid")

    end: float | None = None
    step: list[Step]


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
        """Read a script file; every problem is listed with its key."""
        source = f"input script {path}"
        data = read_toml(path, source)
        try:
            script = ScriptFile.model_validate(data)
        except ValidationError as exc:
            raise ConfigError(validation_problems(exc), source) from None
        return cls(script.step, script.end)

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


# -- the terminal -----------------------------------------------------------------------------
class KeyboardBackend:
    """The terminal as a wheel: keys set virtual axes that fall back when not repeated.

    A terminal reports key presses, not releases; a held key repeats, so a key counts as
    held for ``hold`` seconds after its last repeat. Axes: 0 steering (-1 left .. 1 right),
    1 throttle, 2 brake (0..1); buttons in the order of the mapping's ``BUTTONS``.
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


# -- a joystick -------------------------------------------------------------------------------
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


def open_backend(mapping: Mapping, keyboard: bool, script: Path | None) -> Backend:
    """The scripted backend if asked, a joystick if one exists, else the keyboard."""
    if script is not None:
        return ScriptedBackend.from_toml(script)
    if not keyboard:
        try:
            return PygameBackend(mapping.device)
        except ImportError:
            log.warning(
                f"input: pygame-ce is not installed ({install_command('input')}); "
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
