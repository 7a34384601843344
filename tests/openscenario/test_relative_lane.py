"""A RelativeTargetLane counts lanes to its entity's left as the entity heads, as esmini's
does (``lane_change_trig_by_variable.xosc``): a car driving against its lane's traffic
that changes by -1 goes to its own right, not to the right of the lane's traffic."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from helpers.scenarios import LANE_WIDTH, at, car_xml, placed, run_storyboard

SCENARIO = f"""<?xml version="1.0" encoding="utf-8"?>
<OpenSCENARIO>
<FileHeader description="relative lane" author="vcosim tests" revMajor="1" revMinor="2"
  date="2026-12-07T00:00:00"/>
<ParameterDeclarations/>
<CatalogLocations/>
<RoadNetwork><LogicFile filepath="straight.xodr"/></RoadNetwork>
<Entities><ScenarioObject name="Car">{car_xml()}</ScenarioObject></Entities>
<Storyboard><Init><Actions>
  {placed("Car", f'<WorldPosition x="300" y="{-LANE_WIDTH / 2}" h="{math.pi}"/>', 10.0)}
</Actions></Init>
<Story name="story"><Act name="act"><ManeuverGroup name="g" maximumExecutionCount="1">
  <Actors selectTriggeringEntities="false"><EntityRef entityRef="Car"/></Actors>
  <Maneuver name="m"><Event name="back" priority="parallel"><Action name="back">
  <PrivateAction><LateralAction><LaneChangeAction><LaneChangeActionDynamics
  dynamicsShape="sinusoidal" value="2" dynamicsDimension="time"/><LaneChangeTarget>
  <RelativeTargetLane entityRef="Car" value="-1"/></LaneChangeTarget></LaneChangeAction>
  </LateralAction></PrivateAction></Action>{at(0.5)}</Event></Maneuver>
</ManeuverGroup><StartTrigger/></Act></Story>
<StopTrigger><ConditionGroup><Condition name="end" delay="0" conditionEdge="none">
  <ByValueCondition><SimulationTimeCondition value="5" rule="greaterOrEqual"/>
</ByValueCondition></Condition></ConditionGroup></StopTrigger>
</Storyboard>
</OpenSCENARIO>"""


def test_a_car_against_its_lane_changes_to_its_own_right(tmp_path: Path) -> None:
    sim, _ = run_storyboard(tmp_path, "relative_lane", SCENARIO)
    world = sim.world
    row = world.row("Car")
    # heading -x in lane -1, its right is +y: lane 1 (the lane whose traffic it drives with)
    assert float(world.poses()["y"][row]) == pytest.approx(LANE_WIDTH / 2, abs=0.3)
