"""What esmini's own files use that the subset reads now: qualified storyboard names
(``CutInEvent::Action``), Init teleports relative to where an earlier one put the entity,
and OffroadCondition on a lane of type none."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, cast

import numpy as np
import pytest
from scenariogeneration import xodr

from helpers.roads import network_of
from helpers.scenarios import at, car_xml, lane, placed, run_storyboard, write_road
from vcosim.errors import ConfigError
from vcosim.openscenario import model as m
from vcosim.openscenario.conditions import EntityTests, Scene
from vcosim.openscenario.place import facing_lane, route
from vcosim.openscenario.reader import read_scenario
from vcosim.openscenario.storyboard import scenario_run
from vcosim.openscenario.world import start_poses
from vcosim.roads import RoadNetwork, read_xodr
from vcosim.scenarios import PacingSpec, RunSpec, build_simulation

CAR = car_xml()
SPEED_STEP = """<PrivateAction><LongitudinalAction><SpeedAction>
  <SpeedActionDynamics dynamicsShape="step" value="0" dynamicsDimension="time"/>
  <SpeedActionTarget><AbsoluteTargetSpeed value="{speed}"/></SpeedActionTarget>
</SpeedAction></LongitudinalAction></PrivateAction>"""


def document(entities: str, init: str, story: str, stop: str) -> str:
    return f"""<?xml version="1.0" encoding="utf-8"?>
<OpenSCENARIO>
<FileHeader description="esmini coverage" author="vcosim tests" revMajor="1" revMinor="2"
  date="2026-12-07T00:00:00"/>
<ParameterDeclarations/>
<CatalogLocations/>
<RoadNetwork><LogicFile filepath="straight.xodr"/></RoadNetwork>
<Entities>{entities}</Entities>
<Storyboard><Init><Actions>{init}</Actions></Init>{story}{stop}</Storyboard>
</OpenSCENARIO>
"""


def two_events_with_one_action_name(stop_ref: str) -> str:
    """Events ``first`` (t = 1 s) and ``second`` (t = 2 s), each with an action ``Action``;
    the stop trigger waits for ``stop_ref`` to end."""
    events = "".join(
        f"""<Event name="{name}" priority="parallel"><Action name="Action">
        {SPEED_STEP.format(speed=speed)}</Action>{at(time)}</Event>"""
        for name, time, speed in (("first", 1.0, 12.0), ("second", 2.0, 14.0))
    )
    story = f"""<Story name="story"><Act name="act">
  <ManeuverGroup name="group" maximumExecutionCount="1">
    <Actors selectTriggeringEntities="false"><EntityRef entityRef="Car"/></Actors>
    <Maneuver name="maneuver">{events}</Maneuver>
  </ManeuverGroup><StartTrigger/></Act></Story>"""
    stop = f"""<StopTrigger><ConditionGroup><Condition name="end" delay="0"
  conditionEdge="none"><ByValueCondition><StoryboardElementStateCondition
  storyboardElementType="action" storyboardElementRef="{stop_ref}" state="endTransition"/>
</ByValueCondition></Condition></ConditionGroup></StopTrigger>"""
    return document(
        f'<ScenarioObject name="Car">{CAR}</ScenarioObject>',
        placed("Car", lane(50.0), 10.0),
        story,
        stop,
    )


@pytest.mark.parametrize(
    ("ref", "ends_after"),
    [("second::Action", 2.0), ("maneuver::second::Action", 2.0), ("first::Action", 1.0)],
)
def test_a_qualified_name_names_the_action_of_that_event_only(
    tmp_path: Path, ref: str, ends_after: float
) -> None:
    """Both events hold an ``Action``: ``second::Action`` is the later one's (the stop
    trigger fires at 2 s, not at the first's 1 s), as esmini resolves the end of a path."""
    sim, board = run_storyboard(tmp_path, "qualified", two_events_with_one_action_name(ref))
    assert board.ended_by.startswith("the stop trigger")
    assert ends_after <= sim.world.time < ends_after + 0.1


def test_a_qualified_name_whose_path_is_not_there_is_refused_with_its_line(
    tmp_path: Path,
) -> None:
    write_road(tmp_path)
    path = tmp_path / "dangling.xosc"
    path.write_text(two_events_with_one_action_name("third::Action"))
    with pytest.raises(ConfigError) as refused:
        read_scenario(path)
    [problem] = refused.value.problems
    assert "<Condition> 'end': no action named 'third::Action'" in problem
    assert problem.startswith("line ")


def teleports(*positions: str) -> str:
    """An Init Private teleporting ``Car`` to each of ``positions`` in turn."""
    steps = "".join(
        f"<PrivateAction><TeleportAction><Position>{where}</Position></TeleportAction>"
        "</PrivateAction>"
        for where in positions
    )
    return f'<Private entityRef="Car">{steps}</Private>'


def start_of(folder: Path, name: str, init: str) -> tuple[float, float, float]:
    write_road(folder)
    path = folder / f"{name}.xosc"
    path.write_text(document(f'<ScenarioObject name="Car">{CAR}</ScenarioObject>', init, "", ""))
    return start_poses(read_scenario(path))["Car"]


def test_an_init_teleport_relative_to_the_entity_itself_starts_from_the_earlier_one(
    tmp_path: Path,
) -> None:
    """esmini's ``four_roads`` and ``star``: a lane position, then a RelativeRoadPosition to
    the entity itself (here 10 m further on and 1 m to the left); before, refused ("has no
    place")."""
    x0, y0, _ = start_of(tmp_path, "lane", teleports(lane(50.0)))
    relative = '<RelativeRoadPosition entityRef="Car" ds="10" dt="1"/>'
    x, y, _ = start_of(tmp_path, "itself", teleports(lane(50.0), relative))
    assert x == pytest.approx(x0 + 10.0, abs=1e-6)
    assert y == pytest.approx(y0 + 1.0, abs=1e-6)


def test_a_first_teleport_relative_to_the_entity_itself_is_still_refused(tmp_path: Path) -> None:
    relative = '<RelativeRoadPosition entityRef="Car" ds="10" dt="1"/>'
    with pytest.raises(ConfigError, match="'Car' has no place"):
        start_of(tmp_path, "alone", teleports(relative))


def test_offroad_holds_on_a_lane_of_type_none_and_not_on_a_driving_lane() -> None:
    """esmini's ``lane_change``: the ego offset onto the road's ``none`` lane is off the road
    (OpenDRIVE's space beyond the edge); on a driving lane beside it, it is not."""
    road = xodr.create_road(xodr.Line(200), 1, left_lanes=2, right_lanes=2, lane_width=3.5)
    road.lanes.lanesections[0].rightlanes[1].lane_type = xodr.LaneType.none  # lane -2
    network = network_of(road)
    tests, off = EntityTests(), m.Offroad(0.5)
    held = {}
    for k in range(0, 101):  # "Verge" in lane -2 (t = -5.25), "Lane" in lane -1 (t = -1.75)
        t = 0.01 * k
        now = _scene(network, {"Verge": (50.0 + 10 * t, -5.25), "Lane": (50.0 + 10 * t, -1.75)}, t)
        held[k] = (tests.passes(off, "Verge", now), tests.passes(off, "Lane", now))
    assert not any(lane for _, lane in held.values())
    assert [k for k, (verge, _) in held.items() if verge] == list(range(50, 101))


def _scene(network: RoadNetwork, cars: dict[str, tuple[float, float]], time: float) -> Scene:
    """Cars at (x, y) heading east at 10 m/s, 4 m x 2 m boxes centred on their points."""
    x, y = (np.array(v) for v in zip(*cars.values(), strict=True))
    n = x.size
    poses = {
        "x": x, "y": y, "yaw": np.zeros(n), "cx": x, "cy": y, "vx": np.full(n, 10.0),
        "vy": np.zeros(n), "speed": np.full(n, 10.0), "ax": np.zeros(n), "ay": np.zeros(n),
        "half_length": np.full(n, 2.0), "half_width": np.full(n, 1.0),
    }  # fmt: skip
    return Scene(
        time, {name: k for k, name in enumerate(cars)}, poses, network, lambda a, b: False, {}
    )


def write_two_roads(folder: Path) -> None:
    """``two.xodr``: road 1 (200 m east from the origin) on into road 2 (200 m on), two
    lanes each way, right-hand traffic; road 1 has no predecessor, road 2 no successor."""
    first = xodr.create_road(xodr.Line(200), 1, left_lanes=2, right_lanes=2, lane_width=3.5)
    second = xodr.create_road(xodr.Line(200), 2, left_lanes=2, right_lanes=2, lane_width=3.5)
    first.add_successor(xodr.ElementType.road, 2, xodr.ContactPoint.start)
    second.add_predecessor(xodr.ElementType.road, 1, xodr.ContactPoint.end)
    odr = xodr.OpenDrive("two")
    odr.add_road(first)
    odr.add_road(second)
    odr.adjust_roads_and_lanes()
    odr.write_xml(str(folder / "two.xodr"))


def on_two(name: str, init: str, events: str, reach: str, folder: Path) -> tuple[Any, Any]:
    """Run ``Car`` on the two roads: its Init, its events, ended where it reaches ``reach``."""
    write_two_roads(folder)
    story = f"""<Story name="story"><Act name="act">
  <ManeuverGroup name="group" maximumExecutionCount="1">
    <Actors selectTriggeringEntities="false"><EntityRef entityRef="Car"/></Actors>
    <Maneuver name="maneuver">{events}</Maneuver>
  </ManeuverGroup><StartTrigger/></Act></Story>"""
    stop = f"""<StopTrigger><ConditionGroup><Condition name="there" delay="0"
  conditionEdge="none"><ByEntityCondition><TriggeringEntities triggeringEntitiesRule="any">
  <EntityRef entityRef="Car"/></TriggeringEntities><EntityCondition>
  <ReachPositionCondition tolerance="2"><Position>{reach}</Position></ReachPositionCondition>
</EntityCondition></ByEntityCondition></Condition></ConditionGroup></StopTrigger>"""
    text = document(f'<ScenarioObject name="Car">{CAR}</ScenarioObject>', init, story, stop)
    text = text.replace('filepath="straight.xodr"', 'filepath="two.xodr"')
    (folder / f"{name}.xosc").write_text(text)
    face, world = scenario_run(folder / f"{name}.xosc")
    sim = build_simulation(RunSpec(world=world, pacing=PacingSpec(mode="fast"), faces=[face]))
    return sim, sim.run(40.0).faces["storyboard"]


def on_road(road: int, lane_id: int, s: float) -> str:
    return f'<LanePosition roadId="{road}" laneId="{lane_id}" s="{s}" offset="0"/>'


def route_to(*positions: str) -> str:
    points = "".join(
        f'<Waypoint routeStrategy="shortest"><Position>{p}</Position></Waypoint>' for p in positions
    )
    return f"""<PrivateAction><RoutingAction><AssignRouteAction><Route name="route"
  closed="false">{points}</Route></AssignRouteAction></RoutingAction></PrivateAction>"""


def test_a_route_from_a_car_facing_against_its_lane_starts_in_the_lane_it_faces_along(
    tmp_path: Path,
) -> None:
    """esmini's ``parking_demo``: a car in lane 1 (traffic westward, to road 1's start, which
    leads nowhere) faces east; its route to road 2 is taken from lane -1, the nearest lane
    that runs east (before: "no way along the roads from road '1' to road '2'")."""
    init = placed("Car", '<WorldPosition x="100" y="1.75" h="0"/>', 10.0)
    event = f"""<Event name="go" priority="parallel"><Action name="route">
  {route_to(on_road(2, -1, 50.0))}</Action>{at(1.0)}</Event>"""
    sim, board = on_two("facing", init, event, on_road(2, -1, 100.0), tmp_path)
    assert board.ended_by.startswith("the stop trigger"), board.ended_by
    assert 15.0 < sim.world.time < 30.0  # 200 m at 10 m/s, easing over into lane -1


def test_a_route_after_a_teleport_in_the_same_event_starts_where_the_car_was_put(
    tmp_path: Path,
) -> None:
    """esmini's ``route_lane_change``: at 1 s the car on road 2 is teleported back onto road 1
    and given a route along road 1; the route starts from road 1, where it now is (before:
    from road 2, where the look had seen it, "no way along the roads from road '2' to road
    '1'"), and the teleport off its old route puts it on its new lane's."""
    init = placed("Car", on_road(2, -1, 20.0), 10.0)
    teleport = f"""<PrivateAction><TeleportAction><Position>{on_road(1, -1, 20.0)}</Position>
  </TeleportAction></PrivateAction>"""
    event = f"""<Event name="back" priority="parallel"><Action name="teleport">{teleport}
  </Action><Action name="route">{route_to(on_road(1, -1, 150.0))}</Action>{at(1.0)}</Event>"""
    sim, board = on_two("teleported", init, event, on_road(1, -1, 150.0), tmp_path)
    assert board.ended_by.startswith("the stop trigger"), board.ended_by
    assert 12.0 < sim.world.time < 17.0  # 130 m at 10 m/s after the teleport at 1 s


def test_facing_lane_is_the_own_lane_or_the_nearest_that_runs_the_way_the_car_faces(
    tmp_path: Path,
) -> None:
    write_two_roads(tmp_path)
    network = read_xodr((tmp_path / "two.xodr").read_bytes())
    assert facing_lane(network, (100.0, -1.75, 0.0)) == ("1", -1)  # its own
    assert facing_lane(network, (100.0, 1.75, 0.0)) == ("1", -1)  # turned round in lane 1
    assert facing_lane(network, (100.0, 5.25, 1.6)) == ("1", 2)  # across, a little back
    assert facing_lane(network, (100.0, 5.25, 1.5)) == ("1", -1)  # across, a little on
    assert facing_lane(network, (100.0, 40.0, 0.0)) is None  # off every lane


class Fork:
    """A stand-in network whose lane ``('1', -1)`` forks into ``('2', -1)`` and ``('3', -1)``,
    each of which leads on to one lane more (all ``route`` asks of a network)."""

    links: ClassVar[dict[tuple[str, int], list[tuple[str, int]]]] = {
        ("1", -1): [("2", -1), ("3", -1)],
        ("2", -1): [("4", -1)],
        ("3", -1): [("5", -1)],
    }

    def next_lanes(self, road: str, lane: int) -> list[tuple[str, int]]:
        return self.links.get((road, lane), [])


def test_a_random_route_draws_a_way_at_each_junction_the_same_for_the_same_seed() -> None:
    fork = cast(RoadNetwork, Fork())
    assert route(fork, "1", -1) == [("1", -1), ("2", -1), ("4", -1)]  # the first way
    drawn = {tuple(route(fork, "1", -1, np.random.default_rng(seed))) for seed in range(20)}
    assert drawn == {
        (("1", -1), ("2", -1), ("4", -1)),
        (("1", -1), ("3", -1), ("5", -1)),
    }
    again = [route(fork, "1", -1, np.random.default_rng(7)) for _ in range(3)]
    assert again[0] == again[1] == again[2]


def test_a_random_route_action_in_init_is_read_and_the_car_drives_on_its_lane(
    tmp_path: Path,
) -> None:
    """esmini's ``random_route_action`` (before: "<RandomRouteAction>: this action is not
    supported"): on a road without junctions the drawn route is the lane's own."""
    init = placed("Car", lane(20.0), 10.0).replace(
        "</Private>",
        "<PrivateAction><RoutingAction><RandomRouteAction/></RoutingAction></PrivateAction>"
        "</Private>",
    )
    stop = f"""<StopTrigger><ConditionGroup><Condition name="there" delay="0"
  conditionEdge="none"><ByEntityCondition><TriggeringEntities triggeringEntitiesRule="any">
  <EntityRef entityRef="Car"/></TriggeringEntities><EntityCondition>
  <ReachPositionCondition tolerance="2"><Position>{lane(120.0)}</Position>
  </ReachPositionCondition></EntityCondition></ByEntityCondition></Condition>
</ConditionGroup></StopTrigger>"""
    text = document(f'<ScenarioObject name="Car">{CAR}</ScenarioObject>', init, "", stop)
    sim, board = run_storyboard(tmp_path, "random", text, 20.0)
    assert board.ended_by.startswith("the stop trigger"), board.ended_by
    assert 9.0 < sim.world.time < 12.0  # 100 m at 10 m/s
