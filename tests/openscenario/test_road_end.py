"""A storyboard car past the end of its road stands, as esmini's entities stop there
(``lane_change_simple.xosc``): one waiting there is teleported back standing (a teleport
keeps the storyboard's speed, not the braking car's), one teleported the moment it got
there drives on at its speed."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.scenarios import car_xml, lane, placed, run_storyboard


def back(who: str, lane_id: int, s: float, wait: float) -> str:
    return f"""<ManeuverGroup name="{who}" maximumExecutionCount="1">
  <Actors selectTriggeringEntities="false"><EntityRef entityRef="{who}"/></Actors>
  <Maneuver name="{who}"><Event name="{who} back" priority="parallel"><Action name="{who} back">
  <PrivateAction><TeleportAction><Position>{lane(s, lane_id)}</Position></TeleportAction>
  </PrivateAction></Action><StartTrigger><ConditionGroup><Condition name="{who} end"
  delay="0" conditionEdge="rising"><ByEntityCondition><TriggeringEntities
  triggeringEntitiesRule="any"><EntityRef entityRef="{who}"/></TriggeringEntities>
  <EntityCondition><EndOfRoadCondition duration="{wait}"/></EntityCondition>
  </ByEntityCondition></Condition></ConditionGroup></StartTrigger></Event></Maneuver>
</ManeuverGroup>"""


SCENARIO = f"""<?xml version="1.0" encoding="utf-8"?>
<OpenSCENARIO>
<FileHeader description="road end" author="vcosim tests" revMajor="1" revMinor="2"
  date="2026-12-07T00:00:00"/>
<ParameterDeclarations/>
<CatalogLocations/>
<RoadNetwork><LogicFile filepath="straight.xodr"/></RoadNetwork>
<Entities><ScenarioObject name="Waits">{car_xml()}</ScenarioObject>
  <ScenarioObject name="Goes">{car_xml()}</ScenarioObject></Entities>
<Storyboard><Init><Actions>
  {placed("Waits", lane(470.0), 10.0)}{placed("Goes", lane(470.0, -2), 10.0)}
</Actions></Init>
<Story name="story"><Act name="act">{back("Waits", -1, 100.0, 1.5)}{back("Goes", -2, 200.0, 0)}
<StartTrigger/></Act></Story>
<StopTrigger><ConditionGroup><Condition name="end" delay="0" conditionEdge="none">
  <ByValueCondition><SimulationTimeCondition value="6" rule="greaterOrEqual"/>
</ByValueCondition></Condition></ConditionGroup></StopTrigger>
</Storyboard>
</OpenSCENARIO>"""


def test_a_car_past_its_road_end_stands_until_a_teleport_takes_it_on(tmp_path: Path) -> None:
    sim, board = run_storyboard(tmp_path, "road_end", SCENARIO)
    world = sim.world
    poses = world.poses()
    waits, goes = world.row("Waits"), world.row("Goes")
    # past the end at 3 s, told to stand; back at s = 100 1.5 s later, standing there
    assert float(poses["x"][waits]) == pytest.approx(100.0, abs=0.5)
    assert float(poses["speed"][waits]) < 0.3
    # back at s = 200 the look it got past the end, on at 10 m/s: 200 + 10 * 3
    assert float(poses["x"][goes]) == pytest.approx(230.0, abs=1.5)
    assert float(poses["speed"][goes]) == pytest.approx(10.0, abs=0.3)
    assert [e.started for e in board.elements if e.name == "Waits back" and e.kind == "event"][0][
        0
    ] == pytest.approx(3.0 + 1.5, abs=0.3)
