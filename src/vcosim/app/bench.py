"""``vcosim bench``: speed measured against a baseline timed in the same run, as JSON.

(Past 400 lines: ``vcosim bench`` is one typer group, each bench a command of a few lines of
options around its measuring function, beside ``bench all`` that runs and judges them all; split,
``bench all`` would gather them back from several files.)

``vcosim bench all`` runs every bench and sets each same-run ratio beside its accepted value
in ``benchmarks/baseline.json`` (docs/performance.md): exit 1 when one fell below half of it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from vcosim.app.options import positive
from vcosim.errors import MissingExtra
from vcosim.extras import install_command, missing, require

if TYPE_CHECKING:
    from vcosim.bench.guard import SuiteRun, Verdict

bench_app = typer.Typer(
    help="Measure speed against a baseline timed in the same run; prints JSON. "
    "`bench all` sets every bench's ratios beside their accepted values (the guard).",
    no_args_is_help=True,
)
AsJson = Annotated[bool, typer.Option("--json", help="Print only the JSON object.")]
Quick = Annotated[
    bool,
    typer.Option(
        "--quick",
        help="Measure briefly (a check, not the figures to quote), as `bench all --quick` and "
        "its guard test do; `bench contracts` then measures only its guarded ratio. Options "
        "given still apply.",
    ),
]


def _seconds(help: str, full: float, quick: float) -> Any:
    """A ``--seconds``-like option whose default is the bench's own, or ``--quick``'s."""
    return typer.Option(
        callback=positive, help=help, show_default=f"{full:g}; {quick:g} with --quick"
    )


# Benches whose same-run baseline is another package: (extra, its modules needed).
_NEEDS: dict[str, tuple[str, tuple[str, ...] | None]] = {
    "physics": ("bench", None),
    "fmi": ("fmi", ("ziglang", "fmpy")),
    "sumo": ("sumo", ("libsumo", "sumolib")),
}


def _require(names: tuple[str, ...], command: str) -> None:
    """Refuse before measuring anything when a bench's baseline package is not installed.

    Every extra missing is named at once, with one command that installs them all.
    """
    wanted = dict(_NEEDS[name] for name in names if name in _NEEDS)
    absent = {extra: gone for extra, modules in wanted.items() if (gone := missing(extra, modules))}
    if len(absent) == 1:
        ((extra, _),) = absent.items()
        require(extra, command, modules=wanted[extra])
    elif absent:
        named = "; ".join(f"`{extra}` ({', '.join(gone)})" for extra, gone in absent.items())
        raise MissingExtra(
            f"{command} needs the extras {named}, not installed: {install_command(*absent)}"
        )


def _run(name: str, quick: bool, as_json: bool, **options: Any) -> None:
    """Measure bench ``name`` (options left None take its defaults) and print its JSON."""
    from vcosim.bench.guard import run_bench

    _require((name,), f"vcosim bench {name}")

    given = {key: value for key, value in options.items() if value is not None}
    bench = run_bench(name, quick, progress=not as_json, **given)
    typer.echo(json.dumps(bench.to_dict(), indent=None if as_json else 2))


def _run_reported(
    measure: Any, quick_options: dict[str, Any], quick: bool, as_json: bool, seconds: float | None
) -> None:
    """Measure a bench that is reported, not guarded (not in `bench all`), and print its JSON."""
    options: dict[str, Any] = dict(quick_options) if quick else {}
    if seconds is not None:
        options["seconds"] = seconds
    bench = measure(progress=not as_json, **options)
    typer.echo(json.dumps(bench.to_dict(), indent=None if as_json else 2))


@bench_app.command("physics")
def bench_physics(
    as_json: AsJson = False,
    quick: Quick = False,
    seconds: Annotated[
        float | None, _seconds("Wall-clock budget per measurement (s).", 2.0, 0.2)
    ] = None,
) -> None:
    """Physics steps per second of the vehicle kernel against CommonRoad's multi-body model."""
    _run("physics", quick, as_json, seconds=seconds)


@bench_app.command("coupling")
def bench_coupling(
    as_json: AsJson = False,
    quick: Quick = False,
    seconds: Annotated[
        float | None, _seconds("Wall-clock time per exchange measurement (s).", 3.0, 0.9)
    ] = None,
    realtime_seconds: Annotated[
        float | None, _seconds("Length of the real-time drift measurement (s).", 10.0, 1.0)
    ] = None,
) -> None:
    """Lock-step exchanges/s against a raw UDP ping-pong, and real-time drift and frame lateness."""
    _run("coupling", quick, as_json, seconds=seconds, realtime_seconds=realtime_seconds)


@bench_app.command("contracts")
def bench_contracts(
    as_json: AsJson = False,
    quick: Quick = False,
    seconds: Annotated[
        float | None, _seconds("Wall-clock time per measurement (s).", 2.0, 0.9)
    ] = None,
) -> None:
    """Updates/s of one 20-field contract at 1 ms, and the latency from server step to port."""
    _run("contracts", quick, as_json, seconds=seconds)


@bench_app.command("sweep")
def bench_sweep(
    as_json: AsJson = False,
    quick: Quick = False,
    runs: Annotated[
        int | None,
        typer.Option(
            callback=positive, help="Runs per measurement.", show_default="40; 6 with --quick"
        ),
    ] = None,
    workers: Annotated[
        int, typer.Option(callback=positive, help="Measure 1 up to this many workers.")
    ] = 2,
) -> None:
    """Runs per second of a 10 s cruise scenario here and on local workers, and the scaling."""
    _run("sweep", quick, as_json, runs=runs, max_workers=workers)


@bench_app.command("search")
def bench_search(
    as_json: AsJson = False,
    quick: Quick = False,
    runs: Annotated[
        int | None,
        typer.Option(
            callback=positive, help="Runs per measurement.", show_default="40; 8 with --quick"
        ),
    ] = None,
    workers: Annotated[int, typer.Option(callback=positive, help="Local workers.")] = 2,
) -> None:
    """A search's runs per second per worker against a sweep's, on one pool (reported)."""
    require("search", "vcosim bench search")
    from vcosim.bench.search import QUICK, measure_search_bench

    options: dict[str, Any] = dict(QUICK) if quick else {}
    if runs is not None:
        options["runs"] = runs
    bench = measure_search_bench(workers=workers, progress=not as_json, **options)
    typer.echo(json.dumps(bench.to_dict(), indent=None if as_json else 2))


@bench_app.command("bus")
def bench_bus(
    as_json: AsJson = False,
    quick: Quick = False,
    seconds: Annotated[
        float | None, _seconds("Wall-clock time per measurement (s).", 2.0, 0.6)
    ] = None,
) -> None:
    """Router throughput (messages/s) and the latency it adds over direct UDP, in one run."""
    _run("bus", quick, as_json, seconds=seconds)


@bench_app.command("world")
def bench_world(
    as_json: AsJson = False,
    quick: Quick = False,
    seconds: Annotated[
        float | None, _seconds("Wall-clock budget per measurement (s).", 1.0, 0.2)
    ] = None,
) -> None:
    """Real-time factor of worlds of 1-1000 IDM cars and of 1, 2, 4 coupled cars; kernel ceiling.

    With --quick: worlds of 1-100 cars and one coupled car.
    """
    _run("world", quick, as_json, seconds=seconds)


@bench_app.command("sumo")
def bench_sumo(
    as_json: AsJson = False,
    quick: Quick = False,
    seconds: Annotated[
        float | None,
        _seconds("Simulated seconds timed per run (after a warm-up).", 3.0, 1.0),
    ] = None,
) -> None:
    """A vcosim car in 1000 and 5000 SUMO cars: real-time factor, cost per SUMO car per step.

    Each with a SUMO step of 10 ms (its drivers deciding every step, and every 100 ms) and of
    100 ms, with every SUMO car in the world or only those within 250 m, and SUMO alone on
    the same scenario (the floor). Needs the sumo extra. `bench all` measures and guards
    only the CPU ratio at 1000 cars, 10 ms, every car in the world. With --quick: that ratio at
    100 cars.
    """
    from vcosim.bench.sumo import QUICK, measure_sumo_bench

    require("sumo", "vcosim bench sumo")
    _run_reported(measure_sumo_bench, QUICK, quick, as_json, seconds)


@bench_app.command("scenario")
def bench_scenario(
    as_json: AsJson = False,
    quick: Quick = False,
    seconds: Annotated[
        float | None, _seconds("Simulated seconds timed per run.", 20.0, 3.0)
    ] = None,
) -> None:
    """An OpenSCENARIO storyboard of 100 entities with a coupled ego: real-time factor.

    61 storyboard cars, 30 pedestrians, 6 obstacles and a truck towing a trailer around an ego
    the ACC drives, coupled in process; against the same cars without the storyboard, timed
    in turns. Reported, not guarded (not in `bench all`). With --quick: 3 s, once each.
    """
    from vcosim.bench.scenario import QUICK, measure_scenario_bench

    _run_reported(measure_scenario_bench, QUICK, quick, as_json, seconds)


@bench_app.command("growth")
def bench_growth(
    dimensions: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="DIMENSION",
            help="What to measure: vehicles, fields, modules, rate (any of them).",
            show_default="all four",
        ),
    ] = None,
    as_json: AsJson = False,
    quick: Quick = False,
    seconds: Annotated[float | None, _seconds("Wall-clock time per figure (s).", 2.0, 0.3)] = None,
) -> None:
    """How cost grows with the work: per vehicle, contract field, bus module and message rate.

    Each dimension at several sizes (worlds of 1-1000 cars; contracts of 5, 20, 80 fields;
    1, 4, 16 modules behind the router; a coupling message every 1, 2, 5, 20 physics steps),
    with the line fitted through them: a fixed cost plus a cost per unit. Reported, not
    guarded (not in `bench all`); docs/performance.md reads it.
    """
    from vcosim.bench.growth import DIMENSIONS, QUICK, measure_growth_bench
    from vcosim.errors import ConfigError

    unknown = sorted(set(dimensions or ()) - set(DIMENSIONS))
    if unknown:
        raise ConfigError(
            [f"no dimension {name!r}: one of {', '.join(DIMENSIONS)}" for name in unknown],
            "DIMENSION",
        )
    options: dict[str, Any] = dict(QUICK) if quick else {}
    if seconds is not None:
        options["seconds"] = seconds
    bench = measure_growth_bench(only=dimensions or DIMENSIONS, progress=not as_json, **options)
    typer.echo(json.dumps(bench.to_dict(), indent=None if as_json else 2))


@bench_app.command("fmi")
def bench_fmi(
    as_json: AsJson = False,
    quick: Quick = False,
    seconds: Annotated[
        float | None, _seconds("Wall-clock budget per measurement (s).", 3.0, 0.6)
    ] = None,
) -> None:
    """The vehicle FMU's doSteps/s under FMPy and under a C master, against the kernel."""
    _run("fmi", quick, as_json, seconds=seconds)


@bench_app.command("all")
def bench_all(
    as_json: AsJson = False,
    quick: Quick = False,
    baseline: Annotated[
        Path | None,
        typer.Option(
            dir_okay=False,
            metavar="FILE.json",
            help="The accepted ratios and their targets.",
            show_default="benchmarks/baseline.json of this source tree",
        ),
    ] = None,
    update_baseline: Annotated[
        bool,
        typer.Option(
            "--update-baseline",
            help="Write the measured ratios as the accepted ones (targets kept). Deliberately: "
            "after a change meant to move them, on a quiet machine.",
        ),
    ] = False,
    markdown: Annotated[
        Path | None,
        typer.Option(
            dir_okay=False,
            metavar="FILE.md",
            help="Also rewrite the generated table block of this page (docs/performance.md).",
        ),
    ] = None,
) -> None:
    """Every bench; each same-run ratio beside its baseline and target.

    Exit code 1 when a ratio fell below half its baseline (its bench measured again twice
    first): the guard against slowdowns (docs/performance.md).
    """
    _require(tuple(_NEEDS), "vcosim bench all")
    from vcosim.bench.guard import (
        DEFAULT_BASELINE,
        MARKERS,
        Baseline,
        check,
        markdown_table,
        provenance,
        report,
        write_markdown,
    )
    from vcosim.errors import ConfigError

    path = baseline or DEFAULT_BASELINE
    accepted = Baseline({}) if update_baseline and not path.exists() else Baseline.load(path)
    if markdown is not None and MARKERS[1] not in (
        markdown.read_text() if markdown.exists() else ""
    ):
        raise ConfigError(
            [f"{markdown} has no generated block ({MARKERS[1]}) to replace"], "--markdown"
        )
    run = _measure_all(quick, None if update_baseline else accepted, show=not as_json)
    this_run = provenance(quick)
    if update_baseline:
        accepted = accepted.updated(run.ratios, this_run, run.unjudged)
        accepted.save(path)
    verdict = check(run, accepted)
    if markdown is not None:
        write_markdown(markdown, markdown_table(verdict, accepted, this_run))
    if as_json:
        typer.echo(json.dumps(report(run, verdict, path)))
    else:
        _print_verdict(run, verdict, path, updated=update_baseline)
    if not verdict.passed:
        raise typer.Exit(1)


def _measure_all(quick: bool, accepted: Any, show: bool) -> SuiteRun:
    """``measure_all`` under a progress bar on stderr (one step a bench)."""
    from vcosim.bench.guard import BENCHES, measure_all
    from vcosim.bench.progress import bench_progress

    with bench_progress(show) as bar:
        task = bar.add_task("", total=len(BENCHES))

        def on_start(name: str, index: int, attempt: int) -> None:
            again = f", again ({attempt}): below half its baseline" if attempt > 1 else ""
            bar.update(
                task, completed=index, description=f"{name} ({index + 1}/{len(BENCHES)}){again}"
            )

        run = measure_all(quick, accepted, on_start)
        bar.update(task, completed=len(BENCHES))
    return run


def _print_verdict(run: SuiteRun, verdict: Verdict, path: Path, updated: bool) -> None:
    """The ratios as a table on stdout, and one line saying what it means."""
    from rich.console import Console
    from rich.table import Table

    from vcosim.app.console import results
    from vcosim.bench.guard import not_guarded, targets_text

    def number(value: float | None) -> str:
        return "—" if value is None else f"{value:.3g}"

    table = Table(title=f"same-run ratios (higher is faster) against {path}")
    for column in ("ratio", "this run", "baseline", "share", "fails below", "target", "verdict"):
        table.add_column(column, justify="left" if column in ("ratio", "target") else "right")
    reported = not_guarded()
    for row in verdict.rows:
        met = row.meets()
        target = targets_text(row.targets)
        if met:
            target += " " + "".join("✓" if ok else "✗" for ok in met.values())
        if row.regressed:
            said = "[bold red]REGRESSED"
        elif row.key in reported:
            said = "reported"
        elif row.unjudged is not None:
            said = "[yellow]not judged"
        elif row.value is None:
            said = "[yellow]not measured"
        elif row.baseline is None:
            said = "[yellow]no baseline"
        else:
            said = "[green]ok"
        share = "—" if row.share is None else f"{row.share:.2f}"
        floor = "—" if row.key in reported else number(row.fails_below)
        table.add_row(row.key, number(row.value), number(row.baseline), share, floor, target, said)
    out = (
        results if results.is_terminal else Console(width=132, log_path=False)
    )  # a pipe: whole lines
    out.print(table)
    again = [f"{name} x{len(tries)}" for name, tries in run.attempts.items() if len(tries) > 1]
    lines = [
        f"{len(run.kept)} benches{' (--quick)' if run.quick else ''} in {run.wall_time:.0f} s"
        + (f"; measured again: {', '.join(again)}" if again else "")
    ]
    if updated:
        kept = " (those not judged keep their old value)" if run.unjudged else ""
        lines.append(f"wrote these ratios to {path} as the new baseline{kept}")
    lines += [f"not judged: {key}: {why}" for key, why in run.unjudged.items()]
    if reported:
        lines.append(f"reported, not guarded (docs/performance.md): {', '.join(reported)}")
    for keys, what in (
        (verdict.no_baseline, "no baseline (not judged)"),
        (verdict.not_measured, "in the baseline but not measured"),
    ):
        if keys:
            lines.append(f"{what}: {', '.join(keys)}")
    if verdict.passed:
        lines.append("passed: no ratio below half its baseline")
    else:
        lines.append(
            f"[bold red]failed: below half their baseline: {', '.join(verdict.regressions)}"
        )
    for line in lines:
        out.print(line)
