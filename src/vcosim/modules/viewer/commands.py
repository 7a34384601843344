"""A page's commands as bus messages: the page never speaks bus text itself.

Commands are JSON objects from the websocket: ``input`` (throttle, brake, steering 0-255 and
a shift -1..1), ``camera``, ``horn`` and ``ground`` (four heights and four frictions, FL FR RL
RR). Every field is checked, so a bad page gets an error frame instead of ending the viewer.
"""

from __future__ import annotations

import math
from typing import Any

from vcosim.bus.catalogue import IMFM, VMFM, IMVMCamera, Message, ModuleId, SoundOnce

HORN = "horn.wav"
KINDS = ("input", "camera", "horn", "ground")


def _byte(value: Any, name: str, low: int = 0, high: int = 255) -> int:
    """A page's integer field, checked."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{name} must be a number, got {value!r}")
    v = int(round(value))
    if not low <= v <= high:
        raise ValueError(f"{name} {v} is out of range {low}..{high}")
    return v


def page_command(cmd: dict[str, Any], *, viewer_id: int, send_ground: bool) -> Message | None:
    """The bus message for one command; None for ground reports nobody asked for.

    Raises:
        ValueError, KeyError, TypeError: the command is not one the page may send.
    """
    kind = cmd.get("type")
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
    if kind == "ground":
        if not send_ground:
            return None
        h, mu = cmd["height"], cmd["friction"]
        if len(h) != 4 or len(mu) != 4:
            raise ValueError("ground needs four heights and four frictions (FL FR RL RR)")
        return VMFM(*map(float, h), *map(float, mu), to=ModuleId.VEHICLE)
    raise ValueError(f"unknown command type {kind!r} (known: {', '.join(KINDS)})")
