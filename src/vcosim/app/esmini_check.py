"""``vcosim scenario esmini-check``: vcosim's runs against the positions esmini's tests assert."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Annotated

import typer

from vcosim.app.console import console, results, setup_logging
from vcosim.app.options import JsonOut


def esmini_check(
    esmini_dir: Annotated[
        Path,
        typer.Argument(
            exists=True,
            file_okay=False,
            metavar="ESMINI_DIR",
            help="A checkout of esmini (its test/smoke_test.py and "
            "EnvironmentSimulator/Unittest/ScenarioEngine_test.cpp are read as data).",
        ),
    ],
    json_out: JsonOut = None,
) -> None:
    """Run the scenarios whose positions esmini's own tests assert, and compare with them.

    Every scenario vcosim accepts runs fast to the last asserted time (an external ego on the
    ACC at its start speed, as `scenario survey --run`); at each asserted time every entity's
    position is compared with esmini's. A sample agrees within 1 m plus one esmini step's
    travel (speed times the step of that test's run). Prints a table by file (accepted files;
    refused ones with their first reason) and the totals.
    """
    from rich.progress import Progress
    from rich.table import Table

    from vcosim.openscenario.esmini_asserts import ACCEPTED, check, extract

    setup_logging()
    runs = {(s.file, s.timestep, s.args) for s in extract(esmini_dir).samples}
    with Progress(console=console, transient=True) as bar:
        task = bar.add_task("running", total=len(runs))
        report = check(esmini_dir, progress=lambda _: bar.advance(task))
    table = Table(title="Against esmini's asserted positions")
    table.add_column("file", overflow="fold")
    table.add_column("step (s)", justify="right")
    for column in ("samples", "compared", "within", "worst error (m)"):
        table.add_column(column, justify="right")
    refused = []
    for f in sorted(report.files, key=lambda f: f.file):
        if f.outcome != ACCEPTED:
            refused.append(f)
            continue
        worst = f.worst
        table.add_row(
            f.file, f"{f.timestep:g}", str(len(f.samples)), str(f.compared), str(f.within),
            "" if worst is None else f"{worst:.2f}",
        )  # fmt: skip
    results.print(table)
    for f in refused:
        results.print(f"{f.outcome}: {f.file}: {f.reason}", highlight=False, soft_wrap=True)
    samples, compared, within, worst = report.totals()
    outcomes = Counter(f.outcome for f in report.files)
    others = ", ".join(
        f"{n} {outcome}" for outcome, n in sorted(outcomes.items()) if outcome != ACCEPTED
    )
    results.print(
        f"{outcomes[ACCEPTED]} of {len(report.files)} runs accepted ({others}): {samples} "
        f"samples, {compared} "
        f"compared, {within} within 1 m plus a step's travel; worst "
        + ("-" if worst is None else f"{worst:.2f} m")
        + f"; {len(report.skipped)} assertions left out (time or scenario not known for sure)",
        highlight=False,
    )
    if json_out is not None:
        json_out.write_text(json.dumps(report.to_dict(), indent=1))
