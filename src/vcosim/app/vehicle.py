"""``vcosim vehicle``: what a vehicle is like; ``report`` writes its handling datasheet."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from vcosim.app.console import console, note, results, save_json, settings, table
from vcosim.app.options import JsonOut, VehicleOption

vehicle_app = typer.Typer(
    help="The vehicle on its own: standard manoeuvres and its datasheet.",
    no_args_is_help=True,
)


@vehicle_app.command("report")
def report(
    vehicle: VehicleOption = "nightrider",
    out: Annotated[
        Path, typer.Option(help="Folder for the datasheet (JSON, HTML, Markdown, PNGs).")
    ] = Path("datasheets"),
    json_out: JsonOut = None,
    quick: Annotated[
        bool,
        typer.Option(
            "--quick", help="Shorter manoeuvres and fewer points (a check, not a datasheet)."
        ),
    ] = False,
) -> None:
    """Run the standard manoeuvres on a vehicle and on CommonRoad's BMW 320i.

    ISO 4138 steady-state circle, ISO 7401 step steer, yaw-rate frequency
    response, FMVSS 126 sine with dwell, and the straight line (0-100,
    80-120 in top gear, top speed, braking with and without ABS,
    coast-down, gradeability), each figure beside the range typical of a
    passenger car. Writes OUT/<vehicle>.json, .html, .md and the plots
    (docs/datasheet.md).
    """
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from vcosim.datasheet import Plan, build_datasheet
    from vcosim.datasheet.output import write_datasheet
    from vcosim.datasheet.sheet import STAGES
    from vcosim.vehicle.vehicle import resolve_params

    params = resolve_params(vehicle)  # a bad preset or file ends here, before anything runs
    name = Path(vehicle).stem if vehicle.endswith(".toml") else vehicle
    bar = Progress(
        TextColumn("{task.description:<36}"),
        BarColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=settings.quiet,
    )
    with bar:
        task = bar.add_task("starting", total=2 * len(STAGES) + 1)

        def tick(stage: str) -> None:
            bar.update(task, description=stage, completed=bar.tasks[0].completed + 1)

        sheet = build_datasheet(params, Plan.make(quick), tick, name=name)
        bar.update(task, description="plots and report", completed=2 * len(STAGES))
        command = f"vcosim vehicle report --vehicle {vehicle} --out {out}"
        command += " --quick" if quick else ""
        files = write_datasheet(sheet, out, command)
    data = sheet.to_dict()
    results.print(table(f"{name} beside CommonRoad's BMW 320i (linear range)", _agreement(data)))
    results.print(table(f"{name}: outside the typical range", data["outside_range"] or {"": "—"}))
    note(f"datasheet of {name} in {sheet.seconds:.0f} s: {files['html']} and {files['markdown']}")
    save_json(data, json_out)


def _agreement(data: dict[str, object]) -> dict[str, str]:
    comparison = data["comparison"]
    assert isinstance(comparison, dict)
    return {
        name: f"{c['vcosim']:.3g} vs {c['commonroad']:.3g} ({c['difference_percent']:+.0f} %, "
        f"target ± {c['target_percent']:g} %)"
        for name, c in comparison.items()
    }
