"""``vcosim connect``: run a JSON-configured contract client with a live status line."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from rich.live import Live
from rich.table import Table

from vcosim.app.console import console, setup_logging
from vcosim.contracts.client import ConnectionStatus, ContractClient, Ports
from vcosim.entrypoints import instantiate, load_user_code
from vcosim.interrupts import sigterm_as_interrupt


def report_table(report: dict[str, Any]) -> Table:
    """The end-of-run report as a rich table."""
    table = Table(show_header=False, title="vcosim connect: summary")
    table.add_row("status", f"{report['status']} ({report['status_name']})")
    table.add_row("local time", f"{report['time']:.3f} s ({report['steps']} steps)")
    table.add_row("sent / received", f"{report['sent']} / {report['received']}")
    for key in ("gaps", "stale", "reconnects", "blocks"):
        table.add_row(key, str(report[key]))
    table.add_row("time blocked", f"{report['blocked_time']:.3f} s")
    if report["malformed"]:
        table.add_row("malformed", json.dumps(report["malformed"]))
    trips = report["round_trip_ms"]
    if trips["min"] is not None:
        table.add_row(
            "ping round trip", f"min {trips['min']:.3f} ms, median {trips['median']:.3f} ms"
        )
    for refusal in report["refused"]:
        table.add_row("[yellow]refused", refusal)
    if report["error"]:
        table.add_row("[red]error", report["error"])
    return table


def run_client(
    config: Path,
    *,
    function: str | None,
    step: float,
    duration: float | None,
    json_out: Path | None,
    **options: Any,
) -> dict[str, Any]:
    """Run the block until the duration or Ctrl-C; print the summary, optionally save it."""
    setup_logging()
    step_fn = instantiate(load_user_code(function)) if function else None
    client = ContractClient(config, step_fn, step=step, **options)
    cfg = client.config
    console.log(
        f"contracts: {len(client.layout.contracts)} with {cfg.remoteIP}:"
        f"{cfg.remotePort}; input ports {[p.name for p in client.layout.inputs]}, "
        f"output ports {[p.name for p in client.layout.outputs]}; step "
        f"{step * 1e3:g} ms"
    )
    client.on_status = lambda status: console.log(f"status {int(status)}: {status.name}")
    last = [0.0]

    def render() -> str:
        state = "blocked" if client.blocking else ConnectionStatus(client.status).name
        return f"t = {client.time:8.2f} s   {state}   received {client.received}"

    with (
        sigterm_as_interrupt(),
        Live(render(), console=console, transient=True, refresh_per_second=4) as live,
    ):

        def step_and_show(ports: Ports) -> Any:
            now = time.perf_counter()
            if now - last[0] > 0.25:
                last[0] = now
                live.update(render())
            return step_fn(ports) if step_fn is not None else None

        client.step_fn = step_and_show
        report = client.run(duration)
    console.print(report_table(report))
    if json_out is not None:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(report, indent=2, default=str))
    return report
