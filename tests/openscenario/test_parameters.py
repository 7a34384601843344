"""Parameter declarations: read in order with the values given from outside in their place,
names written with their ``$``, ``${...}`` in a scenario, and 1.2's value constraints checked
before anything runs (each refusal with its line)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from helpers.scenarios import cut_in, write_road
from vcosim.errors import ConfigError
from vcosim.openscenario import model as m
from vcosim.openscenario import read_xosc

DECLARED = """<ParameterDeclaration name="EgoSpeed" parameterType="double" value="25.0"/>
        <ParameterDeclaration name="OtherSpeed" parameterType="double" value="18.0"/>"""


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    here = tmp_path_factory.mktemp("parameters")
    write_road(here)
    cut_in().write_xml(str(here / "cut_in.xosc"))
    return here


def declaring(folder: Path, declarations: str, name: str = "declared") -> Path:
    """The cut-in with ``declarations`` in place of its two."""
    text = (folder / "cut_in.xosc").read_text()
    assert DECLARED in text
    path = folder / f"{name}.xosc"
    path.write_text(text.replace(DECLARED, declarations))
    return path


def line_of(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


def test_a_given_value_is_seen_by_the_declarations_after_it(folder: Path) -> None:
    path = declaring(
        folder,
        """<ParameterDeclaration name="EgoKph" parameterType="double" value="90"/>
        <ParameterDeclaration name="EgoSpeed" parameterType="double" value="${$EgoKph / 3.6}"/>
        <ParameterDeclaration name="OtherSpeed" parameterType="double"
          value="${$EgoSpeed - 7}"/>""",
    )
    s = read_xosc(path)
    assert s.init["Ego"].speed == pytest.approx(25.0)
    assert s.init["Cutter"].speed == pytest.approx(18.0)
    varied = read_xosc(path, {"EgoKph": 72})
    assert varied.init["Ego"].speed == pytest.approx(20.0)  # derived from the given value
    assert varied.init["Cutter"].speed == pytest.approx(13.0)
    assert varied.parameters["EgoSpeed"] == "20"


def test_a_name_declared_with_its_dollar_is_the_name_without_it(folder: Path) -> None:
    path = declaring(
        folder,
        """<ParameterDeclaration name="$EgoSpeed" parameterType="double" value="21"/>
        <ParameterDeclaration name="OtherSpeed" parameterType="double" value="${pi * 5}"/>""",
    )
    s = read_xosc(path)
    assert s.init["Ego"].speed == 21.0 and s.init["Cutter"].speed == pytest.approx(5 * math.pi)


def test_a_value_within_its_constraints_is_taken(folder: Path) -> None:
    path = declaring(
        folder,
        """<ParameterDeclaration name="EgoSpeed" parameterType="double" value="25.0">
          <ConstraintGroup>
            <ValueConstraint rule="greaterThan" value="0.0"/>
            <ValueConstraint rule="lessOrEqual" value="30.0"/>
          </ConstraintGroup>
          <ConstraintGroup>
            <ValueConstraint rule="equalTo" value="40"/>
          </ConstraintGroup>
        </ParameterDeclaration>
        <ParameterDeclaration name="OtherSpeed" parameterType="double" value="18.0"/>""",
        "constrained",
    )
    assert read_xosc(path).init["Ego"].speed == 25.0
    assert read_xosc(path, {"EgoSpeed": 40}).init["Ego"].speed == 40.0  # the other group
    line = line_of(path, 'name="EgoSpeed"')
    for outside in (0, 30.5, 39):
        with pytest.raises(ConfigError) as caught:
            read_xosc(path, {"EgoSpeed": outside})
        assert caught.value.problems == [
            f"line {line}: <ParameterDeclaration>: parameter 'EgoSpeed' = '{outside}' (given) is "
            "outside its constraints: (greaterThan 0.0 and lessOrEqual 30.0) or (equalTo 40)"
        ]


def test_a_declared_value_outside_its_constraints_is_refused_with_its_line(folder: Path) -> None:
    path = declaring(
        folder,
        """<ParameterDeclaration name="EgoSpeed" parameterType="double" value="70">
          <ConstraintGroup><ValueConstraint rule="lessOrEqual" value="60"/></ConstraintGroup>
        </ParameterDeclaration>
        <ParameterDeclaration name="Who" parameterType="string" value="Ego">
          <ConstraintGroup><ValueConstraint rule="notEqualTo" value="Ego"/></ConstraintGroup>
        </ParameterDeclaration>
        <ParameterDeclaration name="OtherSpeed" parameterType="double" value="18.0"/>""",
        "outside",
    )
    with pytest.raises(ConfigError) as caught:
        read_xosc(path)
    speed, who = line_of(path, 'name="EgoSpeed"'), line_of(path, 'name="Who"')
    assert caught.value.problems == [  # every problem at once
        f"line {speed}: <ParameterDeclaration>: parameter 'EgoSpeed' = '70' is outside its "
        "constraints: (lessOrEqual 60)",
        f"line {who}: <ParameterDeclaration>: parameter 'Who' = 'Ego' is outside its constraints: "
        "(notEqualTo Ego)",
    ]
    with pytest.raises(ConfigError) as caught:
        read_xosc(path, {"EgoSpeed": 50, "Who": "Ego"})
    assert caught.value.problems == [
        f"line {who}: <ParameterDeclaration>: parameter 'Who' = 'Ego' (given) is outside its "
        "constraints: (notEqualTo Ego)"
    ]
    assert read_xosc(path, {"EgoSpeed": 50, "Who": "Lead"}).init["Ego"].speed == 50.0


def test_a_parameter_condition_names_its_parameter_with_or_without_its_dollar(
    folder: Path,
) -> None:
    text = (folder / "cut_in.xosc").read_text()
    timed = '<SimulationTimeCondition value="40.0" rule="greaterThan"/>'
    assert timed in text
    for ref in ("EgoSpeed", "$EgoSpeed"):
        path = folder / "condition.xosc"
        condition = f'<ParameterCondition parameterRef="{ref}" value="30" rule="greaterThan"/>'
        path.write_text(text.replace(timed, condition))
        tests = [c.test for group in read_xosc(path).stop.groups for c in group]  # type: ignore[union-attr]
        (test,) = (t for t in tests if isinstance(t, m.ParameterCondition))
        assert (test.parameter, test.value, test.rule) == ("EgoSpeed", "30", "greaterThan")
        assert test.declared is not None  # the file declares it
    path.write_text(  # a parameter of no name: read, and never true (as esmini)
        text.replace(timed, '<ParameterCondition parameterRef="" value="" rule="lessThan"/>')
    )
    tests = [c.test for group in read_xosc(path).stop.groups for c in group]  # type: ignore[union-attr]
    assert m.ParameterCondition("", "", "lessThan", declared=None) in tests


def test_scenario_runners_criteria_are_conditions_that_never_hold(folder: Path) -> None:
    """CARLA's examples end their storyboard on ``criteria_...`` parameter conditions on ''."""
    text = (folder / "cut_in.xosc").read_text()
    late = """<Condition name="late" delay="0.0" conditionEdge="rising">
                    <ByValueCondition>
                        <SimulationTimeCondition value="40.0" rule="greaterThan"/>"""
    assert late in text
    path = folder / "criteria.xosc"
    path.write_text(
        text.replace(
            late,
            late.replace('"late"', '"criteria_CollisionTest"').replace(
                '<SimulationTimeCondition value="40.0" rule="greaterThan"/>',
                '<ParameterCondition parameterRef="" value="" rule="lessThan"/>',
            ),
        )
    )
    stop = read_xosc(path).stop
    assert stop is not None
    (criterion,) = [c for group in stop.groups for c in group if c.name.startswith("criteria_")]
    assert isinstance(criterion.test, m.SimulationTime) and criterion.test.value == math.inf
    path.write_text(path.read_text().replace("criteria_CollisionTest", "CollisionTest"))
    stop = read_xosc(path).stop  # not a criterion: a parameter of no name, never true
    assert stop is not None
    (named,) = [c for group in stop.groups for c in group if c.name == "CollisionTest"]
    assert named.test == m.ParameterCondition("", "", "lessThan", declared=None)


def test_a_story_and_a_maneuver_declare_parameters_known_within_them(folder: Path) -> None:
    text = (folder / "cut_in.xosc").read_text()
    story = '<Story name="story_act_maneuvuergroup_cut_in">'
    maneuver = '<Maneuver name="cut_in">'
    dynamics = 'dynamicsShape="sinusoidal" value="3.0"'
    assert story in text and maneuver in text and dynamics in text
    path = folder / "scoped.xosc"
    path.write_text(
        text.replace(
            story,
            story + '<ParameterDeclarations><ParameterDeclaration name="Took" '
            'parameterType="double" value="${$EgoSpeed / 5}"><ConstraintGroup>'
            '<ValueConstraint rule="lessThan" value="6"/></ConstraintGroup>'
            "</ParameterDeclaration></ParameterDeclarations>",
        )
        .replace(
            maneuver,
            maneuver + '<ParameterDeclarations><ParameterDeclaration name="Time" '
            'parameterType="double" value="${$Took - 1}"/></ParameterDeclarations>',
        )
        .replace(dynamics, 'dynamicsShape="sinusoidal" value="$Time"')
    )
    s = read_xosc(path)
    assert lane_change_time(s) == 4.0
    assert "Took" not in s.parameters and "Time" not in s.parameters  # not known outside
    assert lane_change_time(read_xosc(path, {"EgoSpeed": 20})) == 3.0
    with pytest.raises(ConfigError) as caught:
        read_xosc(path, {"EgoSpeed": 30})
    took = line_of(path, 'name="Took"')
    assert caught.value.problems == [
        f"line {took}: <ParameterDeclaration>: parameter 'Took' = '6' "
        "is outside its constraints: (lessThan 6)"
    ]


def lane_change_time(s: m.Scenario) -> float:
    """The duration of the cut-in's lane change."""
    (event,) = s.stories[0].acts[0].groups[0].maneuvers[0].events
    action = event.actions[0].action
    assert isinstance(action, m.LaneChangeAction)
    return action.dynamics.value
