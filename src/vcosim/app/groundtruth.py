"""The ground-truth options (``--osi``, ``--osi-trace``, ``--foxglove``, their rates).

Defined once for every command that runs a simulation, and turned into ``GroundTruthOutputs``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from vcosim.app.options import parse_address, positive
from vcosim.constants import FOXGLOVE_PORT, LOOPBACK, OSI_PORT

if TYPE_CHECKING:
    from vcosim.groundtruth.outputs import GroundTruthOutputs


Osi = Annotated[
    str | None,
    typer.Option(
        metavar="udp://HOST:PORT|esmini://HOST:PORT",
        help="Send ASAM OSI: udp:// the ego's SensorView, with every vehicle's GroundTruth, one "
        "message per datagram (64 kB at most); esmini:// the GroundTruth of any size in "
        "esmini's numbered fragments (the `osi` extra; host default "
        f"{LOOPBACK}, port {OSI_PORT}).",
    ),
]
OsiTrace = Annotated[
    Path | None,
    typer.Option(
        metavar="FILE.osi|FILE.mcap",
        help="Write an OSI trace: .osi (SensorView, length-prefixed) or .mcap (OSI "
        "multi-channel: GroundTruth and SensorView).",
    ),
]
OsiRate = Annotated[
    float,
    typer.Option(
        callback=positive, help="OSI frames per simulated second (2000 / a whole number)."
    ),
]
Foxglove = Annotated[
    str | None,
    typer.Option(
        metavar="[HOST:]PORT",
        help="Serve the run live to the Foxglove app (the `foxglove` extra): the vehicles as "
        "boxes, their frames and every signal; loopback unless a host is given.",
    ),
]
FoxgloveAllow = Annotated[
    list[str] | None,
    typer.Option(
        metavar="ORIGIN",
        help="Also let pages from this origin (http://HOST:PORT) open --foxglove (repeatable; "
        "default: none but this server's own, and https://app.foxglove.dev).",
    ),
]
FoxgloveRate = Annotated[
    float,
    typer.Option(
        callback=positive, help="Foxglove updates per simulated second (2000 / a whole number)."
    ),
]


def ground_truth_outputs(
    *,
    osi: str | None,
    osi_trace: Path | None,
    osi_rate: float,
    foxglove: str | None,
    foxglove_allow: list[str] | None,
    foxglove_rate: float,
    record: Path | None = None,
    record_every: int = 20,
) -> GroundTruthOutputs:
    """The options as ``GroundTruthOutputs``, checked (missing extra, rates) before the run."""
    from vcosim.groundtruth.osi import parse_udp_url, udp_framing
    from vcosim.groundtruth.outputs import GroundTruthOutputs

    live = None
    if foxglove is not None:
        address = parse_address(foxglove, option="--foxglove", default_port=FOXGLOVE_PORT)
        live = (address.host, address.port)
    if foxglove_allow and foxglove is None:
        raise typer.BadParameter(
            "there is no --foxglove to allow into", param_hint="'--foxglove-allow'"
        )
    outputs = GroundTruthOutputs(
        osi=None if osi is None else parse_udp_url(osi),
        osi_framing="datagram" if osi is None else udp_framing(osi),
        osi_trace=osi_trace,
        osi_rate=osi_rate,
        foxglove=live,
        foxglove_allow=tuple(foxglove_allow or ()),
        foxglove_rate=foxglove_rate,
        record=record,
        record_every=record_every,
    )
    outputs.check()
    return outputs


def show_trace(path: Path) -> None:
    """``vcosim analyze FILE.osi|FILE.mcap``: an OSI trace's frames, span, rate and vehicles."""
    from rich.table import Table

    from vcosim.app.console import results
    from vcosim.extras import require

    require("osi", "vcosim analyze FILE.osi")
    from vcosim.groundtruth.osi_io import summarize_trace

    summary = summarize_trace(path)
    table = Table(title=f"vcosim analyze: OSI trace {path}", show_header=False)
    table.add_column(style="bold")
    table.add_column()
    table.add_row("SensorView frames", str(summary.frames))
    table.add_row("simulated time", f"{summary.start:.3f} to {summary.end:.3f} s")
    table.add_row("rate", f"{summary.rate_hz:g} Hz")
    names = list(summary.vehicles.values())
    shown = ", ".join(names[:10]) + (f" and {len(names) - 10} more" if len(names) > 10 else "")
    table.add_row("vehicles", f"{len(names)}: {shown}")
    host = summary.vehicles.get(summary.host_vehicle_id or 0, "?")
    table.add_row("host vehicle", f"{summary.host_vehicle_id} ({host})")
    results.print(table)
