"""Entities added and deleted as esmini's ``add_delete_entity.xosc`` asserts: adding one that
is there already is passed over, a deleted car added again drives on at its speed, one added
and given a step speed at once enters at that speed, and a deleted entity passes no
condition while it is away."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.scenarios import at, car_xml, lane, placed, run_storyboard

EVENT = """<Event name="{name}" priority="parallel">{actions}{trigger}</Event>"""


def add(who: str, where: str, name: str = "") -> str:
    return f"""<Action name="add {who}{name}"><GlobalAction><EntityAction entityRef="{who}">
  <AddEntityAction><Position>{where}</Position></AddEntityAction></EntityAction></GlobalAction>
  </Action>"""


def delete(who: str) -> str:
    return f"""<Action name="delete {who}"><GlobalAction><EntityAction entityRef="{who}">
  <DeleteEntityAction/></EntityAction></GlobalAction></Action>"""


STEP_SPEED = """<Action name="speed"><PrivateAction><LongitudinalAction><SpeedAction>
  <SpeedActionDynamics dynamicsShape="step" value="0" dynamicsDimension="time"/>
  <SpeedActionTarget><AbsoluteTargetSpeed value="15"/></SpeedActionTarget>
</SpeedAction></LongitudinalAction></PrivateAction></Action>"""

END_OF_ROAD = """<StartTrigger><ConditionGroup><Condition name="end of road" delay="0"
  conditionEdge="none"><ByEntityCondition><TriggeringEntities triggeringEntitiesRule="any">
  <EntityRef entityRef="Car1"/></TriggeringEntities><EntityCondition>
  <EndOfRoadCondition duration="0"/></EntityCondition></ByEntityCondition></Condition>
</ConditionGroup></StartTrigger>"""


def group(who: str, events: list[str]) -> str:
    return f"""<ManeuverGroup name="{who}" maximumExecutionCount="1">
  <Actors selectTriggeringEntities="false"><EntityRef entityRef="{who}"/></Actors>
  <Maneuver name="{who}">{"".join(events)}</Maneuver></ManeuverGroup>"""


SCENARIO = f"""<?xml version="1.0" encoding="utf-8"?>
<OpenSCENARIO>
<FileHeader description="add and delete" author="vcosim tests" revMajor="1" revMinor="2"
  date="2026-12-07T00:00:00"/>
<ParameterDeclarations>
  <ParameterDeclaration name="Ended" parameterType="string" value="no"/>
</ParameterDeclarations>
<CatalogLocations/>
<RoadNetwork><LogicFile filepath="straight.xodr"/></RoadNetwork>
<Entities>
  <ScenarioObject name="Car1">{car_xml()}</ScenarioObject>
  <ScenarioObject name="Car2">{car_xml()}</ScenarioObject>
</Entities>
<Storyboard>
<Init><Actions>{placed("Car1", lane(20.0), 10.0)}</Actions></Init>
<Story name="story"><Act name="act">
  {
    group(
        "Car1",
        [
            EVENT.format(name="add again", actions=add("Car1", lane(20.0)), trigger=at(1.0)),
            EVENT.format(name="delete", actions=delete("Car1"), trigger=at(2.0)),
            EVENT.format(
                name="back",
                actions=add(
                    "Car1", '<RelativeLanePosition entityRef="Car1" ds="50" dLane="0"/>', " back"
                ),
                trigger=at(3.0),
            ),
            EVENT.format(
                name="ended",
                actions='<Action name="mark"><GlobalAction><ParameterAction parameterRef="Ended">'
                '<SetAction value="yes"/></ParameterAction></GlobalAction></Action>',
                trigger=END_OF_ROAD,
            ),
        ],
    )
}
  {
    group(
        "Car2",
        [EVENT.format(name="enter", actions=add("Car2", lane(200.0)) + STEP_SPEED, trigger=at(1))],
    )
}
  <StartTrigger/>
</Act></Story>
<StopTrigger><ConditionGroup><Condition name="end" delay="0" conditionEdge="none">
  <ByValueCondition><SimulationTimeCondition value="4" rule="greaterOrEqual"/></ByValueCondition>
</Condition></ConditionGroup></StopTrigger>
</Storyboard>
</OpenSCENARIO>
"""


def test_entities_keep_their_speed_and_add_again_is_passed_over(tmp_path: Path) -> None:
    sim, board = run_storyboard(tmp_path, "add_delete", SCENARIO)
    world = sim.world
    poses = world.poses()
    car1, car2 = world.row("Car1"), world.row("Car2")
    # never re-placed at 1 s; away from 2 to 3 s at 10 m/s, back 50 m on: 20 + 10·2 + 50 + 10·1
    assert float(poses["x"][car1]) == pytest.approx(100.0, abs=1.0)
    assert float(poses["speed"][car1]) == pytest.approx(10.0, abs=0.3)
    # added at 1 s and given 15 m/s at once: 200 + 15·3
    assert float(poses["x"][car2]) == pytest.approx(245.0, abs=1.0)
    assert any("'add Car1" in w and "in the world already" in w for w in board.warnings)
    # parked far off the road while away, Car1 met no end of road
    assert sim.faces["storyboard"].parameters["Ended"] == "no"
