"""``vcosim connect``: run a JSON-configured contract client with a live status line."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from vcosim.app.console import (
    ENDED_BY_INTERRUPT,
    StatusLine,
    console,
    describe_state,
    final_state,
    note,
    save_json,
    setup_logging,
)
from vcosim.app.options import (
    DEFAULT_TIMEOUT,
    Duration,
    JsonOut,
    Params,
    Timeout,
    parse_params,
    positive,
)

if TYPE_CHECKING:
    from rich.table import Table

    from vcosim.contracts.client import ClientReport, ContractClient


def connect(
    config: Annotated[
        Path,
        typer.Argument(
            exists=True,
            dir_okay=False,
            help="VS Connect-style JSON configuration file (version 2).",
        ),
    ],
    function: Annotated[
        str | None,
        typer.Option(
            help="Your step function or class: FILE.py:NAME or module:NAME; --param values "
            "are its keyword arguments (without it the block only monitors)."
        ),
    ] = None,
    param: Params = None,
    step: Annotated[
        float, typer.Option(callback=positive, help="The block's own sample time (s).")
    ] = 0.001,
    duration: Duration = None,
    timeout: Timeout = DEFAULT_TIMEOUT,
    end_with_server: Annotated[
        bool,
        typer.Option(
            "--end-with-server/--keep-connecting",
            help="End when the simulator says goodbye (its run ended), or connect again and "
            "wait for the next run.",
        ),
    ] = True,
    record: Annotated[
        Path | None,
        typer.Option(
            help="Record every port at every step to this .csv file: time, status, outputs, "
            "inputs (vcosim plot draws it)."
        ),
    ] = None,
    json_out: JsonOut = None,
) -> None:
    """Run a JSON-configured contract client against vcosim sim --contracts (VS Connect-style)."""
    params = parse_params(param)
    if params and function is None:
        raise typer.BadParameter("parameters are for --function", param_hint="'--param'")
    report = run_client(
        config,
        function=function,
        params=params,
        step=step,
        duration=duration,
        json_out=json_out,
        record=record,
        link_timeout=timeout,
        end_with_server=end_with_server,
    )
    if report.interrupted:
        raise typer.Exit(130)
    if report.errors and not any(report.received.values()):
        reasons = ", ".join(f"{code} ({n})" for code, n in report.errors.items())
        console.print(f"[red]never served[/]: the server refused every time: {reasons}")
        raise typer.Exit(1)  # the run failed: nothing was exchanged


def report_table(report: ClientReport, state: dict[str, float] | None = None) -> Table:
    """The end-of-run report as a rich table, ending with the vehicle's last known state."""
    from rich.markup import escape
    from rich.table import Table

    table = Table(show_header=False, title="vcosim connect: summary")
    table.add_row("status", f"{int(report.status)} ({report.status_name})")
    table.add_row("local time", f"{report.time:.3f} s ({report.steps} steps)")
    table.add_row(
        "updates sent / received",
        f"{sum(report.sent.values())} / {sum(report.received.values())}",
    )
    for key in ("gaps", "stale", "reconnects", "blocks"):
        table.add_row(key, str(report[key]))
    table.add_row("time blocked", f"{report.blocked_time:.3f} s")
    if report.malformed:
        table.add_row("malformed", ", ".join(f"{k}: {v}" for k, v in report.malformed.items()))
    if report.errors:  # (the server's words: shown as text, never read as markup)
        errors = ", ".join(f"{k}: {v}" for k, v in report.errors.items())
        table.add_row("server errors", escape(errors))
    trips = report.round_trip_ms
    if trips.min is not None and trips.median is not None:
        table.add_row("ping round trip", f"min {trips.min:.3f} ms, median {trips.median:.3f} ms")
    for refusal in report.refused:
        table.add_row("[yellow]refused", escape(refusal))
    if report.error:
        table.add_row("[red]error", escape(report.error))
    if report.interrupted:
        table.add_row(*next(iter(ENDED_BY_INTERRUPT.items())))
    if state is not None:
        table.add_row("vehicle in the last update", describe_state(state))
    return table


class LastUpdate:
    """The step function (or none: a monitor) that keeps the vehicle's figures while connected.

    For the summary's last line: once the link ends the client's outputs read their fields'
    invalid values, so the figures are copied at each connected step (a few floats). Only what
    the contracts ask of the file's own object is known (``groundspeed``, ``gear``,
    ``posX``/``posY`` or ``position``).
    """

    def __init__(self, step_fn: Any) -> None:
        self.step_fn = step_fn
        self.where: dict[str, tuple[str, int | None]] = {}  # signal: (port, index in the port)
        self.values: dict[str, float] = {}

    def watch(self, client: ContractClient) -> None:
        """Find the client's output ports that carry the figures."""
        names = {"groundspeed", "gear", "posX", "posY"}
        for index, port in enumerate(client.layout.outputs):
            for f in port.contract.fields:
                if f.port != index or f.meta is not None or f.object != client.config.remoteObject:
                    continue
                at = f.flat - port.start
                name = f.config.propertyName
                if name == "position" and f.width >= 2:
                    self.where.update(posX=(port.name, at), posY=(port.name, at + 1))
                elif name in names and f.width == 1:
                    self.where[name] = (port.name, None if port.width == 1 else at)

    def __call__(self, outputs: Any) -> Any:
        """Copy the figures if connected; the step function's answer (None without one)."""
        from vcosim.contracts.client import ConnectionStatus

        if outputs.status == ConnectionStatus.connected:
            for name, (port, at) in self.where.items():
                value = outputs[port]
                self.values[name] = float(value if at is None else value[at])
        return None if self.step_fn is None else self.step_fn(outputs)


def run_client(
    config: Path,
    *,
    function: str | None,
    step: float,
    duration: float | None,
    json_out: Path | None,
    params: dict[str, Any] | None = None,
    record: Path | None = None,
    **options: Any,
) -> ClientReport:
    """Run the block until the duration or Ctrl-C; print the summary, optionally save it."""
    from vcosim.contracts.client import ConnectionStatus, ContractClient
    from vcosim.entrypoints import instantiate, load_user_code
    from vcosim.interrupts import sigterm_as_interrupt

    setup_logging()
    step_fn = LastUpdate(instantiate(load_user_code(function), params) if function else None)
    client = ContractClient(config, step_fn, step=step, **options)
    step_fn.watch(client)
    if record is not None:
        try:
            log = client.record_to(record)
        except BaseException:
            client.close()
            raise
        note(f"recording {len(log.columns)} columns, every step, to {record}")
    cfg = client.config
    note(
        f"contracts: {len(client.layout.contracts)} with {cfg.remoteIP}:"
        f"{cfg.remotePort}; input ports {[p.name for p in client.layout.inputs]}, "
        f"output ports {[p.name for p in client.layout.outputs]}; step "
        f"{step * 1e3:g} ms"
    )
    client.on_status = lambda status: note(f"status {int(status)}: {status.name}")

    def render() -> str:
        state = "blocked" if client.blocking else ConnectionStatus(client.status).name
        return f"t = {client.time:8.2f} s   {state}   received {client.received}"

    started, hinted = time.monotonic(), [False]

    def explain_waiting() -> None:  # once, when no server has answered for a while
        waited = time.monotonic() - started
        if not hinted[0] and client.status == ConnectionStatus.connecting and waited > 2.0:
            hinted[0] = True
            answered = client.session.error_text  # a busy server, or another version
            if answered:
                note(f"waiting: {answered}; still asking {cfg.remoteIP}:{cfg.remotePort}")
                return
            note(
                f"waiting: no contract server has answered at {cfg.remoteIP}:{cfg.remotePort} "
                f"for {waited:.0f} s. Start one (vcosim sim --contracts, with --no-coupling "
                "unless a BeamNG-style controller runs too), or check remoteIP and remotePort "
                f"in {config}"
            )

    with sigterm_as_interrupt(), StatusLine(render, explain_waiting):
        report = client.run(duration)
    state = final_state(step_fn.values) if client.received else {}
    console.print(report_table(report, state))
    if client.recording is not None:
        note(f"recorded {client.recording.rows} steps to {record} (vcosim plot {record})")
    save_json({**report.to_dict(), "final_state": state}, json_out)
    return report
