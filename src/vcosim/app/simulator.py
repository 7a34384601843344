"""``vcosim sim``: its options, turned into a ``RunSpec`` (or read from ``--spec FILE``).

(Past 400 lines: most of it is the typer option table of ``vcosim sim`` with its help text,
which the command line reads from one signature.)

What the run then does (build, notes, status line, summary) is ``sim_run``'s; what a run is,
``vcosim.scenarios.spec``'s.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from vcosim.app.groundtruth import (
    Foxglove,
    FoxgloveAllow,
    FoxgloveRate,
    Osi,
    OsiRate,
    OsiTrace,
    ground_truth_outputs,
)
from vcosim.app.options import (
    Allow,
    Cpu,
    Duration,
    EgoDriver,
    EgoDriverKind,
    ExactPeer,
    ExtTime,
    FrameRate,
    InterfaceCsv,
    JsonOut,
    Listen,
    Maps,
    MaybeVehicle,
    OnLate,
    RealtimePriority,
    Spin,
    TerrainOption,
    Timeout,
    WorldOption,
    bus_address,
    non_negative,
    parse_address,
    positive,
    use_maps,
)
from vcosim.app.sim_options import Set, apply_settings
from vcosim.app.sim_run import run_simulator
from vcosim.constants import (
    CONTRACTS_PORT,
    CONTROLLER_PORT,
    LOOPBACK,
    PING_TIME,
    SIMULATOR_PORT,
)
from vcosim.extras import require
from vcosim.sim.pacing import PacingMode
from vcosim.vehicle.gearbox import Gearbox

if TYPE_CHECKING:
    from vcosim.scenarios.spec import RecordingSpec, RunSpec
    from vcosim.tight.config import CouplingConfig
    from vcosim.world.sumo_spec import SumoSpec


class StartHow(str, Enum):
    """How the vehicle reaches its start speed."""

    teleport = "teleport"
    drive_up = "drive_up"


def sim(
    ctx: typer.Context,
    duration: Duration = None,
    vehicle: MaybeVehicle = None,
    start_pose: Annotated[
        str | None,
        typer.Option(
            metavar="X,Y,HEADING | road=ID,lane=N,s=S",
            help="Where the vehicle starts: metres east and north, heading in degrees "
            "anticlockwise from east; or on an OpenDRIVE road (--terrain FILE.xodr) a road "
            "position, facing the lane's traffic (lane and s optional: the first driving "
            "lane, at its start).",
            show_default="0,0,0; on an OpenDRIVE road its first driving lane, at its start",
        ),
    ] = None,
    start_speed: Annotated[
        float | None,
        typer.Option(
            callback=non_negative, help="Start rolling straight ahead at this speed (m/s)."
        ),
    ] = None,
    start: Annotated[
        StartHow | None,
        typer.Option(
            help="teleport: placed rolling at --start-speed; drive_up: a PI on the pedals "
            "drives from rest until the speed holds for a second (up to 120 s)."
        ),
    ] = None,
    gearbox: Annotated[
        Gearbox | None,
        typer.Option(help="automatic: the controller needs only pedals and steering."),
    ] = None,
    engine: Annotated[bool | None, typer.Option(help="Start with the engine idling.")] = None,
    spec: Annotated[
        Path | None,
        typer.Option(
            exists=True,
            dir_okay=False,
            metavar="FILE.toml",
            help="Run what a RunSpec file describes (docs/cli.md: a run as a file); every "
            "recorded run leaves one beside its recording, FILE.spec.toml.",
        ),
    ] = None,
    allow_code: Annotated[
        list[str] | None,
        typer.Option(
            metavar="ENTRY",
            help="Code a --spec file may run (repeatable): a user face's module:Class or a "
            "coupling's custom hooks, as the file names them. Without it a run file is data: "
            "it names only vcosim's registered faces and installed plugins (vcosim.faces).",
        ),
    ] = None,
    settings: Set = None,
    coupling: Annotated[
        bool, typer.Option(help="Run the BeamNG-compatible tight-coupling endpoint.")
    ] = True,
    interface: InterfaceCsv = None,
    gear_slot: Annotated[
        bool | None,
        typer.Option(
            help="Read slot 4 of the fixed layout as a requested gear (vcosim's "
            "extension; BeamNG ignores the slot)."
        ),
    ] = None,
    ext_time: ExtTime = None,
    ping_time: Annotated[
        float | None,
        typer.Option(help="T_ping: UDP round-trip time (s).", show_default=f"{PING_TIME:g}"),
    ] = None,
    window: Annotated[int | None, typer.Option(help="Window width (overrides T_ping).")] = None,
    send_skips: Annotated[
        int | None, typer.Option(help="Steps between sends (overrides T_ext).")
    ] = None,
    send_offset: Annotated[int | None, typer.Option(help="Step of the first send.")] = None,
    timeout: Timeout = None,
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
    exact_peer: ExactPeer = None,
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
        str | None,
        typer.Option(metavar="HOST:PORT", help="The address the contract server binds."),
    ] = None,
    contracts_allow: Annotated[
        list[str] | None,
        typer.Option(
            help="Client addresses the contract server accepts (repeatable; default: loopback)."
        ),
    ] = None,
    vehicle_name: Annotated[
        str | None,
        typer.Option(
            help="The vehicle's object name for contracts (a world's vehicles go by their names)."
        ),
    ] = None,
    wait_for_clients: Annotated[
        int | None,
        typer.Option(
            min=0,
            help="Hold the run at t = 0 until this many contract clients joined; with "
            "--pacing lockstep it then advances only as their contracts allow.",
        ),
    ] = None,
    bus: Annotated[
        str | None,
        typer.Option(metavar="HOST:PORT", help="Join a NightRider bus router at this address."),
    ] = None,
    world: WorldOption = None,
    scenario: Annotated[
        Path | None,
        typer.Option(
            exists=True,
            dir_okay=False,
            metavar="FILE.xosc",
            help="An OpenSCENARIO scenario (docs/scenarios.md): its entities as a world on its "
            "road, its storyboard driving the others; each entity with the controller "
            "'external' is coupled like a world's external vehicle.",
        ),
    ] = None,
    maps: Maps = None,
    ego_driver: EgoDriver = EgoDriverKind.external,
    terrain: TerrainOption = None,
    sumo: Annotated[
        Path | None,
        typer.Option(
            exists=True,
            dir_okay=False,
            metavar="FILE.sumocfg",
            help="SUMO's traffic around the vehicles, in lock-step in this process "
            "(docs/traffic.md; the sumo extra). A lone car joins it as the world vehicle "
            "'ego'; a recording gets SUMO's cars beside it (FILE.sumo.csv).",
        ),
    ] = None,
    sumo_host: Annotated[
        str | None,
        typer.Option(
            metavar="HOST:PORT",
            help="SUMO's traffic from a SUMO started elsewhere with --remote-port, over "
            "TraCI, in place of --sumo.",
        ),
    ] = None,
    sumo_step: Annotated[
        float | None,
        typer.Option(
            metavar="SECONDS", help="SUMO's step: a whole number of 0.5 ms physics steps."
        ),
    ] = None,
    sumo_seed: Annotated[
        int | None,
        typer.Option(min=0, help="SUMO's random seed: the same seed, the same traffic."),
    ] = None,
    record: Annotated[
        Path | None,
        typer.Option(
            help="Record every vehicle signal to this .csv or .mcap file (MCAP: Foxglove, "
            "PlotJuggler open it). With --world, a file per vehicle: "
            "FILE.csv becomes FILE.NAME.csv."
        ),
    ] = None,
    record_rate: Annotated[
        float | None,
        typer.Option(callback=positive, help="Rows per simulated second for --record."),
    ] = None,
    osi: Osi = None,
    osi_trace: OsiTrace = None,
    osi_rate: OsiRate = 100.0,
    foxglove: Foxglove = None,
    foxglove_allow: FoxgloveAllow = None,
    foxglove_rate: FoxgloveRate = 50.0,
    json_out: JsonOut = None,
    pacing: Annotated[
        PacingMode | None,
        typer.Option(
            help="realtime: frames held to the wall clock; fast: as fast as possible; "
            "lockstep: paced only by the coupled controllers."
        ),
    ] = None,
    time_dilation: Annotated[
        float | None, typer.Option(help="Simulated seconds per wall second in realtime pacing.")
    ] = None,
    frame_rate: FrameRate = None,
    on_late: OnLate = None,
    realtime_priority: RealtimePriority = False,
    cpu: Cpu = None,
) -> None:
    """Run the simulator; external controllers couple to it exactly as to BeamNG.tech.

    With --world, each vehicle driven from outside gets its own coupling endpoint (ports from
    the file, else --listen/--controller plus 2 per vehicle; debug logs in a sub-folder per
    vehicle), contracts serve every vehicle, and on the bus module 22 publishes every vehicle's
    pose while each external one joins (the ego as 16, the others as 64 + row).

    With --sumo FILE.sumocfg, SUMO's traffic runs in lock-step around the vehicles (a lone
    car joins as the world vehicle 'ego'; docs/traffic.md).

    With --spec, the run is the one a RunSpec file describes (a recorded run's FILE.spec.toml
    repeats it); --duration, --record and --json-out may still be given.
    """
    given = _given(ctx)
    if spec is not None:
        run = spec_from_file(
            spec,
            given,
            duration=duration,
            record=record,
            record_rate=record_rate,
            allow_code=allow_code or (),
        )
    else:
        if allow_code:
            raise typer.BadParameter(
                "names code a --spec file may run; without --spec the command line names "
                "the code itself",
                param_hint="'--allow-code'",
            )
        if wait_for_clients and not contracts:
            raise typer.BadParameter(
                "there are no contract clients to wait for without --contracts",
                param_hint="'--wait-for-clients'",
            )
        if debug_log is not None and not coupling:
            raise typer.BadParameter(
                "there is no coupling to log with --no-coupling", param_hint="'--debug-log'"
            )
        clashing = sorted(given & WORLD_SAYS.keys(), key=list(WORLD_SAYS).index)
        if scenario is not None and world is not None:
            raise typer.BadParameter("give --world or --scenario", param_hint="'--scenario'")
        if ego_driver is not EgoDriverKind.external and scenario is None:
            raise typer.BadParameter(
                f"{ego_driver.value!r} drives a scenario's external ego: give --scenario",
                param_hint="'--ego-driver'",
            )
        if scenario is not None and clashing:
            raise typer.BadParameter(
                f"{', '.join(WORLD_SAYS[name] for name in clashing)}: the scenario says it "
                "for each entity",
                param_hint="'--scenario'",
            )
        if world is not None and clashing:
            raise typer.BadParameter(
                f"{', '.join(WORLD_SAYS[name] for name in clashing)}: the world file says it "
                "for each vehicle",
                param_hint="'--world'",
            )
        from vcosim.scenarios.spec import (
            BusFaceSpec,
            ContractsFaceSpec,
            CouplingFaceSpec,
            FaceSpec,
            PacingSpec,
            RunSpec,
            StartSpec,
        )

        faces: list[FaceSpec] = []
        if coupling:
            options = said(
                ext_time=ext_time,
                ping_time=ping_time,
                window=window,
                send_skips=send_skips,
                spin=spin,
                debug_log=debug_log,
                send_offset=send_offset,
                timeout=timeout,
                gear_slot=gear_slot,
                allow=None if allow is None else tuple(allow),
                exact_peer=exact_peer,
            )
            if controller is not None:
                at = parse_address(controller, option="--controller", default_port=CONTROLLER_PORT)
                options.update(controller_host=at.host, controller_port=at.port)
            if listen is not None:
                at = parse_address(listen, option="--listen", default_port=SIMULATOR_PORT)
                options.update(listen_host=at.host, listen_port=at.port)
            config = coupling_config(interface, options)
            faces.append(CouplingFaceSpec(**config.model_dump(), custom_hooks=custom_hooks))
        if contracts:
            server = said(
                allowed_hosts=None if contracts_allow is None else tuple(contracts_allow),
                vehicle_name=vehicle_name,
                wait_for_clients=wait_for_clients,
            )
            if contracts_listen is not None:
                at = parse_address(
                    contracts_listen, option="--contracts-listen", default_port=CONTRACTS_PORT
                )
                server.update(host=at.host, port=at.port)
            faces.append(ContractsFaceSpec(**server))
        if bus is not None:
            router = bus_address(bus)
            faces.append(BusFaceSpec(host=router.host, port=router.port))
        scene = None
        if scenario is not None:
            from vcosim.openscenario.storyboard import scenario_run

            use_maps(maps)
            story, scene = scenario_run(scenario)
            faces.append(story)
            if ego_driver is EgoDriverKind.route:
                from vcosim.openscenario.ego_route import route_driven
                from vcosim.openscenario.reader import read_scenario

                scene, _ = route_driven(scene, read_scenario(scenario))
        run_said = said(
            sumo=sumo_spec(given, sumo, sumo_host, sumo_step, sumo_seed),
            world=scene or world,
            duration=duration,
            pacing=PacingSpec(
                **said(
                    mode=pacing,
                    time_dilation=time_dilation,
                    frame_rate=frame_rate,
                    on_late=None if on_late is None else on_late.value,
                )
            ),
            recording=None if record is None else recording_spec(record, record_rate),
            faces=faces,
        )
        if "world" not in run_said:
            start_said = said(speed=start_speed, how=None if start is None else start.value) | (
                {} if start_pose is None else parse_start(start_pose)
            )
            run_said.update(
                said(
                    vehicle=vehicle,
                    terrain=terrain,
                    start=StartSpec(**start_said) if start_said else None,
                    gearbox=gearbox,
                    engine=engine,
                )
            )
        run = RunSpec.model_validate(run_said)
        if run.sumo is not None and run.problems():
            raise typer.BadParameter("; ".join(run.problems()), param_hint="'--sumo'")
    if settings:
        run = apply_settings(run, settings, given)
    if run.recording is not None and run.recording.path.suffix.lower() == ".mcap":
        require("logging", "--record FILE.mcap")
    ground_truth = ground_truth_outputs(
        osi=osi,
        osi_trace=osi_trace,
        osi_rate=osi_rate,
        foxglove=foxglove,
        foxglove_allow=foxglove_allow,
        foxglove_rate=foxglove_rate,
        record=None if run.recording is None else run.recording.path,
        record_every=20 if run.recording is None else run.recording.every,
    )
    report = run_simulator(
        run, json_out=json_out, ground_truth=ground_truth, realtime=(realtime_priority, cpu)
    )
    if report.interrupted:
        raise typer.Exit(130)
    if report.frames["stopped_late"]:
        raise typer.Exit(1)


WORLD_SAYS = {
    "vehicle": "--vehicle",
    "terrain": "--terrain",
    "start_pose": "--start-pose",
    "start_speed": "--start-speed",
    "start": "--start",
    "gearbox": "--gearbox",
    "engine": "--no-engine",
    "vehicle_name": "--vehicle-name",
}
"""Options a world file gives for each of its vehicles (refused beside --world)."""

BESIDE_SPEC = {
    "spec",
    "allow_code",
    "duration",
    "record",
    "record_rate",
    "json_out",
    "settings",
    "osi",
    "osi_trace",
    "osi_rate",
    "foxglove",
    "foxglove_allow",
    "foxglove_rate",
}
"""Options that may be given beside --spec (they change where the run goes, not what it is)."""


def said(**given: object) -> dict[str, object]:
    """The options given (not None): what the run says; the model decides the rest."""
    return {key: value for key, value in given.items() if value is not None}


def recording_spec(path: Path, rate: float | None) -> RecordingSpec:
    """The recording of ``--record`` (at ``--record-rate``, else the model's rate)."""
    from vcosim.scenarios.spec import RecordingSpec

    return RecordingSpec(path=path, **said(rate=rate))


def sumo_spec(
    given: set[str], config: Path | None, host: str | None, step: float | None, seed: int | None
) -> SumoSpec | None:
    """The ``sumo`` of the run from ``--sumo`` or ``--sumo-host`` and their step and seed."""
    from pydantic import ValidationError

    from vcosim.world.sumo_spec import SumoSpec

    if config is None and host is None:
        if given & {"sumo_step", "sumo_seed"}:
            raise typer.BadParameter(
                "SUMO's step and seed need --sumo FILE.sumocfg or --sumo-host HOST:PORT",
                param_hint="'--sumo-step', '--sumo-seed'",
            )
        return None
    if config is not None and host is not None:
        raise typer.BadParameter("give --sumo or --sumo-host, not both", param_hint="'--sumo'")
    try:
        return SumoSpec(
            config=None if config is None else str(config),
            host=host,
            **said(step_length=step, seed=seed),
        )
    except ValidationError as exc:
        problem = exc.errors()[0]
        option = {"step_length": "--sumo-step", "host": "--sumo-host"}.get(
            str(problem["loc"][0]) if problem["loc"] else "", "--sumo"
        )
        raise typer.BadParameter(problem["msg"], param_hint=f"'{option}'") from None


def _given(ctx: typer.Context) -> set[str]:
    """The options given on the command line (or the environment), by parameter name."""
    return {
        name
        for name in ctx.params
        if getattr(ctx.get_parameter_source(name), "name", None) in ("COMMANDLINE", "ENVIRONMENT")
    }


def spec_from_file(
    path: Path,
    given: set[str],
    *,
    duration: float | None,
    record: Path | None,
    record_rate: float | None,
    allow_code: Sequence[str] = (),
) -> RunSpec:
    """The RunSpec of ``--spec``, with the --duration and --record given beside it.

    The file runs no code but vcosim's registered faces and what ``allow_code`` names.
    """
    from vcosim.scenarios.spec import RunSpec

    clashing = sorted(given - BESIDE_SPEC)
    if clashing:
        names = ", ".join("--" + name.replace("_", "-") for name in clashing)
        raise typer.BadParameter(f"{names}: the spec file says it", param_hint="'--spec'")
    run = RunSpec.from_toml(path, allow_code=allow_code)
    update: dict[str, object] = {}
    if duration is not None:
        update["duration"] = duration
    if record is not None:
        update["recording"] = recording_spec(record, record_rate)
    elif record_rate is not None and run.recording is not None:
        update["recording"] = recording_spec(run.recording.path, record_rate)
    return run.model_copy(update=update) if update else run


def parse_start(text: str) -> dict[str, object]:
    """``--start-pose``: a pose (``X,Y,HEADING``) or a road position (``road=ID,lane=N,s=S``)."""
    if "=" not in text:
        return {"pose": parse_pose(text)}
    given: dict[str, str] = {}
    for item in text.split(","):
        key, _, value = item.partition("=")
        key = key.strip()
        if key not in ("road", "lane", "s") or not value.strip() or key in given:
            raise typer.BadParameter(
                f"{text!r} is not road=ID,lane=N,s=S (each once; lane and s optional, "
                "e.g. road=1,lane=-1,s=20)",
                param_hint="'--start-pose'",
            )
        given[key] = value.strip()
    try:
        lane = int(given["lane"]) if "lane" in given else None
        s = float(given["s"]) if "s" in given else None
    except ValueError:
        raise typer.BadParameter(
            f"{text!r}: lane is a whole number and s a distance in metres (e.g. lane=-1,s=20)",
            param_hint="'--start-pose'",
        ) from None
    if s is not None and not (math.isfinite(s) and s >= 0):
        raise typer.BadParameter(
            f"{text!r}: s is metres along the road, 0 or more", param_hint="'--start-pose'"
        )
    return {"road": {"road": given.get("road"), "lane": lane, "s": s}}


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


def coupling_config(interface: Path | None, options: dict[str, Any]) -> CouplingConfig:
    """The coupling's config from the options given (an interface CSV fills the rest)."""
    from vcosim.tight.config import CouplingConfig

    if interface is not None:
        return CouplingConfig.for_interface(interface, **options)
    return CouplingConfig(**options)
