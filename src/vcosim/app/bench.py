"""``vcosim bench``: speed measured against a baseline timed in the same run, as JSON."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from vcosim.extras import require

bench_app = typer.Typer(
    help="Measure speed against a baseline timed in the same run; prints JSON.",
    no_args_is_help=True,
)
AsJson = Annotated[bool, typer.Option("--json", help="Print only the JSON object.")]


@bench_app.command("physics")
def bench_physics(
    as_json: AsJson = False,
    seconds: Annotated[float, typer.Option(help="Wall-clock budget per measurement (s).")] = 2.0,
) -> None:
    """Physics steps per second of the vehicle kernel against CommonRoad's multi-body model."""
    require("bench", "vcosim bench physics")
    from vcosim.bench.physics import measure_physics_bench

    result = measure_physics_bench(seconds=seconds, progress=not as_json).to_dict()
    typer.echo(json.dumps(result, indent=None if as_json else 2))


@bench_app.command("coupling")
def bench_coupling(
    as_json: AsJson = False,
    seconds: Annotated[
        float, typer.Option(help="Wall-clock time per exchange measurement (s).")
    ] = 3.0,
    realtime_seconds: Annotated[
        float, typer.Option(help="Length of the real-time drift measurement (s).")
    ] = 10.0,
) -> None:
    """Lock-step exchanges/s against a raw UDP ping-pong, and real-time drift and frame lateness."""
    from vcosim.bench.coupling import measure_coupling_bench

    result = measure_coupling_bench(seconds, realtime_seconds, progress=not as_json).to_dict()
    typer.echo(json.dumps(result, indent=None if as_json else 2))


@bench_app.command("contracts")
def bench_contracts(
    as_json: AsJson = False,
    seconds: Annotated[float, typer.Option(help="Wall-clock time per measurement (s).")] = 2.0,
) -> None:
    """Updates/s of one 20-field contract at 1 ms, and the latency from server step to port."""
    from vcosim.bench.contracts import measure_contracts_bench

    result = measure_contracts_bench(seconds, progress=not as_json).to_dict()
    typer.echo(json.dumps(result, indent=None if as_json else 2))


@bench_app.command("sweep")
def bench_sweep(
    as_json: AsJson = False,
    runs: Annotated[int, typer.Option(help="Runs per measurement.")] = 40,
    workers: Annotated[int, typer.Option(help="Measure 1 up to this many workers.")] = 2,
) -> None:
    """Runs per second of a 10 s cruise scenario on local workers, and the scaling from 1 up."""
    from vcosim.bench.sweep import measure_sweep_bench

    result = measure_sweep_bench(runs=runs, max_workers=workers, progress=not as_json).to_dict()
    typer.echo(json.dumps(result, indent=None if as_json else 2))


@bench_app.command("bus")
def bench_bus(
    as_json: AsJson = False,
    seconds: Annotated[float, typer.Option(help="Wall-clock time per measurement (s).")] = 2.0,
) -> None:
    """Router throughput (messages/s) and the latency it adds over direct UDP, in one run."""
    from vcosim.bench.bus import measure_bus_bench

    result = measure_bus_bench(seconds, progress=not as_json).to_dict()
    typer.echo(json.dumps(result, indent=None if as_json else 2))


@bench_app.command("world")
def bench_world(
    as_json: AsJson = False,
    seconds: Annotated[float, typer.Option(help="Wall-clock budget per measurement (s).")] = 1.0,
) -> None:
    """Real-time factor of worlds of 1-1000 IDM cars and of 1, 2, 4 coupled cars; kernel ceiling."""
    from vcosim.bench.world import measure_world_bench

    result = measure_world_bench(seconds=seconds, progress=not as_json).to_dict()
    typer.echo(json.dumps(result, indent=None if as_json else 2))


@bench_app.command("fmi")
def bench_fmi(
    as_json: AsJson = False,
    seconds: Annotated[float, typer.Option(help="Wall-clock budget per measurement (s).")] = 3.0,
) -> None:
    """The vehicle FMU's doSteps/s under FMPy against the in-process kernel, 1 ms step."""
    require("fmi", "vcosim bench fmi", modules=("pythonfmu", "fmpy"))
    from vcosim.bench.fmi import measure_fmu_cost

    typer.echo(json.dumps(measure_fmu_cost(seconds).to_dict(), indent=None if as_json else 2))
