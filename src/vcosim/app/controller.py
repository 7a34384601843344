"""``vcosim controller``: run an example, a user's function or an FMU as a controller block."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from rich.live import Live
from rich.table import Table

from vcosim.app.console import console, setup_logging
from vcosim.controllers import example
from vcosim.entrypoints import instantiate, load_user_code
from vcosim.errors import ConfigError
from vcosim.interrupts import sigterm_as_interrupt
from vcosim.tight.controller import ControllerBlock, ControllerStatus


def make_step_function(
    name: str | None,
    *,
    function: str | None,
    fmu: Path | None,
    map_file: Path | None,
    step: float,
    params: dict[str, Any],
) -> Any:
    """The step function the options ask for; exactly one source must be given."""
    sources = [s for s in (name, function, fmu) if s is not None]
    if len(sources) != 1:
        raise ConfigError(
            ["give exactly one of: an example NAME, --function module:function, --fmu FILE.fmu"],
            "vcosim controller",
        )
    if fmu is not None:
        from vcosim.controllers.fmu import FmuController

        return FmuController(fmu, map_file, step=step)
    if function is not None:
        return instantiate(load_user_code(function))
    assert name is not None  # exactly one source was given, checked above
    return example(name, **{k: v for k, v in params.items() if v is not None})


def report_table(report: dict[str, Any]) -> Table:
    """The end-of-run report as a rich table."""
    table = Table(show_header=False, title="vcosim controller: summary")
    for key in ("status", "received", "answered", "stale", "malformed", "rejected_peers", "resets"):
        table.add_row(key.replace("_", " "), str(report[key]))
    compute, rtt = report["compute_ms"], report["round_trip_ms"]
    if compute["median"] is not None:
        table.add_row(
            "computation time",
            f"median {compute['median']:.3f} ms, p99 "
            f"{compute['p99']:.3f} ms, max {compute['max']:.3f} ms",
        )
    if rtt["min"] is not None:
        table.add_row(
            "reply to next message", f"min {rtt['min']:.3f} ms, median {rtt['median']:.3f} ms"
        )
    advice = report["recommendation"]
    if advice.get("simulator_options"):
        table.add_row(
            "give the simulator",
            advice["simulator_options"]
            + f"  (send_skips {advice['send_skips']}, window {advice['window']})",
        )
    if advice.get("keeps_real_time") is False:
        table.add_row(
            "[red]warning",
            "[red]computation p99 exceeds the step: the simulator will run slower than real time",
        )
    return table


def run_controller(
    step_fn: Any, *, duration: float | None, json_out: Path | None, **options: Any
) -> dict[str, Any]:
    """Run the block with a live status line; print the summary and where to point the sim."""
    setup_logging()
    block = ControllerBlock(step_fn, **options)  # config=..., or the config's fields
    cfg = block.config
    console.log(
        f"controller: listening on {cfg.listen_host}:{block.address[1]}, simulator "
        f"{cfg.sim_host}:{cfg.sim_port}; step {cfg.step * 1e3:g} ms (start the "
        f"simulator with --ext-time {cfg.step:g}); memory {'on' if cfg.memory else 'off'}"
    )

    last = [0.0]

    def render() -> str:
        stats = block.stats
        return (
            f"{block.status.value}: answered {stats.answered} "
            f"(controller time {stats.answered * cfg.step:.2f} s), resets {stats.resets}"
        )

    with (
        sigterm_as_interrupt(),
        Live(render(), console=console, transient=True, refresh_per_second=4) as live,
    ):

        def on_status(status: ControllerStatus) -> None:
            console.log(f"status: {status.value}")

        block.on_status = on_status
        inner = block.responder.step_fn

        def step_and_show(msg: Any) -> Any:
            now = time.perf_counter()
            if now - last[0] > 0.25:
                last[0] = now
                live.update(render())
            return inner(msg)

        block.responder.step_fn = step_and_show
        report = block.run(duration)
    console.print(report_table(report))
    if json_out is not None:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(report, indent=2))
    return report
