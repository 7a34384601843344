"""A LateralDistanceAction moves its actor across as esmini's road coordinate system does
(``lat_dist_road_test.xosc``): without limits at once, with ``maxSpeed`` at that lateral
speed, with ``maxAcceleration`` as a critically damped spring; the distance is to the
entity's left in the entity's frame."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.scenarios import LANE_WIDTH, at, car_xml, lane, placed, run_storyboard


def aside(name: str, side: str, distance: float, limits: str) -> str:
    return f"""<Event name="{name}" priority="parallel"><Action name="{name}"><PrivateAction>
  <LateralAction><LateralDistanceAction entityRef="Ego" distance="{distance}"
    freespace="false" continuous="false" coordinateSystem="road" displacement="{side}">
    {limits}</LateralDistanceAction></LateralAction></PrivateAction></Action>{at(0.5)}</Event>"""


def group(who: str, event: str) -> str:
    return f"""<ManeuverGroup name="{who}" maximumExecutionCount="1">
  <Actors selectTriggeringEntities="false"><EntityRef entityRef="{who}"/></Actors>
  <Maneuver name="{who}">{event}</Maneuver></ManeuverGroup>"""


def scenario(stop: float) -> str:
    return f"""<?xml version="1.0" encoding="utf-8"?>
<OpenSCENARIO>
<FileHeader description="lateral distance" author="vcosim tests" revMajor="1" revMinor="2"
  date="2026-12-07T00:00:00"/>
<ParameterDeclarations/>
<CatalogLocations/>
<RoadNetwork><LogicFile filepath="straight.xodr"/></RoadNetwork>
<Entities>{
        "".join(
            f'<ScenarioObject name="{n}">{car_xml()}</ScenarioObject>'
            for n in ("Ego", "Rigid", "Capped", "Sprung")
        )
    }</Entities>
<Storyboard><Init><Actions>
  {placed("Ego", lane(400.0), 0.0)}{placed("Rigid", lane(150.0), 5.0)}
  {placed("Capped", lane(100.0), 5.0)}{placed("Sprung", lane(50.0), 5.0)}
</Actions></Init>
<Story name="story"><Act name="act">
  {group("Rigid", aside("at once", "leftToReferencedEntity", 1.0, ""))}
  {
        group(
            "Capped",
            aside("capped", "rightToReferencedEntity", 2.0, '<DynamicConstraints maxSpeed="2"/>'),
        )
    }
  {
        group(
            "Sprung",
            aside(
                "sprung", "leftToReferencedEntity", 2.0, '<DynamicConstraints maxAcceleration="2"/>'
            ),
        )
    }
<StartTrigger/></Act></Story>
<StopTrigger><ConditionGroup><Condition name="end" delay="0" conditionEdge="none">
  <ByValueCondition><SimulationTimeCondition value="{stop}" rule="greaterOrEqual"/>
</ByValueCondition></Condition></ConditionGroup></StopTrigger>
</Storyboard>
</OpenSCENARIO>"""


def across(sim: object, name: str) -> float:
    """Metres left of the Ego's lane centre."""
    world = sim.world  # type: ignore[attr-defined]
    return float(world.poses()["y"][world.row(name)]) + LANE_WIDTH / 2


def test_without_limits_the_actor_is_put_there_at_once(tmp_path: Path) -> None:
    sim, board = run_storyboard(tmp_path, "aside", scenario(0.55))
    assert across(sim, "Rigid") == pytest.approx(1.0, abs=0.05)
    (action,) = (e for e in board.elements if e.name == "at once" and e.kind == "action")
    assert action.state == "complete" and action.ended[0] <= 0.55  # not continuous: it ended
    # the others have hardly begun: 2 m/s across at most, a spring starting from rest
    assert -0.15 < across(sim, "Capped") <= 0.02
    assert 0.0 <= across(sim, "Sprung") < 0.05


def test_a_lateral_speed_limit_and_a_spring_take_their_time(tmp_path: Path) -> None:
    sim, board = run_storyboard(tmp_path, "aside", scenario(1.5))
    assert -2.3 < across(sim, "Capped") < -1.2  # 1 s at 2 m/s, the car lagging its ghost
    # critically damped, 0.8 /s² stiffness: 1 - (1 + w t) exp(-w t) of 2 m, w t = 0.89
    assert 0.1 < across(sim, "Sprung") < 0.6
    sim, board = run_storyboard(tmp_path, "aside", scenario(6.0))
    assert across(sim, "Capped") == pytest.approx(-2.0, abs=0.15)
    assert 1.6 < across(sim, "Sprung") < 2.1
    assert across(sim, "Rigid") == pytest.approx(1.0, abs=0.05)
