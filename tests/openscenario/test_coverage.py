"""Catalogue references, FollowTrajectoryAction and ActivateControllerAction, generated with
scenariogeneration, read and (a trajectory) run in process."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scenariogeneration import xosc

from helpers.scenarios import LANE_WIDTH, at_time, car, event, step_to, write_road
from vcosim.errors import ConfigError
from vcosim.openscenario import model as m
from vcosim.openscenario import read_xosc
from vcosim.openscenario.expressions import evaluate
from vcosim.openscenario.place import layout
from vcosim.openscenario.storyboard import StoryboardReport, scenario_run
from vcosim.scenarios import PacingSpec, RunSpec, build_simulation

TIME = xosc.DynamicsDimension.time


def catalogues(folder: Path) -> xosc.Catalog:
    """A vehicle, a controller and a maneuver catalogue, each in a directory of its own."""
    small = car()
    small.name = "small"
    small.add_parameter(xosc.Parameter("Length", xosc.ParameterType.double, "4.0"))
    small.boundingbox = xosc.BoundingBox(1.9, "$Length", 1.5, 1.4, 0.0, 0.75)
    says = xosc.Properties()
    says.add_property("controller", "$Who")
    outside = xosc.Controller("outside", says)
    outside.add_parameter(xosc.Parameter("Who", xosc.ParameterType.string, "internal"))
    change = xosc.Maneuver("change")
    change.add_parameter(xosc.Parameter("Target", xosc.ParameterType.int, "-2"))
    action = xosc.AbsoluteLaneChangeAction(
        "$Target", xosc.TransitionDynamics(xosc.DynamicsShapes.sinusoidal, TIME, 2)
    )
    change.add_event(event("move", action, at_time("soon", 0.5)))
    catalog = xosc.Catalog()
    for kind, entry in (("Vehicle", small), ("Controller", outside), ("Maneuver", change)):
        (folder / kind).mkdir(exist_ok=True)
        file = xosc.CatalogFile()
        file.create_catalog(str(folder / kind / "entries.xosc"), f"{kind}Catalog", "test", "vcosim")
        file.add_to_catalog(entry)
        file.dump()
        catalog.add_catalog(f"{kind}Catalog", kind)
    return catalog


def entities(ego: object, car_ref: object, catalogued: bool = True) -> xosc.Entities:
    """The ego (driven from outside: by a catalogued controller or inline) and the car."""
    found = xosc.Entities()
    outside = xosc.CatalogReference("ControllerCatalog", "outside")
    outside.add_parameter_assignment("Who", "external")
    inline = xosc.Controller("external", xosc.Properties())
    found.add_scenario_object("Ego", ego, controller=outside if catalogued else inline)
    found.add_scenario_object("Car", car_ref)
    return found


def storyboard(maneuver: xosc.Maneuver | xosc.CatalogReference, end: float) -> xosc.StoryBoard:
    init = xosc.Init()
    init.add_init_action("Ego", xosc.TeleportAction(xosc.LanePosition(10, 0, -1, 1)))
    init.add_init_action("Ego", step_to(10.0))
    init.add_init_action("Car", xosc.TeleportAction(xosc.LanePosition(30, 0, -1, 1)))
    init.add_init_action("Car", step_to(10.0))
    init.add_init_action("Ego", xosc.ActivateControllerAction(lateral=True, longitudinal=True))
    group = xosc.ManeuverGroup("group")
    group.add_actor("Car")
    group.add_maneuver(maneuver)
    act = xosc.Act("act", at_time("go", 0.0))
    act.add_maneuver_group(group)
    story = xosc.Story("story")
    story.add_act(act)
    board = xosc.StoryBoard(init, at_time("end", end, "stop"))
    board.add_story(story)
    return board


def write(folder: Path, name: str, catalog: xosc.Catalog, ents, board) -> Path:
    path = folder / f"{name}.xosc"
    xosc.Scenario(
        name, "vcosim tests", xosc.ParameterDeclarations(), ents, board,
        xosc.RoadNetwork("straight.xodr"), catalog, osc_minor_version=2,
    ).write_xml(str(path))  # fmt: skip
    return path


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("coverage")
    write_road(folder)
    return folder


def test_catalogue_entries_are_read_with_their_parameter_assignments(folder: Path) -> None:
    catalog = catalogues(folder)
    long_car = xosc.CatalogReference("VehicleCatalog", "small")
    long_car.add_parameter_assignment("Length", "5.5")
    change = xosc.CatalogReference("ManeuverCatalog", "change")
    change.add_parameter_assignment("Target", "-2")
    path = write(
        folder, "catalogued", catalog,
        entities(long_car, xosc.CatalogReference("VehicleCatalog", "small")),
        storyboard(change, 3.0),
    )  # fmt: skip
    scenario = read_xosc(path)
    assert scenario.external == ["Ego"]  # its controller property, assigned "external"
    assert (scenario.entities["Ego"].length, scenario.entities["Car"].length) == (5.5, 4.0)
    (maneuver,) = scenario.stories[0].acts[0].groups[0].maneuvers
    (move,) = maneuver.events
    assert maneuver.name == "change" and isinstance(move.actions[0].action, m.LaneChangeAction)
    assert move.actions[0].action.lane == -2

    missing = path.read_text().replace('entryName="change"', 'entryName="swerve"')
    (folder / "missing.xosc").write_text(missing)
    with pytest.raises(ConfigError, match="has no Maneuver 'swerve'"):
        read_xosc(folder / "missing.xosc")
    entries = folder / "Vehicle" / "entries.xosc"
    entries.write_text(entries.read_text().replace("<Performance", "<Wings/><Performance"))
    with pytest.raises(ConfigError, match=r"of entries.xosc: <Wings> is not supported"):
        read_xosc(path)


def test_expressions_are_arithmetic_over_parameters() -> None:
    assert evaluate("250 / 3.6 * $k", {"k": "2"}) == repr(250 / 3.6 * 2)
    assert evaluate("round($a) + pow(2, 3)", {"a": "1.5"}) == "10"
    assert evaluate("$a > 1 and not ($a > 5)", {"a": "3"}) == "true"
    with pytest.raises(ValueError, match="not an OpenSCENARIO expression"):
        evaluate("__import__('os')", {})


def test_a_clothoid_trajectory_is_laid_out_along_its_curvature() -> None:
    quarter = m.Clothoid(m.WorldPosition(0.0, 0.0, 0.0), 0.01, 0.0, 50 * math.pi)
    points, _ = layout(m.Trajectory("arc", quarter, 0), None)
    np.testing.assert_allclose(points[-1], [100.0, 100.0], atol=1e-3)  # a quarter circle
    from scipy.special import fresnel

    spiral = m.Clothoid(m.WorldPosition(5.0, 0.0, 0.0), 0.0, 0.002, 40.0, 1.0, 5.0)
    points, times = layout(m.Trajectory("spiral", spiral, 0), None)
    scale = math.sqrt(math.pi / 0.002)
    sin_part, cos_part = fresnel(40.0 / scale)
    np.testing.assert_allclose(points[-1], [5.0 + scale * cos_part, scale * sin_part], atol=1e-3)
    assert times is not None and (times[0], times[-1]) == (1.0, 5.0)


@pytest.fixture(scope="module")
def followed(folder: Path) -> tuple[StoryboardReport, np.ndarray]:
    """The car follows a timed polyline from its lane into the one to its right."""
    y1, y2 = -LANE_WIDTH / 2, -1.5 * LANE_WIDTH
    corners = ((30, y1), (50, y1), (80, y2), (140, y2))
    vertices = [xosc.WorldPosition(x, y, 0, 0) for x, y in corners]
    line = xosc.Trajectory("into lane -2", False)
    line.add_shape(xosc.Polyline([0.0, 2.0, 5.0, 11.0], vertices))
    follow = xosc.FollowTrajectoryAction(
        line, xosc.FollowingMode.position, xosc.ReferenceContext.relative, 1.0, 0.0
    )
    maneuver = xosc.Maneuver("follow")
    maneuver.add_event(event("along", follow, at_time("now", 0.0)))
    ents = entities(car(), car(), catalogued=False)
    path = write(folder, "follow", xosc.Catalog(), ents, storyboard(maneuver, 12))
    face, world = scenario_run(path)
    sim = build_simulation(RunSpec(world=world, pacing=PacingSpec(mode="fast"), faces=[face]))
    track: list[tuple[float, float, float]] = []

    def look(t: float) -> None:
        assert sim.world is not None
        p = sim.world.poses()
        track.append((t, float(p["x"][1]), float(p["y"][1])))

    report = sim.run(12.0, on_progress=look)
    board = report.faces["storyboard"]
    assert isinstance(board, StoryboardReport)
    return board, np.array(track)


def test_a_timed_trajectory_takes_the_car_into_the_next_lane_on_time(followed) -> None:
    board, track = followed
    (along,) = (e for e in board.elements if e.name == "along" and e.kind == "event")
    assert along.state == "complete" and 10.0 < along.ended[0] < 12.5  # at 140 m after ~11 s
    t, x, y = track.T
    at5 = np.argmin(np.abs(t - 5.0))
    assert abs(x[at5] - 80.0) < 3.0  # on schedule: vertex 3 at 5 s
    assert abs(y[-1] + 1.5 * LANE_WIDTH) < 0.3  # in lane -2, back on its lane route there
    assert x[-1] > 145.0  # and driving on


def test_activating_controllers_is_read_and_an_external_one_cannot_be_switched_off(
    folder: Path,
) -> None:
    maneuver = xosc.Maneuver("switch")
    manual = xosc.ActivateControllerAction(lateral=False, longitudinal=True)
    maneuver.add_event(event("manual", manual, at_time("soon", 0.5)))
    ents = entities(car(), car(), catalogued=False)
    path = write(folder, "switch", xosc.Catalog(), ents, storyboard(maneuver, 1.0))
    (switch,) = read_xosc(path).stories[0].acts[0].groups[0].maneuvers
    assert switch.events[0].actions[0].action == m.ActivateControllerAction(False, True)
    text = path.read_text()
    first = text.index('lateral="true"')  # the Init's, on the external ego
    path.write_text(text[:first] + 'lateral="false"' + text[first + len('lateral="true"') :])
    with pytest.raises(ConfigError, match="driven from outside: its controller stays active"):
        read_xosc(path)


def test_a_catalogued_clothoid_is_followed_in_follow_mode_without_timing(folder: Path) -> None:
    spiral = xosc.Trajectory("spiral", False)
    spiral.add_parameter(xosc.Parameter("Rate", xosc.ParameterType.double, "0.001"))
    spiral.add_shape(xosc.Clothoid(0.0, "$Rate", 60.0, xosc.LanePosition(40, 0, -1, 1)))
    (folder / "Trajectory").mkdir(exist_ok=True)
    file = xosc.CatalogFile()
    file.create_catalog(str(folder / "Trajectory" / "t.xosc"), "TrajectoryCatalog", "t", "vcosim")
    file.add_to_catalog(spiral)
    file.dump()
    catalog = xosc.Catalog()
    catalog.add_catalog("TrajectoryCatalog", "Trajectory")
    reference = xosc.CatalogReference("TrajectoryCatalog", "spiral")
    reference.add_parameter_assignment("Rate", "0.002")
    maneuver = xosc.Maneuver("curl")
    follow = xosc.FollowTrajectoryAction(reference, xosc.FollowingMode.follow)
    maneuver.add_event(event("curl", follow, at_time("now", 0.0)))
    ents = entities(car(), car(), catalogued=False)
    path = write(folder, "curl", catalog, ents, storyboard(maneuver, 1.0))
    scenario = read_xosc(path)
    (curl,) = scenario.stories[0].acts[0].groups[0].maneuvers
    action = curl.events[0].actions[0].action
    assert isinstance(action, m.FollowTrajectoryAction) and action.timing is None
    assert action.mode == "follow" and scenario.trajectories == (action.trajectory,)
    shape = action.trajectory.shape
    assert isinstance(shape, m.Clothoid) and shape.curvature_rate == 0.002


@pytest.mark.parametrize(("h", "absolute", "placed"), [(0.0, True, True), (math.pi, True, False)])
def test_a_relative_road_position_with_a_heading_along_the_lane(
    folder: Path, h: float, absolute: bool, placed: bool
) -> None:
    from vcosim.openscenario.world import scenario_world, start_poses

    context = xosc.ReferenceContext.absolute if absolute else xosc.ReferenceContext.relative
    beside = xosc.RelativeRoadPosition(15.0, -3.5, "Ego", xosc.Orientation(h=h, reference=context))
    slow = xosc.Maneuver("slow")
    slow.add_event(event("slow", step_to(5.0), at_time("soon", 0.5)))
    board = storyboard(slow, 1.0)
    path = write(folder, "beside", xosc.Catalog(), entities(car(), car(), catalogued=False), board)
    text = path.read_text()
    car_at = text.index('<Private entityRef="Car">')
    start = text.index("<Position>", car_at)  # the car's Init position, replaced
    end = text.index("</Position>", start) + len("</Position>")
    path.write_text(text[:start] + _xml(beside) + text[end:])
    scenario = read_xosc(path)
    if not placed:  # placed as it says, and driven along its lane the other way (as esmini)
        assert start_poses(scenario)["Car"][2] == pytest.approx(math.pi)
        points = scenario_world(scenario).paths["Car"].points
        assert points is not None and points[-1][0] < points[0][0]  # westwards
        return
    x, y, heading = start_poses(scenario)["Car"]
    assert (x, y, heading) == pytest.approx((10.0 + 15.0, -LANE_WIDTH / 2 - 3.5, 0.0), abs=1e-9)


def _xml(element: object) -> str:
    import xml.etree.ElementTree as ET

    return ET.tostring(element.get_element(), encoding="unicode")  # type: ignore[attr-defined]
