"""The ``vcosim`` command: one typer app, one sub-command (or group) per face of the simulator."""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer

from vcosim.constants import BUS_PORT, CONTRACTS_PORT, PHYSICS_DT, VIEWER_PORT
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
        bool,
        typer.Option(
            "--manoeuvre",
            help="Instead: the vehicle alone through a scripted "
            "manoeuvre (start, accelerate through the gears, brake, turn).",
        ),
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
        PacingMode,
        typer.Option(
            help="realtime: frames held to the wall clock; fast: as fast "
            "as possible; lockstep: paced only by the coupling."
        ),
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
    interface: Annotated[
        Path | None,
        typer.Option(
            help="A BeamNG interface CSV: exactly the signals it lists, "
            "each way, in its order; its connection rows set timing, "
            "addresses and ports unless the options below do."
        ),
    ] = None,
    gear_slot: Annotated[
        bool,
        typer.Option(
            help="Read slot 4 of the fixed layout as a requested gear (vcosim's "
            "extension; BeamNG ignores the slot)."
        ),
    ] = False,
    ext_time: Annotated[
        float | None,
        typer.Option(
            help="T_ext: the controller's computation time per message (s) [default: 0.005]"
        ),
    ] = None,
    ping_time: Annotated[
        float | None, typer.Option(help="T_ping: UDP round-trip time (s) [default: 0.00001]")
    ] = None,
    window: Annotated[int | None, typer.Option(help="Window width (overrides T_ping).")] = None,
    send_skips: Annotated[
        int | None, typer.Option(help="Steps between sends (overrides T_ext).")
    ] = None,
    send_offset: Annotated[int, typer.Option(help="Step of the first send.")] = 0,
    timeout: Annotated[float, typer.Option(help="Blocking-receive timeout (s).")] = 2.0,
    controller_host: Annotated[
        str | None, typer.Option(help="Controller address [default: 127.0.0.1]")
    ] = None,
    controller_port: Annotated[
        int | None, typer.Option(help="Controller's UDP port [default: 64890]")
    ] = None,
    listen_host: Annotated[
        str | None,
        typer.Option(
            help="Address to bind; loopback unless you open it on purpose [default: 127.0.0.1]"
        ),
    ] = None,
    listen_port: Annotated[
        int | None, typer.Option(help="UDP port the simulator listens on [default: 64891]")
    ] = None,
    allow: Annotated[
        list[str] | None, typer.Option(help="Extra peer addresses to accept (repeatable).")
    ] = None,
    spin: Annotated[
        float | None,
        typer.Option(
            help="Busy-poll this long before blocking (s); default 0.05 in lockstep, 0 otherwise."
        ),
    ] = None,
    debug_log: Annotated[
        Path | None, typer.Option(help="Folder for BeamNG's three coupling debug CSVs.")
    ] = None,
    custom_hooks: Annotated[
        str | None,
        typer.Option(
            help="module:object with fill_custom(sim, bank_h) and/or "
            "on_custom(sim, values): the 50 custom values each way."
        ),
    ] = None,
    contracts: Annotated[
        bool, typer.Option(help="Also serve VS Connect-style contracts (vcosim connect).")
    ] = False,
    contracts_host: Annotated[
        str, typer.Option(help="Address the contract server binds.")
    ] = "127.0.0.1",
    contracts_port: Annotated[int, typer.Option(help="Contract server UDP port.")] = CONTRACTS_PORT,
    contracts_allow: Annotated[
        list[str] | None,
        typer.Option(
            help="Client addresses the contract server accepts (repeatable; default: loopback)."
        ),
    ] = None,
    vehicle_name: Annotated[
        str, typer.Option(help="The vehicle's object name for contracts.")
    ] = "Vehicle_A",
    bus: Annotated[
        str | None, typer.Option(help="Join a NightRider bus router at HOST:PORT.")
    ] = None,
    json_out: Annotated[
        Path | None, typer.Option("--json-out", help="Also write the summary as JSON here.")
    ] = None,
) -> None:
    """Run the simulator; external controllers couple to it exactly as to BeamNG.tech."""
    from vcosim.app.simulator import run_simulator
    from vcosim.tight.endpoint import CouplingConfig

    config = None
    if coupling:
        given: dict[str, Any] = {
            k: v
            for k, v in {
                "controller_host": controller_host,
                "controller_port": controller_port,
                "listen_host": listen_host,
                "listen_port": listen_port,
                "ext_time": ext_time,
                "ping_time": ping_time,
            }.items()
            if v is not None
        }
        options: dict[str, Any] = dict(
            window=window,
            send_skips=send_skips,
            send_offset=send_offset,
            timeout=timeout,
            spin=spin,
            debug_log=debug_log,
            gear_slot=gear_slot,
        )
        config = (
            CouplingConfig.for_interface(interface, **given, **options)
            if interface is not None
            else CouplingConfig(**given, **options)
        )
        if allow:
            config.allowed_hosts = (config.controller_host, *allow)
    faces = []
    if contracts:
        faces.append(
            (
                "contracts",
                "vcosim.contracts.server:ContractServer",
                {
                    "host": contracts_host,
                    "port": contracts_port,
                    "allowed_hosts": contracts_allow,
                    "vehicle_name": vehicle_name,
                },
            )
        )
    if bus:
        host, _, port = bus.rpartition(":")
        faces.append(
            (
                "bus",
                "vcosim.bus.vehicle_module:BusVehicle",
                {"host": host or "127.0.0.1", "port": int(port)},
            )
        )
    run_simulator(
        duration=duration,
        pacing=pacing,
        time_dilation=time_dilation,
        frame_rate=frame_rate,
        vehicle=vehicle,
        automatic=gearbox is Gearbox.automatic,
        engine_running=engine,
        coupling=config,
        custom_hooks=custom_hooks,
        faces=faces,
        json_out=json_out,
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
    interface: Annotated[
        Path | None,
        typer.Option(
            help="A BeamNG interface CSV (the simulator must use the same "
            "file); its connection rows set the step, addresses and "
            "ports unless the options below do."
        ),
    ] = None,
    step: Annotated[
        float | None,
        typer.Option(
            help="The controller's sample time (s): the simulator's "
            "(send_skips + 1) * dt, i.e. its --ext-time [default: 0.005]"
        ),
    ] = None,
    duration: Annotated[
        float | None, typer.Option(help="Controller seconds to run (default: until Ctrl-C).")
    ] = None,
    memory: Annotated[
        bool, typer.Option(help="Answer with the previous step's outputs (Simulink memory).")
    ] = False,
    listen_host: Annotated[
        str | None, typer.Option(help="Address to bind [default: 127.0.0.1]")
    ] = None,
    listen_port: Annotated[
        int | None, typer.Option(help="UDP port to listen on [default: 64890]")
    ] = None,
    sim_host: Annotated[
        str | None,
        typer.Option(help="The simulator's address (vcosim or BeamNG.tech) [default: 127.0.0.1]"),
    ] = None,
    sim_port: Annotated[
        int | None, typer.Option(help="The simulator's UDP port [default: 64891]")
    ] = None,
    timeout: Annotated[float, typer.Option(help="No message for this long: reset (s).")] = 2.0,
    spin: Annotated[float, typer.Option(help="Busy-poll this long before blocking (s).")] = 0.002,
    json_out: Annotated[
        Path | None, typer.Option("--json-out", help="Also write the report as JSON here.")
    ] = None,
) -> None:
    """Run a controller against a running simulator (vcosim sim or BeamNG.tech)."""
    from vcosim.app.controller import make_step_function, run_controller
    from vcosim.tight.controller import ControllerConfig

    given: dict[str, Any] = {
        k: v
        for k, v in {
            "step": step,
            "listen_host": listen_host,
            "listen_port": listen_port,
            "sim_host": sim_host,
            "sim_port": sim_port,
        }.items()
        if v is not None
    }
    options: dict[str, Any] = dict(memory=memory, timeout=timeout, spin=spin)
    config = (
        ControllerConfig.for_interface(interface, **given, **options)
        if interface is not None
        else ControllerConfig(**given, **options)
    )
    params = {"speed": speed, "heading": heading}
    step_fn = make_step_function(
        name, function=function, fmu=fmu, map_file=map_file, step=config.step, params=params
    )
    try:
        run_controller(step_fn, duration=duration, json_out=json_out, config=config)
    finally:
        if hasattr(step_fn, "close"):  # an FMU: terminate and free it
            step_fn.close()


@app.command()
def connect(
    config: Annotated[
        Path, typer.Argument(help="VS Connect-style JSON configuration file (version 2).")
    ],
    function: Annotated[
        str | None,
        typer.Option(
            help="Your step function: module:function or "
            "path/file.py:function (without it the block only monitors)."
        ),
    ] = None,
    step: Annotated[float, typer.Option(help="The block's step (s) of local time.")] = 0.001,
    duration: Annotated[
        float | None, typer.Option(help="Local seconds to run (default: until Ctrl-C).")
    ] = None,
    link_timeout: Annotated[
        float, typer.Option(help="No message from the server for this long: reconnect (s).")
    ] = 2.0,
    json_out: Annotated[
        Path | None, typer.Option("--json-out", help="Also write the report as JSON here.")
    ] = None,
) -> None:
    """Run a JSON-configured contract client against vcosim sim --contracts (VS Connect-style)."""
    from vcosim.app.connect import run_client

    run_client(
        config,
        function=function,
        step=step,
        duration=duration,
        json_out=json_out,
        link_timeout=link_timeout,
    )


@app.command()
def analyze(
    run_dir: Annotated[
        Path, typer.Argument(help="Folder with the three debug CSVs (vcosim's or BeamNG's).")
    ],
    out: Annotated[
        Path | None,
        typer.Option(
            help="Report file: .html (default RUN_DIR/analysis.html, "
            "figures embedded) or .md (with PNGs beside it)."
        ),
    ] = None,
    dt: Annotated[float, typer.Option(help="The physics step (s).")] = PHYSICS_DT,
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


@app.command()
def sweep(
    file: Annotated[
        Path,
        typer.Argument(
            help="The sweep file (TOML): scenario, parameters, output; see docs/sweeps.md."
        ),
    ],
    out: Annotated[
        Path | None, typer.Option(help="Output folder (default: \\[output] dir, else sweeps/NAME).")
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(help="Local worker processes (default: every core; 0: run in this process)."),
    ] = None,
    ray: Annotated[
        bool,
        typer.Option(
            "--ray",
            help="Run on Ray: join RAY_ADDRESS or a cluster started "
            "here with `ray start`, else start Ray locally.",
        ),
    ] = False,
    ray_address: Annotated[
        str | None, typer.Option(help="Join the Ray cluster at this address (implies --ray).")
    ] = None,
    signals: Annotated[
        bool | None,
        typer.Option(
            "--signals/--no-signals",
            help="Also save every run's signals (default: \\[output] signals).",
        ),
    ] = None,
    check: Annotated[
        bool, typer.Option("--check", help="Only validate the file and list the runs.")
    ] = False,
) -> None:
    """Run a scenario sweep: every run's metrics to Parquet, and a report with plots."""
    from vcosim.sweep.driver import sweep_command

    code = sweep_command(
        file,
        out=out,
        workers=workers,
        ray=ray,
        ray_address=ray_address,
        signals=signals,
        check=check,
    )
    if code:
        raise typer.Exit(code)


# -- the NightRider bus: shared options, then one command per module -------------------------
BusHost = Annotated[
    str,
    typer.Option(
        help="The bus router's address (for `vcosim bus`: the address it binds; loopback unless "
        "you open it on purpose)."
    ),
]
BusPort = Annotated[int, typer.Option(help="The bus router's UDP handshake port.")]
BusModuleId = Annotated[int | None, typer.Option("--id", help="This module's id on the bus.")]
BusSymbols = Annotated[
    str,
    typer.Option(
        help="Message symbols: start, separator, common-part end, end (every module must agree)."
    ),
]
BusMaxLength = Annotated[
    int, typer.Option(help="Longest message in bytes (every module must agree).")
]


def _bus_codec(symbols: str, max_length: int):  # -> vcosim.bus.codec.Codec
    """The bus codec of the shared options (imported only when a bus command runs)."""
    from vcosim.bus.codec import Codec

    return Codec.from_symbols(symbols, max_length)


@app.command()
def bus(
    host: BusHost = "127.0.0.1",
    port: BusPort = BUS_PORT,
    router_id: Annotated[int, typer.Option("--id", help="The router's own id.")] = 0,
    max_modules: Annotated[int, typer.Option(help="Modules accepted at most.")] = 32,
    symbols: BusSymbols = "§§+¶",
    max_length: BusMaxLength = 256,
    json_out: Annotated[
        Path | None, typer.Option("--json-out", help="Also write the summary as JSON here.")
    ] = None,
) -> None:
    """Run the NightRider bus router: modules join with a handshake, messages go by module id.

    Runs until Ctrl-C, SIGTERM or a Shutdown message to the router's id (which every module
    receives). Malformed messages and unknown destinations are counted and reported.
    """
    from vcosim.app.bus import run_router

    run_router(
        host,
        port,
        router_id=router_id,
        max_modules=max_modules,
        codec=_bus_codec(symbols, max_length),
        json_out=json_out,
    )


@app.command("log")
def log_bus(
    out_file: Annotated[Path, typer.Argument(help="The MCAP file to write (.mcap).")],
    host: BusHost = "127.0.0.1",
    port: BusPort = BUS_PORT,
    module_id: BusModuleId = None,
    csv: Annotated[bool, typer.Option(help="Also export the recording as CSV at the end.")] = False,
    duration: Annotated[
        float | None, typer.Option(help="Seconds to record (default: until Shutdown/Ctrl-C).")
    ] = None,
    symbols: BusSymbols = "§§+¶",
    max_length: BusMaxLength = 256,
) -> None:
    """Record every message on the bus, with timestamps, to MCAP (Foxglove, PlotJuggler)."""
    from vcosim.app.bus import run_logger

    run_logger(
        out_file,
        host,
        port,
        module_id=20 if module_id is None else module_id,
        codec=_bus_codec(symbols, max_length),
        csv=csv,
        duration=duration,
    )


@app.command()
def replay(
    file: Annotated[Path, typer.Argument(help="A recording made by `vcosim log`.")],
    host: BusHost = "127.0.0.1",
    port: BusPort = BUS_PORT,
    module_id: BusModuleId = None,
    speed: Annotated[
        float, typer.Option(help="1: the recorded pace; 2: twice as fast; 0: as fast as possible.")
    ] = 1.0,
    only: Annotated[
        list[str] | None, typer.Option(help="Send only this message type (repeatable).")
    ] = None,
    skip: Annotated[
        list[str] | None, typer.Option(help="Leave out this message type (repeatable).")
    ] = None,
    to_csv: Annotated[
        Path | None, typer.Option(help="Do not replay: export the recording as CSV here.")
    ] = None,
    symbols: BusSymbols = "§§+¶",
    max_length: BusMaxLength = 256,
) -> None:
    """Send a recording back onto the bus, each message to its recorded destination, in order."""
    from vcosim.app.bus import run_replay

    run_replay(
        file,
        host,
        port,
        module_id=21 if module_id is None else module_id,
        speed=speed,
        only=only or (),
        skip=skip or (),
        codec=_bus_codec(symbols, max_length),
        to_csv=to_csv,
    )


@app.command()
def drive(
    out: Annotated[
        Path, typer.Option(help="Folder for the run; a timestamped sub-folder is created.")
    ] = Path("runs"),
    host: BusHost = "127.0.0.1",
    port: BusPort = BUS_PORT,
    duration: Annotated[
        float | None,
        typer.Option(
            help="Wall seconds to drive (default: until Ctrl-C or a Shutdown from a module)."
        ),
    ] = None,
    vehicle: Annotated[
        str, typer.Option(help="Vehicle preset name or parameter TOML file.")
    ] = "nightrider",
    frame_rate: Annotated[
        float,
        typer.Option(
            help="The vehicle's frames per second (>= 100 spaces its 100 Hz messages evenly)."
        ),
    ] = 100.0,
) -> None:
    """Start the driving simulator on this machine: router, vehicle and logger in one go.

    Also starts the input, sound and viewer modules once they exist. Every module also runs
    alone (`vcosim bus`, `vcosim sim --bus HOST:PORT`, `vcosim log`), on any machine.
    """
    from vcosim.app.bus import run_drive

    run_drive(out, host, port, duration=duration, vehicle=vehicle, frame_rate=frame_rate)


@app.command()
def sound(
    host: BusHost = "127.0.0.1",
    port: BusPort = BUS_PORT,
    module_id: BusModuleId = None,
    wav: Annotated[
        Path | None,
        typer.Option(
            envvar="VCOSIM_SOUND_WAV", help="Render to this WAV file instead of the sound card."
        ),
    ] = None,
    null: Annotated[bool, typer.Option("--null", help="Render to nothing (headless).")] = False,
    duration: Annotated[
        float | None, typer.Option(help="Seconds to run (default: until Shutdown/Ctrl-C).")
    ] = None,
    symbols: BusSymbols = "§§+¶",
    max_length: BusMaxLength = 256,
) -> None:
    """The sound module: synthesised engine, tyre-skid and event sounds from the bus.

    Plays on the sound card (the `sound` extra: sounddevice); with --wav renders to a file;
    without a sound card it says so and renders to nothing.
    """
    from vcosim.app.modules import run_sound

    run_sound(
        host,
        port,
        module_id=19 if module_id is None else module_id,
        codec=_bus_codec(symbols, max_length),
        wav=wav,
        null=null,
        duration=duration,
    )


@app.command("input")
def input_module(
    host: BusHost = "127.0.0.1",
    port: BusPort = BUS_PORT,
    module_id: BusModuleId = None,
    mapping: Annotated[
        Path | None, typer.Option(help="Mapping of axes and buttons (TOML); default: built in.")
    ] = None,
    list_devices: Annotated[
        bool, typer.Option("--list", help="Show the input devices found and end.")
    ] = False,
    calibrate: Annotated[
        bool, typer.Option("--calibrate", help="Interactive wizard that writes --mapping.")
    ] = False,
    keyboard: Annotated[
        bool, typer.Option("--keyboard", help="Drive with the keyboard even if a wheel exists.")
    ] = False,
    script: Annotated[
        Path | None,
        typer.Option(
            envvar="VCOSIM_INPUT_SCRIPT",
            help="Scripted inputs (TOML: timed axis/button values), for tests and headless runs.",
        ),
    ] = None,
    duration: Annotated[
        float | None, typer.Option(help="Seconds to run (default: until quit/Shutdown/Ctrl-C).")
    ] = None,
    symbols: BusSymbols = "§§+¶",
    max_length: BusMaxLength = 256,
) -> None:
    """The input module: wheel, pedals, gamepad or keyboard to IMFM/IMVM; force feedback back.

    Joysticks and wheels need the `input` extra (pygame-ce); the keyboard works without.
    """
    from vcosim.app.modules import run_input

    run_input(
        host,
        port,
        module_id=17 if module_id is None else module_id,
        codec=_bus_codec(symbols, max_length),
        mapping=mapping,
        list_devices=list_devices,
        calibrate=calibrate,
        keyboard=keyboard,
        script=script,
        duration=duration,
    )


@app.command()
def view(
    port: Annotated[
        int, typer.Option(help="HTTP port of the page (0: any free one).")
    ] = VIEWER_PORT,
    http_host: Annotated[
        str,
        typer.Option(help="Address the page is served on; loopback unless you open it on purpose."),
    ] = "127.0.0.1",
    bus_host: Annotated[str, typer.Option(help="The bus router's address.")] = "127.0.0.1",
    bus_port: Annotated[int, typer.Option(help="The bus router's UDP handshake port.")] = BUS_PORT,
    module_id: BusModuleId = None,
    rate: Annotated[float, typer.Option(help="Most state frames per second to the page.")] = 60.0,
    height_map: Annotated[
        Path | None, typer.Option(help="Height-map image (blue channel).")
    ] = None,
    road_map: Annotated[Path | None, typer.Option(help="Road map image (blue 255 = road).")] = None,
    friction_map: Annotated[
        Path | None, typer.Option(help="Friction map image (blue 255 = 0.99).")
    ] = None,
    hill_height: Annotated[
        float, typer.Option(help="Metres of blue 255 in the height-map.")
    ] = 10.0,
    size: Annotated[float, typer.Option(help="Metres of the maps' longer side.")] = 1000.0,
    send_ground: Annotated[
        bool, typer.Option(help="Answer with VMFM: ground height and friction under each wheel.")
    ] = False,
    symbols: BusSymbols = "§§+¶",
    max_length: BusMaxLength = 256,
) -> None:
    """Serve the 3-D viewer and live dashboard in a browser; drive with keyboard or gamepad."""
    from vcosim.modules.viewer import Viewer, run_view
    from vcosim.vehicle.terrain import Terrain

    terrain = Terrain.from_images(
        height_map, road_map, friction_map, hill_height=hill_height, size=size
    )
    run_view(
        Viewer(
            bus_host,
            bus_port,
            host=http_host,
            port=port,
            terrain=terrain,
            rate=rate,
            module_id=18 if module_id is None else module_id,
            send_ground=send_ground,
            codec=_bus_codec(symbols, max_length),
        )
    )


@bench_app.command("physics")
def bench_physics(
    as_json: Annotated[bool, typer.Option("--json", help="Print only the JSON object.")] = False,
    seconds: Annotated[float, typer.Option(help="Wall-clock budget per measurement (s).")] = 2.0,
) -> None:
    """Physics steps per second of the vehicle kernel against CommonRoad's multi-body model."""
    from vcosim.bench.physics import run_physics_bench

    result = run_physics_bench(seconds=seconds, progress=not as_json)
    typer.echo(json.dumps(result, indent=None if as_json else 2))


@bench_app.command("coupling")
def bench_coupling(
    as_json: Annotated[bool, typer.Option("--json", help="Print only the JSON object.")] = False,
    seconds: Annotated[
        float, typer.Option(help="Wall-clock time per exchange measurement (s).")
    ] = 3.0,
    realtime_seconds: Annotated[
        float, typer.Option(help="Length of the real-time drift measurement (s).")
    ] = 10.0,
) -> None:
    """Lock-step exchanges/s against a raw UDP ping-pong, and real-time drift and frame lateness."""
    from vcosim.bench.coupling import run_coupling_bench

    result = run_coupling_bench(seconds, realtime_seconds, progress=not as_json)
    typer.echo(json.dumps(result, indent=None if as_json else 2))


@bench_app.command("contracts")
def bench_contracts(
    as_json: Annotated[bool, typer.Option("--json", help="Print only the JSON object.")] = False,
    seconds: Annotated[float, typer.Option(help="Wall-clock time per measurement (s).")] = 2.0,
) -> None:
    """Updates/s of one 20-field contract at 1 ms, and the latency from server step to port."""
    from vcosim.bench.contracts import run_contracts_bench

    result = run_contracts_bench(seconds, progress=not as_json)
    typer.echo(json.dumps(result, indent=None if as_json else 2))


@bench_app.command("sweep")
def bench_sweep(
    as_json: Annotated[bool, typer.Option("--json", help="Print only the JSON object.")] = False,
    runs: Annotated[int, typer.Option(help="Runs per measurement.")] = 40,
    workers: Annotated[int, typer.Option(help="Measure 1 up to this many workers.")] = 2,
) -> None:
    """Runs per second of a 10 s cruise scenario on local workers, and the scaling from 1 up."""
    from vcosim.bench.sweep import run_sweep_bench

    result = run_sweep_bench(runs=runs, max_workers=workers, progress=not as_json)
    typer.echo(json.dumps(result, indent=None if as_json else 2))


@bench_app.command("bus")
def bench_bus(
    as_json: Annotated[bool, typer.Option("--json", help="Print only the JSON object.")] = False,
    seconds: Annotated[float, typer.Option(help="Wall-clock time per measurement (s).")] = 2.0,
) -> None:
    """Router throughput (messages/s) and the latency it adds over direct UDP, in one run."""
    from vcosim.bench.bus import run_bus_bench

    result = run_bus_bench(seconds, progress=not as_json)
    typer.echo(json.dumps(result, indent=None if as_json else 2))


def main() -> None:
    """Entry point of the ``vcosim`` command: vcosim's own errors print as one clear message."""
    from vcosim.errors import VcosimError

    try:
        app()
    except VcosimError as exc:
        typer.secho(f"error: {exc}", err=True, fg=typer.colors.RED)
        raise SystemExit(2) from None
