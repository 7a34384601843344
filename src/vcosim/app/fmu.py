"""``vcosim fmu``: build FMI co-simulation FMUs of the vehicle and of the controller side."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from vcosim.app.console import note
from vcosim.app.options import ExtTime, InterfaceCsv, VehicleOption
from vcosim.app.simulator import Gearbox
from vcosim.extras import require

fmu_app = typer.Typer(
    help="Build FMI co-simulation FMUs: the vehicle itself, or a controller side that drives "
    "a running simulator. The importing host needs Python with vcosim (docs/fmi.md).",
    no_args_is_help=True,
)


class FmiVersion(str, Enum):
    """The FMI standard an FMU follows."""

    two = "2"
    three = "3"


OutFile = Annotated[
    Path, typer.Argument(metavar="OUT.fmu", dir_okay=False, help="The FMU file to write.")
]
Fmi = Annotated[
    FmiVersion, typer.Option("--fmi", help="FMI 2.0 (pythonfmu) or FMI 3.0 (pythonfmu3).")
]


def _needs_builder(version: FmiVersion) -> None:
    """Refuse up front, as a usage error, when the FMU builder is not installed."""
    library = "pythonfmu" if version is FmiVersion.two else "pythonfmu3"
    require("fmi", f"building FMI {version.value} FMUs", modules=(library,))


@fmu_app.command("vehicle")
def vehicle(
    out: OutFile,
    vehicle: VehicleOption = "nightrider",
    fmi: Fmi = FmiVersion.two,
    gearbox: Annotated[
        Gearbox, typer.Option(help="automatic: the master needs only pedals and steering.")
    ] = Gearbox.automatic,
) -> None:
    """The vehicle as a co-simulation FMU: 0.5 ms physics, any multiple as communication step."""
    from vcosim.fmi.build import build_vehicle_fmu
    from vcosim.fmi.metadata import INPUTS, OUTPUTS, PARAMETERS

    _needs_builder(fmi)
    path = build_vehicle_fmu(
        out, vehicle=vehicle, fmi_version=int(fmi.value), automatic=gearbox is Gearbox.automatic
    )
    note(
        f"wrote {path}: FMI {fmi.value} co-simulation, {len(INPUTS)} inputs, {len(OUTPUTS)} "
        f"outputs, {len(PARAMETERS) + 2} parameters; the importing host needs Python with vcosim"
    )


@fmu_app.command("coupling")
def coupling(
    out: OutFile,
    ext_time: ExtTime = None,
    interface: InterfaceCsv = None,
    fmi: Fmi = FmiVersion.two,
) -> None:
    """The controller side of the tight coupling as an FMU: a master drives vcosim sim or BeamNG.

    One message per communication step, which must equal --ext-time (the simulator's).
    """
    from vcosim.fmi.build import build_coupling_fmu

    _needs_builder(fmi)
    path = build_coupling_fmu(
        out, ext_time=ext_time, interface=interface, fmi_version=int(fmi.value)
    )
    note(
        f"wrote {path}: FMI {fmi.value} co-simulation; its communication step is the "
        "simulator's --ext-time; the importing host needs Python with vcosim"
    )
