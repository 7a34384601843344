"""``vcosim controller``: run an example, a user's function or an FMU as a controller block."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from vcosim.app.console import (
    ENDED_BY_INTERRUPT,
    FINAL_STATE,
    StatusLine,
    console,
    describe_state,
    enter_realtime,
    final_state,
    note,
    save_json,
    setup_logging,
)
from vcosim.app.options import (
    DEFAULT_TIMEOUT,
    Allow,
    Cpu,
    Duration,
    ExactPeer,
    ExtTime,
    InterfaceCsv,
    JsonOut,
    Listen,
    Params,
    RealtimePriority,
    Spin,
    Timeout,
    non_negative,
    parse_address,
    parse_params,
)
from vcosim.constants import CONTROLLER_PORT, LOOPBACK, SIMULATOR_PORT
from vcosim.errors import ConfigError
from vcosim.extras import require

if TYPE_CHECKING:
    from rich.table import Table

    from vcosim.tight.controller import BlockReport


def controller(
    name: Annotated[
        str | None,
        typer.Argument(help="Example controller: cruise, cruise-torque, heading, acc."),
    ] = None,
    speed: Annotated[
        float | None, typer.Option(help="Target speed (m/s): short for --param speed=VALUE.")
    ] = None,
    heading: Annotated[
        float | None,
        typer.Option(help="Target heading (degrees): short for --param heading=VALUE."),
    ] = None,
    time_gap: Annotated[
        float | None,
        typer.Option(
            help="Time gap to the vehicle ahead (s), bumper to bumper: short for --param "
            "time_gap=VALUE."
        ),
    ] = None,
    param: Params = None,
    function: Annotated[
        str | None,
        typer.Option(
            help="Your own step function or class: FILE.py:NAME or module:NAME; --param "
            "values are its keyword arguments."
        ),
    ] = None,
    fmu: Annotated[
        Path | None,
        typer.Option(exists=True, help="An FMI co-simulation FMU to run as the controller."),
    ] = None,
    map_file: Annotated[
        Path | None, typer.Option("--map", help="TOML map of FMU variables to bank names.")
    ] = None,
    interface: InterfaceCsv = None,
    ext_time: ExtTime = None,
    duration: Duration = None,
    memory: Annotated[
        bool, typer.Option(help="Answer with the previous step's outputs (Simulink memory).")
    ] = False,
    listen: Listen = None,
    sim: Annotated[
        str | None,
        typer.Option(
            metavar="HOST:PORT",
            help="The simulator's address, vcosim or BeamNG.tech.",
            show_default=f"{LOOPBACK}:{SIMULATOR_PORT}",
        ),
    ] = None,
    allow: Allow = None,
    exact_peer: ExactPeer = False,
    timeout: Timeout = DEFAULT_TIMEOUT,
    idle_exit: Annotated[
        float,
        typer.Option(
            callback=non_negative,
            help="Once connected, end when the simulator has been silent this long (s): its run "
            "ended. 0: never (e.g. BeamNG paused for long).",
        ),
    ] = 3.0,
    spin: Spin = 0.002,
    realtime_priority: RealtimePriority = False,
    cpu: Cpu = None,
    json_out: JsonOut = None,
) -> None:
    """Run a controller against a running simulator (vcosim sim or BeamNG.tech).

    The block answers each message with the same id, as BeamNG's Simulink S-function does;
    --ext-time must equal the simulator's. Parameters (--param, --speed, --heading,
    --time-gap) reach the controller, whichever it is: an example's fields, your class's
    constructor or your function's keyword arguments, an FMU's parameters; one it does not
    take is an error before anything starts.
    """
    from vcosim.tight.config import ControllerConfig

    if fmu is not None:
        require("fmu", "--fmu")
    given: dict[str, Any] = {"step": ext_time}
    if listen is not None:
        address = parse_address(listen, option="--listen", default_port=CONTROLLER_PORT)
        given.update(listen_host=address.host, listen_port=address.port)
    if sim is not None:
        address = parse_address(sim, option="--sim", default_port=SIMULATOR_PORT)
        given.update(sim_host=address.host, sim_port=address.port)
    options = dict(
        {k: v for k, v in given.items() if v is not None},
        memory=memory,
        timeout=timeout,
        spin=spin,
        idle_exit=idle_exit or None,
        allow=tuple(allow or ()),
        exact_peer=exact_peer,
    )
    config = (
        ControllerConfig.for_interface(interface, **options)
        if interface is not None
        else ControllerConfig(**options)
    )
    params = parse_params(param, speed=speed, heading=heading, time_gap=time_gap)
    step_fn = make_step_function(
        name, function=function, fmu=fmu, map_file=map_file, step=config.step, params=params
    )
    enter_realtime(realtime_priority, cpu)
    try:
        report = run_controller(step_fn, duration=duration, json_out=json_out, config=config)
    finally:
        if hasattr(step_fn, "close"):  # an FMU: terminate and free it
            step_fn.close()
    if report.interrupted:
        raise typer.Exit(130)


def make_step_function(
    name: str | None,
    *,
    function: str | None,
    fmu: Path | None,
    map_file: Path | None,
    step: float,
    params: dict[str, Any],
) -> Any:
    """The step function the options ask for, made with ``params``; exactly one source."""
    sources = [s for s in (name, function, fmu) if s is not None]
    if len(sources) != 1:
        raise ConfigError(
            ["give exactly one of: an example NAME, --function module:function, --fmu FILE.fmu"],
            "vcosim controller",
        )
    from vcosim.controllers import example
    from vcosim.entrypoints import instantiate, load_user_code

    if fmu is not None:
        from vcosim.controllers.fmu import FmuController

        return FmuController(fmu, map_file, step=step, parameters=params)
    if function is not None:
        return instantiate(load_user_code(function), params)
    assert name is not None  # exactly one source was given, checked above
    return example(name, **params)


class Remembering:
    """A step function that keeps the simulator's last message, for the summary's last line."""

    def __init__(self, step_fn: Any) -> None:
        self.step_fn = step_fn
        self.message: Any = None

    def __call__(self, message: Any) -> Any:
        """The step function's answer to ``message``, which is kept."""
        self.message = message
        return self.step_fn(message)

    def final_state(self) -> dict[str, float]:
        """Speed, gear and position in the last message (none if none came)."""
        if self.message is None:
            return {}
        return final_state({name: getattr(self.message, name) for name in FINAL_STATE.values()})


def report_table(report: BlockReport, state: dict[str, float] | None = None) -> Table:
    """The end-of-run report as a rich table, ending with the vehicle's last known state."""
    from rich.table import Table

    table = Table(show_header=False, title="vcosim controller: summary")
    for key in (
        "status",
        "received",
        "answered",
        "stale",
        "implausible_id",
        "malformed",
        "rejected_peers",
        "peer_takeovers",
        "resets",
    ):
        table.add_row(key.replace("_", " "), str(report[key]))
    compute, rtt = report.compute_ms, report.round_trip_ms
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
    advice = report.recommendation
    if advice.simulator_options:
        table.add_row(
            "give the simulator",
            f"{advice.simulator_options}  (send_skips {advice.send_skips}, window {advice.window})",
        )
    if advice.keeps_real_time is False:
        table.add_row(
            "[red]warning",
            "[red]computation p99 exceeds the step: the simulator will run slower than real time",
        )
    if report.interrupted:
        table.add_row(*next(iter(ENDED_BY_INTERRUPT.items())))
    if state is not None:
        table.add_row("vehicle in the last message", describe_state(state))
    return table


def run_controller(
    step_fn: Any, *, duration: float | None, json_out: Path | None, **options: Any
) -> BlockReport:
    """Run the block with a live status line; print the summary and where to point the sim."""
    from vcosim.interrupts import sigterm_as_interrupt
    from vcosim.tight.controller import ControllerBlock

    setup_logging()
    remembering = Remembering(step_fn)
    block = ControllerBlock(remembering, **options)  # config=..., or the config's fields
    cfg = block.config
    note(
        f"controller: listening on {cfg.listen_host}:{block.address[1]}, simulator "
        f"{cfg.sim_host}:{cfg.sim_port}; step {cfg.step * 1e3:g} ms (start the "
        f"simulator with --ext-time {cfg.step:g}); memory {'on' if cfg.memory else 'off'}"
    )

    def render() -> str:
        stats = block.stats
        return (
            f"{block.status.value}: answered {stats.answered} "
            f"(controller time {stats.answered * cfg.step:.2f} s), resets {stats.resets}"
        )

    block.on_status = lambda status: note(f"status: {status.value}")
    started, hinted = time.monotonic(), [False]

    def explain_waiting() -> None:  # once, when no simulator has sent anything for a while
        waited = time.monotonic() - started
        if not hinted[0] and block.stats.received == 0 and waited > 3.0:
            hinted[0] = True
            note(
                f"waiting: no simulator has sent to {cfg.listen_host}:{block.address[1]} for "
                f"{waited:.0f} s. Start one sending here (vcosim sim --controller "
                f"{cfg.listen_host}:{block.address[1]}, or BeamNG's coupling on the vehicle)"
            )

    with sigterm_as_interrupt(), StatusLine(render, explain_waiting):
        report = block.run(duration)
    if report.simulator_ended:
        note(f"the simulator has been silent for {cfg.idle_exit:g} s: its run ended")
    state = remembering.final_state()
    console.print(report_table(report, state))
    save_json({**report.to_dict(), "final_state": state}, json_out)
    return report
