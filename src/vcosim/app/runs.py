"""``vcosim demo``, ``analyze``, ``cases`` and ``sweep``: runs that leave a folder of results."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from vcosim.app.console import note, results
from vcosim.app.options import RunFolder, VehicleOption
from vcosim.constants import PHYSICS_DT


def demo(
    out: RunFolder = Path("runs"),
    vehicle: VehicleOption = "nightrider",
    manoeuvre: Annotated[
        bool,
        typer.Option(
            "--manoeuvre",
            help="Instead: the vehicle alone through a scripted "
            "manoeuvre (start, accelerate through the gears, brake, turn).",
        ),
    ] = False,
) -> None:
    """Couple the cruise controller to the simulator over UDP and plot the run.

    The simulator and the example `cruise` controller: two processes on
    loopback, in lock-step, 30 s of simulated time faster than real time;
    the target speed steps from 15 to 25 m/s at 15 s. Writes the coupling
    debug CSVs, signals.csv, demo.png and summary.json into OUT/<timestamp>/.
    Needs no screen, sound card or joystick.
    """
    from rich.console import Console

    from vcosim.app.console import Heartbeat

    what = "the vehicle alone" if manoeuvre else "the simulator and the cruise controller"
    shown = Console()
    with Heartbeat(shown, f"vcosim demo: starting {what}…"):  # the imports take seconds
        from vcosim.app.demo import run_demo

    run_demo(out, vehicle, manoeuvre=manoeuvre, console=shown)


def analyze(
    run_dir: Annotated[
        Path,
        typer.Argument(
            exists=True,
            help="Folder with the three debug logs: BeamNG's or vcosim's CSVs, or the .npy "
            "files vcosim writes while running (kept after an interrupted long run or a kill); "
            "or an ASAM OSI trace (.osi, .mcap) to summarise.",
        ),
    ],
    report: Annotated[
        Path | None,
        typer.Option(
            help="Report file: .html (default RUN_DIR/analysis.html, "
            "figures embedded) or .md (with PNGs beside it); for a world's run, one per "
            "vehicle (REPORT.NAME.html)."
        ),
    ] = None,
    dt: Annotated[float, typer.Option(help="The physics step (s).")] = PHYSICS_DT,
    write_csv: Annotated[
        bool,
        typer.Option(
            "--write-csv",
            help="First turn the .npy logs in RUN_DIR into BeamNG's CSV files (for MATLAB).",
        ),
    ] = False,
) -> None:
    """Analyse a coupled run's timing from its debug logs: figures, metrics and a verdict."""
    from rich.table import Table

    if run_dir.is_file():  # an OSI trace (sim --osi-trace)
        from vcosim.app.groundtruth import show_trace

        show_trace(run_dir)
        return

    from vcosim.analysis import load_run
    from vcosim.analysis.logs import vehicle_folders
    from vcosim.analysis.report import summary_rows, write_report

    folders = vehicle_folders(run_dir)  # a world's run: one folder per coupled vehicle
    for folder in folders or [run_dir]:
        if write_csv:
            from vcosim.tight.debuglog import write_csv as npy_to_csv

            names = ", ".join(p.name for p in npy_to_csv(folder)) or "none (no .npy logs)"
            note(f"{folder}: CSV logs written from .npy: {names}")
        run = load_run(folder, dt=dt)
        if report is None:
            target = folder / "analysis.html"
        else:
            target = report.with_stem(f"{report.stem}.{folder.name}") if folders else report
        written = write_report(run, target)
        table = Table(title=f"vcosim analyze: {folder}", show_header=False)
        table.add_column(style="bold")
        table.add_column()
        for label, value in summary_rows(run.metrics):
            table.add_row(label, value)
        results.print(table)
        results.print(f"[bold]verdict:[/] {run.metrics.verdict}")
        results.print(f"report: {', '.join(str(p) for p in written)}")


def cases(
    out: Annotated[
        Path, typer.Option(help="Folder for the five runs' logs and cases.html.")
    ] = Path("runs/cases"),
    case: Annotated[
        list[int] | None, typer.Option(help="Run only this case (1-5; repeatable).")
    ] = None,
) -> None:
    """Run the five timing cases of BeamNG's coupling end to end; exit 1 if one fails.

    Each case couples the simulator to a controller with a different computation time and
    window, in real time, and checks the run's timing against what the coupling promises.
    """
    from vcosim.app.cases import cases_command

    if not cases_command(out, case):
        raise typer.Exit(1)


Workers = Annotated[
    int | None,
    typer.Option(help="Local worker processes (default: every core; 0: run in this process)."),
]
Ray = Annotated[
    bool,
    typer.Option(
        "--ray",
        help="Run on Ray: join RAY_ADDRESS or a cluster started here with `ray start`, else start "
        "Ray locally.",
    ),
]
RayAddress = Annotated[
    str | None, typer.Option(help="Join the Ray cluster at this address (implies --ray).")
]
"""The options a sweep and a search share: the same words, the same meaning."""


def sweep(
    file: Annotated[
        Path,
        typer.Argument(
            exists=True,
            dir_okay=False,
            help="The sweep file (TOML): scenario, parameters, output; see docs/sweeps.md.",
        ),
    ],
    out: Annotated[
        Path | None, typer.Option(help="Output folder (default: \\[output] dir, else sweeps/NAME).")
    ] = None,
    workers: Workers = None,
    ray: Ray = False,
    ray_address: RayAddress = None,
    signals: Annotated[
        bool | None,
        typer.Option(
            "--signals/--no-signals",
            help="Also save every run's signals (default: \\[output] signals).",
        ),
    ] = None,
    check: Annotated[
        bool, typer.Option("--check", help="Only validate the file and list the runs.")
    ] = False,
    max_runs: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="The most runs the sweep (and its OpenSCENARIO distribution) may make, "
            "counted before any is built.",
            show_default="the file's sweep.max_runs, else 100,000",
        ),
    ] = None,
) -> None:
    """Run a scenario sweep: every run's metrics to Parquet, and a report with plots."""
    from vcosim.app.sweep import sweep_command

    code = sweep_command(
        file,
        out=out,
        workers=workers,
        ray=ray,
        ray_address=ray_address,
        signals=signals,
        check=check,
        max_runs=max_runs,
    )
    if code:
        raise typer.Exit(code)


def search(
    file: Annotated[
        Path,
        typer.Argument(
            exists=True,
            dir_okay=False,
            help="The search file (TOML): a sweep file with [search]; see docs/search.md.",
        ),
    ],
    out: Annotated[
        Path | None,
        typer.Option(help="Output folder (default: \\[output] dir, else searches/NAME)."),
    ] = None,
    workers: Workers = None,
    ray: Ray = False,
    ray_address: RayAddress = None,
    resume: Annotated[
        bool,
        typer.Option("--resume", help="Continue the search logged in the output folder."),
    ] = False,
    budget: Annotated[
        int | None, typer.Option(help="Runs in all (default: \\[search] budget).")
    ] = None,
    seed: Annotated[int | None, typer.Option(help="The seed (default: \\[search] seed).")] = None,
    method: Annotated[
        str | None,
        typer.Option(help="tpe, cmaes or random (default: \\[search] method)."),
    ] = None,
    check: Annotated[
        bool, typer.Option("--check", help="Only validate the file and say what would run.")
    ] = False,
) -> None:
    """Search scenario parameters for the runs where the controller fails (falsifying runs)."""
    from vcosim.app.search import search_command

    code = search_command(
        file,
        out=out,
        workers=workers,
        ray=ray,
        ray_address=ray_address,
        resume=resume,
        check=check,
        budget=budget,
        seed=seed,
        method=method,
    )
    if code:
        raise typer.Exit(code)
