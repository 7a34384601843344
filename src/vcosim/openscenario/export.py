"""A world file written out as OpenSCENARIO (``.xosc``) on an OpenDRIVE road (``.xodr``).

(Past 400 lines: one writer of a world as ``.xosc`` and ``.xodr``, each element beside the refusals
of what cannot be exported.)

``vcosim world export WORLD.toml OUT.xosc`` writes ``OUT.xosc`` and ``OUT.xodr`` beside it;
``vcosim sim --scenario OUT.xosc`` then runs what the world ran:

- the road: the world's OpenDRIVE road, copied; or, on flat ground, one road per polyline
  path, its reference line along the path and lanes 3.5 m wide, all running along the path,
  one centred on it and as many beside it as the vehicles' offsets need; without paths, one
  straight road along the first vehicle's heading, with lanes under every vehicle;
- every vehicle: a ``Vehicle`` whose ``preset`` property is its vehicle, placed at its start
  (``WorldPosition``) with its start speed; an external one gets the ``external`` controller;
- a profile driver: a speed event per rising or falling stretch of its profile (a linear
  ``SpeedAction`` from its start time), a lane change: a cubic ``LaneOffsetAction`` whose
  lateral acceleration gives the change its duration, started at its time or, cued by the
  vehicle ahead of which it cuts in, when the gap rises past its value;
- the run's end: the storyboard's stop trigger at ``duration`` (a world has none of its own).

Every Act and Event has a start trigger ("at once" is simulation time >= 0, as the 1.0-1.2
schemas require the element), and every storyboard element a name of its own: ASAM's
checkers (``asam-qc-openscenarioxml``, ``asam-qc-opendrive``) find no error in the files.

A world that says more than that (IDM drivers, circles, SUMO, pictures for the ground, ...)
is refused, each thing it cannot say named.
"""

from __future__ import annotations

import math
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from vcosim.errors import ConfigError
from vcosim.openscenario.world import route
from vcosim.roads import RoadNetwork, read_xodr
from vcosim.vehicle.terrain import TerrainSpec
from vcosim.world.paths import Paths
from vcosim.world.spec import (
    ExternalDriver,
    IdmDriver,
    PathSpec,
    ProfileDriver,
    Sensor,
    VehicleEntry,
    WorldFile,
)

LANE_WIDTH = 3.5
"""m: the lanes of a road made from a path (the range sensor's default lane width)."""

EXTERNAL = "external"
WHITE = "standard"
"""A road mark's colour (OpenDRIVE's ``standard``: white)."""
Pose = tuple[float, float, float]
"""x, y (m) and heading (rad)."""
CAR_LENGTH = 4.6
"""m: the box a vehicle is written with (read, not applied: the preset's box counts)."""
DURATION = 60.0
"""s: the run's length when none is given (the storyboard's stop trigger)."""
BEHIND, AHEAD = 100.0, 1000.0
"""m: the road of a world without paths: behind the rearmost start, and at least ahead of the
foremost (farther if twice the fastest start speed covers more within the run)."""


class ExportError(ConfigError):
    """A world that OpenSCENARIO (vcosim's subset) cannot say as it is."""

    def __init__(self, problems: list[str], source: str) -> None:
        super().__init__(problems, f"{source} as OpenSCENARIO")


def export_world(
    world: WorldFile, out: Path, source: str = "world", duration: float = DURATION
) -> Path:
    """Write ``out`` (``.xosc``) and its road (``out`` with ``.xodr``); the road's path.

    The scenario ends by its stop trigger at ``duration`` simulated seconds.
    """
    problems = _refusals(world)
    if problems:
        raise ExportError(problems, source)
    vehicles = world.all_vehicles()
    road = out.with_suffix(".xodr")
    out.parent.mkdir(parents=True, exist_ok=True)
    if world.terrain.road is not None:
        given = Path(world.terrain.road)
        given = world.base / given if world.base is not None and not given.is_absolute() else given
        network = read_xodr(given)
        problems = _lane_routes(world, network)
        if problems:
            raise ExportError(problems, source)
        if given.resolve() != road.resolve():
            shutil.copyfile(given, road)
    else:
        road.write_bytes(_xodr(*_road_paths(world, vehicles, duration)))
    poses = _starts(world, vehicles)
    scenario = _xosc(world, vehicles, poses, road.name, duration)
    scenario.write(out, encoding="utf-8", xml_declaration=True)
    return road


# -- what cannot be said ------------------------------------------------------------------------
def _refusals(world: WorldFile) -> list[str]:
    problems = []
    if world.sumo is not None:
        problems.append("sumo: SUMO's traffic is not part of an OpenSCENARIO file")
    terrain = world.terrain
    if any((terrain.height_map, terrain.road_map, terrain.friction_map)):
        problems.append("terrain: pictures of the ground cannot be said (only an OpenDRIVE road)")
    defaults = TerrainSpec()
    for key in ("friction", "road_friction", "road_cell"):
        if getattr(terrain, key) != getattr(defaults, key):
            problems.append(f"terrain.{key}: only the default ({getattr(defaults, key)})")
    if world.sensor != Sensor():
        problems.append("sensor: only the default range sensor")
    if world.driver_period != 0.01 or world.stop_at_collision:
        problems.append("driver_period, stop_at_collision: only the defaults")
    for name, path in world.paths.items():
        if path.is_loop:
            problems.append(f"paths.{name}: a loop (circle or closed) cannot be said")
        if path.points is not None and terrain.road is not None:
            problems.append(f"paths.{name}: points beside an OpenDRIVE road: give lanes")
    vehicles = world.all_vehicles()
    idm = [e.name for e in vehicles if isinstance(e.driver, IdmDriver)]
    if idm:
        named = ", ".join(idm[:3]) + (f" and {len(idm) - 3} more" if len(idm) > 3 else "")
        problems.append(f"{named}: an IDM driver has no OpenSCENARIO action (give a profile)")
    for entry in vehicles:
        if not isinstance(entry.driver, ExternalDriver) and (
            entry.gearbox.value != "automatic" or not entry.engine
        ):
            problems.append(
                f"vehicle {entry.name!r}: a built-in driver drives an automatic, engine on"
            )
    external = [e.name for e in vehicles if isinstance(e.driver, ExternalDriver)]
    ego = world.ego or (external[0] if external else vehicles[0].name)  # as World takes it
    if (external and external[0] != ego) or (not external and ego != vehicles[0].name):
        first = external[0] if external else vehicles[0].name
        problems.append(f"ego: a scenario's ego is its first external entity, {first}, not {ego}")
    return problems


def _lane_routes(world: WorldFile, network: RoadNetwork) -> list[str]:
    """A path of lanes must be the route a scenario's driver takes from its first lane."""
    problems = []
    for name, path in world.paths.items():
        if path.lanes is None:
            continue
        legs = [(network.road(r).id, int(lane)) for r, lane in path.lanes]
        taken = route(network, *legs[0])
        if taken[: len(legs)] != legs:
            problems.append(
                f"paths.{name}.lanes: a scenario's driver takes the first lane offered at a "
                f"junction ({taken[: len(legs)]}), not {legs}"
            )
    return problems


# -- the road -----------------------------------------------------------------------------------
def _lanes_beside(offsets: list[float]) -> tuple[int, int]:
    """Lanes left and right of the centred one that hold every offset."""
    left = max(0, math.ceil((max(offsets) - LANE_WIDTH / 2) / LANE_WIDTH - 1e-9))
    right = max(0, math.ceil((-min(offsets) - LANE_WIDTH / 2) / LANE_WIDTH - 1e-9))
    return left, right


def _road_paths(
    world: WorldFile, vehicles: list[VehicleEntry], duration: float
) -> tuple[dict[str, PathSpec], dict[str, list[float]]]:
    """The paths that become roads, and the offsets (m, left of the path) their lanes hold."""
    if not world.paths:
        return _straight(vehicles, duration)
    offsets: dict[str, list[float]] = {name: [0.0] for name in world.paths}
    for entry in vehicles:
        driver = entry.driver
        if isinstance(driver, ProfileDriver):
            offsets[driver.path].append(driver.offset)
            if driver.lane_change is not None:
                offsets[driver.path].append(driver.lane_change.offset)
    return world.paths, offsets


def _straight(
    vehicles: list[VehicleEntry], duration: float
) -> tuple[dict[str, PathSpec], dict[str, list[float]]]:
    """A road for a world without paths: a scenario names one, and a road file holds one.

    Straight along the first vehicle's heading, with lanes under every vehicle, long enough
    for the run (``BEHIND``, ``AHEAD``).
    """
    first = vehicles[0].start
    assert first.x is not None and first.y is not None  # no path: every start is a pose
    x0, y0, h = first.x, first.y, math.radians(first.heading)
    along, left = [], []
    for entry in vehicles:
        assert entry.start.x is not None and entry.start.y is not None
        dx, dy = entry.start.x - x0, entry.start.y - y0
        along.append(dx * math.cos(h) + dy * math.sin(h))
        left.append(dy * math.cos(h) - dx * math.sin(h))
    fastest = max(entry.start.speed for entry in vehicles)
    ends = (min(along) - BEHIND, max(along) + max(AHEAD, 2.0 * fastest * duration))
    points = [[x0 + s * math.cos(h), y0 + s * math.sin(h)] for s in ends]
    return {"road": PathSpec(points=points)}, {"road": [0.0, *left]}


def _xodr(paths: dict[str, PathSpec], offsets: dict[str, list[float]]) -> bytes:
    """One road per polyline path (ids 1, 2, ... in the paths' order)."""
    root = ET.Element("OpenDRIVE")
    # 1.8, though 1.4 says all of it: ASAM's checker skips most of its checks below 1.7
    ET.SubElement(root, "header", revMajor="1", revMinor="8", name="vcosim export")
    for k, (name, path) in enumerate(paths.items(), start=1):
        points = np.asarray(path.polyline(), dtype=float)
        steps = np.diff(points, axis=0)
        lengths = np.hypot(*steps.T)
        starts = np.concatenate([[0.0], np.cumsum(lengths)[:-1]])
        road = ET.SubElement(
            root, "road", name=name, length=_f(lengths.sum()), id=str(k), junction="-1"
        )
        plan = ET.SubElement(road, "planView")
        for s, (x, y), (dx, dy), length in zip(starts, points, steps, lengths, strict=False):
            geometry = ET.SubElement(
                plan, "geometry", s=_f(s), x=_f(x), y=_f(y),
                hdg=_f(math.atan2(dy, dx)), length=_f(length),
            )  # fmt: skip
            ET.SubElement(geometry, "line")
        left, right = _lanes_beside(offsets[name])
        lanes = ET.SubElement(road, "lanes")
        shift = LANE_WIDTH / 2 + left * LANE_WIDTH  # the reference line: the leftmost border
        ET.SubElement(lanes, "laneOffset", s="0", a=_f(shift), b="0", c="0", d="0")
        section = ET.SubElement(lanes, "laneSection", s="0")
        centre = ET.SubElement(ET.SubElement(section, "center"), "lane", id="0", type="none")
        ET.SubElement(centre, "roadMark", sOffset="0", type="solid", width="0.12", color=WHITE)
        side = ET.SubElement(section, "right")
        for n in range(1, left + right + 2):
            lane = ET.SubElement(side, "lane", id=str(-n), type="driving", level="false")
            ET.SubElement(lane, "width", sOffset="0", a=_f(LANE_WIDTH), b="0", c="0", d="0")
            kind = "solid" if n == left + right + 1 else "broken"
            ET.SubElement(lane, "roadMark", sOffset="0", type=kind, width="0.12", color=WHITE)
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)


# -- the scenario -------------------------------------------------------------------------------
def _starts(world: WorldFile, vehicles: list[VehicleEntry]) -> dict[str, Pose]:
    """Each vehicle's start pose (x, y, heading in radians), as the world places it."""
    paths = Paths(world.paths, _network(world))
    poses = {}
    for entry in vehicles:
        start, driver = entry.start, entry.driver
        if start.s is not None and not isinstance(driver, ExternalDriver):
            x, y, heading = paths.pose_at(driver.path, start.s, driver.offset)
        else:
            assert start.x is not None and start.y is not None
            x, y, heading = start.x, start.y, start.heading
        poses[entry.name] = (x, y, math.radians(heading))
    return poses


def _network(world: WorldFile) -> RoadNetwork | None:
    road = world.terrain.road
    if road is None:
        return None
    base = world.base
    return read_xodr(base / road if base is not None else Path(road))


def _xosc(
    world: WorldFile,
    vehicles: list[VehicleEntry],
    poses: dict[str, Pose],
    road: str,
    duration: float,
) -> ET.ElementTree:
    root = ET.Element("OpenSCENARIO")
    ET.SubElement(
        root, "FileHeader", revMajor="1", revMinor="2", date="2026-01-01T00:00:00",
        description="a vcosim world (vcosim world export)", author="vcosim",
    )  # fmt: skip
    ET.SubElement(root, "ParameterDeclarations")
    ET.SubElement(root, "CatalogLocations")
    network = ET.SubElement(root, "RoadNetwork")
    ET.SubElement(network, "LogicFile", filepath=road)
    entities = ET.SubElement(root, "Entities")
    for entry in vehicles:
        _entity(entities, entry, world.base)
    board = ET.SubElement(root, "Storyboard")
    actions = ET.SubElement(ET.SubElement(board, "Init"), "Actions")
    for entry in vehicles:
        private = ET.SubElement(actions, "Private", entityRef=entry.name)
        x, y, h = poses[entry.name]
        where = _private(private, "TeleportAction")
        ET.SubElement(ET.SubElement(where, "Position"), "WorldPosition", x=_f(x), y=_f(y), h=_f(h))
        _speed(_private(private, "LongitudinalAction"), entry.start.speed, "step", 0.0)
    story = ET.SubElement(board, "Story", name="world")
    act = ET.SubElement(story, "Act", name="drivers")
    for entry in vehicles:
        if isinstance(entry.driver, ProfileDriver):
            _driver(act, entry, entry.driver, poses)
    if any(child.tag == "ManeuverGroup" for child in act):
        _at(act, "drivers start", 0.0)
    else:
        board.remove(story)
    _when(ET.SubElement(board, "StopTrigger"), "end", duration)
    ET.indent(root)
    return ET.ElementTree(root)


def _entity(entities: ET.Element, entry: VehicleEntry, base: Path | None) -> None:
    thing = ET.SubElement(entities, "ScenarioObject", name=entry.name)
    vehicle = ET.SubElement(thing, "Vehicle", name=entry.vehicle, vehicleCategory="car")
    box = ET.SubElement(vehicle, "BoundingBox")  # read, not applied: the preset's box counts
    ET.SubElement(box, "Center", x="1.4", y="0", z="0.75")
    ET.SubElement(box, "Dimensions", width="1.9", length=_f(CAR_LENGTH), height="1.5")
    ET.SubElement(vehicle, "Performance", maxSpeed="70", maxAcceleration="8", maxDeceleration="10")
    axles = ET.SubElement(vehicle, "Axles")
    for tag, x in (("FrontAxle", "2.8"), ("RearAxle", "0")):
        ET.SubElement(axles, tag, maxSteering="0.5", wheelDiameter="0.65", trackWidth="1.6",
                      positionX=x, positionZ="0.33")  # fmt: skip
    preset = entry.vehicle
    if (base is not None and preset.endswith(".toml")) and not Path(preset).is_absolute():
        preset = str((base / preset).resolve())
    properties = ET.SubElement(vehicle, "Properties")
    ET.SubElement(properties, "Property", name="preset", value=preset)
    if isinstance(entry.driver, ExternalDriver):
        controller = ET.SubElement(ET.SubElement(thing, "ObjectController"), "Controller")
        controller.set("name", EXTERNAL)
        ET.SubElement(controller, "Properties")


def _private(parent: ET.Element, tag: str) -> ET.Element:
    return ET.SubElement(ET.SubElement(parent, "PrivateAction"), tag)


def _speed(longitudinal: ET.Element, value: float, shape: str, duration: float) -> None:
    action = ET.SubElement(longitudinal, "SpeedAction")
    ET.SubElement(
        action, "SpeedActionDynamics", dynamicsShape=shape, dynamicsDimension="time",
        value=_f(duration),
    )  # fmt: skip
    target = ET.SubElement(action, "SpeedActionTarget")
    ET.SubElement(target, "AbsoluteTargetSpeed", value=_f(value))


def _driver(
    act: ET.Element,
    entry: VehicleEntry,
    driver: ProfileDriver,
    poses: dict[str, Pose],
) -> None:
    group = ET.SubElement(act, "ManeuverGroup", name=entry.name, maximumExecutionCount="1")
    actors = ET.SubElement(group, "Actors", selectTriggeringEntities="false")
    ET.SubElement(actors, "EntityRef", entityRef=entry.name)
    maneuver = ET.SubElement(group, "Maneuver", name=f"{entry.name} drives")
    profile = driver.speeds
    first_time, first_speed = profile[0]
    if first_speed != entry.start.speed:  # the profile's speed from the start
        event = _event(maneuver, f"{entry.name} speed 0")
        _speed(_private(_action(event, f"{entry.name} to the profile"), "LongitudinalAction"),
               first_speed, "step", 0.0)  # fmt: skip
        _at(event, f"{entry.name} speed 0 at", 0.0)
    for k, ((t0, v0), (t1, v1)) in enumerate(zip(profile, profile[1:], strict=False), start=1):
        if v1 == v0:
            continue
        event = _event(maneuver, f"{entry.name} speed {k}")
        action = _action(event, f"{entry.name} ramp {k}")
        _speed(_private(action, "LongitudinalAction"), v1, "linear", t1 - t0)
        _at(event, f"{entry.name} speed {k} at", t0)
    change = driver.lane_change
    if change is not None:
        # The scenario's driver keeps to its lane's centre plus the offset it started at; the
        # lane offset action adds the change to that, so the path ends ``change.offset`` away.
        move = change.offset - driver.offset
        event = _event(maneuver, f"{entry.name} lane change")
        lateral = _private(_action(event, f"{entry.name} changes lanes"), "LateralAction")
        offset = ET.SubElement(lateral, "LaneOffsetAction", continuous="false")
        acc = 6.0 * abs(move) / change.duration**2 if move else 1.0  # cubic: T = sqrt(6 d / a)
        ET.SubElement(offset, "LaneOffsetActionDynamics", dynamicsShape="cubic",
                      maxLateralAcc=_f(acc))  # fmt: skip
        target = ET.SubElement(offset, "LaneOffsetTarget")
        ET.SubElement(target, "AbsoluteTargetLaneOffset", value=_f(move))
        if change.at is not None:
            _at(event, f"{entry.name} lane change at", change.at)
        else:
            assert change.ahead_of is not None
            _cut_in(event, entry.name, change.ahead_of, change.gap, poses)
    if not len(maneuver):
        act.remove(group)


def _event(maneuver: ET.Element, name: str) -> ET.Element:
    return ET.SubElement(maneuver, "Event", name=name, priority="parallel",
                         maximumExecutionCount="1")  # fmt: skip


def _action(event: ET.Element, name: str) -> ET.Element:
    return ET.SubElement(event, "Action", name=name)


def _at(element: ET.Element, name: str, time: float) -> None:
    """Start ``element`` (an Act or an Event) once the simulation time is ``time``."""
    _when(ET.SubElement(element, "StartTrigger"), name, time)


def _when(trigger: ET.Element, name: str, time: float) -> None:
    """``trigger`` fires once the simulation time is ``time`` (and on: edge none)."""
    condition = _condition(trigger, name, "none")
    value = ET.SubElement(condition, "ByValueCondition")
    ET.SubElement(value, "SimulationTimeCondition", value=_f(time), rule="greaterOrEqual")


def _cut_in(
    event: ET.Element,
    who: str,
    ahead_of: str,
    gap: float,
    poses: dict[str, Pose],
) -> None:
    """When ``who``'s bumper gap ahead of ``ahead_of`` passes ``gap`` from where it starts.

    The condition's distance has no sign: from behind (or within ``gap`` ahead) the gap
    rising past ``gap`` is the distance rising past it; from farther ahead, falling below.
    """
    (x, y, _), (tx, ty, heading) = poses[who], poses[ahead_of]
    along = (x - tx) * math.cos(heading) + (y - ty) * math.sin(heading)
    ahead = along - CAR_LENGTH > gap  # bumper gap at the start, of two cars' usual length
    condition = _condition(ET.SubElement(event, "StartTrigger"), f"{who} ahead", "rising")
    by = ET.SubElement(condition, "ByEntityCondition")
    triggering = ET.SubElement(by, "TriggeringEntities", triggeringEntitiesRule="any")
    ET.SubElement(triggering, "EntityRef", entityRef=who)
    test = ET.SubElement(by, "EntityCondition")
    ET.SubElement(
        test, "RelativeDistanceCondition", entityRef=ahead_of, freespace="true",
        relativeDistanceType="longitudinal", coordinateSystem="entity", value=_f(gap),
        rule="lessThan" if ahead else "greaterThan",
    )  # fmt: skip


def _condition(trigger: ET.Element, name: str, edge: str) -> ET.Element:
    group = ET.SubElement(trigger, "ConditionGroup")
    return ET.SubElement(group, "Condition", name=name, delay="0", conditionEdge=edge)


def _f(value: float) -> str:
    """A number as the shortest text that reads back to it."""
    return repr(float(value))
