"""A scenario's world: its entities as world vehicles on the scenario's road.

Every entity starts where its Init puts it, at its Init speed. One driven from outside is a
world vehicle with an external driver (a coupling endpoint serves it); every other one gets a
built-in driver along the lane it starts in (and on through the road's links, the first lane
offered at each junction), whose speed and lane offset the storyboard sets.
"""

from __future__ import annotations

import heapq
import logging
import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from vcosim.errors import ConfigError
from vcosim.openscenario import model as m
from vcosim.openscenario.model import Scenario
from vcosim.openscenario.place import (
    AGAINST_LANE,
    LaneRef,
    NotPlaced,
    PlaceError,
    Pose,
    lane_pose,
    need_road,
    on_lane,
    resolve,
    route,
    route_line,
)
from vcosim.roads import RoadNetwork, load_road
from vcosim.roads.surface import MAX_CELLS
from vcosim.world.movers import AWAY, straight_line
from vcosim.world.spec import IdmDriver, PathSpec, WorldFile

log = logging.getLogger("vcosim.openscenario")


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
            position = scenario.init[name].position
            assert position is not None
            try:
                poses[name] = resolve(position, network, poses)
            except NotPlaced:
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
        start["speed"] = 0.0 if ramped else scenario.init[name].speed
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


# -- the external ego on the built-in route driver ------------------------------------------
EGO_SPEED = 30 / 3.6
"""m/s the route driver wants where the file gives the ego no start speed (CARLA's heroes
start standing): a town's speed."""
PAST_LAST_PLACE = 10.0
"""m a derived route goes on past its last place, so that a car stopping short of its end
has passed the place (a ReachPosition's tolerance may be 2 m)."""


def _triggers(scenario: Scenario) -> Iterator[m.Trigger]:
    """Every trigger of the storyboard, in the file's order (the stop trigger last)."""
    for story in scenario.stories:
        for act in story.acts:
            yield from (t for t in (act.start, act.stop) if t is not None)
            for group in act.groups:
                for maneuver in group.maneuvers:
                    yield from (e.start for e in maneuver.events if e.start is not None)
    if scenario.stop is not None:
        yield scenario.stop


def _route_actions(scenario: Scenario, ego: str) -> list[m.Position]:
    """The positions of the first route the file gives ``ego`` (Init's, else the storyboard's).

    An AssignRouteAction's waypoints, or an AcquirePositionAction's target.
    """
    actions = [action.action for name, action in scenario.init_actions if name == ego]
    actions += [
        action.action
        for story in scenario.stories
        for act in story.acts
        for group in act.groups
        if ego in group.actors
        for maneuver in group.maneuvers
        for event in maneuver.events
        for action in event.actions
    ]
    for action in actions:
        if isinstance(action, m.AssignRouteAction):
            return list(action.route.waypoints)
        if isinstance(action, m.AcquirePositionAction):
            return [action.position]
    return []


def waited_places(scenario: Scenario, ego: str) -> list[m.Position]:
    """The places the storyboard waits for ``ego`` at, in the file's order.

    The positions of ReachPosition conditions it triggers, and of distance conditions to a
    position that hold when it is near.
    """
    places: list[m.Position] = []
    for trigger in _triggers(scenario):
        for group in trigger.groups:
            for condition in group:
                test = condition.test
                if not isinstance(test, m.EntityCondition) or ego not in test.entities:
                    continue
                near = isinstance(test.test, m.ReachPosition) or (
                    isinstance(test.test, m.Distance)
                    and test.test.rule in ("lessThan", "lessOrEqual", "equalTo")
                )
                if near and (position := getattr(test.test, "position", None)) is not None:
                    places.append(position)
    return places


def lanes_ahead(
    network: RoadNetwork, start: LaneRef, road: str, lane: int
) -> tuple[float, list[LaneRef]] | None:
    """The shortest chain of lanes from ``start`` on to ``road`` along the lanes' links.

    Its ``lane`` where that is reached, else the first lane of ``road`` reached; with the
    metres driven past ``start``'s road. None where no chain reaches ``road``. (Unlike
    ``lanes_between`` it keeps the lane it starts in: the route's earlier legs lead to it.)
    """
    queue: list[tuple[float, int, LaneRef]] = [(0.0, 0, start)]
    came: dict[LaneRef, LaneRef | None] = {start: None}
    found: tuple[float, LaneRef] | None = None
    count = 0
    while queue:
        cost, _, node = heapq.heappop(queue)
        if node[0] == road:
            if node[1] == lane:
                found = (cost, node)
                break
            found = found or (cost, node)
            continue
        for ahead in network.next_lanes(*node):
            nxt = (str(ahead[0]), int(ahead[1]))
            if nxt not in came:
                came[nxt] = node
                count += 1
                length = cost + network.road(nxt[0]).length
                heapq.heappush(queue, (length, count, nxt))
    if found is None:
        return None
    chain = [found[1]]
    while (before := came[chain[-1]]) is not None:
        chain.append(before)
    return found[0], chain[::-1]


AGAINST_TRAFFIC = "its lane against its traffic, straight on beyond its end"
"""Where the ego heads against its lane's traffic (and the file gives it no route)."""


def ego_route(scenario: Scenario, ego: str) -> tuple[np.ndarray, str]:
    """The line the route driver drives ``ego`` along, and where it came from.

    The route the file gives the ego (an AssignRouteAction's waypoints in their order, an
    AcquirePositionAction's target); else the places its storyboard waits for it at, nearest
    first along the roads (the shortest lane route to each in turn: a driver who goes where
    the story happens); else its lane on through the road's links (the first lane offered
    at each junction). It ends ``PAST_LAST_PLACE`` past its last place, or further on along
    the lanes' links where the storyboard waits for the ego to have travelled further
    (a TraveledDistance condition). An ego heading against its lane's traffic drives the
    lane the other way, and straight on beyond it (``AGAINST_TRAFFIC``), as a storyboard car
    does. ``PlaceError`` where the ego is on no lane.
    """
    network = network_of(scenario)
    road_net = need_road(network, f"{ego}'s route")
    poses = start_poses(scenario)
    road, _, lane, _ = on_lane(road_net, poses[ego], ego)
    given = _route_actions(scenario, ego)
    if not given and against(road_net, poses[ego]):  # as the storyboard's cars drive it
        return against_line(road_net, road, lane), AGAINST_TRAFFIC
    source = "the file's route" if given else "the places its storyboard waits for it at"
    places = [resolve(p, network, poses) for p in (given or waited_places(scenario, ego))]
    targets = []
    for place in places:
        try:
            targets.append((place, on_lane(road_net, place, f"a place {ego} drives to")))
        except PlaceError:
            log.warning("%s's route passes over (%.1f, %.1f): on no lane", ego, *place[:2])
    legs: list[LaneRef] = [(road, lane)]
    last: Pose | None = None
    while targets:
        options = []
        for k, (_, (to_road, _, to_lane, _)) in enumerate(targets):
            if to_road == legs[-1][0]:
                options.append((0.0, k, [legs[-1]]))
                continue
            ahead = lanes_ahead(road_net, legs[-1], to_road, to_lane)
            if ahead is not None:
                options.append((ahead[0], k, ahead[1]))
        if not options:
            log.warning("%s's route reaches none of %d places left", ego, len(targets))
            break
        # the file's own route in its order; derived places nearest first
        _, k, chain = options[0] if given else min(options, key=lambda o: o[:2])
        legs[-1:] = chain
        last = targets.pop(k)[0]
    needed = waited_distance(scenario, ego)
    if last is None and not needed:
        return route_line(road_net, route(road_net, road, lane), entry=lane), "its lane on"
    # on along the lanes' links past the last place, as far as the story needs it driven
    line = route_line(road_net, [*legs[:-1], *route(road_net, *legs[-1])], entry=lane)
    along = np.concatenate(([0.0], np.cumsum(np.hypot(*np.diff(line, axis=0).T))))
    start = int(np.argmin(np.hypot(*(line - np.asarray(poses[ego][:2])).T)))
    end_at = along[start] + needed + PAST_LAST_PLACE if needed else 0.0
    if last is not None:
        head = len(route_line(road_net, legs, entry=lane))  # the line to the last place's leg
        first = max(head - len(road_net.route_path([legs[-1]])) - 1, 0)
        gaps = np.hypot(*(line[first:head] - np.asarray(last[:2])).T)
        near = first + int(np.argmin(gaps))
        end_at = max(end_at, along[near] + PAST_LAST_PLACE)
    else:
        source = "its lane on, as far as its storyboard waits for it to drive"
    end = int(np.searchsorted(along, end_at))
    return line[: max(end, start + 1) + 1], source


def waited_distance(scenario: Scenario, ego: str) -> float:
    """The longest distance the storyboard waits for ``ego`` to travel (0: none)."""
    return max(
        (
            c.test.test.value
            for trigger in _triggers(scenario)
            for group in trigger.groups
            for c in group
            if isinstance(c.test, m.EntityCondition)
            and ego in c.test.entities
            and isinstance(c.test.test, m.TraveledDistance)
        ),
        default=0.0,
    )


def route_driven(
    world: WorldFile, scenario: Scenario, speed: float | None = None
) -> tuple[WorldFile, float]:
    """``world`` with its external ego on the built-in route driver (``ego_route``).

    The IDM on the ego's range sensor drives it at ``speed`` (else its Init speed, else
    ``EGO_SPEED``) and stops it at the route's end; with the seconds its route takes at that
    speed. ``ConfigError`` where the scenario has no external ego, or it is on no lane of a
    road.
    """
    external = scenario.external
    if not external:
        raise ConfigError(
            ["no entity is driven from outside ('external'): the storyboard drives them all"],
            f"OpenSCENARIO {scenario.path}",
        )
    ego = external[0]
    line, source = ego_route(scenario, ego)
    stops = source != AGAINST_TRAFFIC
    start = scenario.init[ego].speed
    cruise = speed or (start if math.isfinite(start) and start > 0 else EGO_SPEED)
    path = f"{ego} route"
    vehicles = [
        entry.model_copy(
            update={"driver": IdmDriver(kind="idm", path=path, speed=cruise, stop_at_end=stops)}
        )
        if entry.name == ego
        else entry
        for entry in world.vehicles
    ]
    paths = {**world.paths, path: PathSpec(points=[(float(x), float(y)) for x, y in line])}
    length = float(np.sum(np.hypot(*np.diff(line, axis=0).T)))
    return world.model_copy(update={"vehicles": vehicles, "paths": paths}), length / cruise
