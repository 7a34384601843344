"""A scenario's world: its entities as world vehicles on the scenario's road.

Every entity starts where its Init puts it, at its Init speed. One driven from outside is a
world vehicle with an external driver (a coupling endpoint serves it); every other one gets a
built-in driver along the lane it starts in (and on through the road's links, the first lane
offered at each junction), whose speed and lane offset the storyboard sets.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from vcosim.openscenario.model import Scenario
from vcosim.openscenario.place import (
    AGAINST_LANE,
    NotPlaced,
    PlaceError,
    Pose,
    lane_pose,
    on_lane,
    resolve,
    route,
)
from vcosim.roads import RoadNetwork, load_road
from vcosim.roads.surface import MAX_CELLS
from vcosim.world.movers import AWAY, straight_line
from vcosim.world.spec import WorldFile


def road_network(path: Path) -> RoadNetwork:
    """The scenario's road (read once per file: the world, terrain and storyboard share it)."""
    return load_road(path)


def network_of(scenario: Scenario) -> RoadNetwork | None:
    """The scenario's road network (None without a LogicFile)."""
    return None if scenario.road is None else road_network(scenario.road.resolve())


def start_poses(scenario: Scenario) -> dict[str, Pose]:
    """Each entity's start pose, placed in Init's order (relative positions need the earlier)."""
    network = network_of(scenario)
    poses: dict[str, Pose] = {}
    waiting = list(dict.fromkeys(scenario.init_order))
    while waiting:  # a position relative to an entity placed later in Init waits for it
        placed = []
        for name in waiting:
            start = scenario.init[name]
            assert start.position is not None
            try:  # each teleport in turn: a later one may be relative to where it put it
                for position in (*scenario.init_before.get(name, ()), start.position):
                    poses[name] = resolve(position, network, poses)
            except NotPlaced:
                poses.pop(name, None)
                continue
            placed.append(name)
        if not placed:  # says which cannot be placed
            first = scenario.init[waiting[0]].position
            assert first is not None
            resolve(first, network, poses)
        waiting = [name for name in waiting if name not in placed]
    return poses


ROAD_CELL = 0.5
"""m: the road surface's grid (the terrain's default); coarser where a long road needs it."""
ACROSS_LANE = math.pi / 4
"""rad: a kinematic object heading further than this from its lane's line goes straight on."""


def against(network: RoadNetwork, pose: Pose) -> bool:
    """Whether ``pose`` heads against the traffic of the lane it is on (more than 90 degrees)."""
    road, s, lane, _ = on_lane(network, pose, "")
    along = lane_pose(network, road, s, lane)[2]
    return abs(math.remainder(pose[2] - along, 2 * math.pi)) > AGAINST_LANE


def against_line(network: RoadNetwork, road_id: str, lane: int) -> np.ndarray:
    """A lane's centre line against its traffic (the road driven the other way).

    Beyond its end a car drives straight on (a path is extended straight).
    """
    road = network.road(road_id)
    pieces = [road.lane_centre(lane, k, 1.0)[1][:, :2] for k in range(len(road.sections))
              if lane in road.sections[k].lanes]  # fmt: skip
    line = np.concatenate(pieces)
    return line if not network.forward(road_id, lane) else line[::-1]


def lane_line(network: RoadNetwork | None, pose: Pose) -> tuple[np.ndarray, list[tuple[str, int]]]:
    """The line a kinematic object follows from ``pose``, and the lanes it runs through.

    Its lane's route where it heads along its lane; straight on along its heading where it
    is on no lane, or heads across or against it.
    """
    try:
        road, s, lane, _ = on_lane(network, pose, "")
    except PlaceError:
        return straight_line(*pose), []
    assert network is not None
    along = lane_pose(network, road, s, lane)[2]
    if abs(math.remainder(pose[2] - along, 2 * math.pi)) > ACROSS_LANE:
        return straight_line(*pose), []
    legs = route(network, road, lane)
    return network.route_path(list(legs))[:, :2], legs


def physical(scenario: Scenario) -> list[str]:
    """The entities that are vehicles of the world (the others move kinematically)."""
    return [name for name, entity in scenario.entities.items() if not entity.kinematic]


def scenario_world(scenario: Scenario) -> WorldFile:
    """The world the scenario runs in (``ConfigError`` if an entity cannot be placed)."""
    network = network_of(scenario)
    poses = start_poses(scenario)
    vehicles: list[dict[str, object]] = []
    paths: dict[str, object] = {}
    for k, name in enumerate(scenario.entities):
        entity = scenario.entities[name]
        if entity.kinematic:
            continue
        poses.setdefault(name, (AWAY + 100.0 * k, -AWAY, 0.0))  # absent: parked far away
        x, y, heading = poses[name]
        start = {"x": x, "y": y, "heading": math.degrees(heading)}
        ramped = scenario.init[name].ramp is not None  # the storyboard brings it up to speed
        start["speed"] = scenario.init[name].ramp_from if ramped else scenario.init[name].speed
        vehicle: dict[str, object] = {"name": name, "vehicle": entity.preset, "start": start}
        if not entity.external:
            offset = 0.0
            try:
                road, s, lane, t = on_lane(network, poses[name], name)
            except PlaceError:  # no road, or off its lanes: it drives straight on
                paths[name] = {"points": straight_line(*poses[name]).tolist()}
            else:
                assert network is not None
                offset = float(t - network.road(road).lane_t(s, lane)[0])
                if against(network, poses[name]):  # it drives its lane the other way
                    paths[name] = {"points": against_line(network, road, lane).tolist()}
                    offset = -offset if network.forward(road, lane) else offset
                else:
                    paths[name] = {"lanes": [list(leg) for leg in route(network, road, lane)]}
                    offset = offset if network.forward(road, lane) else -offset
            vehicle["driver"] = {
                "kind": "profile",
                "path": name,
                "offset": offset,
                "speeds": [[0.0, start["speed"]]],
            }
        vehicles.append(vehicle)
    data: dict[str, object] = {"vehicles": vehicles, "paths": paths}
    external = scenario.external
    if external or vehicles:
        data["ego"] = external[0] if external else physical(scenario)[0]
    else:  # every entity moves kinematically: a world of no vehicle, as esmini runs it
        data["objects_only"] = True
    if scenario.road is not None:
        terrain: dict[str, object] = {"road": str(scenario.road.resolve())}
        assert network is not None
        x0, y0, x1, y1 = network.bounds(10.0)
        points = (x1 - x0 + 20.0) * (y1 - y0 + 20.0)  # m2, with the apron
        if points / ROAD_CELL**2 > MAX_CELLS:  # a long road: a coarser surface grid fits it
            terrain["road_cell"] = math.ceil(math.sqrt(points / MAX_CELLS) * 20) / 20
        data["terrain"] = terrain
        try:
            ego = poses[str(data["ego"])]
            road, s, lane, _ = on_lane(network, ego, str(data["ego"]))
        except (KeyError, ValueError):  # no ego, or one off the lanes
            pass  # an ego off the lanes keeps the sensor's default lane width
        else:
            assert network is not None
            width = network.road(road).lane_t(s, lane, 1.0) - network.road(road).lane_t(
                s, lane, 0.0
            )
            data["sensor"] = {"lane_width": abs(float(width[0]))}
    return WorldFile.from_dict(data, f"OpenSCENARIO {scenario.path}", base=scenario.path.parent)
