"""The new conditions in a storyboard run, on a small file of their own: a car brakes after a
traveled distance and the run ends when it stood still for a second; another drives off the
end of the road (EndOfRoad, not Offroad); the stop trigger's group with a ParameterCondition
on an undeclared parameter never fires (as esmini), one on a Story's parameter does. And
esmini's 2+1 road: the overtaking starts when the passing lane begins (RelativeClearance)."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.scenarios import write_road
from vcosim.errors import ConfigError
from vcosim.openscenario.reader import read_xosc
from vcosim.openscenario.storyboard import ElementReport, StoryboardReport, scenario_run
from vcosim.openscenario.world import network_of
from vcosim.scenarios import PacingSpec, RunSpec, build_simulation

VEHICLE = """<Vehicle name="car" vehicleCategory="car">
  <BoundingBox><Center x="1.4" y="0.0" z="0.75"/>
    <Dimensions width="1.9" length="4.6" height="1.5"/></BoundingBox>
  <Performance maxSpeed="60.0" maxDeceleration="8.0" maxAcceleration="8.0"/>
  <Axles>
    <FrontAxle maxSteering="0.5" wheelDiameter="0.65" trackWidth="1.6" positionX="2.8"
      positionZ="0.33"/>
    <RearAxle maxSteering="0.0" wheelDiameter="0.65" trackWidth="1.6" positionX="0.0"
      positionZ="0.33"/>
  </Axles>
</Vehicle>"""


def start(name: str, s: float, speed: float, lane: int = -1) -> str:
    return f"""<Private entityRef="{name}">
  <PrivateAction><TeleportAction><Position>
    <LanePosition roadId="1" laneId="{lane}" s="{s}" offset="0"/>
  </Position></TeleportAction></PrivateAction>
  <PrivateAction><LongitudinalAction><SpeedAction>
    <SpeedActionDynamics dynamicsShape="step" value="0" dynamicsDimension="time"/>
    <SpeedActionTarget><AbsoluteTargetSpeed value="{speed}"/></SpeedActionTarget>
  </SpeedAction></LongitudinalAction></PrivateAction>
</Private>"""


def when(name: str, who: str, test: str, edge: str = "rising") -> str:
    return f"""<Condition name="{name}" delay="0" conditionEdge="{edge}"><ByEntityCondition>
  <TriggeringEntities triggeringEntitiesRule="any">
    <EntityRef entityRef="{who}"/>
  </TriggeringEntities>
  <EntityCondition>{test}</EntityCondition>
</ByEntityCondition></Condition>"""


def event(name: str, speed: float, condition: str, shape: str = "linear rate 4") -> str:
    kind, dimension, value = shape.split()
    return f"""<Event name="{name}" priority="override"><Action name="{name}"><PrivateAction>
  <LongitudinalAction><SpeedAction>
    <SpeedActionDynamics dynamicsShape="{kind}" value="{value}" dynamicsDimension="{dimension}"/>
    <SpeedActionTarget><AbsoluteTargetSpeed value="{speed}"/></SpeedActionTarget>
  </SpeedAction></LongitudinalAction></PrivateAction></Action>
  <StartTrigger><ConditionGroup>{condition}</ConditionGroup></StartTrigger>
</Event>"""


def group(name: str, actor: str, *events: str) -> str:
    return f"""<ManeuverGroup name="{name}" maximumExecutionCount="1">
  <Actors selectTriggeringEntities="false"><EntityRef entityRef="{actor}"/></Actors>
  <Maneuver name="{name}">{"".join(events)}</Maneuver>
</ManeuverGroup>"""


SCENARIO = f"""<?xml version="1.0" encoding="utf-8"?>
<OpenSCENARIO>
<FileHeader description="conditions" author="vcosim tests" revMajor="1" revMinor="2"
  date="2026-12-07T00:00:00"/>
<ParameterDeclarations/>
<CatalogLocations/>
<RoadNetwork><LogicFile filepath="straight.xodr"/></RoadNetwork>
<Entities>
  <ScenarioObject name="Braker">{VEHICLE}</ScenarioObject>
  <ScenarioObject name="Leaver">{VEHICLE}</ScenarioObject>
</Entities>
<Storyboard>
<Init><Actions>{start("Braker", 20.0, 10.0)}{start("Leaver", 440.0, 20.0)}</Actions></Init>
<Story name="story">
<ParameterDeclarations>
  <ParameterDeclaration name="Gap" parameterType="double" value="5"/>
</ParameterDeclarations>
<Act name="act">
  {
    group(
        "declared",
        "Leaver",
        event(
            "story parameter",
            20.0,
            '''<Condition name="gap"
    delay="0" conditionEdge="none"><ByValueCondition>
    <ParameterCondition parameterRef="Gap" value="5.0" rule="equalTo"/>
  </ByValueCondition></Condition>''',
            "step time 0",
        ),
    )
}
  {
    group(
        "braking",
        "Braker",
        event("brake", 0.0, when("driven", "Braker", '<TraveledDistanceCondition value="50"/>')),
    )
}
  {
    group(
        "leaving",
        "Leaver",
        event("gone", 20.0, when("past the end", "Leaver", '<EndOfRoadCondition duration="0.5"/>')),
        event("aside", 20.0, when("beside", "Leaver", '<OffroadCondition duration="0"/>')),
    )
}
  <StartTrigger><ConditionGroup><Condition name="go" delay="0" conditionEdge="none">
    <ByValueCondition><SimulationTimeCondition value="0" rule="greaterOrEqual"/></ByValueCondition>
  </Condition></ConditionGroup></StartTrigger>
</Act></Story>
<StopTrigger>
  <ConditionGroup>{
    when("stood", "Braker", '<StandStillCondition duration="1"/>', "none")
}</ConditionGroup>
  <ConditionGroup><Condition name="criteria" delay="0" conditionEdge="rising"><ByValueCondition>
    <ParameterCondition parameterRef="" value="" rule="lessThan"/></ByValueCondition></Condition>
  </ConditionGroup>
</StopTrigger>
</Storyboard>
</OpenSCENARIO>
"""


@pytest.fixture(scope="module")
def board(tmp_path_factory: pytest.TempPathFactory) -> StoryboardReport:
    folder = tmp_path_factory.mktemp("conditions")
    write_road(folder)
    path = folder / "conditions.xosc"
    path.write_text(SCENARIO)
    face, world = scenario_run(Path(path))
    sim = build_simulation(RunSpec(world=world, pacing=PacingSpec(mode="fast"), faces=[face]))
    report = sim.run(30.0).faces["storyboard"]
    assert isinstance(report, StoryboardReport)
    return report


def element(board: StoryboardReport, name: str) -> ElementReport:
    (found,) = (e for e in board.elements if e.name == name and e.kind == "event")
    return found


def test_the_car_brakes_after_50_m_and_the_run_ends_a_second_after_it_stood(
    board: StoryboardReport,
) -> None:
    brake = element(board, "brake")
    assert brake.started == [pytest.approx(5.0, abs=0.05)]  # 50 m at 10 m/s
    assert board.ended_by.startswith("the stop trigger ('stood') at t = ")
    ended = float(board.ended_by.split("t = ")[1].split()[0])
    assert 5.0 + 2.5 + 1.0 - 0.1 < ended < 5.0 + 2.5 + 1.0 + 2.0  # braking 10 m/s at 4 m/s2


def test_a_parameter_condition_on_a_storys_parameter(board: StoryboardReport) -> None:
    assert element(board, "story parameter").started == [0.0]


def test_past_the_end_of_the_road_is_end_of_road_not_offroad(board: StoryboardReport) -> None:
    # the car's point passes s = 500 m at 3 s (60 m at 20 m/s); 0.5 s later the condition
    assert element(board, "gone").started == [pytest.approx(3.5, abs=0.1)]
    assert element(board, "aside").started == []


ESMINI = Path(__file__).parents[2] / "examples" / "scenarios" / "public" / "esmini" / "xosc"


def test_the_overtaking_on_esminis_2_plus_1_road_waits_for_the_passing_lane() -> None:
    """The target may change into the lane to its left (RelativeLaneRange 1 to 1, its own
    direction only) when it is clear: before s = 125 m that lane runs the other way, from
    there a lane of its own direction opens. esmini's own test (TwoPlusOneRoadTest) has the
    target at s = 115 m at 4 s and already 0.27 m into its change at 5.25 s: it starts at
    about 4.6 s."""
    path = ESMINI / "two_plus_one_road.xosc"
    face, world = scenario_run(path)
    sim = build_simulation(RunSpec(world=world, pacing=PacingSpec(mode="fast"), faces=[face]))
    where: dict[float, float] = {}
    network = network_of(read_xosc(path))

    def look(t: float) -> None:
        assert sim.world is not None
        if abs(t - 4.0) < 1e-6:
            p = sim.world.poses()
            where[4.0] = float(network.locate(p["x"][1], p["y"][1]).s[0])

    report = sim.run(8.0, on_progress=look).faces["storyboard"]
    assert isinstance(report, StoryboardReport)
    assert where[4.0] == pytest.approx(115.0, abs=1.0)  # as esmini's
    (overtake,) = (e for e in report.elements if e.name == "OvertakeEvent")
    assert overtake.started == [pytest.approx(4.65, abs=0.1)]
    assert report.collisions == 0  # into the lane that opens (ids renumbered), past the ego


def head_on(lateral: float) -> str:
    """esmini's ttc_condition.xosc (its test TestTTCAndLateralDist), the act started at once
    as its empty StartTrigger means: the ego (lane -1, s = 50 m, 10 m/s) slows to 1 m/s when
    its time to collision with the target coming the other way (lane 1, s = 150 m, 15 m/s) is
    under 2.5 s, along the road, and their lateral freespace distance across the road under
    ``lateral``."""
    ttc = """<TimeToCollisionCondition coordinateSystem="road" freespace="false"
      relativeDistanceType="longitudinal" rule="lessThan" value="2.5">
      <TimeToCollisionConditionTarget>
        <EntityRef entityRef="Target"/>
      </TimeToCollisionConditionTarget>
    </TimeToCollisionCondition>"""
    across = f"""<RelativeDistanceCondition coordinateSystem="road" entityRef="Target"
      freespace="true" relativeDistanceType="lateral" rule="lessThan" value="{lateral}"/>"""
    act = group(
        "slow", "Ego",
        event("slow", 1.0, when("ttc", "Ego", ttc, "none") + when("across", "Ego", across, "none"),
              "step time 0"),
    )  # fmt: skip
    return (
        SCENARIO.split("<Entities>")[0]
        + f"""<Entities>
  <ScenarioObject name="Ego">{VEHICLE}</ScenarioObject>
  <ScenarioObject name="Target">{VEHICLE}</ScenarioObject>
</Entities>
<Storyboard>
<Init><Actions>{start("Ego", 50.0, 10.0)}{start("Target", 150.0, 15.0, 1)}</Actions></Init>
<Story name="story"><Act name="act">{act}
  <StartTrigger><ConditionGroup><Condition name="go" delay="0" conditionEdge="none">
    <ByValueCondition><SimulationTimeCondition value="0" rule="greaterOrEqual"/></ByValueCondition>
  </Condition></ConditionGroup></StartTrigger>
</Act></Story>
<StopTrigger><ConditionGroup><Condition name="end" delay="0" conditionEdge="rising">
  <ByValueCondition><SimulationTimeCondition value="2.5" rule="greaterThan"/></ByValueCondition>
</Condition></ConditionGroup></StopTrigger>
</Storyboard>
</OpenSCENARIO>
"""
    )


@pytest.mark.parametrize(("lateral", "slows"), [(5.0, True), (0.2, False)])
def test_time_to_collision_and_lateral_distance_along_the_road(
    tmp_path: Path, lateral: float, slows: bool
) -> None:
    write_road(tmp_path)
    path = tmp_path / "ttc.xosc"
    path.write_text(head_on(lateral))
    face, world = scenario_run(path)
    sim = build_simulation(RunSpec(world=world, pacing=PacingSpec(mode="fast"), faces=[face]))
    ttc: list[tuple[float, float]] = []

    def look(t: float) -> None:  # the time to collision of the cars as they are, every 10 ms
        assert sim.world is not None
        if abs(t * 100 - round(t * 100)) < 1e-6:
            p = sim.world.poses()
            gap, closing = p["x"][1] - p["x"][0], p["vx"][0] - p["vx"][1]
            ttc.append((round(t, 2), float(gap / closing)))

    report = sim.run(10.0, on_progress=look).faces["storyboard"]
    assert isinstance(report, StoryboardReport)
    # 100 m apart, closing at 25 m/s (the physical cars keep to their speeds' distances):
    # under 2.5 s after 1.5 s; across the road the boxes (1.9 m wide) are 3.5 - 1.9 = 1.6 m
    # apart
    first = next(t for t, seconds in ttc if seconds < 2.5)
    assert first == pytest.approx(1.5, abs=0.03)
    assert element(report, "slow").started == ([pytest.approx(first, abs=0.011)] if slows else [])


@pytest.mark.parametrize(
    ("condition", "says"),
    [
        ('<TimeOfDayCondition dateTime="2026-12-07T12:00:00" rule="greaterThan"/>',
         "no environment gives the time of day"),
        ('<TrafficSignalControllerCondition trafficSignalControllerRef="c" phase="go"/>',
         "traffic signal controllers are not read"),
        ('<UserDefinedValueCondition name="x" value="1" rule="equalTo"/>',
         "no face supplies user-defined values"),
    ],
)  # fmt: skip
def test_conditions_on_what_nothing_gives_are_refused_by_name(
    tmp_path: Path, condition: str, says: str
) -> None:
    refused = SCENARIO.replace(
        '<ParameterCondition parameterRef="" value="" rule="lessThan"/>', condition
    )
    path = tmp_path / "refused.xosc"
    path.write_text(refused)
    write_road(tmp_path)
    line = next(k for k, text in enumerate(refused.splitlines(), 1) if condition[:20] in text)
    tag = condition[1:].split()[0]
    with pytest.raises(ConfigError) as caught:
        read_xosc(path)
    assert f"line {line}: <{tag}>: {says}" in " ".join(caught.value.problems)
