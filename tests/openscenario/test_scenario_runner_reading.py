"""A file written for scenario_runner (a ``CARLA:`` description) is played as scenario_runner
plays it: a SpeedAction runs for its dynamics' distance or time whatever its shape (or until
another speed action of its actor starts), and an event's priority stops no other event. The
same file under another description is read by the standard: a step ends at once."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.scenarios import at, car_xml, lane, placed, run_storyboard, write_road
from vcosim.app.options import use_maps
from vcosim.openscenario.reader import read_xosc
from vcosim.openscenario.storyboard import ElementReport, StoryboardReport

CARLA, STANDARD = "CARLA:held", "held"


def step(to: float, value: float, dimension: str) -> str:
    """A step SpeedAction to ``to`` m/s "over" ``value`` of ``dimension``."""
    return f"""<PrivateAction><LongitudinalAction><SpeedAction>
  <SpeedActionDynamics dynamicsShape="step" value="{value}" dynamicsDimension="{dimension}"/>
  <SpeedActionTarget><AbsoluteTargetSpeed value="{to}"/></SpeedActionTarget>
</SpeedAction></LongitudinalAction></PrivateAction>"""


def event(name: str, action: str, trigger: str, priority: str = "parallel") -> str:
    return f"""<Event name="{name}" priority="{priority}"><Action name="{name}">{action}</Action>
{trigger}</Event>"""


def scenario(description: str, events: str) -> str:
    """One car at 10 m/s on ``write_road``'s road, its maneuver's ``events``; no stop
    trigger (the run ends with its story)."""
    return f"""<?xml version="1.0" encoding="utf-8"?>
<OpenSCENARIO>
<FileHeader description="{description}" author="vcosim tests" revMajor="1" revMinor="0"
  date="2026-12-07T00:00:00"/>
<ParameterDeclarations/><CatalogLocations/>
<RoadNetwork><LogicFile filepath="straight.xodr"/></RoadNetwork>
<Entities><ScenarioObject name="Car">{car_xml()}</ScenarioObject></Entities>
<Storyboard><Init><Actions>{placed("Car", lane(50.0), 10.0)}</Actions></Init>
<Story name="story"><Act name="act"><ManeuverGroup maximumExecutionCount="1" name="group">
<Actors selectTriggeringEntities="false"><EntityRef entityRef="Car"/></Actors>
<Maneuver name="maneuver">{events}</Maneuver></ManeuverGroup>{at(0.0)}</Act></Story>
<StopTrigger/></Storyboard>
</OpenSCENARIO>"""


def element(board: StoryboardReport, name: str, kind: str = "event") -> ElementReport:
    (found,) = (e for e in board.elements if e.name == name and e.kind == kind)
    return found


@pytest.mark.parametrize("description", [CARLA, STANDARD])
def test_a_step_over_a_distance_holds_its_event_until_its_car_has_moved_it(
    tmp_path: Path, description: str
) -> None:
    """scenario_runner's ``ChangeActorTargetSpeed``: running until the car is 30 m from where
    the action began (at 10 m/s: 3 s); by the standard a step is done at once."""
    text = scenario(description, event("keep", step(10.0, 30.0, "distance"), at(0.0)))
    _, board = run_storyboard(tmp_path, "distance", text, seconds=6.0)
    (ended,) = element(board, "keep").ended
    if description == CARLA:
        assert ended == pytest.approx(3.0, abs=0.15)
        assert board.ended_by.startswith("the end of every story")
    else:
        assert ended < 0.05


@pytest.mark.parametrize("description", [CARLA, STANDARD])
def test_a_step_over_a_time_holds_its_event_for_that_time(tmp_path: Path, description: str) -> None:
    """scenario_runner's action runs on for its 2 s (the car stopped at once, a step still);
    by the standard it is done at once, and the run with it."""
    text = scenario(description, event("stop", step(0.0, 2.0, "time"), at(0.5)))
    sim, board = run_storyboard(tmp_path, "time", text, seconds=4.0)
    (ended,) = element(board, "stop").ended
    assert ended == pytest.approx(2.5 if description == CARLA else 0.5, abs=0.05)
    if description == CARLA:
        world = sim.world
        assert world.poses()["speed"][world.row("Car")] < 0.5


def test_a_standing_car_told_to_stand_over_a_distance_never_ends_its_event(
    tmp_path: Path,
) -> None:
    """The RSS demonstrator's "0 m/s over 1000 m": in scenario_runner it never ends (the car
    never moves its 1000 m) unless another speed action of the car starts."""
    events = event("stand", step(0.0, 1000.0, "distance"), at(0.0)) + event(
        "go", step(5.0, 1.0, "distance"), at(3.0)
    )
    text = scenario(CARLA, events)
    _, board = run_storyboard(tmp_path, "stand", text, seconds=2.0)
    assert element(board, "stand").state == "running"  # 2 s in, standing: still running
    _, board = run_storyboard(tmp_path, "stand", text, seconds=6.0)
    stand, go = element(board, "stand"), element(board, "go")
    assert stand.ended == [pytest.approx(3.0, abs=0.05)]  # overridden when "go" starts
    assert go.state == "complete"


@pytest.mark.parametrize("description", [CARLA, STANDARD])
def test_an_overwriting_event_stops_the_others_only_by_the_standard(
    tmp_path: Path, description: str
) -> None:
    """scenario_runner reads no ``priority``: "keep" (to 20 m/s over 3 s) runs on when
    "later" starts with priority overwrite at 1 s, and ends at 3 s; the standard stops it."""
    later = """<GlobalAction><EnvironmentAction><Environment name="noon">
  <TimeOfDay animation="false" dateTime="2020-03-20T12:00:00"/>
  <Weather cloudState="free"/><RoadCondition frictionScaleFactor="1.0"/>
</Environment></EnvironmentAction></GlobalAction>"""
    linear = step(20.0, 3.0, "time").replace('"step"', '"linear"')
    events = event("keep", linear, at(0.0)) + event("later", later, at(1.0), priority="overwrite")
    _, board = run_storyboard(tmp_path, "priority", scenario(description, events), seconds=7.0)
    keep = element(board, "keep")
    assert keep.state == "complete"
    assert keep.ended == [pytest.approx(3.0 if description == CARLA else 1.0, abs=0.05)]


def test_each_maps_folder_given_is_looked_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--maps A --maps B``: CARLA's Town01 in the demonstrator's folder, Town04 in another
    (LaneChangeSimple's); a file naming either finds it."""
    monkeypatch.setenv("VCOSIM_MAPS", "")  # undone after the test (use_maps sets it)
    first, second = tmp_path / "rss", tmp_path / "maps"
    first.mkdir()
    write_road(second)
    (second / "straight.xodr").rename(second / "Town04.xodr")
    use_maps([first, second])
    path = tmp_path / "town04.xosc"
    path.write_text(scenario(CARLA, "").replace('filepath="straight.xodr"', 'filepath="Town04"'))
    assert read_xosc(path).road == second / "Town04.xodr"
