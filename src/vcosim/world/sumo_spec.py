"""The ``[sumo]`` section of a world file: which SUMO scenario runs beside the world, and how.

A leaf module (pydantic only), so a world file is checked without SUMO installed.
"""

from __future__ import annotations

from pathlib import PurePath
from typing import Annotated, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from vcosim.address import AddressError, parse_address
from vcosim.config import Options
from vcosim.constants import PHYSICS_DT

OptionKind = Literal["flag", "value", "output", "input"]
FILE_OPTIONS: dict[str, OptionKind] = {
    # how SUMO moves its cars
    "--default.action-step-length": "value", "--default.speeddev": "value",
    "--default.carfollowmodel": "value", "--default.emergencydecel": "value",
    "--lateral-resolution": "value", "--step-method.ballistic": "flag",
    "--time-to-teleport": "value", "--time-to-teleport.highways": "value",
    "--time-to-impatience": "value", "--max-depart-delay": "value", "--scale": "value",
    "--eager-insert": "flag", "--ignore-route-errors": "flag",
    "--ignore-junction-blocker": "value", "--collision.action": "value",
    "--collision.check-junctions": "flag", "--collision.mingap-factor": "value",
    "--routing-algorithm": "value", "--device.rerouting.probability": "value",
    "--device.rerouting.period": "value", "--tls.all-off": "flag",
    "--begin": "value", "-b": "value", "--end": "value", "-e": "value",
    "--seed": "value", "--random": "flag", "--thread-rngs": "value", "--threads": "value",
    # what SUMO says and writes (below the run's folder)
    "--no-warnings": "flag", "-W": "flag", "--no-step-log": "flag", "--verbose": "flag",
    "-v": "flag", "--step-log.period": "value", "--precision": "value",
    "--fcd-output.attributes": "value", "--fcd-output.geo": "flag",
    "--fcd-output": "output", "--tripinfo-output": "output", "--summary-output": "output",
    "--vehroute-output": "output", "--collision-output": "output",
    "--statistic-output": "output", "--emission-output": "output",
    "--lanechange-output": "output", "--netstate-dump": "output", "--queue-output": "output",
    "--full-output": "output", "--log": "output", "-l": "output", "--message-log": "output",
    "--error-log": "output",
    # what SUMO reads
    "--additional-files": "input", "-a": "input",
}  # fmt: skip
"""The SUMO options a world or run file may give, and what each takes (docs/traffic.md).

A file is data: it may not make SUMO write where it likes (``--save-configuration``,
an output path outside the run's folder) or run anything. The Python API takes any option.
"""
NEVER = ("--save-configuration", "-C", "--save-template", "--save-schema")
"""Options that make SUMO write a file and exit instead of running: refused everywhere."""
FROM_FILE = {"file": True}
"""The validation context of a section read from a file (``SumoSpec.options`` checked)."""


def file_option_problems(options: list[str]) -> list[str]:
    """Why each of ``options`` may not be given in a file (none: they may).

    Output paths must be relative and stay below the folder the run starts in.
    """
    problems: list[str] = []
    at = 0
    while at < len(options):
        word = options[at]
        at += 1
        name, equals, value = word.partition("=")
        kind = FILE_OPTIONS.get(name)
        if kind is None:
            said = repr(word) if len(word) <= 60 else f"{word[:57]!r}..."
            problems.append(f"{said} is not an option a file may give")
            if at < len(options) and not options[at].startswith("-"):
                at += 1  # its value
            continue
        if kind == "flag":
            if not equals and at < len(options) and options[at] in ("true", "false"):
                at += 1
            continue
        if not equals:
            value = options[at] if at < len(options) else ""
            at += 1
        if not value:
            problems.append(f"{name} needs a value")
        elif kind == "output":
            path = PurePath(value)
            if path.is_absolute() or ".." in path.parts or value.startswith("~"):
                problems.append(
                    f"{name} {value[:60]!r}: a file writes only below the run's folder "
                    "(a relative path without '..')"
                )
    return problems


class SumoSpec(Options):
    """SUMO in lock-step with the world: its scenario, step, seed and the vehicles it sees.

    ``config`` is a ``.sumocfg`` (relative to the world file); ``host`` (``HOST:PORT``)
    instead reaches a SUMO already running with ``--remote-port`` over TraCI; ``road``
    instead makes SUMO's network of the world's OpenDRIVE road (``terrain.road``, converted
    by netconvert, ``vcosim.traffic.opendrive``), its traffic from ``route_files``.
    """

    config: str | None = None
    step_length: Annotated[float, Field(gt=0, le=1.0)] = 0.01  # s, a whole number of steps
    seed: int = Field(default=0, ge=0)
    host: str | None = None
    road: bool = False  # SUMO's network made of the world's OpenDRIVE road
    route_files: list[str] = Field(default_factory=list)  # SUMO's traffic on that network
    vehicles: list[str] | None = None  # world vehicles SUMO sees (None: every one)
    radius: Annotated[float, Field(gt=0)] | None = None  # m: only SUMO's cars this near ours
    routes: dict[str, list[str]] = Field(default_factory=dict)  # a world vehicle's SUMO edges
    options: list[str] = Field(default_factory=list)  # more of SUMO's command-line options

    @field_validator("step_length")
    @classmethod
    def _whole_steps(cls, value: float) -> float:
        steps = value / PHYSICS_DT
        if abs(steps - round(steps)) > 1e-6:
            raise ValueError(f"must be a whole number of {PHYSICS_DT} s physics steps")
        return value

    @field_validator("host")
    @classmethod
    def _host_port(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                parse_address(value, default_host=None)
            except AddressError as exc:
                raise ValueError(
                    exc.host_problem or "give HOST:PORT of a SUMO started with --remote-port"
                ) from None
        return value

    @field_validator("options")
    @classmethod
    def _options_of_a_file(cls, options: list[str], info: ValidationInfo) -> list[str]:
        """A file's options limited to ``FILE_OPTIONS``; none may make SUMO exit at once."""
        if isinstance(info.context, dict) and info.context.get("file"):
            problems = file_option_problems(options)
            if problems:
                listed = "; ".join(problems)
                raise ValueError(f"{listed} (docs/traffic.md lists the options a file may give)")
        never = [w for w in options if w.partition("=")[0] in NEVER]
        if never:
            raise ValueError(
                f"{never[0]}: SUMO would save its configuration and exit instead of running"
            )
        return options

    @model_validator(mode="after")
    def _one_source(self) -> SumoSpec:
        """A scenario comes from somewhere: a file here, the world's road, or a SUMO elsewhere."""
        if sum((self.config is not None, self.host is not None, self.road)) != 1:
            raise ValueError("give one of config = FILE.sumocfg, host = HOST:PORT or road = true")
        if self.route_files and not self.road:
            raise ValueError("route_files go with road = true (a .sumocfg names its own)")
        return self

    @property
    def period_steps(self) -> int:
        """Physics steps per SUMO step."""
        return round(self.step_length / PHYSICS_DT)
