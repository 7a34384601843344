"""``build_simulation(spec)``: the one place a run is put together from its ``RunSpec``.

``vcosim sim``, the demo, the sweeps, the benches and the Python API all build here, so the
same spec starts the same way everywhere: the vehicle (or world) on its terrain, in D with
the automatic gearbox, at its start pose and speed (``teleport``: placed rolling;
``drive_up``: a PI on the pedals drives it there, ``reach_speed``), under its pacer, with its
faces attached in the spec's order and the recording last.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from vcosim.errors import ConfigError, VcosimError
from vcosim.scenarios.faces import attach_face, endpoints, vehicle_couplings
from vcosim.scenarios.spec import (
    GROUND_TRUTH,
    BusFaceSpec,
    OsiFaceSpec,
    RunSpec,
)
from vcosim.sim.pacing import Pacer
from vcosim.sim.simulation import Simulation
from vcosim.vehicle import Vehicle
from vcosim.vehicle import layout as L
from vcosim.vehicle.terrain import Terrain, TerrainSpec, load_terrain
from vcosim.world import World, WorldFile

if TYPE_CHECKING:
    from vcosim.roads import RoadNetwork

__all__ = [
    "StartError",
    "build_simulation",
    "endpoints",
    "reach_speed",
    "road_of",
    "vehicle_couplings",
]

SPEED_TOLERANCE = 0.05  # m/s: a driven-up speed is reached when within this for HOLD_STEPS
HOLD_STEPS = 2000  # 1 s
MAX_PREROLL_STEPS = 240_000  # 120 s
PREROLL_CHUNK = 10  # steps between two updates of the drive-up speed controller

Note = Callable[[str], None]


class StartError(VcosimError):
    """The vehicle could not be started as its spec says (a speed it cannot drive up to)."""


def build_simulation(spec: RunSpec, *, note: Note | None = None) -> Simulation:
    """The simulation ``spec`` describes, its faces attached and ready to ``run``.

    Everything the spec says is built here, for the command line, sweeps and the API alike:
    the pacer with every pacing field, the world (and SUMO's traffic in it), the faces in the
    spec's order, the recording, then the ground-truth outputs (OSI, Foxglove) and the
    Foxglove scene of an MCAP recording. ``note`` receives a line for each thing worth
    telling the user that only building reveals (which bus module each vehicle of a world
    joins as, where OSI and Foxglove go).
    """
    pacing = spec.pacing
    pacer = Pacer(
        pacing.mode,
        frame_rate=pacing.frame_rate,
        time_dilation=pacing.time_dilation,
        on_late=pacing.on_late,
    )
    if spec.sumo is not None:  # SUMO joins a world (a lone car: a world of one, docs/traffic.md)
        from vcosim.scenarios.traffic import world_file

        sim = Simulation(with_traffic(World(world_file(spec))), pacer)
    elif spec.world is not None:  # the vehicles, their starts and the terrain come from the file
        world = world_of(spec.world)
        built = World(world, terrain=_built(world.terrain, world.base))
        sim = Simulation(with_traffic(built), pacer)
    else:
        sim = Simulation(start_vehicle(spec), pacer)
    if sim.world is not None and sim.world.spec.sumo is not None:
        attach_sumo_face(sim, spec)
    # The recording, the bus and OSI say where each vehicle is on an OpenDRIVE road.
    wants_road = spec.recording is not None or any(
        isinstance(f, (BusFaceSpec, OsiFaceSpec)) for f in spec.faces
    )
    road = road_of(spec) if wants_road else None
    say = note or (lambda line: None)
    for face in spec.faces:
        if face.kind not in GROUND_TRUTH:
            attach_face(sim, face, say, road)
    if spec.recording is not None:
        from vcosim.sim.recorder import SignalLog, WorldSignalLog

        every, path = spec.recording.every, spec.recording.path
        if sim.world is None:
            sim.attach("recording", SignalLog(path, every=every, road=road))
        else:
            sim.attach("recording", WorldSignalLog(path, list(sim.vehicles), every, road))
    for face in spec.faces:  # after the recording: Foxglove's channels join its open file
        if face.kind in GROUND_TRUTH:
            attach_face(sim, face, say, road)
    if spec.recording is not None:
        from vcosim.groundtruth.outputs import attach_scene_recording, records_scene

        if records_scene(spec.recording.path):
            say(attach_scene_recording(sim, spec.recording.path, spec.recording.every))
    return sim


def with_traffic(world: World) -> World:
    """The world with the traffic its file asks for (``[sumo]``: SUMO's, started here)."""
    if world.spec.sumo is not None:
        from vcosim.traffic.sumo import attach_sumo

        attach_sumo(world, world.spec.sumo, world.spec.base)
    return world


def world_of(world: Path | WorldFile) -> WorldFile:
    """A spec's world: its file's (parsed once per run), or the one it holds."""
    return world if isinstance(world, WorldFile) else WorldFile.load(world)


def attach_sumo_face(sim: Simulation, spec: RunSpec) -> None:
    """The face that ends the world's SUMO with the run and traces its cars beside a recording."""
    from vcosim.scenarios.traffic import SumoFace, trace_path
    from vcosim.traffic.sumo import SumoTraffic

    assert sim.world is not None
    traffic = sim.world.objects
    assert isinstance(traffic, SumoTraffic)
    trace = None if spec.recording is None else trace_path(spec.recording.path)
    sim.attach(SumoFace.kind, SumoFace(traffic, trace))


def start_vehicle(spec: RunSpec) -> Vehicle:
    """The lone car of ``spec`` on its terrain, started as ``spec.start`` says."""
    pose = start_pose(spec)  # (a pose off the road's lanes is refused before anything is built)
    car = Vehicle(spec.vehicle, terrain(spec.terrain), engine_running=spec.engine)
    automatic, start = spec.gearbox == "automatic", spec.start
    if automatic:
        car.set_inputs(automatic=1, gear=1)  # selector in D: pedals and steering are enough
    teleport = start.how == "teleport" and start.speed > 0
    if pose is not None or teleport:  # in D: rolling in the gear it would hold
        car.teleport(*(pose or (0.0, 0.0, 0.0)), speed=start.speed if teleport else 0.0)
    if automatic:
        car.step()
    if start.how == "drive_up" and start.speed > 0:
        reach_speed(car, start.speed)
    return car


def start_pose(spec: RunSpec) -> tuple[float, float, float] | None:
    """Where the lone car starts; None: where it stands (the origin).

    Its pose, its road position's, or on an OpenDRIVE road the first driving lane of the first
    road, at its start. A pose on such a road that is on no driving lane is refused
    (``ConfigError``), naming the nearest lane as ``--start-pose`` would take it.
    """
    from vcosim.roads.starts import lane_start, nearest_lane, on_a_driving_lane

    start = spec.start
    network = road_of(spec) if spec.terrain is not None else None
    if network is None:
        if start.road is not None:
            problem = "start.road: a road position needs an OpenDRIVE road (--terrain FILE.xodr)"
            raise ConfigError([problem], "the run's start")
        return start.pose
    if start.road is not None:
        return lane_start(network, start.road.road, start.road.lane, start.road.s)
    if start.pose is None:
        return lane_start(network)
    x, y, _ = start.pose
    if not on_a_driving_lane(network, x, y):
        near = nearest_lane(network, x, y)
        raise ConfigError(
            [
                f"start.pose: ({x:g}, {y:g}) is on no driving lane of the road; the nearest is "
                f"road {near.road!r}, lane {near.lane} at s = {near.s:.1f} m, "
                f"{near.distance:.1f} m away (--start-pose {near.option()})"
            ],
            "the run's start",
        )
    return start.pose


def road_of(spec: RunSpec) -> RoadNetwork | None:
    """The OpenDRIVE road a spec drives on (its terrain's, or its world's), or None."""
    if spec.world is not None:
        world = world_of(spec.world)
        return world.terrain.read_road(world.base)
    if isinstance(spec.terrain, Path):
        return TerrainSpec.load(spec.terrain).read_road()
    return spec.terrain.read_road() if spec.terrain is not None else None


def terrain(spec: Path | TerrainSpec | None) -> Terrain | None:
    """The terrain of a spec: a file, a table (built once per distinct table), or None."""
    if spec is None:
        return None
    if isinstance(spec, TerrainSpec):
        return _built(spec)
    return load_terrain(spec)


@lru_cache(maxsize=8)
def _built(spec: TerrainSpec, base: Path | None = None) -> Terrain:
    """A terrain table's terrain, built once: the runs of a sweep share it, and its road.

    A road's surface takes a while to rasterise; a world's runs build it once. ``base``
    anchors the table's file names.
    """
    return spec.build(base)


def reach_speed(car: Vehicle, speed: float) -> None:
    """Drive (PI on the pedals) until the speed holds within 0.05 m/s for 1 s.

    The run starts from there: the vehicle keeps the throttle that holds the speed.
    """
    index = L.SIGNAL_INDEX["groundspeed"]
    y = car.outputs
    integral, held = 0.0, 0
    chunk_time = PREROLL_CHUNK * car.dt
    for _ in range(MAX_PREROLL_STEPS // PREROLL_CHUNK):
        error = speed - y[index]
        effort = 0.3 * error + 0.1 * integral
        if -1.0 < effort < 1.0 or effort * error < 0:
            integral += error * chunk_time
        car.run(
            PREROLL_CHUNK,
            throttle=min(max(effort, 0.0), 1.0),
            brake=min(max(-0.5 * effort, 0.0), 1.0),
        )
        held = held + PREROLL_CHUNK if abs(speed - y[index]) < SPEED_TOLERANCE else 0
        if held >= HOLD_STEPS:
            car.step(brake=0.0)
            return
    raise StartError(
        f"start.speed: {speed:g} m/s not reached in "
        f"{MAX_PREROLL_STEPS * car.dt:g} s (speed {y[index]:.2f} m/s)"
    )
