"""``vcosim fmu``: build FMI co-simulation FMUs of the vehicle and of the controller side."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from vcosim.app.console import note, results, setup_logging
from vcosim.app.options import ExtTime, InterfaceCsv, TerrainOption, VehicleOption
from vcosim.extras import require
from vcosim.vehicle.gearbox import Gearbox

fmu_app = typer.Typer(
    help="Build FMI co-simulation FMUs: the vehicle itself, or a controller side that drives "
    "a running simulator (docs/fmi.md says what each needs in the importing host).",
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
    FmiVersion,
    typer.Option(
        "--fmi",
        help="FMI 2.0 or FMI 3.0 (native either way: no Python where the FMU runs).",
    ),
]


def _needs_builder(version: FmiVersion) -> None:
    """Refuse up front, as a usage error, when zig's compiler or FMPy's FMI headers are absent."""
    require("fmi", f"building FMI {version.value} FMUs", modules=("ziglang", "fmpy"))


@fmu_app.command("vehicle")
def vehicle(
    out: OutFile,
    vehicle: VehicleOption = "nightrider",
    fmi: Fmi = FmiVersion.two,
    gearbox: Annotated[
        Gearbox, typer.Option(help="automatic: the master needs only pedals and steering.")
    ] = Gearbox.automatic,
    terrain: TerrainOption = None,
) -> None:
    """The vehicle as a co-simulation FMU: 0.5 ms physics, any multiple as communication step.

    With --terrain the FMU drives on that ground (compiled in), as vcosim sim --terrain does.
    """
    from vcosim.fmi.build import build_vehicle_fmu

    _needs_builder(fmi)
    setup_logging()
    path = build_vehicle_fmu(
        out,
        vehicle=vehicle,
        fmi_version=int(fmi.value),
        automatic=gearbox is Gearbox.automatic,
        terrain=terrain,
    )
    results.print(describe_fmu(path), highlight=False, soft_wrap=True)
    note("native: binaries for linux64 and win64; the importing host needs no Python")


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
    setup_logging()
    path = build_coupling_fmu(
        out, ext_time=ext_time, interface=interface, fmi_version=int(fmi.value)
    )
    results.print(describe_fmu(path), highlight=False, soft_wrap=True)
    note(
        "its communication step must be the simulator's --ext-time; native: the importing "
        "host needs no Python"
    )


def describe_fmu(path: Path) -> str:
    """What the FMU file declares, read back from it: FMI version, inputs, outputs, step.

    Read from the file rather than from what was asked, so the line says what a master sees.
    """
    import json
    import zipfile
    from collections import Counter
    from xml.etree import ElementTree

    from vcosim.fmi.build import CONFIG_FILE

    with zipfile.ZipFile(path) as archive:
        model = ElementTree.fromstring(archive.read("modelDescription.xml"))
        names = archive.namelist()
        config = (
            json.loads(archive.read(f"resources/{CONFIG_FILE}"))
            if f"resources/{CONFIG_FILE}" in names
            else {}
        )
    variables = model.find("ModelVariables")
    causes = Counter(v.get("causality", "local") for v in ([] if variables is None else variables))
    step = f", communication step {config['step']:g} s" if "step" in config else ""
    return (
        f"wrote {path}: FMI {model.get('fmiVersion')} co-simulation FMU, {causes['input']} "
        f"inputs, {causes['output']} outputs, {causes['parameter']} parameters{step}"
    )
