"""The route driver (``--ego-driver route``): the external ego goes where the story happens.

A road forks at a junction; the storyboard waits for the ego at a place on one branch. The
route driver takes the ego there through the junction (whichever branch it is, so not by the
luck of the first lane offered), and the run ends by its stop trigger; the ACC along its start
lane (``--ego-driver external`` in the survey) does not get there by choice.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from scenariogeneration import xodr, xosc
from typer.testing import CliRunner

from helpers.scenarios import car
from vcosim.app import app
from vcosim.openscenario.ego_route import EGO_SPEED, ego_route
from vcosim.openscenario.reader import read_scenario
from vcosim.openscenario.survey import ENDED, STILL_RUNNING, survey

ROAD = "fork.xodr"
BRANCHES = {2: (129.3, 37.2), 3: (127.2, -39.3)}
"""Each branch road's id and a point on its right-hand lane, ~40 m past the junction."""


def write_fork(folder: Path) -> None:
    """Road 1 runs east to x = 80 m; a junction forks it: road 2 north-east, road 3 south-east."""
    roads = [xodr.create_road(xodr.Line(80), id=k, left_lanes=1, right_lanes=1) for k in (1, 2, 3)]
    for road in roads:
        road.add_elevation(0, 0, 0, 0, 0)
    junction = xodr.CommonJunctionCreator(100, "fork", startnum=100)
    junction.add_incoming_road_cartesian_geometry(roads[0], 0, 0, 0, "successor")
    junction.add_incoming_road_cartesian_geometry(roads[1], 20, 10, -3 * math.pi / 4, "predecessor")
    junction.add_incoming_road_cartesian_geometry(roads[2], 20, -10, 3 * math.pi / 4, "predecessor")
    junction.add_connection(1, 2)
    junction.add_connection(1, 3)
    odr = xodr.OpenDrive("fork")
    for road in roads:
        odr.add_road(road)
    odr.add_junction_creator(junction)
    odr.adjust_roads_and_lanes()
    odr.write_xml(str(folder / ROAD))


def write_scenario(folder: Path, branch: int) -> Path:
    """The ego stands on road 1; the story ends when it reaches the place on ``branch``."""
    entities = xosc.Entities()
    entities.add_scenario_object(
        "Ego", car(), controller=xosc.Controller("external", xosc.Properties())
    )
    init = xosc.Init()
    init.add_init_action("Ego", xosc.TeleportAction(xosc.LanePosition(10, 0, -1, 1)))
    x, y = BRANCHES[branch]
    there = xosc.EntityTrigger(
        "there", 0, xosc.ConditionEdge.rising,
        xosc.ReachPositionCondition(xosc.WorldPosition(x, y), 4.0), "Ego", triggeringpoint="stop",
    )  # fmt: skip
    board = xosc.StoryBoard(init, there)
    path = folder / f"reach_{branch}.xosc"
    xosc.Scenario(
        f"reach {branch}", "vcosim tests", xosc.ParameterDeclarations(), entities, board,
        xosc.RoadNetwork(ROAD), xosc.Catalog(), osc_minor_version=1,
    ).write_xml(str(path))  # fmt: skip
    return path


@pytest.fixture
def forks(tmp_path: Path) -> Path:
    """A folder with the fork and a scenario for each branch."""
    write_fork(tmp_path)
    for branch in BRANCHES:
        write_scenario(tmp_path, branch)
    return tmp_path


def test_the_route_goes_through_the_junction_to_the_place(forks: Path) -> None:
    for branch, (x, y) in BRANCHES.items():
        line, source = ego_route(read_scenario(forks / f"reach_{branch}.xosc"), "Ego")
        assert source == "the places its storyboard waits for it at"
        gaps = [math.hypot(px - x, py - y) for px, py in line]
        assert min(gaps) < 2.0, branch  # it passes the place, on that branch
        assert 5.0 < math.hypot(*(line[-1] - (x, y))) < 15.0  # and ends 10 m past it


def test_the_story_ends_when_the_route_driver_gets_the_ego_there(forks: Path) -> None:
    report = survey([forks], run=True, limit=60.0, workers=1, ego_driver="route")
    runs = {Path(f.path).name: f for f in report.files}
    assert set(runs) == {"reach_2.xosc", "reach_3.xosc"}
    for name, f in runs.items():
        assert f.run == ENDED, (name, f.ended_by)
        assert f.ended_by.startswith("the stop trigger"), f.ended_by
        # ~ 130 m from standing at 30 km/h: it drove there, it was not put there
        assert 130 / EGO_SPEED < f.simulated < 60.0, f.simulated


def test_the_acc_along_its_lane_does_not_choose_the_branch(forks: Path) -> None:
    report = survey([forks], run=True, limit=40.0, workers=1, ego_driver="external")
    outcomes = sorted(f.run for f in report.files)
    assert STILL_RUNNING in outcomes  # at most one branch is the lane's own way on


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


def error_line(output: str) -> str:
    assert "Traceback" not in output, output
    errors = [line for line in output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, output
    return errors[0]


def test_a_bad_ego_driver_is_one_line_and_exit_2(forks: Path) -> None:
    code, output = run("sim", "--scenario", str(forks / "reach_2.xosc"), "--ego-driver", "bot")
    assert code == 2
    assert "--ego-driver" in error_line(output) and "'bot'" in output
    code, output = run("scenario", "survey", str(forks), "--ego-driver", "ACC")
    assert code == 2
    assert "--ego-driver" in error_line(output)


def test_the_route_driver_needs_a_scenario(forks: Path) -> None:
    code, output = run("sim", "--no-coupling", "--ego-driver", "route", "--duration", "1")
    assert code == 2
    assert "give --scenario" in error_line(output)


def test_a_scenario_without_an_external_ego_is_refused_for_the_route_driver(
    tmp_path: Path,
) -> None:
    lead = Path(__file__).parents[2] / "examples" / "scenarios" / "lead_brake.xosc"
    text = lead.read_text().replace('name="external"', 'name="storyboard"')
    (tmp_path / "own.xosc").write_text(text)
    (tmp_path / "straight.xodr").write_text((lead.parent / "straight.xodr").read_text())
    code, output = run(
        "sim", "--scenario", str(tmp_path / "own.xosc"), "--ego-driver", "route",
        "--pacing", "fast", "--duration", "1",
    )  # fmt: skip
    assert code == 2, output
    assert "Traceback" not in output
    assert "no entity is driven from outside" in output


def test_sim_drives_the_ego_there_with_the_route_driver(forks: Path) -> None:
    out = forks / "summary.json"
    code, output = run(
        "sim", "--scenario", str(forks / "reach_3.xosc"), "--ego-driver", "route",
        "--no-coupling", "--pacing", "fast", "--duration", "60", "--json-out", str(out),
    )  # fmt: skip
    assert code == 0, output
    assert "the stop trigger" in out.read_text()
