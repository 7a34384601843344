"""The command line's grammar: one option type per meaning, shared by every command.

An option name means the same thing wherever it appears (docs/cli.md lists them): addresses
are ``HOST:PORT`` (``--bus``, ``--sim``, ``--controller``, ``--listen``), ``--duration`` is
always simulated seconds and ``--wall-time`` wall seconds, ``--ext-time`` is T_ext,
``--timeout`` is how long a silent peer is waited for, ``--json-out`` writes the summary as
JSON. Defaults come from :mod:`vcosim.constants`. Only typer and the standard library are
imported here, so ``vcosim --help`` stays fast.
"""

from __future__ import annotations

import os
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from vcosim.address import AddressError, HostPort
from vcosim.address import parse_address as read_address
from vcosim.config import MAX_DURATION, MAX_FRAME_RATE, MIN_FRAME_RATE
from vcosim.constants import BLOCKING_TIMEOUT, BUS_PORT, EXT_TIME, LOOPBACK

Address = HostPort
"""A UDP or HTTP endpoint: host and port."""


def parse_address(text: str, *, option: str, default_port: int) -> Address:
    """``HOST:PORT``, ``HOST`` or ``:PORT``; the missing part takes the default.

    Raises ``typer.BadParameter`` (exit 2, one line) for anything else.
    """
    try:
        return read_address(text, default_port=default_port, bare_port=True, lowest_port=0)
    except AddressError as exc:
        raise typer.BadParameter(
            exc.host_problem
            or f"{_quoted(text)} is not an address; give HOST:PORT, e.g. {LOOPBACK}:{default_port}",
            param_hint=f"'{option}'",
        ) from None


def _quoted(text: str, most: int = 80) -> str:
    """``text`` as a refusal quotes it: its start, when it is long."""
    return repr(text) if len(text) <= most else f"{text[: most - 3]!r}..."


def positive(value: float | None) -> float | None:
    """Callback: zero or negative durations, rates and steps are usage errors."""
    if value is not None and not value > 0:
        raise typer.BadParameter(f"must be greater than 0, not {value:g}")
    return value


def duration(value: float | None) -> float | None:
    """Callback for run lengths: more than 0, at most ``MAX_DURATION`` (116 days)."""
    positive(value)
    if value is not None and not value <= MAX_DURATION:
        raise typer.BadParameter(f"at most {MAX_DURATION:g} s (116 days), not {value:g}")
    return value


def frame_rate(value: float | None) -> float | None:
    """Callback for ``--frame-rate``: one frame per 10 s to one per physics step."""
    if value is not None and not MIN_FRAME_RATE <= value <= MAX_FRAME_RATE:
        raise typer.BadParameter(
            f"from {MIN_FRAME_RATE:g} to {MAX_FRAME_RATE:g} frames per second, not {value:g}"
        )
    return value


def non_negative(value: float | None) -> float | None:
    """Callback for times that may be zero (a spin, a replay speed)."""
    if value is not None and not value >= 0:
        raise typer.BadParameter(f"must be 0 or more, not {value:g}")
    return value


# -- what runs, and for how long --------------------------------------------------------------
Duration = Annotated[
    float | None,
    typer.Option(
        callback=duration,
        help="Simulated seconds to run.",
        show_default="until Ctrl-C",
    ),
]
WallTime = Annotated[
    float | None,
    typer.Option(
        callback=duration,
        help="Wall-clock seconds to run.",
        show_default="until Shutdown or Ctrl-C",
    ),
]


def _vehicle() -> typer.models.OptionInfo:
    """``--vehicle``'s option, the same in every command (``vcosim sim`` leaves it unsaid)."""
    return typer.Option(help="Vehicle preset name or parameter TOML file.")


VehicleOption = Annotated[str, _vehicle()]
MaybeVehicle = Annotated[str | None, _vehicle()]
TerrainOption = Annotated[
    Path | None,
    typer.Option(
        exists=True,
        dir_okay=False,
        help="The terrain: a height-map picture, an OpenDRIVE road (.xodr, docs/roads.md), "
        "or a TOML of height_map, road_map, friction_map, hill_height, size, friction, road "
        "(docs/viewer.md); flat without one.",
    ),
]
WorldOption = Annotated[
    Path | None,
    typer.Option(
        exists=True,
        dir_okay=False,
        metavar="FILE.toml",
        help="A world of many vehicles, their drivers and its terrain (docs/worlds.md), in "
        "place of --vehicle and --terrain.",
    ),
]
Maps = Annotated[
    list[Path] | None,
    typer.Option(
        exists=True,
        file_okay=False,
        metavar="DIR",
        help="A folder of maps (repeatable): a scenario's LogicFile that names a map "
        "(CARLA's 'Town01') is its DIR/Town01.xodr. Default: VCOSIM_MAPS.",
    ),
]


class EgoDriverKind(str, Enum):
    """``--ego-driver``: who drives a scenario's external ego (docs/scenarios.md)."""

    external = "external"
    route = "route"


EgoDriver = Annotated[
    EgoDriverKind,
    typer.Option(
        "--ego-driver",
        help="Who drives the scenario's external ego: 'external', a controller coupled to it "
        "(sim: yours; scenario survey: the ACC along its lane), or 'route', the built-in "
        "route driver (the IDM along the file's route, else through the places its "
        "storyboard waits for it at, stopping at its end).",
    ),
]


def use_maps(maps: list[Path] | None) -> None:
    """``--maps``: where every OpenSCENARIO read of this process (and its workers) looks.

    The folders go ahead of those ``VCOSIM_MAPS`` already names.
    """
    if maps:
        known = os.environ.get("VCOSIM_MAPS", "")
        os.environ["VCOSIM_MAPS"] = os.pathsep.join([*map(str, maps), *filter(None, [known])])


RunFolder = Annotated[
    Path, typer.Option(help="Folder for the run; a timestamped sub-folder is created.")
]
JsonOut = Annotated[
    Path | None, typer.Option("--json-out", help="Also write the summary as JSON to this file.")
]
FrameRate = Annotated[
    float | None, typer.Option(callback=frame_rate, help="Frames per second in realtime pacing.")
]

# -- the user's code ---------------------------------------------------------------------------
Params = Annotated[
    list[str] | None,
    typer.Option(
        "--param",
        metavar="NAME=VALUE",
        help="A parameter of the controller (repeatable): a keyword argument of your class or "
        "function, a field of an example, a parameter of an FMU. VALUE is read as a number, "
        "true/false, or else text.",
    ),
]


def parse_params(given: list[str] | None, **shorthands: object) -> dict[str, object]:
    """``--param NAME=VALUE`` options (and shorthands such as ``--speed``) as keywords.

    Raises ``typer.BadParameter`` (exit 2) for a malformed one or a name given twice.
    """
    params: dict[str, object] = {k: v for k, v in shorthands.items() if v is not None}
    for text in given or ():
        name, eq, value = text.partition("=")
        name = name.strip()
        if not eq or not name.isidentifier():
            raise typer.BadParameter(
                f"{text!r} is not NAME=VALUE, e.g. speed=15", param_hint="'--param'"
            )
        if name in params:
            twice = f"--{name.replace('_', '-')}" if name in shorthands else "--param"
            raise typer.BadParameter(f"{name} is also given by {twice}", param_hint="'--param'")
        params[name] = _literal(value.strip())
    return params


def _literal(text: str) -> object:
    """A parameter value: an integer, a float, true/false, or the text itself."""
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(text.lower(), text)


# -- the tight coupling -----------------------------------------------------------------------
ExtTime = Annotated[
    float | None,
    typer.Option(
        callback=positive,
        help="T_ext: the controller's sample time and computation budget per message (s), "
        "as in BeamNG's coupling.",
        show_default=f"{EXT_TIME:g}",
    ),
]
Timeout = Annotated[
    float | None,
    typer.Option(
        callback=positive,
        help="A silent peer is waited for this long (s); then the link is reset.",
    ),
]
DEFAULT_TIMEOUT = BLOCKING_TIMEOUT
Spin = Annotated[
    float | None,
    typer.Option(
        callback=non_negative,
        help="Busy-poll this long before sleeping in a receive (s): faster lock-step, one busy "
        "core.",
    ),
]
Listen = Annotated[
    str | None,
    typer.Option(
        metavar="HOST:PORT",
        help="The address this program binds; loopback unless you open it on purpose.",
    ),
]
Allow = Annotated[
    list[str] | None,
    typer.Option(
        metavar="HOST[:PORT]",
        help="Also accept datagrams from this host (any port), or exactly from HOST:PORT "
        "(repeatable, or comma-separated), until a peer is heard.",
    ),
]
ExactPeer = Annotated[
    bool | None,
    typer.Option(
        help="Hear only the peer's own HOST:PORT (and --allow), not every port of its host. "
        "vcosim's simulator and controller send from the port they listen on; BeamNG's "
        "coupling controller, S-functions and FMUs send from another.",
    ),
]
InterfaceCsv = Annotated[
    Path | None,
    typer.Option(
        exists=True,
        dir_okay=False,
        help="A BeamNG interface CSV: exactly the signals it lists, each way, in its order; its "
        "connection rows set timing, addresses and ports unless options do.",
    ),
]

# -- the NightRider bus -----------------------------------------------------------------------
BUS_DEFAULT = f"{LOOPBACK}:{BUS_PORT}"
Bus = Annotated[
    str,
    typer.Option(metavar="HOST:PORT", help="The NightRider bus router's handshake address."),
]
BusModuleId = Annotated[int | None, typer.Option("--id", help="This module's id on the bus.")]
BusSymbols = Annotated[
    str,
    typer.Option(
        help="Message symbols: start, separator, common-part end, end (every module must agree)."
    ),
]
BusMaxLength = Annotated[
    int, typer.Option(help="Longest message in bytes (every module must agree).")
]


def bus_codec(symbols: str, max_length: int):  # -> vcosim.bus.codec.Codec
    """The bus codec of the shared options (imported only when a bus command runs)."""
    from vcosim.bus.codec import Codec

    return Codec.from_symbols(symbols, max_length)


def bus_address(text: str) -> Address:
    """The router's address from ``--bus``."""
    return parse_address(text, option="--bus", default_port=BUS_PORT)


# -- real time (hardware in the loop) ---------------------------------------------------------
RealtimePriority = Annotated[
    bool,
    typer.Option(
        "--realtime-priority",
        help="Run at SCHED_FIFO priority with all memory locked (mlockall), where the system "
        "allows it (root, CAP_SYS_NICE and CAP_IPC_LOCK, or limits.conf); else one note says what "
        "was refused and the run goes on as before.",
    ),
]
Cpu = Annotated[
    int | None,
    typer.Option(
        "--cpu",
        min=0,
        metavar="N",
        help="Run on CPU N only (best one kept free of other work, e.g. isolcpus).",
    ),
]


class OnLatePolicy(str, Enum):
    """``--on-late``: what a late real-time frame does (``vcosim.sim.pacing.OnLate``)."""

    slow = "slow"
    skip = "skip"
    stop = "stop"


OnLate = Annotated[
    OnLatePolicy | None,
    typer.Option(
        "--on-late",
        help="What a real-time frame that ends late does: slow (catch up, then slow motion "
        "beyond 50 ms behind, as BeamNG), skip (drop the frames it overran) or stop (end the "
        "run, exit 1). Counts and lateness percentiles are in the summary.",
    ),
]
