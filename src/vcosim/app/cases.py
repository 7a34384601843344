"""``vcosim cases``: which cases to run, a progress bar, the results table and the verdict.

The runs are ``vcosim.scenarios.cases``'s and the judging ``vcosim.analysis.cases``'s; this is
how the command shows them (progress on stderr, the table and verdict on stdout).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from rich import box
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from vcosim.analysis.cases import CAPTION, CASES, COLUMNS, Case, CaseResult, table_rows
from vcosim.app.console import console, results
from vcosim.errors import ConfigError
from vcosim.scenarios.cases import run_cases


def results_table(outcomes: Sequence[CaseResult]) -> Table:
    """The cases as a rich table."""
    table = Table(
        title="The five timing cases of BeamNG's coupling", caption=CAPTION, box=box.SIMPLE_HEAD
    )
    for name in COLUMNS:
        table.add_column(name, justify="right", min_width=len(name))
    for row, passed in table_rows(outcomes, units=False):
        number, ext, compute, skips, seen, *rest = row
        table.add_row(
            number,
            ext,
            compute,
            f"{skips} / {seen}",
            *rest,
            "[green]PASS[/]" if passed else "[red]FAIL[/]",
        )
    return table


def selected_cases(numbers: Sequence[int] | None) -> list[Case]:
    """The cases asked for by number (all when none), in order; unknown numbers refused."""
    known = {case.number: case for case in CASES}
    unknown = [n for n in numbers or () if n not in known]
    if unknown:
        raise ConfigError([f"case {n}: no such case (1-5)" for n in unknown], source="--case")
    return [known[n] for n in sorted(set(numbers))] if numbers else list(CASES)


def cases_command(out: Path, numbers: Sequence[int] | None = None) -> bool:
    """``vcosim cases``: run the (selected) cases, print the table; True if all passed."""
    selected = selected_cases(numbers)
    start = time.perf_counter()
    columns = (
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task("cases", total=len(selected))

        def starting(case: Case) -> None:
            bar.update(
                task,
                description=f"case {case.number}: T_ext {case.ext_time * 1e3:g} "
                f"ms, computation {case.compute * 1e3:g} ms",
            )

        def finished(result: CaseResult) -> None:
            bar.advance(task)
            mark = "[green]PASS[/]" if result.passed else "[red]FAIL[/]"
            console.log(f"case {result.case.number}: {mark} ({result.wall_time:.1f} s)")

        outcomes = run_cases(out, selected, on_case=starting, on_result=finished)
    results.print(results_table(outcomes))
    for outcome in outcomes:
        results.print(f"• {outcome.interpretation()}")
    passed = sum(r.passed for r in outcomes)
    results.print(
        f"{passed} of {len(outcomes)} passed in {time.perf_counter() - start:.1f} s; "
        f"report: {Path(out) / 'cases.html'}"
    )
    return passed == len(outcomes)
