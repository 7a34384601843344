"""A scenario whose every entity moves kinematically (esmini's bicycle_fall_over, parking_lot):
a world of no vehicle, as esmini runs it. The bicycle rides its lane, an entity condition on
it ends the run, the recorder and an OSI trace run beside it (the trace has the bicycle and
no host vehicle), and a face that serves a vehicle says there is none, in one line."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers.scenarios import write_road
from vcosim.app import app
from vcosim.errors import ConfigError
from vcosim.groundtruth.osi_io import read_trace
from vcosim.openscenario.storyboard import StoryboardReport, scenario_run
from vcosim.scenarios import PacingSpec, RunSpec, build_simulation

BIKE = """<Vehicle name="bike" vehicleCategory="bicycle">
  <BoundingBox><Center x="0.5" y="0" z="0.85"/><Dimensions width="0.5" length="1.8"
    height="1.7"/></BoundingBox>
  <Performance maxSpeed="14" maxDeceleration="5" maxAcceleration="3"/><Axles>
  <FrontAxle maxSteering="0.5" wheelDiameter="0.7" trackWidth="0.1" positionX="1.1"
    positionZ="0.35"/>
  <RearAxle maxSteering="0" wheelDiameter="0.7" trackWidth="0.1" positionX="0"
    positionZ="0.35"/></Axles></Vehicle>"""

SCENARIO = f"""<?xml version="1.0" encoding="utf-8"?>
<OpenSCENARIO>
<FileHeader description="objects only" author="vcosim tests" revMajor="1" revMinor="2"
  date="2026-12-07T00:00:00"/>
<ParameterDeclarations/>
<CatalogLocations/>
<RoadNetwork><LogicFile filepath="straight.xodr"/></RoadNetwork>
<Entities><ScenarioObject name="Bike">{BIKE}</ScenarioObject></Entities>
<Storyboard>
<Init><Actions><Private entityRef="Bike">
  <PrivateAction><TeleportAction><Position>
    <LanePosition roadId="1" laneId="-1" s="10" offset="0"/></Position></TeleportAction>
  </PrivateAction>
  <PrivateAction><LongitudinalAction><SpeedAction>
    <SpeedActionDynamics dynamicsShape="step" value="0" dynamicsDimension="time"/>
    <SpeedActionTarget><AbsoluteTargetSpeed value="5"/></SpeedActionTarget>
  </SpeedAction></LongitudinalAction></PrivateAction>
</Private></Actions></Init>
<StopTrigger><ConditionGroup><Condition name="rode 20 m" delay="0" conditionEdge="none">
  <ByEntityCondition><TriggeringEntities triggeringEntitiesRule="any">
    <EntityRef entityRef="Bike"/></TriggeringEntities>
  <EntityCondition><TraveledDistanceCondition value="20"/></EntityCondition>
  </ByEntityCondition></Condition></ConditionGroup></StopTrigger>
</Storyboard>
</OpenSCENARIO>
"""


@pytest.fixture()
def bike(tmp_path: Path) -> Path:
    write_road(tmp_path)
    path = tmp_path / "bike.xosc"
    path.write_text(SCENARIO)
    return path


def test_a_world_of_objects_only_runs_to_its_stop_trigger(bike: Path) -> None:
    face, world = scenario_run(bike)
    assert world.vehicles == [] and world.objects_only
    sim = build_simulation(RunSpec(world=world, pacing=PacingSpec(mode="fast"), faces=[face]))
    assert sim.world is not None and len(sim.world) == 0
    with pytest.raises(ConfigError, match="the world has no vehicle"):
        _ = sim.vehicle.outputs  # what a face serving one would read
    report = sim.run(30.0)
    board = report.faces["storyboard"]
    assert isinstance(board, StoryboardReport)
    # 20 m at 5 m/s: 4 s (a look every driver period)
    assert board.ended_by.startswith("the stop trigger ('rode 20 m') at t = 4.0")
    assert report.sim_time == pytest.approx(4.0, abs=0.05)


def test_the_recorder_and_an_osi_trace_run_in_it(bike: Path, tmp_path: Path) -> None:
    trace = tmp_path / "bike.osi"
    result = CliRunner().invoke(
        app,
        ["sim", "--scenario", str(bike), "--pacing", "fast", "--duration", "30",
         "--osi-trace", str(trace), "--record", str(tmp_path / "rec.csv")],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    views = list(read_trace(trace))
    assert len(views) > 100
    first, last = (v.global_ground_truth for v in (views[0], views[-1]))
    assert not views[-1].HasField("host_vehicle_id")
    (start,), (end,) = first.moving_object, last.moving_object
    assert end.base.position.x - start.base.position.x == pytest.approx(20.0, abs=0.5)
