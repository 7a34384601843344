"""The ``vcosim`` command: one typer app, one sub-command (or group) per face of the simulator."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(
    name="vcosim",
    help="Vehicle co-simulation: a 2000 Hz vehicle that external controllers couple to.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    add_completion=False,
)
bench_app = typer.Typer(
    help="Measure speed against a baseline timed in the same run; prints JSON.",
    no_args_is_help=True,
)
app.add_typer(bench_app, name="bench")


@app.command()
def demo(
    out: Annotated[
        Path, typer.Option(help="Folder for the run; a timestamped sub-folder is created.")
    ] = Path("runs"),
    vehicle: Annotated[
        str, typer.Option(help="Vehicle preset name or parameter TOML file.")
    ] = "nightrider",
) -> None:
    """Drive the vehicle through a scripted manoeuvre and write a plot and a CSV of every signal.

    Starts the engine, accelerates through the gears, brakes and turns; runs faster than real
    time with a progress bar. Needs no screen, sound card or joystick.
    """
    from vcosim.demo import run_demo

    run_demo(out, vehicle)


@bench_app.command("physics")
def bench_physics(
    as_json: Annotated[bool, typer.Option("--json", help="Print only the JSON object.")] = False,
    seconds: Annotated[
        float, typer.Option(help="Wall-clock budget per measurement (s).")
    ] = 2.0,
) -> None:
    """Physics steps per second of the vehicle kernel against CommonRoad's multi-body model."""
    from vcosim.bench.physics import run_physics_bench

    result = run_physics_bench(seconds=seconds, progress=not as_json)
    typer.echo(json.dumps(result, indent=None if as_json else 2))


def main() -> None:
    """Entry point for ``python -m vcosim``."""
    app()
