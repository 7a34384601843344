"""Every entity kind and the global and private actions of the field's files, run on a small
file of their own: a pedestrian walks, an obstacle stands and is deleted, a truck tows its
trailer, a car enters the world later, the road turns slippery, variables and parameters
trigger events, an act with an empty StartTrigger starts at once, a distance is taken at once
and a meeting is synchronised, an override holds a car's brake."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from helpers.scenarios import at, lane, placed, run_storyboard, write_road
from vcosim.errors import ConfigError
from vcosim.openscenario import model as m
from vcosim.openscenario.place import layout
from vcosim.openscenario.reader import read_xosc
from vcosim.openscenario.storyboard import Storyboard, StoryboardReport
from vcosim.sim.simulation import Simulation

BOX = """<BoundingBox><Center x="{cx}" y="0" z="1"/>
  <Dimensions width="{w}" length="{l}" height="{h}"/></BoundingBox>"""
AXLES = """<Performance maxSpeed="40" maxDeceleration="8" maxAcceleration="4"/><Axles>
  <FrontAxle maxSteering="0.5" wheelDiameter="0.8" trackWidth="1.8" positionX="{wb}"
    positionZ="0.4"/>
  <RearAxle maxSteering="0" wheelDiameter="0.8" trackWidth="1.8" positionX="0" positionZ="0.4"/>
</Axles>"""


def vehicle(category: str, length: float, extra: str = "") -> str:
    box = BOX.format(cx=length / 2 - 1, w=2.0, l=length, h=2.5)
    return f"""<Vehicle name="{category}" vehicleCategory="{category}">{box}
  {AXLES.format(wb=length / 2)}{extra}</Vehicle>"""


def glob(name: str, action: str, trigger: str) -> str:
    return f"""<Event name="{name}" priority="parallel"><Action name="{name} action">
  <GlobalAction>{action}</GlobalAction></Action>{trigger}</Event>"""


def private(name: str, action: str, trigger: str) -> str:
    return f"""<Event name="{name}" priority="parallel"><Action name="{name} action">
  <PrivateAction>{action}</PrivateAction></Action>{trigger}</Event>"""


FLAG_SET = """<ConditionGroup><Condition name="flag" delay="0" conditionEdge="none">
  <ByValueCondition><VariableCondition variableRef="Flag" value="true" rule="equalTo"/>
</ByValueCondition></Condition></ConditionGroup>"""

SCENARIO = f"""<?xml version="1.0" encoding="utf-8"?>
<OpenSCENARIO>
<FileHeader description="entities" author="vcosim tests" revMajor="1" revMinor="3"
  date="2026-12-07T00:00:00"/>
<ParameterDeclarations>
  <ParameterDeclaration name="Count" parameterType="integer" value="1"/>
  <ParameterDeclaration name="Seen" parameterType="string" value="no"/>
</ParameterDeclarations>
<VariableDeclarations>
  <VariableDeclaration name="Flag" variableType="boolean" value="false"/>
</VariableDeclarations>
<CatalogLocations/>
<RoadNetwork><LogicFile filepath="straight.xodr"/></RoadNetwork>
<Entities>
  <ScenarioObject name="Ego">{vehicle("car", 4.5)}</ScenarioObject>
  <ScenarioObject name="Walker"><Pedestrian name="walker" mass="80"
    pedestrianCategory="pedestrian">{BOX.format(cx=0, w=0.6, l=0.5, h=1.8)}</Pedestrian>
  </ScenarioObject>
  <ScenarioObject name="Box"><MiscObject name="box" mass="50" miscObjectCategory="obstacle">
    {BOX.format(cx=0, w=1.0, l=1.0, h=1.0)}</MiscObject></ScenarioObject>
  <ScenarioObject name="Truck">{
    vehicle(
        "truck",
        6.0,
        '<TrailerHitch dx="-1.0"/><Trailer><TrailerRef entityRef="Trailer"/></Trailer>',
    )
}</ScenarioObject>
  <ScenarioObject name="Trailer">{
    vehicle("trailer", 8.0, '<TrailerCoupler dx="7.0"/>')
}</ScenarioObject>
  <ScenarioObject name="Late">{vehicle("car", 4.5)}</ScenarioObject>
  <ScenarioObject name="Follower">{vehicle("car", 4.5)}</ScenarioObject>
  <ScenarioObject name="Held">{vehicle("car", 4.5)}</ScenarioObject>
</Entities>
<Storyboard>
<Init><Actions>
  {placed("Ego", lane(20.0), 10.0)}{placed("Walker", lane(60.0, -2), 1.5)}
  {placed("Box", lane(150.0), 0.0)}{placed("Truck", lane(100.0, -2), 8.0)}
  {placed("Held", lane(200.0, 1), 10.0)}
  <Private entityRef="Follower">
    <PrivateAction><TeleportAction><Position>{lane(300.0)}</Position></TeleportAction>
    </PrivateAction>
    <PrivateAction><LongitudinalAction><LongitudinalDistanceAction entityRef="Ego"
      distance="30" freespace="false" continuous="true"
      displacement="leadingReferencedEntity"/></LongitudinalAction></PrivateAction>
  </Private>
</Actions></Init>
<Story name="story"><Act name="at once">
  <ManeuverGroup name="world" maximumExecutionCount="1">
    <Actors selectTriggeringEntities="false"/>
    <Maneuver name="world">
      {
    glob(
        "slippery",
        '<EnvironmentAction><Environment name="wet"><RoadCondition frictionScaleFactor="0.5"/>'
        "</Environment></EnvironmentAction>",
        at(0.5),
    )
}
      {
    glob(
        "raise",
        '<VariableAction variableRef="Flag"><SetAction value="true"/></VariableAction>',
        at(0.5),
    )
}
      {
    glob(
        "count",
        '<ParameterAction parameterRef="Count"><ModifyAction><Rule><AddValue value="4"/>'
        "</Rule></ModifyAction></ParameterAction>",
        f"<StartTrigger>{FLAG_SET}</StartTrigger>",
    )
}
      {
    glob(
        "enter",
        f'<EntityAction entityRef="Late"><AddEntityAction><Position>{lane(400.0, -2)}'
        "</Position></AddEntityAction></EntityAction>",
        at(1.0),
    )
}
      {
    glob(
        "light",
        "<InfrastructureAction><TrafficSignalAction>"
        '<TrafficSignalStateAction name="1" state="green"/></TrafficSignalAction>'
        "</InfrastructureAction>",
        at(1.5),
    )
}
      {
    glob(
        "on green",
        '<ParameterAction parameterRef="Seen"><SetAction value="yes"/></ParameterAction>',
        '<StartTrigger><ConditionGroup><Condition name="green" delay="0" conditionEdge="none">'
        '<ByValueCondition><TrafficSignalCondition name="1" state="green"/></ByValueCondition>'
        "</Condition></ConditionGroup></StartTrigger>",
    )
}
      {
    glob("remove", '<EntityAction entityRef="Box"><DeleteEntityAction/></EntityAction>', at(2.0))
}
    </Maneuver>
  </ManeuverGroup>
  <ManeuverGroup name="hold" maximumExecutionCount="1">
    <Actors selectTriggeringEntities="false"><EntityRef entityRef="Held"/></Actors>
    <Maneuver name="hold">{
    private(
        "brake held",
        '<ControllerAction><OverrideControllerValueAction><Throttle value="0" active="true"/>'
        '<Brake value="1" active="true"/><Clutch value="0" active="false"/>'
        '<ParkingBrake value="0" active="false"/><SteeringWheel value="0" active="false"/>'
        '<Gear number="1" active="false"/></OverrideControllerValueAction></ControllerAction>',
        at(0.0),
    )
}</Maneuver>
  </ManeuverGroup>
  <StartTrigger/>
</Act></Story>
<StopTrigger><ConditionGroup><Condition name="end" delay="0" conditionEdge="none">
  <ByValueCondition><SimulationTimeCondition value="3" rule="greaterOrEqual"/></ByValueCondition>
</Condition></ConditionGroup></StopTrigger>
</Storyboard>
</OpenSCENARIO>
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Simulation, StoryboardReport]:
    return run_storyboard(tmp_path_factory.mktemp("entities"), "entities", SCENARIO)


def test_every_kind_is_read_and_only_cars_are_physical(tmp_path: Path) -> None:
    write_road(tmp_path)
    path = tmp_path / "entities.xosc"
    path.write_text(SCENARIO)
    scenario = read_xosc(path)
    kinds = {name: (e.kind, e.category, e.kinematic) for name, e in scenario.entities.items()}
    assert kinds["Walker"] == ("pedestrian", "pedestrian", True)
    assert kinds["Box"] == ("misc", "obstacle", True)
    assert kinds["Truck"] == ("vehicle", "truck", True) and kinds["Ego"][2] is False
    assert scenario.entities["Truck"].trailer == "Trailer"
    assert scenario.absent == ("Late",)  # no Init position; the trailer goes with its truck
    assert scenario.version == (1, 3)


def test_the_run_ends_by_its_stop_trigger_and_the_empty_start_trigger_started_at_once(
    run: tuple[Simulation, StoryboardReport],
) -> None:
    _, board = run
    assert board.ended_by.startswith("the stop trigger ('end') at t = 3.0")
    (act,) = (e for e in board.elements if e.kind == "act")
    assert act.started == [0.0]


def positions(sim: Simulation) -> dict[str, tuple[float, float, float]]:
    world = sim.world
    assert world is not None
    others = world.others()
    out = {
        name: (
            float(others.poses["x"][k]),
            float(others.poses["y"][k]),
            float(others.poses["yaw"][k]),
        )
        for k, name in others.cars()
    }
    p = world.poses()
    for name in world.names:
        row = world.row(name)
        out[name] = (float(p["x"][row]), float(p["y"][row]), float(p["yaw"][row]))
    return out


def test_kinematic_entities_move_as_told_and_a_trailer_follows_its_hitch(
    run: tuple[Simulation, StoryboardReport],
) -> None:
    sim, _ = run
    where = positions(sim)
    assert where["Walker"][0] == pytest.approx(60.0 + 1.5 * 3.0, abs=0.05)
    assert where["Truck"][0] == pytest.approx(100.0 + 8.0 * 3.0, abs=0.05)
    truck, trailer = np.array(where["Truck"][:2]), np.array(where["Trailer"][:2])
    # the coupler (7 m ahead of the trailer's reference point, its rear axle) sits on the
    # hitch (1 m behind the truck's)
    assert float(np.linalg.norm(truck - trailer)) == pytest.approx(8.0, abs=0.05)
    assert trailer[0] < truck[0] and where["Trailer"][2] == pytest.approx(0.0, abs=1e-6)


def test_entities_enter_and_leave_and_the_world_sees_the_kinematic_ones(
    run: tuple[Simulation, StoryboardReport],
) -> None:
    sim, _ = run
    where = positions(sim)
    assert "Box" not in where  # deleted at 2 s
    assert where["Late"][0] == pytest.approx(400.0, abs=1.0)  # entered at 1 s, standing
    world = sim.world
    assert world is not None
    assert world.target_row("Walker") >= len(world)  # an object after the world's cars


def test_global_actions_change_friction_variables_and_parameters(
    run: tuple[Simulation, StoryboardReport],
) -> None:
    sim, board = run
    assert board.environment["friction"] == "0.5"
    world = sim.world
    assert world is not None and world.friction_factor == 0.5
    face = sim.faces["storyboard"]
    assert isinstance(face, Storyboard)
    assert face.variables["Flag"] == "true" and face.parameters["Count"] == "5"
    assert face.signals == {"1": "green"} and face.parameters["Seen"] == "yes"
    (seen,) = (e for e in board.elements if e.name == "on green")
    assert seen.started and seen.started[0] >= 1.5
    (count,) = (e for e in board.elements if e.name == "count")
    assert count.state == "complete" and count.started and count.started[0] > 0.5


def test_a_distance_is_taken_at_once_and_an_override_holds_the_brake(
    run: tuple[Simulation, StoryboardReport],
) -> None:
    sim, _ = run
    where = positions(sim)
    # Follower (at s = 300) was put 30 m ahead of Ego at t = 0 and keeps that
    assert where["Follower"][0] - where["Ego"][0] == pytest.approx(30.0, abs=1.5)
    world = sim.world
    assert world is not None
    held = world.poses()["speed"][world.row("Held")]
    assert held < 0.5  # 10 m/s at the start, the brake forced on over its driver


def test_a_nurbs_passes_its_end_points_and_its_times_run_with_it() -> None:
    points = tuple(
        (m.WorldPosition(x, y), 1.0, t) for x, y, t in [(0, 0, 0), (10, 10, 5), (20, 0, 10)]
    )
    line, times = layout(m.Trajectory("n", m.Nurbs(3, points, (0, 0, 0, 1, 1, 1)), 0), None)
    assert line[0] == pytest.approx([0.0, 0.0]) and line[-1] == pytest.approx([20.0, 0.0])
    middle = len(line) // 2  # a quadratic Bezier's middle: halfway between mid-point and apex
    assert line[middle] == pytest.approx([10.0, 5.0], abs=0.05)
    assert times is not None and times[-1] == pytest.approx(10.0) and np.all(np.diff(times) > 0)


def test_a_map_name_is_found_in_the_maps_folder_or_refused_with_the_hint(tmp_path: Path) -> None:
    maps = tmp_path / "maps"
    maps.mkdir()
    write_road(maps)
    (maps / "straight.xodr").rename(maps / "Town99.xodr")
    path = tmp_path / "mapped.xosc"
    path.write_text(SCENARIO.replace('filepath="straight.xodr"', 'filepath="Town99"'))
    assert read_xosc(path, maps=[maps]).road == maps / "Town99.xodr"
    with pytest.raises(ConfigError) as caught:
        read_xosc(path, maps=[])
    assert any("a map's name? give the folder of Town99.xodr with --maps" in p
               for p in caught.value.problems)  # fmt: skip


def test_a_problem_in_a_catalogue_names_its_file(tmp_path: Path) -> None:
    write_road(tmp_path)
    (tmp_path / "catalogs").mkdir()
    (tmp_path / "catalogs" / "Vehicles.xosc").write_text(
        '<?xml version="1.0"?>\n<OpenSCENARIO>\n<FileHeader revMajor="1" revMinor="0" date="x"'
        ' description="" author=""/>\n<Catalog name="cars">\n'
        + vehicle("car", 4.5).replace('vehicleCategory="car"', 'vehicleCategory="hovercraft"')
        + "\n</Catalog>\n</OpenSCENARIO>\n"
    )
    text = SCENARIO.replace(
        "<CatalogLocations/>",
        '<CatalogLocations><VehicleCatalog><Directory path="catalogs"/></VehicleCatalog>'
        "</CatalogLocations>",
    ).replace(
        f'<ScenarioObject name="Late">{vehicle("car", 4.5)}',
        '<ScenarioObject name="Late"><CatalogReference catalogName="cars" entryName="car"/>',
    )
    path = tmp_path / "catalogued.xosc"
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        read_xosc(path)
    (problem,) = caught.value.problems
    assert problem.startswith("line 5 of Vehicles.xosc: <Vehicle>: vehicleCategory='hovercraft'")


def test_an_entity_init_only_sends_along_a_trajectory_starts_on_it(tmp_path: Path) -> None:
    from vcosim.openscenario.world import start_poses

    write_road(tmp_path)
    walker = f"""<ScenarioObject name="Crosser"><Pedestrian name="c" mass="70"
      pedestrianCategory="pedestrian">{BOX.format(cx=0, w=0.6, l=0.5, h=1.8)}</Pedestrian>
    </ScenarioObject>"""
    follow = """<Private entityRef="Crosser"><PrivateAction><RoutingAction><FollowTrajectoryAction>
      <TrajectoryRef><Trajectory name="across" closed="false"><Shape><Polyline>
        <Vertex><Position><WorldPosition x="50" y="-9"/></Position></Vertex>
        <Vertex><Position><WorldPosition x="50" y="9"/></Position></Vertex>
      </Polyline></Shape></Trajectory></TrajectoryRef>
      <TimeReference><None/></TimeReference>
      <TrajectoryFollowingMode followingMode="position"/>
    </FollowTrajectoryAction></RoutingAction></PrivateAction></Private>"""
    text = SCENARIO.replace("</Entities>", walker + "</Entities>").replace(
        "</Actions></Init>", follow + "</Actions></Init>"
    )
    path = tmp_path / "crosser.xosc"
    path.write_text(text)
    scenario = read_xosc(path)
    assert "Crosser" not in scenario.absent
    x, y, heading = start_poses(scenario)["Crosser"]
    assert (x, y) == pytest.approx((50.0, -9.0)) and heading == pytest.approx(np.pi / 2)
