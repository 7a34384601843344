"""``vcosim search``: validate, search with a progress bar, write, summarise; an honest exit code.

Exit codes: 0 the search ran its budget (found a falsifying run or not: that is its result);
1 a run failed (the others are written); 2 the search file or the options are invalid, nothing
started; 130 interrupted (every finished run is in the log; ``--resume`` continues).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

from pydantic import ValidationError
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from vcosim.app.console import console
from vcosim.app.sweep import backend_options
from vcosim.config import validation_problems
from vcosim.errors import ConfigError
from vcosim.extras import require
from vcosim.interrupts import sigterm_as_interrupt
from vcosim.search.config import Search, SearchSection, load_search
from vcosim.search.driver import SearchOutcome, SearchRun, run_search
from vcosim.search.output import write_outputs
from vcosim.sweep.backends import RayBackend, make_backend

OK, FAILED, INTERRUPTED = 0, 1, 130


@contextlib.contextmanager
def progress_bar(search: Search) -> Iterator[Callable[[SearchRun], None]]:
    """Runs done of the budget, falsifying runs found, the best objective, elapsed time."""
    progress = Progress(
        TextColumn("[bold]search"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("runs"),
        TextColumn("[red]{task.fields[found]} falsifying"),
        TextColumn("best {task.fields[best]}"),
        TimeElapsedColumn(),
        console=console,
    )
    found, best = 0, None
    with progress:
        task = progress.add_task("search", total=search.section.budget, found=0, best="-")

        def update(run: SearchRun) -> None:
            nonlocal found, best
            found += run.falsifying
            if run.score is not None and (best is None or run.score < best[0]):
                best = (run.score, run.value)
            shown = "-" if best is None else f"{best[1]:.4g}"
            progress.update(task, advance=1, found=found, best=shown)

        yield update


def overridden(search: Search, **given: object) -> Search:
    """``search`` with the command line's ``--budget``, ``--seed``, ``--method`` laid over it."""
    changes = {k: v for k, v in given.items() if v is not None}
    if not changes:
        return search
    try:
        section = SearchSection.model_validate({**search.section.model_dump(), **changes})
    except ValidationError as exc:
        raise ConfigError(validation_problems(exc, "--"), "command line") from None
    return replace(search, section=section)


def print_summary(outcome: SearchOutcome, out_dir: Path, worst: int) -> None:
    """Counts, the falsifying runs ranked, and where the files are."""
    search = outcome.search
    rate = outcome.ran / outcome.wall_time if outcome.wall_time > 0 else 0.0
    first = outcome.first_falsifying
    console.print(
        f"{len(outcome.runs)} runs ({outcome.ran} run now, {rate:.2f} runs/s on "
        f"{outcome.backend}); {len(outcome.failed)} failed; stopped: {outcome.stopped}"
    )
    name = search.metric.name if search.metric is not None else "robustness"
    if first is None:
        best = outcome.best
        console.print(
            f"no falsifying run ({name} below {search.threshold:g}); best: "
            + ("none" if best is None else f"run {best.index}, {name} = {best.value:.4g}")
        )
    else:
        console.print(
            f"{len(outcome.falsifying)} falsifying runs; the first after {first} runs",
        )
        table = Table(title=f"search {search.name}: the most critical runs")
        table.add_column("run", justify="right")
        table.add_column(name, justify="right")
        for p in search.ranges:
            table.add_column(_short(p), justify="right")
        for r in outcome.falsifying[:worst]:
            value = "nan" if r.value is None else f"{r.value:.4g}"
            table.add_row(str(r.index), value, *(f"{r.params[p]:.4g}" for p in search.ranges))
        console.print(table)
    minima = outcome.minima
    if len(minima) > 1:  # (one: the best run, said already)
        table = Table(title=f"{len(minima)} local minima: the best run of each")
        for column in ("run", name, "basin runs", "falsifying"):
            table.add_column(column, justify="right")
        for p in search.ranges:
            table.add_column(_short(p), justify="right")
        for m in minima[:worst]:
            r = m.run
            table.add_row(
                str(r.index),
                "nan" if r.value is None else f"{r.value:.4g}",
                str(m.runs),
                str(m.falsifying),
                *(f"{r.params[p]:.4g}" for p in search.ranges),
            )
        console.print(table)
    for r in outcome.failed[:5]:
        console.print(f"[red]run {r.index} failed[/]: {escape(r.error)}", soft_wrap=True)
    if outcome.interrupted:
        console.print(
            f"[bold yellow]interrupted[/] after {len(outcome.runs)} runs: they are in "
            f"{escape(str(out_dir / 'runs.jsonl'))}; --resume continues",
            soft_wrap=True,
        )
    else:
        console.print(
            escape(f"results: {out_dir / 'runs.csv'}; summary: {out_dir / 'summary.json'}"),
            soft_wrap=True,
        )


def search_command(
    file: Path,
    *,
    out: Path | None = None,
    workers: int | None = None,
    ray: bool = False,
    ray_address: str | None = None,
    resume: bool = False,
    check: bool = False,
    budget: int | None = None,
    seed: int | None = None,
    method: str | None = None,
) -> int:
    """``vcosim search``: validate, search, write, summarise; the exit code (see the module)."""
    search = overridden(load_search(file), budget=budget, seed=seed, method=method)
    options = backend_options(search.sweep, workers, ray, ray_address)
    out_dir = out if out is not None else _default_out(search)
    s = search.section
    console.print(
        f"search {search.name}: {s.method}, budget {s.budget} runs of "
        f"{search.sweep.scenario.scenario.duration:g} s in batches of {s.batch}, seed {s.seed}; "
        f"parameters: {', '.join(search.ranges)}"
    )
    if check:
        return OK
    require("search", "vcosim search")
    if options.uses_ray:
        require("ray", "vcosim search --ray")
    try:
        with make_backend(options) as backend:
            if isinstance(backend, RayBackend):
                backend.start()  # before our SIGTERM handler: ray.init installs its own
            with sigterm_as_interrupt(), progress_bar(search) as update:
                outcome = run_search(search, backend, out_dir=out_dir, resume=resume,
                                     on_result=update)  # fmt: skip
    except KeyboardInterrupt:  # while the workers started: no run had finished
        console.print("[bold yellow]interrupted[/] before any run finished")
        return INTERRUPTED
    worst = search.sweep.output.worst
    write_outputs(outcome, out_dir, worst)
    print_summary(outcome, out_dir, worst)
    if outcome.interrupted:
        return INTERRUPTED
    return FAILED if outcome.failed else OK


def _short(path: str) -> str:
    """A parameter's column title: its last key, with the list indices after it."""
    parts = path.split(".")
    last = max((i for i, part in enumerate(parts) if not part.isdigit()), default=0)
    return ".".join(parts[last:])


def _default_out(search: Search) -> Path:
    """``[output] dir``, else ``searches/<name>`` in the current folder."""
    given = search.sweep.output.dir
    return Path(given) if given else Path("searches") / search.name
