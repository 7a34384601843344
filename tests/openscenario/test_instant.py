"""Transitions without duration happen at once, as esmini's ``instant_lane_change.xosc``
asserts: a linear speed over 0 s in Init starts the car at speed, and a lane change by a
step (or over 0 s) puts the car in its new lane at the next look, its speed kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.scenarios import LANE_WIDTH, at, car_xml, lane, run_storyboard


def change(name: str, to: int, shape: str, value: float, start: float) -> str:
    return f"""<Event name="{name}" priority="override"><Action name="{name}"><PrivateAction>
  <LateralAction><LaneChangeAction><LaneChangeActionDynamics dynamicsShape="{shape}"
  value="{value}" dynamicsDimension="time"/><LaneChangeTarget><AbsoluteTargetLane
  value="{to}"/></LaneChangeTarget></LaneChangeAction></LateralAction></PrivateAction>
  </Action>{at(start)}</Event>"""


def scenario(stop: float) -> str:
    return f"""<?xml version="1.0" encoding="utf-8"?>
<OpenSCENARIO>
<FileHeader description="instant" author="vcosim tests" revMajor="1" revMinor="2"
  date="2026-12-07T00:00:00"/>
<ParameterDeclarations/>
<CatalogLocations/>
<RoadNetwork><LogicFile filepath="straight.xodr"/></RoadNetwork>
<Entities><ScenarioObject name="Car">{car_xml()}</ScenarioObject></Entities>
<Storyboard><Init><Actions><Private entityRef="Car">
  <PrivateAction><TeleportAction><Position>{lane(45.0)}</Position></TeleportAction>
  </PrivateAction>
  <PrivateAction><LongitudinalAction><SpeedAction>
    <SpeedActionDynamics dynamicsShape="linear" value="0" dynamicsDimension="time"/>
    <SpeedActionTarget><AbsoluteTargetSpeed value="5"/></SpeedActionTarget>
  </SpeedAction></LongitudinalAction></PrivateAction>
</Private></Actions></Init>
<Story name="story"><Act name="act"><ManeuverGroup name="g" maximumExecutionCount="1">
  <Actors selectTriggeringEntities="false"><EntityRef entityRef="Car"/></Actors>
  <Maneuver name="m">{change("left", 1, "step", 1.0, 1.0)}{
        change("back", -1, "linear", 0.0, 2.0)
    }</Maneuver>
</ManeuverGroup><StartTrigger/></Act></Story>
<StopTrigger><ConditionGroup><Condition name="end" delay="0" conditionEdge="none">
  <ByValueCondition><SimulationTimeCondition value="{stop}" rule="greaterOrEqual"/>
</ByValueCondition></Condition></ConditionGroup></StopTrigger>
</Storyboard>
</OpenSCENARIO>"""


@pytest.mark.parametrize(("stop", "x", "y"), [(1.05, 50.25, 1), (2.05, 55.25, -1)])
def test_a_lane_change_without_duration_is_done_at_once(
    tmp_path: Path, stop: float, x: float, y: int
) -> None:
    sim, _ = run_storyboard(tmp_path, "instant", scenario(stop))
    world = sim.world
    poses, row = world.poses(), world.row("Car")
    # at speed from the start (45 + 5 t), in the lane changed to 0.05 s after the change
    assert float(poses["x"][row]) == pytest.approx(x, abs=0.3)
    assert float(poses["y"][row]) == pytest.approx(y * LANE_WIDTH / 2, abs=0.1)
    assert float(poses["speed"][row]) == pytest.approx(5.0, abs=0.1)
