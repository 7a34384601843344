"""``vcosim sim``: run the simulation built from options, with a live status and a summary.

(Just past 400 lines: ``sim`` has the most options of any command; the glue that turns them
into a run stays beside them.)
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Mapping
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from vcosim.app.console import (
    StatusLine,
    console,
    describe_state,
    enter_realtime,
    final_state,
    note,
    save_json,
    setup_logging,
    warn,
)
from vcosim.app.options import (
    DEFAULT_TIMEOUT,
    Allow,
    Cpu,
    Duration,
    ExactPeer,
    ExtTime,
    FrameRate,
    InterfaceCsv,
    JsonOut,
    Listen,
    OnLate,
    OnLatePolicy,
    RealtimePriority,
    Spin,
    TerrainOption,
    Timeout,
    VehicleOption,
    WorldOption,
    bus_address,
    non_negative,
    parse_address,
    positive,
)
from vcosim.constants import CONTRACTS_PORT, CONTROLLER_PORT, LOOPBACK, PHYSICS_DT, SIMULATOR_PORT
from vcosim.extras import require
from vcosim.sim.pacing import PacingMode

if TYPE_CHECKING:
    from rich.table import Table

    from vcosim.sim.simulation import RunReport, Simulation


class Gearbox(str, Enum):
    """Transmission modes a coupled vehicle can start in."""

    automatic = "automatic"
    manual = "manual"


def sim(
    duration: Duration = None,
    pacing: Annotated[
        PacingMode,
        typer.Option(
            help="realtime: frames held to the wall clock; fast: as fast as possible; "
            "lockstep: paced only by the coupled controllers."
        ),
    ] = PacingMode.realtime,
    time_dilation: Annotated[
        float, typer.Option(help="Simulated seconds per wall second in realtime pacing.")
    ] = 1.0,
    frame_rate: FrameRate = 60.0,
    vehicle: VehicleOption = "nightrider",
    terrain: TerrainOption = None,
    start_pose: Annotated[
        str | None,
        typer.Option(
            metavar="X,Y,HEADING",
            help="Where the vehicle starts: metres east and north, heading in degrees "
            "anticlockwise from east.",
            show_default="0,0,0",
        ),
    ] = None,
    start_speed: Annotated[
        float,
        typer.Option(
            callback=non_negative, help="Start rolling straight ahead at this speed (m/s)."
        ),
    ] = 0.0,
    record: Annotated[
        Path | None,
        typer.Option(
            help="Record every vehicle signal to this .csv or .mcap file (MCAP: Foxglove, "
            "PlotJuggler open it). With --world, a file per vehicle: "
            "FILE.csv becomes FILE.NAME.csv."
        ),
    ] = None,
    record_rate: Annotated[
        float, typer.Option(callback=positive, help="Rows per simulated second for --record.")
    ] = 100.0,
    gearbox: Annotated[
        Gearbox, typer.Option(help="automatic: the controller needs only pedals and steering.")
    ] = Gearbox.automatic,
    engine: Annotated[bool, typer.Option(help="Start with the engine idling.")] = True,
    coupling: Annotated[
        bool, typer.Option(help="Run the BeamNG-compatible tight-coupling endpoint.")
    ] = True,
    interface: InterfaceCsv = None,
    gear_slot: Annotated[
        bool,
        typer.Option(
            help="Read slot 4 of the fixed layout as a requested gear (vcosim's "
            "extension; BeamNG ignores the slot)."
        ),
    ] = False,
    ext_time: ExtTime = None,
    ping_time: Annotated[
        float | None, typer.Option(help="T_ping: UDP round-trip time (s).", show_default="0.00001")
    ] = None,
    window: Annotated[int | None, typer.Option(help="Window width (overrides T_ping).")] = None,
    send_skips: Annotated[
        int | None, typer.Option(help="Steps between sends (overrides T_ext).")
    ] = None,
    send_offset: Annotated[int, typer.Option(help="Step of the first send.")] = 0,
    timeout: Timeout = DEFAULT_TIMEOUT,
    controller: Annotated[
        str | None,
        typer.Option(
            metavar="HOST:PORT",
            help="The controller's address.",
            show_default=f"{LOOPBACK}:{CONTROLLER_PORT}",
        ),
    ] = None,
    listen: Listen = None,
    allow: Allow = None,
    exact_peer: ExactPeer = False,
    spin: Spin = None,
    debug_log: Annotated[
        Path | None, typer.Option(help="Folder for BeamNG's three coupling debug CSVs.")
    ] = None,
    custom_hooks: Annotated[
        str | None,
        typer.Option(
            help="FILE.py:NAME or module:NAME with fill_custom(sim, bank_h) and/or "
            "on_custom(sim, values): the 50 custom values each way."
        ),
    ] = None,
    contracts: Annotated[
        bool, typer.Option(help="Also serve VS Connect-style contracts (vcosim connect).")
    ] = False,
    contracts_listen: Annotated[
        str,
        typer.Option(metavar="HOST:PORT", help="The address the contract server binds."),
    ] = f"{LOOPBACK}:{CONTRACTS_PORT}",
    contracts_allow: Annotated[
        list[str] | None,
        typer.Option(
            help="Client addresses the contract server accepts (repeatable; default: loopback)."
        ),
    ] = None,
    vehicle_name: Annotated[
        str,
        typer.Option(
            help="The vehicle's object name for contracts (a world's vehicles go by their names)."
        ),
    ] = "Vehicle_A",
    wait_for_clients: Annotated[
        int,
        typer.Option(
            min=0,
            help="Hold the run at t = 0 until this many contract clients joined; with "
            "--pacing lockstep it then advances only as their contracts allow.",
        ),
    ] = 0,
    world: WorldOption = None,
    bus: Annotated[
        str | None,
        typer.Option(metavar="HOST:PORT", help="Join a NightRider bus router at this address."),
    ] = None,
    realtime_priority: RealtimePriority = False,
    cpu: Cpu = None,
    on_late: OnLate = OnLatePolicy.slow,
    json_out: JsonOut = None,
) -> None:
    """Run the simulator; external controllers couple to it exactly as to BeamNG.tech.

    With --world, each vehicle driven from outside gets its own coupling endpoint (ports from
    the file, else --listen/--controller plus 2 per vehicle; debug logs in a sub-folder per
    vehicle), contracts serve every vehicle, and on the bus module 22 publishes every vehicle's
    pose while each external one joins (the ego as 16, the others as 64 + row).
    """
    if wait_for_clients and not contracts:
        raise typer.BadParameter(
            "there are no contract clients to wait for without --contracts",
            param_hint="'--wait-for-clients'",
        )
    if record is not None and record.suffix.lower() == ".mcap":
        require("logging", "--record FILE.mcap")
    if debug_log is not None and not coupling:
        raise typer.BadParameter(
            "there is no coupling to log with --no-coupling", param_hint="'--debug-log'"
        )
    config = None
    if coupling:
        given: dict[str, Any] = {
            "ext_time": ext_time,
            "ping_time": ping_time,
            "window": window,
            "send_skips": send_skips,
            "spin": spin,
            "debug_log": debug_log,
        }
        if controller is not None:
            address = parse_address(controller, option="--controller", default_port=CONTROLLER_PORT)
            given.update(controller_host=address.host, controller_port=address.port)
        if listen is not None:
            address = parse_address(listen, option="--listen", default_port=SIMULATOR_PORT)
            given.update(listen_host=address.host, listen_port=address.port)
        given = {k: v for k, v in given.items() if v is not None}
        options = dict(
            given,
            send_offset=send_offset,
            timeout=timeout,
            gear_slot=gear_slot,
            allow=tuple(allow or ()),
            exact_peer=exact_peer,
        )
        config = coupling_config(interface, options)
    faces = []
    if contracts:
        address = parse_address(
            contracts_listen, option="--contracts-listen", default_port=CONTRACTS_PORT
        )
        faces.append(
            (
                "contracts",
                "vcosim.contracts.server:ContractServer",
                {
                    "host": address.host,
                    "port": address.port,
                    "allowed_hosts": contracts_allow,
                    "vehicle_name": vehicle_name,
                    "wait_for_clients": wait_for_clients,
                },
            )
        )
    router = None if bus is None else bus_address(bus)
    if router is not None and world is None:
        faces.append(
            (
                "bus",
                "vcosim.bus.vehicle_module:BusVehicle",
                {"host": router.host, "port": router.port},
            )
        )
    if world is not None:
        clashing = [
            name
            for name, value, default in (
                ("--vehicle", vehicle, "nightrider"),
                ("--terrain", terrain, None),
                ("--start-pose", start_pose, None),
                ("--start-speed", start_speed, 0.0),
                ("--gearbox", gearbox, Gearbox.automatic),
                ("--no-engine", engine, True),
                ("--vehicle-name", vehicle_name, "Vehicle_A"),
            )
            if value != default
        ]
        if clashing:
            raise typer.BadParameter(
                f"{', '.join(clashing)}: the world file says it for each vehicle",
                param_hint="'--world'",
            )
    report = run_simulator(
        world=world,
        duration=duration,
        pacing=pacing,
        time_dilation=time_dilation,
        frame_rate=frame_rate,
        vehicle=vehicle,
        terrain=load_terrain(terrain),
        start_pose=None if start_pose is None else parse_pose(start_pose),
        start_speed=start_speed,
        automatic=gearbox is Gearbox.automatic,
        engine_running=engine,
        coupling=config,
        custom_hooks=custom_hooks,
        faces=faces,
        json_out=json_out,
        record=record,
        record_every=max(1, round(1.0 / (record_rate * PHYSICS_DT))),
        world_bus=None if router is None or world is None else (router.host, router.port),
        realtime=(realtime_priority, cpu),
        on_late=on_late.value,
    )
    if report.interrupted:
        raise typer.Exit(130)
    if report.frames["stopped_late"]:
        raise typer.Exit(1)


def parse_pose(text: str) -> tuple[float, float, float]:
    """``X,Y,HEADING`` (heading optional) from ``--start-pose``."""
    try:
        values = [float(v) for v in text.split(",")]
    except ValueError:
        values = []
    if len(values) not in (2, 3) or not all(math.isfinite(v) for v in values):
        raise typer.BadParameter(
            f"{text!r} is not X,Y,HEADING (e.g. 10,-5,90)", param_hint="'--start-pose'"
        )
    from vcosim.vehicle.terrain import WORLD_LIMIT

    if max(abs(values[0]), abs(values[1])) > WORLD_LIMIT:
        raise typer.BadParameter(
            f"{text!r} is more than {WORLD_LIMIT / 1e3:,.0f} km from the origin",
            param_hint="'--start-pose'",
        )
    x, y, *heading = values
    return x, y, heading[0] if heading else 0.0


def load_terrain(path: Path | None) -> Any:
    """The terrain of ``--terrain`` (flat without one)."""
    from vcosim.vehicle.terrain import load_terrain as load

    return load(path)


def coupling_config(interface: Path | None, options: dict[str, Any]) -> Any:
    """The coupling's config from the options given (an interface CSV fills the rest)."""
    from vcosim.tight.config import CouplingConfig

    if interface is not None:
        return CouplingConfig.for_interface(interface, **options)
    return CouplingConfig(**options)


SHOWN_VEHICLES = 10
"""A world's summary ends with the state of this many vehicles at most (the JSON has all)."""


def summary_table(report: RunReport, states: Mapping[str, Mapping[str, float]]) -> Table:
    """The end-of-run summary as a rich table, ending with each vehicle's final state."""
    from rich.table import Table

    table = Table(show_header=False, title="vcosim sim: summary")
    table.add_row("simulated time", f"{report.sim_time:.3f} s")
    table.add_row("wall time", f"{report.wall_time:.3f} s")
    table.add_row("real-time factor", f"{report.realtime_factor:.3f}")
    frames = report.frames
    table.add_row(
        "frames (late, skipped)",
        f"{frames['frames']} ({frames['late_frames']}, {frames['skipped_frames']})"
        + (", stopped late" if frames["stopped_late"] else ""),
    )
    table.add_row(
        "frame lateness p50 / p99 / p99.9 / max",
        " / ".join(f"{frames[f'frame_lateness_{q}_ms']:.3f}" for q in ("p50", "p99", "p999", "max"))
        + f" ms (jitter {frames['frame_jitter_ms']:.3f} ms)",
    )
    for name, coupling in report.faces.items():
        if name == "coupling" or name.startswith("coupling:"):
            _coupling_rows(table, name.partition(":")[2], coupling)
    for name, face in report.faces.items():  # the other faces (contracts, bus): their counters
        if not name.startswith("coupling") and isinstance(face, Mapping):
            for key, value in face.items():
                if isinstance(value, (int, float, str)):
                    table.add_row(f"{name}: {key.replace('_', ' ')}", str(value))
    if report.world is not None:
        world = report.world
        table.add_row("world", f"{world.vehicles} vehicles, {len(world.collisions)} collision(s)")
        for hit in world.collisions[:10]:
            table.add_row(
                "collision",
                f"t = {hit.time:.4f} s: {hit.vehicles[0]} and {hit.vehicles[1]}, "
                f"{hit.relative_speed:.2f} m/s, overlap {hit.overlap:.3f} m",
            )
        if world.stopped_at_collision:
            table.add_row("ended by", "the first collision (stop_at_collision)")
    if report.interrupted:
        table.add_row("ended by", "interrupt (Ctrl-C / SIGTERM)")
    lone = report.world is None
    for name, state in list(states.items())[:SHOWN_VEHICLES]:
        table.add_row("at the end" if lone else f"{name} at the end", describe_state(state))
    if len(states) > SHOWN_VEHICLES:
        table.add_row("", f"and {len(states) - SHOWN_VEHICLES} more vehicles (--json-out)")
    return table


def _coupling_rows(table: Table, vehicle: str, coupling: Mapping[str, Any]) -> None:
    """One coupling's counters; a world's carry their vehicle's name ("ego: applied")."""
    prefix = f"{vehicle}: " if vehicle else ""
    table.add_row(
        f"{prefix}schedule",
        f"send_skips {coupling['send_skips']}, window "
        f"{coupling['window']}, send_offset {coupling['send_offset']}",
    )
    for key in (
        "sent",
        "applied",
        "stale",
        "duplicate",
        "startup_unapplied",
        "implausible_id",
        "malformed",
        "rejected_peers",
        "clamped_total",
        "timeouts",
    ):
        table.add_row(prefix + key.replace("_", " "), str(coupling[key]))
    if coupling["clamped"]:
        table.add_row(f"{prefix}clamped by slot", json.dumps(coupling["clamped"]))
    table.add_row(f"{prefix}time blocking", f"{coupling['blocked_time']:.3f} s")
    table.add_row(
        f"{prefix}waited for the controller",
        f"{coupling['startup_wait']:.3f} s ({coupling['startup_resends']} re-sends)",
    )


def couplings(sim: Simulation) -> dict[str, Any]:
    """The coupling endpoints by the vehicle they serve ("" for a lone car's)."""
    return {
        name.partition(":")[2]: face
        for name, face in sim.faces.items()
        if name == "coupling" or name.startswith("coupling:")
    }


def run_simulator(
    *,
    duration: float | None,
    json_out: Path | None = None,
    record: Path | None = None,
    record_every: int = 20,
    world_bus: tuple[str, int] | None = None,
    realtime: tuple[bool, int | None] = (False, None),
    on_late: str = "slow",
    **options: Any,
) -> RunReport:
    """Run ``vcosim sim`` to the end or an interrupt; print and optionally save the summary.

    ``world_bus`` (host, port): a world's router, where its vehicles join the bus
    (:func:`vcosim.bus.world_module.attach_world_bus`). ``realtime``: --realtime-priority
    and --cpu; ``on_late``: the real-time pacing's deadline policy.
    """
    from vcosim.interrupts import sigterm_as_interrupt
    from vcosim.sim.pacing import OnLate as Policy

    setup_logging()
    with sigterm_as_interrupt():
        sim: Simulation | None = None
        try:
            sim = _start(record, record_every, options, world_bus)
            sim.pacer.on_late = Policy(on_late)
            granted = enter_realtime(*realtime)
            status = _Status(sim)
        except KeyboardInterrupt:
            if sim is not None:
                sim.close()
            warn("interrupted while starting: nothing was recorded")
            raise typer.Exit(130) from None
        with StatusLine(status.render, status.explain_waiting):
            report = sim.run(duration)
    states = {name: final_state(vehicle.signals()) for name, vehicle in sim.vehicles.items()}
    console.print(summary_table(report, states))
    if report.frames["stopped_late"]:
        warn("--on-late stop: a frame ended after the next one was due: the run stopped")
    realtime_json = {} if granted is None else {"realtime": granted.to_dict()}
    save_json({**report.to_dict(), **realtime_json, "final_state": states}, json_out)
    return report


def _start(
    record: Path | None,
    record_every: int,
    options: dict[str, Any],
    world_bus: tuple[str, int] | None = None,
) -> Simulation:
    """Build the simulation with its faces and say what it listens on and records."""
    from vcosim.scenarios import build_simulation

    sim = build_simulation(**options)
    if world_bus is not None:
        from vcosim.bus.world_module import attach_world_bus

        for line in attach_world_bus(sim, *world_bus):
            note(line)
    if record is not None:
        from vcosim.sim.recorder import SignalLog, WorldSignalLog, vehicle_path

        every = f"every {record_every * sim.dt * 1e3:g} ms"
        if sim.world is None:
            sim.attach("recording", SignalLog(record, every=record_every))
            note(f"recording every vehicle signal {every} to {record}")
        else:
            sim.attach("recording", WorldSignalLog(record, list(sim.vehicles), record_every))
            note(
                f"recording every signal of each of the {len(sim.vehicles)} vehicles {every}, "
                f"a file per vehicle: {vehicle_path(record, '{NAME}')}"
            )
    endpoints = couplings(sim)
    coupled = options.get("coupling") is not None
    if sim.world is not None and coupled and not endpoints and "coupling" not in sim.faces:
        note("coupling: no vehicle of the world is driven from outside: nothing to couple")
    for vehicle, endpoint in endpoints.items():
        schedule = endpoint.config.schedule(sim.dt)
        cfg, face = endpoint.config, endpoint.interface
        who = f"coupling {vehicle}" if vehicle else "coupling"
        note(
            f"{who}: listening on {cfg.listen_host}:{endpoint.address[1]}, controller "
            f"{cfg.controller_host}:{cfg.controller_port}; send_skips {schedule.send_skips}, "
            f"window {schedule.window}, send_offset {schedule.send_offset}, "
            f"timeout {schedule.timeout:g} s; the controller's step is "
            f"{schedule.controller_step(sim.dt) * 1e3:g} ms"
            + (f"; debug logs in {cfg.debug_log}" if vehicle and cfg.debug_log else "")
        )
    for endpoint in list(endpoints.values())[:1]:  # the layout and options are the same for all
        cfg, face = endpoint.config, endpoint.interface
        note(
            f"coupling: layout {face.name}: {face.sim_to_controller} values to the "
            f"controller, {face.controller_to_sim} back (ids included)"
            + ("; slot 4 is read as a requested gear" if cfg.gear_slot else "")
        )
        missing = face.missing_wheel_torques()
        if missing:
            warn(
                f"coupling: the interface drives on wheel torques but gives "
                f"none for {', '.join(missing)}: those get zero"
            )
    return sim


class _Status:
    """What the live line shows, and the one-time hint when no controller answers."""

    WAIT_HINT_AFTER = 1.0  # s without a controller before saying what the run waits for

    def __init__(self, sim: Simulation) -> None:
        self.sim = sim
        self.hinted = False

    def render(self) -> str:
        sim = self.sim
        wall = max(time.perf_counter() - sim.wall_start, 1e-9) if sim.wall_start else 0.0
        rtf = sim.time / wall if wall else 0.0
        text = f"t = {sim.time:8.2f} s   real-time factor {rtf:6.2f}"
        for vehicle, endpoint in couplings(sim).items():
            state = "connected" if endpoint.connected else "waiting for the controller"
            who = f"   {vehicle}" if vehicle else ""
            text += f"{who}   {state}: sent {endpoint.stats.sent}, applied {endpoint.stats.applied}"
        return text

    def explain_waiting(self) -> None:
        """Once, a few seconds into a run a controller does not answer: say what it waits for."""
        if self.hinted or not self.sim.wall_start:
            return
        waited = time.perf_counter() - self.sim.wall_start
        if waited < self.WAIT_HINT_AFTER:
            return
        for vehicle, endpoint in couplings(self.sim).items():
            if endpoint.heard:
                continue
            self.hinted = True
            cfg = endpoint.config
            note(
                f"waiting: no controller{' of ' + vehicle if vehicle else ''} has answered on "
                f"{cfg.controller_host}:{cfg.controller_port} for {waited:.0f} s; the run "
                f"holds until one does (its message sent again every {cfg.timeout:g} s). "
                "Start one (vcosim controller cruise, or your "
                "Simulink model), or run with --no-coupling"
            )
