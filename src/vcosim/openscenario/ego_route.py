"""The built-in route driver of a scenario's external ego: the route it drives, and the world.

Where nothing couples the ego (a survey, ``vcosim sim --ego-driver route``), the world's IDM
driver drives it along the file's route, or past the places its storyboard waits for it at,
and stops at the route's end (docs/scenarios.md, "Everyone's files").
"""

from __future__ import annotations

import heapq
import logging
import math
from collections.abc import Iterator

import numpy as np

from vcosim.errors import ConfigError
from vcosim.openscenario import model as m
from vcosim.openscenario.model import Scenario
from vcosim.openscenario.place import (
    LaneRef,
    PlaceError,
    Pose,
    need_road,
    on_lane,
    resolve,
    route,
    route_line,
)
from vcosim.openscenario.world import against, against_line, network_of, start_poses
from vcosim.roads import RoadNetwork
from vcosim.world.spec import IdmDriver, PathSpec, WorldFile

log = logging.getLogger("vcosim.openscenario")

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
