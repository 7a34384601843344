"""The ``vcosim`` command: one typer app, one sub-command (or group) per face of the simulator."""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from vcosim.sim.pacing import PacingMode

app = typer.Typer(
    name="vcosim",
    help="Vehicle co-simulation: a 2000 Hz vehicle that external controllers couple to.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    add_completion=False,
)
bench_app = typer.Typer(
    help="Measure speed against a baseline timed in the same run; prints JSON.",
    no_args_is_help=True,
)
app.add_typer(bench_app, name="bench")


@app.command()
def demo(
    out: Annotated[
        Path, typer.Option(help="Folder for the run; a timestamped sub-folder is created.")
    ] = Path("runs"),
    vehicle: Annotated[
        str, typer.Option(help="Vehicle preset name or parameter TOML file.")
    ] = "nightrider",
    manoeuvre: Annotated[
        bool, typer.Option("--manoeuvre", help="Instead: the vehicle alone through a scripted "
                           "manoeuvre (start, accelerate through the gears, brake, turn).")
    ] = False,
) -> None:
    """Couple the cruise controller to the simulator over UDP and plot the run.

    The simulator and the example `cruise` controller: two processes on
    loopback, in lock-step, 30 s of simulated time faster than real time;
    the target speed steps from 15 to 25 m/s at 15 s. Writes the coupling
    debug CSVs, signals.csv, demo.png and summary.json into OUT/<timestamp>/.
    Needs no screen, sound card or joystick.
    """
    from vcosim.demo import run_demo

    run_demo(out, vehicle, manoeuvre=manoeuvre)


class Gearbox(str, Enum):
    """Transmission modes a coupled vehicle can start in."""

    automatic = "automatic"
    manual = "manual"


@app.command()
def sim(
    duration: Annotated[
        float | None, typer.Option(help="Simulated seconds to run (default: until Ctrl-C).")
    ] = None,
    pacing: Annotated[
        PacingMode, typer.Option(help="realtime: frames held to the wall clock; fast: as fast "
                                 "as possible; lockstep: paced only by the coupling.")
    ] = PacingMode.realtime,
    time_dilation: Annotated[
        float, typer.Option(help="Simulated seconds per wall second in realtime pacing.")
    ] = 1.0,
    frame_rate: Annotated[float, typer.Option(help="Frames per second in realtime pacing.")] = 60.0,
    vehicle: Annotated[
        str, typer.Option(help="Vehicle preset name or parameter TOML file.")
    ] = "nightrider",
    gearbox: Annotated[
        Gearbox, typer.Option(help="automatic: the controller needs only pedals and steering.")
    ] = Gearbox.automatic,
    engine: Annotated[bool, typer.Option(help="Start with the engine idling.")] = True,
    coupling: Annotated[
        bool, typer.Option(help="Run the BeamNG-compatible tight-coupling endpoint.")
    ] = True,
    ext_time: Annotated[
        float, typer.Option(help="T_ext: the controller's computation time per message (s).")
    ] = 0.005,
    ping_time: Annotated[float, typer.Option(help="T_ping: UDP round-trip time (s).")] = 0.00001,
    window: Annotated[int | None, typer.Option(help="Window width (overrides T_ping).")] = None,
    send_skips: Annotated[
        int | None, typer.Option(help="Steps between sends (overrides T_ext).")
    ] = None,
    send_offset: Annotated[int, typer.Option(help="Step of the first send.")] = 0,
    timeout: Annotated[float, typer.Option(help="Blocking-receive timeout (s).")] = 2.0,
    controller_host: Annotated[str, typer.Option(help="Controller address.")] = "127.0.0.1",
    controller_port: Annotated[int, typer.Option(help="Controller's UDP port.")] = 64890,
    listen_host: Annotated[
        str, typer.Option(help="Address to bind; loopback unless you open it on purpose.")
    ] = "127.0.0.1",
    listen_port: Annotated[int, typer.Option(help="UDP port the simulator listens on.")] = 64891,
    allow: Annotated[
        list[str] | None, typer.Option(help="Extra peer addresses to accept (repeatable).")
    ] = None,
    spin: Annotated[
        float | None, typer.Option(help="Busy-poll this long before blocking (s); default "
                                   "0.05 in lockstep, 0 otherwise.")
    ] = None,
    debug_log: Annotated[
        Path | None, typer.Option(help="Folder for BeamNG's three coupling debug CSVs.")
    ] = None,
    contracts: Annotated[
        bool, typer.Option(help="Also serve VS Connect-style contracts (vcosim connect).")
    ] = False,
    contracts_host: Annotated[
        str, typer.Option(help="Address the contract server binds.")
    ] = "127.0.0.1",
    contracts_port: Annotated[int, typer.Option(help="Contract server UDP port.")] = 4367,
    bus: Annotated[
        str | None, typer.Option(help="Join a NightRider bus router at HOST:PORT.")
    ] = None,
    json_out: Annotated[
        Path | None, typer.Option("--json-out", help="Also write the summary as JSON here.")
    ] = None,
) -> None:
    """Run the simulator; external controllers couple to it exactly as to BeamNG.tech."""
    from vcosim.sim.runner import run_simulator
    from vcosim.tight.endpoint import CouplingConfig

    config = None
    if coupling:
        allowed = (controller_host, *(allow or ())) if allow else None
        config = CouplingConfig(
            controller_host=controller_host, controller_port=controller_port,
            listen_host=listen_host, listen_port=listen_port, ext_time=ext_time,
            ping_time=ping_time, window=window, send_skips=send_skips, send_offset=send_offset,
            timeout=timeout, allowed_hosts=allowed, spin=spin, debug_log=debug_log,
        )
    faces = []
    if contracts:
        faces.append(("contracts", "vcosim.contracts.server:ContractServer",
                      {"host": contracts_host, "port": contracts_port}))
    if bus:
        host, _, port = bus.rpartition(":")
        faces.append(("bus", "vcosim.bus.vehicle_module:BusVehicle",
                      {"host": host or "127.0.0.1", "port": int(port)}))
    run_simulator(
        duration=duration, pacing=pacing, time_dilation=time_dilation, frame_rate=frame_rate,
        vehicle=vehicle, automatic=gearbox is Gearbox.automatic, engine_running=engine,
        coupling=config, faces=faces, json_out=json_out,
    )


@app.command()
def controller(
    name: Annotated[
        str | None, typer.Argument(help="Example controller: cruise, cruise-torque, heading.")
    ] = None,
    speed: Annotated[float | None, typer.Option(help="Target speed (m/s).")] = None,
    heading: Annotated[float | None, typer.Option(help="Target heading (degrees).")] = None,
    function: Annotated[
        str | None, typer.Option(help="Your own step function, as module:function.")
    ] = None,
    fmu: Annotated[
        Path | None, typer.Option(help="An FMI co-simulation FMU to run as the controller.")
    ] = None,
    map_file: Annotated[
        Path | None, typer.Option("--map", help="TOML map of FMU variables to bank names.")
    ] = None,
    step: Annotated[
        float, typer.Option(help="The controller's sample time (s): the simulator's "
                            "(send_skips + 1) * dt, i.e. its --ext-time.")
    ] = 0.005,
    duration: Annotated[
        float | None, typer.Option(help="Controller seconds to run (default: until Ctrl-C).")
    ] = None,
    memory: Annotated[
        bool, typer.Option(help="Answer with the previous step's outputs (Simulink memory).")
    ] = False,
    listen_host: Annotated[str, typer.Option(help="Address to bind.")] = "127.0.0.1",
    listen_port: Annotated[int, typer.Option(help="UDP port to listen on.")] = 64890,
    sim_host: Annotated[
        str, typer.Option(help="The simulator's address (vcosim or BeamNG.tech).")
    ] = "127.0.0.1",
    sim_port: Annotated[int, typer.Option(help="The simulator's UDP port.")] = 64891,
    timeout: Annotated[float, typer.Option(help="No message for this long: reset (s).")] = 2.0,
    spin: Annotated[float, typer.Option(help="Busy-poll this long before blocking (s).")] = 0.002,
    json_out: Annotated[
        Path | None, typer.Option("--json-out", help="Also write the report as JSON here.")
    ] = None,
) -> None:
    """Run a controller against a running simulator (vcosim sim or BeamNG.tech)."""
    from vcosim.controllers.runner import make_step_function, run_controller

    params = {"speed": speed, "heading": heading}
    step_fn = make_step_function(name, function=function, fmu=fmu, map_file=map_file,
                                 step=step, params=params)
    try:
        run_controller(step_fn, duration=duration, json_out=json_out, step=step,
                       memory=memory, listen_host=listen_host, listen_port=listen_port,
                       sim_host=sim_host, sim_port=sim_port, timeout=timeout, spin=spin)
    finally:
        if hasattr(step_fn, "close"):  # an FMU: terminate and free it
            step_fn.close()


@app.command()
def analyze(
    run_dir: Annotated[
        Path, typer.Argument(help="Folder with the three debug CSVs (vcosim's or BeamNG's).")
    ],
    out: Annotated[
        Path | None, typer.Option(help="Report file: .html (default RUN_DIR/analysis.html, "
                                  "figures embedded) or .md (with PNGs beside it).")
    ] = None,
    dt: Annotated[float, typer.Option(help="The physics step (s).")] = 0.0005,
) -> None:
    """Analyse a coupled run's timing from its debug logs: figures, metrics and a verdict."""
    from vcosim.analysis.report import analyze_command

    analyze_command(run_dir, out, dt)


@app.command()
def cases(
    out: Annotated[
        Path, typer.Option(help="Folder for the five runs' logs and cases.html.")
    ] = Path("runs/cases"),
    case: Annotated[
        list[int] | None, typer.Option(help="Run only this case (1-5; repeatable).")
    ] = None,
) -> None:
    """Run the five timing cases of seed 001 end to end and check them; exit 1 if one fails."""
    from vcosim.analysis.cases import cases_command

    if not cases_command(out, case):
        raise typer.Exit(1)


@bench_app.command("physics")
def bench_physics(
    as_json: Annotated[bool, typer.Option("--json", help="Print only the JSON object.")] = False,
    seconds: Annotated[
        float, typer.Option(help="Wall-clock budget per measurement (s).")
    ] = 2.0,
) -> None:
    """Physics steps per second of the vehicle kernel against CommonRoad's multi-body model."""
    from vcosim.bench.physics import run_physics_bench

    result = run_physics_bench(seconds=seconds, progress=not as_json)
    typer.echo(json.dumps(result, indent=None if as_json else 2))


@bench_app.command("coupling")
def bench_coupling(
    as_json: Annotated[bool, typer.Option("--json", help="Print only the JSON object.")] = False,
    seconds: Annotated[float, typer.Option(help="Wall-clock time per exchange measurement (s).")
                       ] = 3.0,
    realtime_seconds: Annotated[
        float, typer.Option(help="Length of the real-time drift measurement (s).")
    ] = 10.0,
) -> None:
    """Lock-step exchanges/s against a raw UDP ping-pong, and real-time drift and frame lateness."""
    from vcosim.bench.coupling import run_coupling_bench

    result = run_coupling_bench(seconds, realtime_seconds, progress=not as_json)
    typer.echo(json.dumps(result, indent=None if as_json else 2))


def main() -> None:
    """Entry point of the ``vcosim`` command: vcosim's own errors print as one clear message."""
    from vcosim.errors import VcosimError

    try:
        app()
    except VcosimError as exc:
        typer.secho(f"error: {exc}", err=True, fg=typer.colors.RED)
        raise SystemExit(2) from None
