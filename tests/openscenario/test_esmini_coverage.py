"""What esmini's own files use that the subset reads now: qualified storyboard names
(``CutInEvent::Action``), Init teleports relative to where an earlier one put the entity,
and OffroadCondition on a lane of type none."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scenariogeneration import xodr

from helpers.roads import network_of
from helpers.scenarios import at, car_xml, lane, placed, run_storyboard, write_road
from vcosim.errors import ConfigError
from vcosim.openscenario import model as m
from vcosim.openscenario.conditions import EntityTests, Scene
from vcosim.openscenario.reader import read_scenario
from vcosim.openscenario.world import start_poses
from vcosim.roads import RoadNetwork

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
