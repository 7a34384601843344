"""A page's commands as bus messages: the page never speaks bus text itself.

Commands are JSON objects from the websocket: ``input`` (throttle, brake, steering 0-255 and
a shift -1..1), ``camera``, ``horn`` and ``ground`` (four heights and four frictions, FL FR RL
RR). :func:`decode_command` is the one boundary for bytes from a page: whatever arrives, it
returns a message or raises :class:`CommandError` with a reason the viewer counts, so a bad
page gets an error frame instead of ending the viewer.
"""

from __future__ import annotations

import json
import math
from typing import Any

from vcosim.bus.catalogue import IMFM, VMFM, IMVMCamera, Message, ModuleId, SoundOnce
from vcosim.errors import ProtocolError

HORN = "horn.wav"
KINDS = ("input", "camera", "horn", "ground")
FIELDS = {
    "input": {"type", "throttle", "brake", "steering", "shift"},
    "camera": {"type"},
    "horn": {"type"},
    "ground": {"type", "height", "friction"},
}
MAX_COMMAND_BYTES = 4096
"""Longest message a page may send; the longest real one (ground) is about 200 bytes."""
GROUND_HEIGHT = 10_000.0
"""Largest ground height (m, either sign) a page may report."""
GROUND_FRICTION = 5.0
"""Largest friction coefficient a page may report."""


class CommandError(ProtocolError, ValueError):
    """A page's message is not a command; ``reason`` is what the viewer counts it under."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason


def _no_constants(name: str) -> Any:
    raise CommandError("json", f"{name} is not a number a page may send")


def decode_command(data: str | bytes, *, viewer_id: int, send_ground: bool) -> Message | None:
    """The bus message for one websocket message; None for ground nobody asked for.

    Raises:
        CommandError: anything else, whatever the bytes (no other exception escapes).
    """
    try:
        if len(data) > MAX_COMMAND_BYTES:
            raise CommandError("too long", f"a command is at most {MAX_COMMAND_BYTES} bytes")
        try:
            cmd = json.loads(data, parse_constant=_no_constants)
        except RecursionError:
            raise CommandError("json", "JSON nested too deep") from None
        except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, a too long integer
            raise CommandError("json", f"not JSON: {exc}") from None
        if not isinstance(cmd, dict):
            raise CommandError(
                "not an object", f"a command is a JSON object, got {json.dumps(cmd):.40}"
            )
        return page_command(cmd, viewer_id=viewer_id, send_ground=send_ground)
    except CommandError:
        raise
    except Exception as exc:  # the boundary: nothing a page sends may end the viewer
        raise CommandError("invalid", f"{type(exc).__name__}: {exc}"[:200]) from None


def _number(value: Any, name: str) -> float:
    """A page's numeric field: a finite number of sensible size (never a bool)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise CommandError("field", f"{name} must be a number, got {value!r:.40}")
    if isinstance(value, int) and abs(value) > 10**12:  # float() of a huge one overflows
        raise CommandError("field", f"{name} must be a finite number, got {len(str(value))} digits")
    if not math.isfinite(value):
        raise CommandError("field", f"{name} must be a finite number, got {value!r}")
    return float(value)


def _within(value: Any, name: str, low: float, high: float) -> float:
    """A page's numeric field within [low, high]."""
    v = _number(value, name)
    if not low <= v <= high:
        raise CommandError("field", f"{name} {v:g} is out of range {low:g}..{high:g}")
    return v


def _byte(value: Any, name: str, low: int = 0, high: int = 255) -> int:
    """A page's integer field (fractions round)."""
    v = round(_number(value, name))
    if not low <= v <= high:
        raise CommandError("field", f"{name} {v} is out of range {low}..{high}")
    return v


def _four(cmd: dict[str, Any], name: str, low: float, high: float) -> list[float]:
    values = cmd[name]
    if not isinstance(values, list) or len(values) != 4:
        raise CommandError("field", "ground needs four heights and four frictions (FL FR RL RR)")
    return [_within(v, f"{name}[{n}]", low, high) for n, v in enumerate(values)]


def page_command(cmd: dict[str, Any], *, viewer_id: int, send_ground: bool) -> Message | None:
    """The bus message for one decoded command; None for ground reports nobody asked for.

    Raises:
        CommandError: the command is not one the page may send (a ``ValueError``).
    """
    kind = cmd.get("type")
    if not isinstance(kind, str) or kind not in FIELDS:
        raise CommandError(
            "unknown", f"unknown command type {kind!r:.40} (known: {', '.join(KINDS)})"
        )
    if unknown := set(cmd) - FIELDS[kind]:
        raise CommandError("field", f"{kind} has no field {sorted(map(str, unknown))[0]!r:.40}")
    if missing := sorted(FIELDS[kind] - {"shift"} - set(cmd)):
        raise CommandError("field", f"{kind} needs {', '.join(missing)}")
    if kind == "input":
        shift = _byte(cmd.get("shift", 0), "shift", -1, 1)
        return IMFM(
            _byte(cmd["throttle"], "throttle"),
            _byte(cmd["brake"], "brake"),
            _byte(cmd["steering"], "steering"),
            shift,
            to=ModuleId.VEHICLE,
            enqueue=shift != 0,
        )
    if kind == "camera":
        return IMVMCamera(to=viewer_id)  # comes back: one path for every camera button
    if kind == "horn":
        return SoundOnce(HORN, 255, to=ModuleId.SOUND)
    if not send_ground:
        return None
    heights = _four(cmd, "height", -GROUND_HEIGHT, GROUND_HEIGHT)
    frictions = _four(cmd, "friction", 0.0, GROUND_FRICTION)
    return VMFM(*heights, *frictions, to=ModuleId.VEHICLE)
