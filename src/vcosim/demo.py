"""Where the demo lived before ``vcosim.scenarios``: its names, kept until callers move.

The runs are in ``vcosim.scenarios.demo``, the scripted-driving language in
``vcosim.scenarios.manoeuvres``, figures in ``vcosim.scenarios.metrics`` and
``vcosim.scenarios.plots``, the controller process in ``vcosim.scenarios.harness``, and the
command's console output in ``vcosim.app.demo``. ``run_demo`` here hands over to the latter by
name at call time: this module sits below the command line and may not import it.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from vcosim.scenarios.demo import (
    DURATION,
    EXT_TIME,
    MANOEUVRE,
    SETTLE_BAND,
    CoupledDemo,
    ManoeuvreDemo,
    ProfileCruise,
    SpeedProfile,
    summarize,
)
from vcosim.scenarios.harness import ControllerProcess
from vcosim.scenarios.manoeuvres import (
    LIMIT_FACTOR,
    RECORD_EVERY,
    Phase,
    Run,
    clutch_out,
    combine,
    drive,
    faster_than,
    heading_error,
    heading_reached,
    hold_speed,
    slower_than,
    speed,
    upshift_at,
)
from vcosim.scenarios.metrics import KMH, CouplingTiming, column, settling_time

__all__ = [
    "DURATION",
    "EXT_TIME",
    "KMH",
    "LIMIT_FACTOR",
    "MANOEUVRE",
    "RECORD_EVERY",
    "SETTLE_BAND",
    "ControllerProcess",
    "CoupledDemo",
    "CouplingTiming",
    "ManoeuvreDemo",
    "Phase",
    "ProfileCruise",
    "Run",
    "SpeedProfile",
    "clutch_out",
    "column",
    "combine",
    "drive",
    "faster_than",
    "heading_error",
    "heading_reached",
    "hold_speed",
    "run_demo",
    "settling_time",
    "slower_than",
    "speed",
    "summarize",
    "upshift_at",
]


def run_demo(
    out: Path, vehicle: str = "nightrider", *, manoeuvre: bool = False, console: Any = None
) -> Path:
    """``vcosim demo`` (now ``vcosim.app.demo.run_demo``)."""
    app_demo = importlib.import_module("vcosim.app.demo")
    folder: Path = app_demo.run_demo(out, vehicle, manoeuvre=manoeuvre, console=console)
    return folder
