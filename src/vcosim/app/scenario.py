"""``vcosim scenario``: OpenSCENARIO files as others wrote them, surveyed."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated

import typer

from vcosim.app.console import console, results, setup_logging
from vcosim.app.esmini_check import esmini_check
from vcosim.app.options import EgoDriver, EgoDriverKind, JsonOut, Maps, positive, use_maps

scenario_app = typer.Typer(
    help="OpenSCENARIO files (docs/scenarios.md): how much of a corpus vcosim reads and runs.",
    no_args_is_help=True,
)


@scenario_app.command("survey")
def survey(
    folders: Annotated[
        list[Path],
        typer.Argument(
            exists=True,
            file_okay=False,
            metavar="DIR...",
            help="Folders searched for .xosc files (catalogues are skipped); each is a corpus.",
        ),
    ],
    run: Annotated[
        bool,
        typer.Option(
            "--run",
            help="Also run every accepted file, fast, to its stop trigger (its external ego "
            "driven as --ego-driver says).",
        ),
    ] = False,
    duration: Annotated[
        float,
        typer.Option(
            callback=positive,
            help="With --run: simulated seconds a run takes at most, where the file's stop "
            "trigger has no time of its own (a SimulationTime stop condition is the file's "
            "limit).",
        ),
    ] = 120.0,
    ego_driver: EgoDriver = EgoDriverKind.route,
    workers: Annotated[
        int | None,
        typer.Option(min=0, help="Local worker processes (default: every core; 0: this process)."),
    ] = None,
    reasons: Annotated[
        int, typer.Option(help="How many refusal reasons to list, most files first.")
    ] = 25,
    maps: Maps = None,
    json_out: JsonOut = None,
) -> None:
    """Read every OpenSCENARIO file under DIR... and tell what was accepted, refused, crashed.

    Prints a table by corpus (a folder given is a corpus) and the refusal reasons ranked by
    the files they refuse (and the files each alone refuses: what supporting it would gain).
    A crash is a defect of vcosim: the survey exits 1 if any file crashed.
    """
    from rich.progress import Progress
    from rich.table import Table

    from vcosim.openscenario.survey import CRASHED, scenario_files
    from vcosim.openscenario.survey import survey as run_survey

    setup_logging()
    use_maps(maps)
    total = sum(len(scenario_files(folder)) for folder in folders)
    with Progress(console=console, transient=True) as bar:
        task = bar.add_task("reading" if not run else "reading and running", total=total)
        report = run_survey(
            folders, run=run, limit=duration,
            workers=os.cpu_count() or 1 if workers is None else workers,
            progress=lambda _: bar.advance(task), ego_driver=ego_driver.value,
        )  # fmt: skip
    table = Table(title="OpenSCENARIO survey")
    columns = ["files", "accepted", "refused", "crashed"]
    columns += ["ended", "still running", "failed"] if run else []
    table.add_column("corpus")
    for column in columns:
        table.add_column(column, justify="right")
    for corpus, counts in report.corpora().items():
        share = counts["accepted"] / counts["files"] if counts["files"] else 0.0
        cells = [str(counts[c]) for c in columns]
        cells[1] += f" ({share:.0%})"
        table.add_row(corpus, *cells)
    results.print(table)
    ranked = report.reasons()[:reasons]
    if ranked:
        why = Table(title="Refused: the reasons, by files")
        why.add_column("files", justify="right")
        why.add_column("alone", justify="right")
        why.add_column("reason")
        for reason, found, alone in ranked:
            why.add_row(str(found), str(alone), reason)
        results.print(why)
    crashed = [f for f in report.files if f.outcome == CRASHED]
    for f in crashed:
        results.print(f"crashed: {f.path}: {f.problems[0]}", highlight=False, soft_wrap=True)
    if json_out is not None:
        json_out.write_text(json.dumps([f.to_dict() for f in report.files], indent=1))
    if crashed:
        raise typer.Exit(1)


scenario_app.command("esmini-check")(esmini_check)
