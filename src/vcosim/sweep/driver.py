"""``vcosim sweep``: run every run of a sweep on a backend with a progress bar, write results.

A run that raises is recorded as failed and the sweep goes on. Ctrl-C (or SIGTERM) stops the
sweep: the runs still queued are cancelled, those in progress abandoned, and the finished ones
are written as usual, the report marked "interrupted". If the backend itself fails (a Ray
cluster lost), the finished runs are written the same way before the error is raised.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from vcosim.sweep.backends import Backend, LocalBackend
from vcosim.sweep.config import Sweep
from vcosim.sweep.report import SweepOutcome, require_pyarrow, worst_cases, write_outputs
from vcosim.sweep.runner import METRICS, RunResult, SignalSpec

console = Console(stderr=True)


def default_out_dir(sweep: Sweep) -> Path:
    """``[output] dir`` of the sweep file, else ``sweeps/<name>`` in the current folder."""
    return Path(sweep.output.dir) if sweep.output.dir else Path("sweeps") / sweep.name


@contextlib.contextmanager
def _progress(total: int, show: bool) -> Iterator[Callable[[RunResult], None]]:
    """A progress bar (runs done of total, failures, elapsed, ETA); yields its update."""
    if not show:
        yield lambda result: None
        return
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


def run_sweep(
    sweep: Sweep,
    backend: Backend | None = None,
    *,
    out_dir: str | Path | None = None,
    signals: bool | None = None,
    progress: bool = True,
    write: bool = True,
    on_result: Callable[[RunResult], None] | None = None,
) -> SweepOutcome:
    """Run every run of ``sweep`` and (``write``) save the results in ``out_dir``.

    ``signals`` overrides ``[output] signals``. ``on_result`` sees each result as it arrives
    (in completion order). Ctrl-C ends the sweep early; the outcome says ``interrupted`` and
    holds the finished runs.
    """
    if write:
        require_pyarrow()  # before hours of runs, not after
    owned = backend is None
    backend = backend if backend is not None else LocalBackend()
    keep = sweep.output.signals if signals is None else signals
    spec = (
        SignalSpec(tuple(sweep.output.signal_names), sweep.output.signals_every) if keep else None
    )
    results: list[RunResult] = []
    interrupted = False
    error: Exception | None = None
    start = time.perf_counter()
    stream = None
    try:
        with _progress(len(sweep.runs), progress) as update:
            stream = backend.map(sweep.scenario, list(enumerate(sweep.runs)), spec)
            for result in stream:
                results.append(result)
                update(result)
                if on_result is not None:
                    on_result(result)
    except KeyboardInterrupt:
        interrupted = True
    except Exception as exc:  # the backend itself failed: keep what finished, then raise
        interrupted, error = True, exc
    finally:
        if stream is not None:
            stream.close()  # cancels what is still queued or running
        if owned:
            backend.close()
    outcome = SweepOutcome(
        sweep,
        sorted(results, key=lambda r: r.index),
        interrupted,
        time.perf_counter() - start,
        backend.describe(),
    )
    if write and (results or error is None):
        outcome.files = write_outputs(
            outcome, out_dir if out_dir is not None else default_out_dir(sweep)
        )
    if error is not None:
        raise error
    return outcome


def summary_table(outcome: SweepOutcome) -> Table:
    """The worst case of each metric, as a rich table."""
    table = Table(title=f"sweep {outcome.sweep.name}: worst cases")
    table.add_column("metric")
    table.add_column("worst", justify="right")
    table.add_column("run", justify="right")
    table.add_column("parameters")
    for name, runs in worst_cases(outcome, 1).items():
        run = runs[0]
        value = run.metrics[name]
        metric = next(m for m in METRICS if m.name == name)
        unit = "" if metric.unit in ("-", "signal") else f" {metric.unit}"
        text = "never" if value == float("inf") else f"{value:.4g}{unit}"
        table.add_row(
            name,
            text,
            str(run.index),
            ", ".join(
                f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in run.params.items()
            ),
        )
    return table


def print_summary(outcome: SweepOutcome, out_dir: Path | None = None) -> None:
    """Counts, worst cases, failures and where the files are."""
    done, total = len(outcome.results), outcome.total
    rate = done / outcome.wall_time if outcome.wall_time > 0 else 0.0
    console.print(
        f"{done} of {total} runs finished in {outcome.wall_time:.1f} s "
        f"({rate:.2f} runs/s) on {outcome.backend}; "
        f"{len(outcome.failed)} failed"
        + (
            "; [bold yellow]interrupted[/]: the finished runs are kept"
            if outcome.interrupted
            else ""
        )
    )
    if any(not r.failed for r in outcome.results):
        console.print(summary_table(outcome))
    for r in outcome.failed[:5]:
        params = ", ".join(f"{k}={v}" for k, v in r.params.items())
        console.print(f"[red]run {r.index} failed[/] ({params}): {r.error}")
    if len(outcome.failed) > 5:
        console.print(f"... and {len(outcome.failed) - 5} more failures (failures.log)")
    if out_dir is not None and outcome.files:
        console.print(f"results: {out_dir / 'results.parquet'}; report: {out_dir / 'report.html'}")


def sweep_command(
    file: Path,
    *,
    out: Path | None = None,
    workers: int | None = None,
    ray: bool = False,
    ray_address: str | None = None,
    signals: bool | None = None,
    check: bool = False,
) -> int:
    """``vcosim sweep``: validate, run, write, summarise; the exit code (130: interrupted)."""
    from vcosim.interrupts import sigterm_as_interrupt
    from vcosim.sweep.backends import RayBackend, make_backend
    from vcosim.sweep.config import load_sweep

    sweep = load_sweep(file)
    out_dir = out if out is not None else default_out_dir(sweep)
    console.print(
        f"sweep {sweep.name}: {len(sweep.runs)} runs of "
        f"{sweep.scenario.scenario.duration:g} s; parameters: "
        f"{', '.join(sweep.parameters) or 'none'}"
    )
    if check:
        table = Table(title="runs (first 20)")
        table.add_column("run", justify="right")
        for name in sweep.parameters:
            table.add_column(name)
        for index, params in list(enumerate(sweep.runs))[:20]:
            table.add_row(str(index), *(str(params[n]) for n in sweep.parameters))
        console.print(table)
        return 0
    with make_backend(workers=workers, ray=ray, ray_address=ray_address) as backend:
        if isinstance(backend, RayBackend):
            backend.start()  # before our SIGTERM handler: ray.init installs its own
        with sigterm_as_interrupt():
            outcome = run_sweep(sweep, backend, out_dir=out_dir, signals=signals)
    print_summary(outcome, out_dir)
    return 130 if outcome.interrupted else 0
