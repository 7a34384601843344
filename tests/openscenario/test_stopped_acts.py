"""An act its stop trigger ends ends as esmini's does: its actions stop, the act and what ran
in it end (``endTransition``), so a second act waiting on that starts, as
``multi_lane_changes.xosc`` asserts."""

from __future__ import annotations

from pathlib import Path

from helpers.scenarios import at, car_xml, lane, placed, run_storyboard
from vcosim.openscenario.storyboard import ElementReport, StoryboardReport

SLOW_RAMP = """<Action name="{name}"><PrivateAction><LongitudinalAction><SpeedAction>
  <SpeedActionDynamics dynamicsShape="linear" value="20" dynamicsDimension="time"/>
  <SpeedActionTarget><AbsoluteTargetSpeed value="{to}"/></SpeedActionTarget>
</SpeedAction></LongitudinalAction></PrivateAction></Action>"""


def on(kind: str, name: str, state: str) -> str:
    return f"""<StartTrigger><ConditionGroup><Condition name="on {name}" delay="0"
  conditionEdge="none"><ByValueCondition><StoryboardElementStateCondition
  storyboardElementType="{kind}" storyboardElementRef="{name}" state="{state}"/>
</ByValueCondition></Condition></ConditionGroup></StartTrigger>"""


def act(name: str, action: str, start: str, stop: str = "") -> str:
    return f"""<Act name="{name}"><ManeuverGroup name="{name} group" maximumExecutionCount="1">
  <Actors selectTriggeringEntities="false"><EntityRef entityRef="Car"/></Actors>
  <Maneuver name="{name} maneuver"><Event name="{name} event" priority="parallel">{action}
  {at(0.0)}</Event></Maneuver></ManeuverGroup>{start}{stop}</Act>"""


SCENARIO = f"""<?xml version="1.0" encoding="utf-8"?>
<OpenSCENARIO>
<FileHeader description="stopped acts" author="vcosim tests" revMajor="1" revMinor="2"
  date="2026-12-07T00:00:00"/>
<ParameterDeclarations/>
<CatalogLocations/>
<RoadNetwork><LogicFile filepath="straight.xodr"/></RoadNetwork>
<Entities><ScenarioObject name="Car">{car_xml()}</ScenarioObject></Entities>
<Storyboard><Init><Actions>{placed("Car", lane(20.0), 10.0)}</Actions></Init>
<Story name="story">
{
    act(
        "first",
        SLOW_RAMP.format(name="speed up", to=30),
        at(0.0),
        at(1.0).replace("StartTrigger", "StopTrigger"),
    )
}
{act("second", SLOW_RAMP.format(name="slow down", to=0), on("act", "first", "endTransition"))}
{act("never", SLOW_RAMP.format(name="unseen", to=5), on("act", "first", "stopTransition"))}
</Story>
<StopTrigger><ConditionGroup><Condition name="end" delay="0" conditionEdge="none">
  <ByValueCondition><SimulationTimeCondition value="2" rule="greaterOrEqual"/></ByValueCondition>
</Condition></ConditionGroup></StopTrigger>
</Storyboard>
</OpenSCENARIO>"""


def element(board: StoryboardReport, name: str, kind: str) -> ElementReport:
    (found,) = (e for e in board.elements if e.name == name and e.kind == kind)
    return found


def test_an_act_its_stop_trigger_ends_starts_the_act_waiting_on_its_end(tmp_path: Path) -> None:
    _, board = run_storyboard(tmp_path, "stopped", SCENARIO)
    first = element(board, "first", "act")
    assert first.started == [0.0] and first.ended == [1.0]
    assert element(board, "speed up", "action").ended == [1.0]
    second = element(board, "second", "act")
    assert len(second.started) == 1 and 1.0 < second.started[0] <= 1.02
    assert element(board, "slow down", "action").started == second.started
    assert element(board, "never", "act").started == []  # no stopTransition to see
