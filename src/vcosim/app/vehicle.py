"""``vcosim vehicle``: what a vehicle is like; ``report`` writes its handling datasheet."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from vcosim.app.console import (
    console,
    note,
    results,
    save_json,
    settings,
    setup_logging,
    table,
)
from vcosim.app.options import JsonOut, VehicleOption
from vcosim.extras import require

if TYPE_CHECKING:
    from vcosim.vehicle import VehicleParams

vehicle_app = typer.Typer(
    help="The vehicle on its own: standard manoeuvres and its datasheet.",
    no_args_is_help=True,
)


@vehicle_app.command("report")
def report(
    ctx: typer.Context,
    vehicle: VehicleOption = "nightrider",
    out: Annotated[
        Path | None,
        typer.Option(
            help="Folder for the datasheet (JSON, HTML, Markdown, PNGs).",
            show_default="datasheets; docs/vehicles with --docs",
        ),
    ] = None,
    json_out: JsonOut = None,
    quick: Annotated[
        bool,
        typer.Option(
            "--quick", help="Shorter manoeuvres and fewer points (a check, not a datasheet)."
        ),
    ] = False,
    every: Annotated[
        bool, typer.Option("--all", help="Every built-in preset, one after another.")
    ] = False,
    docs: Annotated[
        bool,
        typer.Option(
            "--docs",
            help="Run in a vcosim checkout: write into docs/vehicles/ and rewrite the "
            "figures of docs/*.md from its JSON files.",
        ),
    ] = False,
) -> None:
    """Run the standard manoeuvres on a vehicle and on CommonRoad's BMW 320i.

    ISO 4138 steady-state circle, ISO 7401 step steer, yaw-rate frequency
    response, FMVSS 126 sine with dwell, and the straight line (0-100 with
    either gearbox, 80-120 in top gear, top speed, peak engine power,
    gradeability driven up ramps, braking with and without ABS,
    coast-down) and the automatic's shift quality (part-load upshifts, coast
    downshifts, the garage shift), each figure beside the range typical of a
    passenger car.
    Writes OUT/<vehicle>.json, .html, .md and the plots
    (docs/datasheet.md). `vcosim vehicle report --all --docs` regenerates
    every preset's datasheet and the figures the docs quote from them.
    """
    from vcosim.datasheet import docs as doc_pages
    from vcosim.vehicle.vehicle import resolve_params

    require("datasheet", "vcosim vehicle report")
    setup_logging()
    source = ctx.get_parameter_source("vehicle")  # (typer's own click: compare by name)
    if every and source is not None and source.name != "DEFAULT":
        raise typer.BadParameter("--all runs every preset; leave out --vehicle", param_hint="--all")
    if docs and not all((Path.cwd() / page).is_file() for page in doc_pages.PAGES):
        raise typer.BadParameter(
            f"--docs rewrites {', '.join(doc_pages.PAGES)}: run it in the root of a vcosim "
            "checkout",
            param_hint="--docs",
        )
    names = preset_names() if every else [vehicle]
    params = [resolve_params(name) for name in names]  # a bad preset or file ends here
    folder = out or Path(doc_pages.SHEETS if docs else "datasheets")
    command = _command(vehicle, every, docs, out, quick)
    data = {}
    for name, vehicle_params in zip(names, params, strict=True):
        label = Path(name).stem if name.endswith(".toml") else name
        data[label] = _one_report(vehicle_params, label, folder, command, quick)
    if docs:
        for page in doc_pages.update(Path.cwd()):
            note(f"figures rewritten from {folder}: {page}")
    save_json(data[names[0]] if len(data) == 1 else data, json_out)


@vehicle_app.command("docs")
def docs_command() -> None:
    """Rewrite the figures of docs/*.md from docs/vehicles/*.json, running nothing.

    For a page edited by hand: the marked tables and figures (docs/datasheet.md,
    "Figures in the docs") come back as the datasheets have them. Run it in
    the root of a vcosim checkout.
    """
    from vcosim.datasheet import docs as doc_pages

    setup_logging()
    if not all((Path.cwd() / page).is_file() for page in doc_pages.PAGES):
        raise typer.BadParameter(
            f"run it in the root of a vcosim checkout (no {doc_pages.PAGES[0]} here)"
        )
    changed = doc_pages.update(Path.cwd())
    note(f"rewritten: {', '.join(map(str, changed))}" if changed else "the docs were up to date")


def preset_names() -> list[str]:
    """The built-in presets, by name."""
    from vcosim.vehicle.params import PRESET_DIR

    return sorted(path.stem for path in PRESET_DIR.glob("*.toml"))


def _command(vehicle: str, every: bool, docs: bool, out: Path | None, quick: bool) -> str:
    """The command line that makes these datasheets, as each page records it."""
    words = ["vcosim vehicle report", "--all" if every else f"--vehicle {vehicle}"]
    if docs:
        words.append("--docs")
    if out is not None or not docs:
        words.append(f"--out {out or 'datasheets'}")
    if quick:
        words.append("--quick")
    return " ".join(words)


def _one_report(
    params: VehicleParams, name: str, folder: Path, command: str, quick: bool
) -> dict[str, object]:
    """Run one vehicle's datasheet with a progress bar, write it, print its summary."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from vcosim.datasheet import Plan, build_datasheet
    from vcosim.datasheet.output import MAPPED_PRESET, write_datasheet
    from vcosim.datasheet.sheet import STAGES

    bar = Progress(
        TextColumn("{task.description:<36}"),
        BarColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=settings.quiet,
    )
    with bar:
        task = bar.add_task(f"{name}: starting", total=2 * len(STAGES) + 1)

        def tick(stage: str) -> None:
            bar.update(task, description=stage, completed=bar.tasks[0].completed + 1)

        sheet = build_datasheet(params, Plan.make(quick), tick, name=name)
        bar.update(task, description="plots and report", completed=2 * len(STAGES))
        files = write_datasheet(sheet, folder, command)
    data = sheet.to_dict()
    if name == MAPPED_PRESET:  # the targets hold for the car that maps CommonRoad's set only
        results.print(
            table(f"{name} beside CommonRoad's BMW 320i (linear range)", _agreement(data))
        )
    results.print(table(f"{name}: outside the typical range of a passenger car", _outside(data)))
    plots = [path for key, path in files.items() if key not in ("json", "html", "markdown")]
    results.print(
        f"datasheet of {name} in {sheet.seconds:.0f} s, written to {folder}/: "
        f"{files['html'].name}, {files['markdown'].name}, {files['json'].name} and "
        f"{len(plots)} plots",
        highlight=False,
        soft_wrap=True,
    )
    return data


def _agreement(data: dict[str, Any]) -> dict[str, str]:
    """The linear-range targets, by the figures' labels."""
    return {
        _label(key): f"{c['vcosim']:.3g} vs {c['commonroad']:.3g} ({c['difference_percent']:+.0f} "
        f"%, target ± {c['target_percent']:g} %: {'met' if c['met'] else 'not met'})"
        for key, c in data["comparison"].items()
    }


def _outside(data: dict[str, Any]) -> dict[str, str]:
    """Each figure outside its typical range: its value beside the range, by its label."""
    from vcosim.datasheet.ranges import PASSENGER_CAR

    values = {k: v for section in data["figures"].values() for k, v in section.items()}
    rows = {}
    for key in data["outside_range"]:
        value = values.get(key)
        shown = "none" if value is None else f"{value:.3g}" if isinstance(value, float) else value
        rows[_label(key)] = f"{shown} (typical: {PASSENGER_CAR[key].text()})"
    return rows or {"every figure": "within its typical range"}


def _label(key: str) -> str:
    """A figure's label and unit as the datasheet prints them (``coast-down F0 (N)``)."""
    from vcosim.datasheet.output import LABELS

    label, unit = LABELS.get(key, (key.replace("_", " "), "—"))
    return label if unit in ("—", "") else f"{label} ({unit})"
