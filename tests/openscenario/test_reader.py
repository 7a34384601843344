"""Reading .xosc files: the subset taken apart, parameters resolved, and everything outside it
refused before anything starts, each problem with its line and element (exit 2)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers.scenarios import cut_in, lead_brake, stop_and_go, write_road
from vcosim.app import app
from vcosim.errors import ConfigError
from vcosim.openscenario import model as m
from vcosim.openscenario import read_xosc
from vcosim.openscenario.place import shift_lane
from vcosim.openscenario.world import scenario_world, start_poses


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    here = tmp_path_factory.mktemp("xosc")
    write_road(here)
    cut_in().write_xml(str(here / "cut_in.xosc"))
    stop_and_go().write_xml(str(here / "stop_and_go.xosc"))
    lead_brake().write_xml(str(here / "lead_brake.xosc"))
    return here


def edited(folder: Path, name: str, old: str, new: str) -> Path:
    """A copy of scenario ``name`` with ``old`` replaced (once) by ``new``."""
    text = (folder / f"{name}.xosc").read_text()
    assert old in text
    path = folder / f"{name}-edited.xosc"
    path.write_text(text.replace(old, new, 1))
    return path


def line_of(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


def test_the_cut_in_reads_into_its_entities_init_and_storyboard(folder: Path) -> None:
    s = read_xosc(folder / "cut_in.xosc")
    assert s.version == (1, 2) and s.road == folder / "straight.xodr"
    assert s.external == ["Ego"] and s.entities["Cutter"].preset == "nightrider"
    assert s.entities["Cutter"].length == 4.6 and s.entities["Cutter"].width == 1.9
    assert s.init["Ego"] == m.InitState(m.LanePosition("1", -1, 50.0, 0.0), 25.0)
    assert s.init["Cutter"].position == m.RelativeLanePosition(
        "Ego", -1, 35.0, 0.0, along_lane=False
    )
    (event,) = s.stories[0].acts[0].groups[0].maneuvers[0].events
    (action,) = event.actions
    assert action.action == m.LaneChangeAction(m.Dynamics("sinusoidal", "time", 3.0), 0, "Ego")
    (condition,) = event.start.groups[0]  # type: ignore[union-attr]
    assert condition.edge == "rising" and condition.line > 0
    assert condition.test == m.EntityCondition(
        ("Cutter",), True, m.Distance(12.0, "lessThan", True, "longitudinal", entity="Ego")
    )
    assert s.stop is not None and len(s.stop.groups) == 2  # OR of two groups


def test_parameters_resolve_and_a_variation_overrides_them(folder: Path) -> None:
    assert read_xosc(folder / "cut_in.xosc").init["Ego"].speed == 25.0
    assert read_xosc(folder / "cut_in.xosc", {"EgoSpeed": 30}).init["Ego"].speed == 30.0
    with pytest.raises(ConfigError, match="not declared in the file: Nope"):
        read_xosc(folder / "cut_in.xosc", {"Nope": 1})


def test_init_places_entities_on_their_lanes_relative_to_each_other(folder: Path) -> None:
    s = read_xosc(folder / "cut_in.xosc")
    poses = start_poses(s)
    # Ego: lane -1 (centre t = -1.75); Cutter: one lane to its right, 35 m on
    assert poses["Ego"] == pytest.approx((50.0, -1.75, 0.0))
    assert poses["Cutter"] == pytest.approx((85.0, -5.25, 0.0))
    world = scenario_world(s)
    assert world.ego == "Ego" and world.terrain.road is not None
    cutter = world.vehicles[1]
    assert cutter.driver.kind == "profile" and world.paths["Cutter"].lanes == [("1", -2)]  # type: ignore[union-attr]
    assert world.sensor.lane_width == pytest.approx(3.5)


def test_lanes_to_the_left_are_counted_as_their_traffic_sees_them() -> None:
    assert shift_lane(-2, 1, forward=True) == -1
    assert shift_lane(-1, 1, forward=True) == 1  # across the centre line
    assert shift_lane(-1, -1, forward=True) == -2
    assert shift_lane(1, 1, forward=False) == -1  # a lane against s: its left is towards -t
    assert shift_lane(2, 0, forward=False) == 2


@pytest.mark.parametrize(
    ("old", "new", "needle", "says"),
    [
        ('<SpeedCondition value="0.1" rule="lessThan"/>',
         '<AngleCondition angle="0.1" angleTolerance="0.1" angleType="pitch"/>',
         "AngleCondition", "angleType='pitch': the storyboard sees headings only"),
        ('rule="lessThan"', 'rule="almost"', 'rule="almost"', "rule='almost' is not supported"),
        ('value="0.0"/>', 'value="$Missing"/>', "$Missing", "no parameter named 'Missing'"),
        ('revMinor="2"', 'revMinor="4"', "revMinor", "OpenSCENARIO 1.4"),
        ('<AbsoluteTargetSpeed value="0.0"/>', '<AbsoluteTargetSpeed value="fast"/>', '"fast"',
         "value='fast' is not a number"),
    ],
)  # fmt: skip
def test_what_is_outside_the_subset_is_refused_with_its_line(
    folder: Path, old: str, new: str, needle: str, says: str
) -> None:
    path = edited(folder, "lead_brake", old, new)
    with pytest.raises(ConfigError) as caught:
        read_xosc(path)
    line = line_of(path, needle)
    assert any(p.startswith(f"line {line}: ") and says in p for p in caught.value.problems), (
        caught.value.problems
    )


def test_a_condition_on_an_element_that_is_not_there_is_refused(folder: Path) -> None:
    path = edited(folder, "stop_and_go", 'Ref="stop_and_go"', 'Ref="stop_n_go"')
    with pytest.raises(ConfigError) as caught:
        read_xosc(path)
    line = line_of(path, '<Condition name="done"')
    assert caught.value.problems == [
        f"line {line}: <Condition> 'done': no maneuver named 'stop_n_go'"
    ]


def test_sim_refuses_an_unsupported_element_before_the_start_exit_2(folder: Path) -> None:
    path = edited(
        folder, "stop_and_go", "<LongitudinalAction>", "<LongitudinalAction><SpeedProfileAction/>"
    )
    result = CliRunner().invoke(app, ["sim", "--scenario", str(path), "--duration", "1"])
    assert result.exit_code == 2, result.output
    line = line_of(path, "SpeedProfileAction")
    assert f"line {line}" in result.output and "SpeedProfileAction" in result.output


def test_a_world_beside_a_scenario_is_a_usage_error(folder: Path) -> None:
    result = CliRunner().invoke(
        app,
        ["sim", "--scenario", str(folder / "cut_in.xosc"), "--vehicle", "sedan"],
    )
    assert result.exit_code == 2 and "--vehicle" in result.output


def test_times_and_distances_of_speed_changes() -> None:
    from vcosim.openscenario.actions import Ramp, speed_duration

    assert speed_duration(m.Dynamics("linear", "rate", 4.0), 20.0, 0.0) == 5.0
    # a rate is the shape's peak acceleration (esmini): 3 m/s² at the middle of a sinusoid
    sine = speed_duration(m.Dynamics("sinusoidal", "rate", 3.0), 20.0, 0.0)
    assert sine == pytest.approx(20.0 * math.pi / 2.0 / 3.0)
    assert Ramp(0.0, 20.0, 0.0, sine, "sinusoidal").at(sine / 2)[1] == pytest.approx(-3.0)
    assert speed_duration(m.Dynamics("cubic", "distance", 100.0), 20.0, 0.0) == 10.0
    assert speed_duration(m.Dynamics("step", "time", 3.0), 20.0, 0.0) == 0.0
    ramp = Ramp(1.0, 10.0, 20.0, 2.0, "sinusoidal")
    assert ramp.at(2.0) == pytest.approx((15.0, 10.0 * math.pi / 4.0))
    assert ramp.at(0.0) == (10.0, 0.0) and ramp.at(3.0) == (20.0, 0.0)
    assert Ramp(0.0, 0.0, 1.0, 2.0, "cubic").at(1.0) == pytest.approx((0.5, 0.75))


def broken(folder: Path, *edits: tuple[str, str]) -> Path:
    """A copy of the cut-in with each ``(old, new)`` edit made once, in its own place."""
    text = (folder / "cut_in.xosc").read_text()
    for old, new in edits:
        assert text.count(old) >= 1, old
        text = text.replace(old, new, 1)
    path = folder / "cut_in-broken.xosc"
    path.write_text(text)
    return path


def problems_of(path: Path) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        read_xosc(path)
    return caught.value.problems


def test_independent_problems_in_init_and_the_storyboard_are_each_listed_once(folder: Path):
    path = broken(
        folder,
        ('laneId="-1" s="50.0"', 'laneId="minus one" s="50.0"'),  # Ego's start, in Init
        ('dLane="-1"', 'dLane="one"'),  # the Cutter's start, in the same Init
        ('freespace="true" entityRef="Ego"', 'freespace="true" entityRef="Egoo"'),  # a trigger
    )
    assert problems_of(path) == [
        f"line {line_of(path, 'minus one')}: <LanePosition>: laneId='minus one' is not a number",
        f"line {line_of(path, 'dLane=')}: <RelativeLanePosition>: dLane='one' is not a number",
        f"line {line_of(path, 'Egoo')}: <RelativeDistanceCondition>: entityRef='Egoo': "
        "no entity of that name",
    ]


def test_a_refused_action_leaves_the_events_trigger_read_and_its_event_not_missing(folder: Path):
    path = broken(
        folder,
        (
            '<RelativeTargetLane value="0" entityRef="Ego"',
            '<RelativeTargetLane value="0" entityRef="Nobody"',
        ),  # fmt: skip
        ('freespace="true" entityRef="Ego"', 'freespace="true" entityRef="Egoo"'),
    )
    problems = problems_of(path)
    assert [p.split(":")[0] for p in problems] == [
        f"line {line_of(path, 'Nobody')}",
        f"line {line_of(path, 'Egoo')}",
    ], problems  # and no "no event named" for the event whose action was refused


def test_a_refused_entity_is_not_said_missing_where_it_is_named_again(folder: Path):
    path = broken(
        folder,
        ('vehicleCategory="car"', 'vehicleCategory="spaceship"'),  # Ego's, the first vehicle
        ('freespace="true" entityRef="Ego"', 'freespace="true" entityRef="Egoo"'),
    )
    problems = problems_of(path)
    assert len(problems) == 2, problems
    assert problems[0].startswith(f"line {line_of(path, 'spaceship')}: <Vehicle>: ")
    assert problems[1].startswith(f"line {line_of(path, 'Egoo')}: ")
    assert not any("'Ego'" in p for p in problems)  # Ego exists: only its vehicle is wrong


def test_carla_s_simulation_time_zero_beside_other_conditions_reads_once_they_hold(
    tmp_path: Path,
) -> None:
    examples = Path(__file__).parents[2] / "examples" / "scenarios"
    text = (examples / "cut_in.xosc").read_text()
    at_zero = """<Condition name="now" delay="0" conditionEdge="rising"><ByValueCondition>
        <SimulationTimeCondition value="0" rule="equalTo"/></ByValueCondition></Condition>"""
    close = text.index('<Condition name="close"')
    end = text.index("</Condition>", close) + len("</Condition>")
    text = text[:end] + at_zero + text[end:]  # "close and t == 0", as CARLA writes it
    text = text.replace('value="0.0" rule="greaterThan"', 'value="0" rule="equalTo"', 1)
    (tmp_path / "carla.xosc").write_text(text)
    (tmp_path / "straight.xodr").write_text((examples / "straight.xodr").read_text())
    s = read_xosc(tmp_path / "carla.xosc")
    act = s.stories[0].acts[0]
    (event,) = act.groups[0].maneuvers[0].events
    assert event.start is not None
    ((close_only,),) = event.start.groups  # the time condition dropped: once "close" holds
    assert close_only.name == "close"
    assert act.start is not None
    ((alone,),) = act.start.groups  # alone it is kept: true at t = 0 only
    assert alone.test == m.SimulationTime(0.0, "equalTo")


@pytest.mark.parametrize("description", ["CARLA:cut_in", "cut_in"])
def test_a_carla_file_s_world_positions_are_in_carla_s_mirrored_frame(
    tmp_path: Path, description: str
) -> None:
    examples = Path(__file__).parents[2] / "examples" / "scenarios"
    text = (examples / "cut_in.xosc").read_text()
    text = text.replace('description="cut_in"', f'description="{description}"', 1)
    text = text.replace(
        '<LanePosition roadId="1" laneId="-1" s="50.0" offset="0.0"/>',
        '<WorldPosition x="50" y="1.75" h="0.1"/>',
        1,
    )
    (tmp_path / "carla.xosc").write_text(text)
    (tmp_path / "straight.xodr").write_text((examples / "straight.xodr").read_text())
    s = read_xosc(tmp_path / "carla.xosc")
    mirror = -1.0 if description.startswith("CARLA:") else 1.0  # scenario_runner's y = -y
    assert s.init["Ego"].position == m.WorldPosition(50.0, mirror * 1.75, mirror * 0.1)
