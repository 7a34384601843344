"""``vcosim sweep``: validate, run with a progress bar, write, summarise; an honest exit code.

Exit codes: 0 every run finished without an error; 1 a run failed (the others are written);
2 the sweep file or the options are invalid, nothing started (a ``ConfigError``, which the
root command prints); 130 interrupted (the finished runs are written, one line says where).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

from pydantic import ValidationError
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from vcosim.app.console import console
from vcosim.config import validation_problems
from vcosim.errors import ConfigError
from vcosim.extras import require
from vcosim.interrupts import sigterm_as_interrupt
from vcosim.sweep.backends import RayBackend, make_backend
from vcosim.sweep.config import BackendSection, Sweep, load_sweep
from vcosim.sweep.driver import default_out_dir, run_sweep
from vcosim.sweep.metrics import METRICS
from vcosim.sweep.outcome import SweepOutcome, worst_cases
from vcosim.sweep.runner import RunResult

OK, FAILED, INTERRUPTED = 0, 1, 130
LISTED_FAILURES = 5


@contextlib.contextmanager
def progress_bar(total: int) -> Iterator[Callable[[RunResult], None]]:
    """A progress bar (runs done of total, failures, elapsed, ETA); yields its update."""
    progress = Progress(
        TextColumn("[bold]sweep"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("runs"),
        TextColumn("[red]{task.fields[failed]} failed"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=console,
    )
    failed = 0
    with progress:
        task = progress.add_task("sweep", total=total, failed=0)

        def update(result: RunResult) -> None:
            nonlocal failed
            failed += result.failed
            progress.update(task, advance=1, failed=failed)

        yield update


def backend_options(
    sweep: Sweep, workers: int | None, ray: bool, ray_address: str | None
) -> BackendSection:
    """``[backend]`` of the sweep file with the command line's choices laid over it."""
    given: dict[str, object] = {}
    if ray or ray_address is not None:
        given.update(ray=True, ray_address=ray_address)
    elif workers is not None:
        given.update(workers=workers, ray=False, ray_address=None)
    try:
        return BackendSection.model_validate({**sweep.backend.model_dump(), **given})
    except ValidationError as exc:
        raise ConfigError(validation_problems(exc, "--"), "command line") from None


def summary_table(outcome: SweepOutcome) -> Table:
    """The worst case of each metric, as a rich table."""
    table = Table(title=f"sweep {outcome.sweep.name}: worst cases")
    table.add_column("metric")
    table.add_column("worst", justify="right")
    table.add_column("run", justify="right")
    table.add_column("parameters")
    for name, runs in worst_cases(outcome, 1).items():
        run = runs[0]
        value = run.metrics.column(name)
        metric = next(m for m in METRICS if m.name == name)
        unit = "" if metric.unit in ("-", "signal") else f" {metric.unit}"
        text = "never" if value == float("inf") else f"{value:.4g}{unit}"
        params = ", ".join(
            f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in run.params.items()
        )
        table.add_row(name, text, str(run.index), params)
    return table


def print_summary(outcome: SweepOutcome, out_dir: Path) -> None:
    """Counts, worst cases, failures and where the files are."""
    done, total = len(outcome.results), outcome.total
    rate = done / outcome.wall_time if outcome.wall_time > 0 else 0.0
    console.print(
        f"{done} of {total} runs finished in {outcome.wall_time:.1f} s "
        f"({rate:.2f} runs/s) on {outcome.backend}; {len(outcome.failed)} failed"
    )
    if outcome.ok:
        console.print(summary_table(outcome))
    for r in outcome.failed[:LISTED_FAILURES]:
        params = ", ".join(f"{k}={v}" for k, v in r.params.items())
        console.print(
            f"[red]run {r.index} failed[/] ({escape(params)}): {escape(r.error)}", soft_wrap=True
        )
    if len(outcome.failed) > LISTED_FAILURES:
        console.print(
            f"... and {len(outcome.failed) - LISTED_FAILURES} more failures (failures.log)"
        )
    if outcome.interrupted:
        where = f"the finished runs are in {out_dir}" if outcome.files else "nothing written"
        console.print(
            f"[bold yellow]interrupted[/] after {done} of {total} runs: {escape(where)}",
            soft_wrap=True,
        )
    elif outcome.files:
        console.print(
            escape(f"results: {out_dir / 'results.parquet'}; report: {out_dir / 'report.html'}"),
            soft_wrap=True,
        )


def exit_code(outcome: SweepOutcome) -> int:
    """130 if interrupted, else 1 if a run failed, else 0."""
    if outcome.interrupted:
        return INTERRUPTED
    return FAILED if outcome.failed else OK


def print_runs(sweep: Sweep, limit: int = 20) -> None:
    """The first runs and their parameter values (``--check``)."""
    table = Table(title=f"runs (first {limit})")
    table.add_column("run", justify="right")
    for name in sweep.parameters:
        table.add_column(name)
    for index, params in list(enumerate(sweep.runs))[:limit]:
        table.add_row(str(index), *(str(params[n]) for n in sweep.parameters))
    console.print(table)


def sweep_command(
    file: Path,
    *,
    out: Path | None = None,
    workers: int | None = None,
    ray: bool = False,
    ray_address: str | None = None,
    signals: bool | None = None,
    check: bool = False,
    max_runs: int | None = None,
) -> int:
    """``vcosim sweep``: validate, run, write, summarise; the exit code (see the module)."""
    sweep = load_sweep(
        file, max_runs=max_runs
    )  # a ConfigError ends the command with exit code 2 (app.cli)
    options = backend_options(sweep, workers, ray, ray_address)
    out_dir = out if out is not None else default_out_dir(sweep)
    console.print(
        f"sweep {sweep.name}: {len(sweep.runs)} runs of "
        f"{sweep.scenario.scenario.duration:g} s; parameters: "
        f"{', '.join(sweep.parameters) or 'none'}"
    )
    if check:
        print_runs(sweep)
        return OK
    require("sweep", "vcosim sweep")
    if options.uses_ray:
        require("ray", "vcosim sweep --ray")
    try:
        with make_backend(options) as backend:
            if isinstance(backend, RayBackend):
                backend.start()  # before our SIGTERM handler: ray.init installs its own
            with sigterm_as_interrupt(), progress_bar(len(sweep.runs)) as update:
                outcome = run_sweep(
                    sweep, backend, out_dir=out_dir, signals=signals, on_result=update
                )
    except KeyboardInterrupt:  # while the workers started: no run had finished
        console.print("[bold yellow]interrupted[/] before any run finished: nothing written")
        return INTERRUPTED
    print_summary(outcome, out_dir)
    return exit_code(outcome)
