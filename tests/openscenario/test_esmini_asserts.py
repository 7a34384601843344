"""esmini's asserted positions read from its test files (small texts written here)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vcosim.openscenario.esmini_asserts import (
    CheckReport,
    FileCheck,
    Sample,
    SampleResult,
    check_file,
    csv_row,
    esmini_order,
    extract,
    smoke_samples,
    unit_samples,
)

SMOKE = """
import re
from sys import platform
ESMINI_PATH = '../'
COMMON_ESMINI_ARGS = '--headless --fixed_timestep 0.01 --record sim.dat '

class TestSuite(unittest.TestCase):

    def test_ltap_od(self):
        log, duration, cpu_time, _ = run_scenario(os.path.join(ESMINI_PATH, \\
            'resources/xosc/ltap-od.xosc'), COMMON_ESMINI_ARGS \\
            + '--disable_controllers')
        self.assertTrue(re.search('\\\\n.5.500.* Synchronize masterTimeToDest', log))
        csv = generate_csv()
        self.assertTrue(re.search('\\\\n6.500, 0, Ego, 28.542, -7.876, 0.000, 1.779, 0.000, \
0.000, 10.000, -0.006, 3.502', csv))
        self.assertFalse(re.search('\\\\n7.000, 0, Ego, 1.0, 2.0', csv))

    def test_swarm(self):
        run_scenario(os.path.join(ESMINI_PATH, 'resources/xosc/swarm.xosc'), \\
            COMMON_ESMINI_ARGS + ' --seed 1' + ' --fixed_timestep 0.1')
        csv = generate_csv()
        self.assertTrue(re.search('^40.00.*, 0, Ego, 33.31.*, 699.01.*, -0.95.*', csv, re.M))
        if platform == "win32":
            self.assertTrue(re.search('^5.000, 1, swarm_1\\\\+, 5.455, 200.013, -0.348', csv))

    def test_example(self):
        run_scenario(esmini_arguments='--osc ../resources/xosc/cut-in.xosc ' + \\
            COMMON_ESMINI_ARGS, application='code-examples-bin/action_injection')
        csv = generate_csv()
        self.assertTrue(re.search('^1.000, 0, Ego, 1.0, 2.0, 0.0', csv))
"""

UNIT = """
TEST(TrajectoryTest, Continuation)
{
    double          dt = 0.05;
    ScenarioEngine* se = new ScenarioEngine("../../../EnvironmentSimulator/Unittest/xosc/a.xosc");
    scenario_step(se, 0.0);
    for (int i = 0; i < static_cast<int>(1.0 / dt); i++)
    {
        scenario_step(se, dt);
    }
    ASSERT_NEAR(se->entities_.object_[0]->pos_.GetX(), 4.95, 1e-5);
    ASSERT_NEAR(se->entities_.object_[0]->pos_.GetY(), -1.535, 1e-5);
    Object* obj = se->entities_.object_[1];
    while (se->getSimulationTime() < 2.5 - SMALL_NUMBER)
    {
        scenario_step(se, dt);
    }
    EXPECT_NEAR(obj->pos_.GetX(), 20.0, 1e-3);
    EXPECT_NEAR(obj->GetSpeed(), 8.0, 1e-3);
    se->entities_.object_[1]->SetSpeed(3.0);
    scenario_step(se, dt);
    EXPECT_NEAR(obj->pos_.GetX(), 21.0, 1e-3);
    delete se;
}
"""


def test_a_smoke_test_csv_line_is_a_sample_with_its_scenario_and_arguments() -> None:
    found = smoke_samples(SMOKE)
    ltap = [s for s in found.samples if s.test == "smoke_test.py:test_ltap_od"]
    assert ltap == [
        Sample(
            file="resources/xosc/ltap-od.xosc",
            test="smoke_test.py:test_ltap_od",
            line=ltap[0].line,
            timestep=0.01,
            args="--fixed_timestep 0.01 --disable_controllers",
            time=6.5,
            entity="Ego",
            x=28.542,
            y=-7.876,
            heading=1.779,
            speed=10.0,
        )
    ]  # the log's pattern and the assertFalse are not samples


def test_the_last_fixed_timestep_wins_and_a_guard_is_kept() -> None:
    swarm = [s for s in smoke_samples(SMOKE).samples if s.file == "resources/xosc/swarm.xosc"]
    assert [(s.time, s.entity, s.x, s.y, s.timestep) for s in swarm] == [
        (40.0, "Ego", 33.31, 699.01, 0.1),
        (5.0, "swarm_1+", 5.455, 200.013, 0.1),
    ]
    assert swarm[0].args == "--fixed_timestep 0.01 --seed 1 --fixed_timestep 0.1"
    assert swarm[1].test == 'smoke_test.py:test_swarm [platform == "win32"]'
    assert swarm[0].speed is None  # the line is cut before the speed


def test_a_code_example_run_is_left_out_with_why() -> None:
    found = smoke_samples(SMOKE)
    assert not [s for s in found.samples if "cut-in" in s.file]
    line = 1 + next(k for k, t in enumerate(SMOKE.splitlines()) if "^1.000, 0, Ego" in t)
    assert found.skipped == [
        f"smoke_test.py:test_example, line {line}: a code example drives the scenario"
    ]


def test_csv_row_reads_the_columns_of_dat2csv() -> None:
    assert csv_row("\\n4.100.*, 0, Ego, 115.042, 4.864, -3.006, 0.281, 0.032, 0.000, 16.000") == (
        4.1, "Ego", 115.042, 4.864, 0.281, 16.0,
    )  # fmt: skip
    assert csv_row("Loading .*cut-in.xosc") is None


def test_unit_test_positions_at_the_time_its_steps_reach() -> None:
    found = unit_samples(UNIT)
    got = [(s.file, round(s.time, 9), s.entity, s.x, s.y, s.speed) for s in found.samples]
    assert got == [
        ("EnvironmentSimulator/Unittest/xosc/a.xosc", 1.0, "#0", 4.95, -1.535, None),
        ("EnvironmentSimulator/Unittest/xosc/a.xosc", 2.5, "#1", 20.0, None, 8.0),
    ]
    assert found.samples[0].timestep == 0.05
    # after the test sets a speed itself, its positions are not esmini's scenario's
    assert found.skipped == [
        "ScenarioEngine_test.cpp:TrajectoryTest.Continuation, line 22: the time is not known "
        "for sure"
    ]


def test_a_folder_without_the_test_files_gives_nothing(tmp_path: Path) -> None:
    found = extract(tmp_path)
    assert found.samples == [] and found.skipped == []


def test_a_missing_scenario_is_reported_not_raised(tmp_path: Path) -> None:
    sample = smoke_samples(SMOKE).samples[0]
    result = check_file(tmp_path, sample.file, sample.timestep, sample.args, [sample])
    assert (result.outcome, result.reason, result.samples) == ("missing", "no such file", [])


@pytest.mark.parametrize("text", ["", "TEST(A, B)\n{\n}\n"])
def test_empty_texts_give_no_samples(text: str) -> None:
    assert unit_samples(text).samples == []


def test_esmini_numbers_its_objects_in_the_order_init_names_them(tmp_path: Path) -> None:
    xosc = tmp_path / "order.xosc"
    xosc.write_text(
        "<OpenSCENARIO><Entities/><Storyboard><Init><Actions>"
        '<Private entityRef="Lead"/><Private entityRef="Follower"/><Private entityRef="Lead"/>'
        "</Actions></Init></Storyboard></OpenSCENARIO>"
    )
    assert esmini_order(xosc, ["Follower", "Lead"]) == ["Lead", "Follower"]
    assert esmini_order(xosc, ["Follower", "Lead", "Lead_trailer"]) is None  # not named in Init


def test_totals_count_the_accepted_files_only() -> None:
    near = SampleResult("t", 1, 1.0, "Ego", 0.0, 0.0, 0.5, 0.0, 10.0, 0.5, 1.1, True)
    far = SampleResult("t", 2, 2.0, "Ego", 0.0, 0.0, 9.0, 0.0, 10.0, 9.0, 1.1, False)
    ghost = SampleResult("t", 3, 2.0, "Ego_ghost", 0.0, 0.0, note="esmini's ghost")
    report = CheckReport(
        [
            FileCheck("a.xosc", 0.01, "", "accepted", samples=[near, far, ghost]),
            FileCheck("b.xosc", 0.01, "", "refused", reason="line 3: <X> is not supported"),
        ]
    )
    assert report.totals() == (3, 2, 1, 9.0)
    assert report.files[0].compared == 2 and report.files[0].worst == 9.0


TELEPORT = """<?xml version="1.0"?>
<OpenSCENARIO>
  <FileHeader description="teleport at 0.1 s" author="vcosim tests" revMajor="1" revMinor="2"/>
  <RoadNetwork><LogicFile filepath="{road}"/></RoadNetwork>
  <Entities>
    <ScenarioObject name="Car">
      <Vehicle name="car" vehicleCategory="car">
        <BoundingBox><Center x="1.4" y="0" z="0.75"/>
          <Dimensions width="1.9" length="4.6" height="1.5"/></BoundingBox>
        <Performance maxSpeed="60" maxDeceleration="8" maxAcceleration="8"/>
        <Axles>
          <FrontAxle maxSteering="0.5" wheelDiameter="0.65" trackWidth="1.6" positionX="2.8"
            positionZ="0.33"/>
          <RearAxle maxSteering="0" wheelDiameter="0.65" trackWidth="1.6" positionX="0"
            positionZ="0.33"/>
        </Axles>
      </Vehicle>
    </ScenarioObject>
  </Entities>
  <Storyboard>
    <Init><Actions><Private entityRef="Car"><PrivateAction><TeleportAction><Position>
      <LanePosition roadId="1" laneId="-1" s="50" offset="0"/>
    </Position></TeleportAction></PrivateAction></Private></Actions></Init>
    <Story name="s"><Act name="a"><ManeuverGroup name="g" maximumExecutionCount="1">
      <Actors selectTriggeringEntities="false"><EntityRef entityRef="Car"/></Actors>
      <Maneuver name="m"><Event name="jump" priority="override">
        <Action name="to 80"><PrivateAction><TeleportAction><Position>
          <LanePosition roadId="1" laneId="-1" s="80" offset="0"/>
        </Position></TeleportAction></PrivateAction></Action>
        <StartTrigger><ConditionGroup><Condition name="t" delay="0" conditionEdge="none">
          <ByValueCondition><SimulationTimeCondition value="0.1" rule="greaterOrEqual"/>
          </ByValueCondition>
        </Condition></ConditionGroup></StartTrigger>
      </Event><Event name="back" priority="parallel">
        <Action name="to 50"><PrivateAction><TeleportAction><Position>
          <LanePosition roadId="1" laneId="-1" s="50" offset="0"/>
        </Position></TeleportAction></PrivateAction></Action>
        <StartTrigger><ConditionGroup><Condition name="t" delay="0" conditionEdge="none">
          <ByValueCondition><SimulationTimeCondition value="0.5" rule="greaterOrEqual"/>
          </ByValueCondition>
        </Condition></ConditionGroup></StartTrigger>
      </Event></Maneuver>
    </ManeuverGroup>
    <StartTrigger><ConditionGroup><Condition name="go" delay="0" conditionEdge="none">
      <ByValueCondition><SimulationTimeCondition value="0" rule="greaterOrEqual"/>
      </ByValueCondition>
    </Condition></ConditionGroup></StartTrigger></Act></Story>
    <StopTrigger/>
  </Storyboard>
</OpenSCENARIO>
"""


def test_the_probe_reads_a_time_as_esmini_logs_it_before_the_actions_it_triggers(
    tmp_path: Path,
) -> None:
    """esmini's row at 0.100 has a car teleported at SimulationTime 0.1 where it stood."""
    road = Path(__file__).parents[2] / "examples" / "scenarios" / "straight.xodr"
    (tmp_path / "teleport.xosc").write_text(TELEPORT.format(road=road))
    samples = [
        Sample("teleport.xosc", "t", 1, 0.01, "", time, "Car", None, None)
        for time in (0.0, 0.1, 0.11)
    ]
    result = check_file(tmp_path, "teleport.xosc", 0.01, "", samples)
    assert result.outcome == "accepted", result.reason
    x = [s.x for s in result.samples]
    assert all(value is not None for value in x)
    assert x[1] == pytest.approx(x[0], abs=0.01)  # at 0.1 s the teleport is not yet seen
    assert x[2] == pytest.approx(x[0] + 30.0, abs=0.05)  # one step later: 30 m on
