"""The storyboard engine on one small scenario, in process: a lane offset, an event skipped
while another runs, a teleport behind a parameter condition, an act ended by its stop
trigger, and the storyboard's stop trigger ending the run."""

from __future__ import annotations

from pathlib import Path

import pytest
from scenariogeneration import xosc

from helpers.scenarios import at_time, car, event, step_to, write_road
from vcosim.openscenario.storyboard import ElementReport, StoryboardReport, scenario_run
from vcosim.scenarios import PacingSpec, RunSpec, build_simulation


def mixed() -> xosc.Scenario:
    params = xosc.ParameterDeclarations()
    params.add_parameter(xosc.Parameter("Jump", xosc.ParameterType.int, "3"))
    entities = xosc.Entities()
    entities.add_scenario_object(
        "Ego", car(), controller=xosc.Controller("external", xosc.Properties())
    )
    entities.add_scenario_object("Car", car())
    init = xosc.Init()
    init.add_init_action("Ego", xosc.TeleportAction(xosc.WorldPosition(50.0, -1.75, 0, 0)))
    init.add_init_action("Ego", step_to(15.0))
    init.add_init_action("Car", xosc.TeleportAction(xosc.RelativeObjectPosition("Ego", 10.0, -3.5)))
    init.add_init_action("Car", step_to(15.0))
    offset = xosc.AbsoluteLaneOffsetAction(
        0.5, xosc.DynamicsShapes.sinusoidal, 1.0, continuous=False
    )
    skipped = event(
        "skipped", step_to(10.0),
        xosc.ValueTrigger(
            "t1", 0, xosc.ConditionEdge.none,
            xosc.SimulationTimeCondition(1.0, xosc.Rule.greaterThan),
        ),
        xosc.Priority.skip,
    )  # fmt: skip
    jump = xosc.Trigger()
    group = xosc.ConditionGroup()
    group.add_condition(at_time("t3", 3.0))
    group.add_condition(
        xosc.ValueTrigger(
            "jump",
            0,
            xosc.ConditionEdge.none,
            xosc.ParameterCondition("Jump", 3, xosc.Rule.equalTo),
        )
    )
    jump.add_conditiongroup(group)
    teleport = event(
        "teleport", xosc.TeleportAction(xosc.RelativeLanePosition(-1, "Ego", 0, ds=50.0)), jump
    )
    never = event("never", step_to(0.0), at_time("t99", 99.0))
    maneuver = xosc.Maneuver("m")
    for e in (event("offset", offset, at_time("t05", 0.5)), skipped, teleport, never):
        maneuver.add_event(e)
    mg = xosc.ManeuverGroup("g")
    mg.add_actor("Car")
    mg.add_maneuver(maneuver)
    act = xosc.Act("act", at_time("go", 0.0), at_time("halt", 4.5, "stop"))
    act.add_maneuver_group(mg)
    story = xosc.Story("story")
    story.add_act(act)
    board = xosc.StoryBoard(init, at_time("end", 5.0, "stop"))
    board.add_story(story)
    return xosc.Scenario(
        "mixed", "vcosim tests", params, entities, board, xosc.RoadNetwork("straight.xodr"),
        xosc.Catalog(), osc_minor_version=2,
    )  # fmt: skip


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[StoryboardReport, dict]:
    folder = tmp_path_factory.mktemp("mixed")
    write_road(folder)
    path = folder / "mixed.xosc"
    mixed().write_xml(str(path))
    story, world = scenario_run(Path(path))
    sim = build_simulation(RunSpec(world=world, pacing=PacingSpec(mode="fast"), faces=[story]))
    seen: dict[float, tuple[float, float, float]] = {}

    def look(t: float) -> None:  # after each frame: the car's x, y and the ego's x every 0.1 s
        assert sim.world is not None
        if abs(t * 10 - round(t * 10)) < 1e-6:
            p = sim.world.poses()
            seen[round(t, 1)] = (float(p["x"][1]), float(p["y"][1]), float(p["x"][0]))

    report = sim.run(10.0, on_progress=look)
    board = report.faces["storyboard"]
    assert isinstance(board, StoryboardReport)
    return board, seen


def element(board: StoryboardReport, name: str, kind: str = "event") -> ElementReport:
    (found,) = (e for e in board.elements if e.name == name and e.kind == kind)
    return found


def test_the_stop_trigger_ends_the_run_and_the_act_was_stopped_before(
    run: tuple[StoryboardReport, dict],
) -> None:
    board, _ = run
    assert board.ended_by.startswith("the stop trigger ('end') at t = 5.0")
    act = element(board, "act", "act")
    assert act.state == "complete" and act.ended == [pytest.approx(4.5, abs=0.02)]
    assert element(board, "never").started == [] and element(board, "never").state == "complete"


def test_a_skip_event_waits_until_the_running_one_ended(run: tuple[StoryboardReport, dict]) -> None:
    board, seen = run
    offset, skipped = element(board, "offset"), element(board, "skipped")
    # sinusoidal over 0.5 m at 1 m/s2: pi * sqrt(0.5 / 2) = 1.571 s
    assert offset.ended[0] - offset.started[0] == pytest.approx(1.571, abs=0.02)
    assert skipped.started[0] == pytest.approx(offset.ended[0], abs=0.015)
    y = seen[2.8][1]
    assert y == pytest.approx(-5.25 + 0.5, abs=0.1)  # lane -2's centre, 0.5 m to the left


def test_the_teleport_puts_the_car_50_m_ahead_of_the_ego(
    run: tuple[StoryboardReport, dict],
) -> None:
    board, seen = run
    teleport = element(board, "teleport")
    assert teleport.started[0] == pytest.approx(3.0, abs=0.02)
    car_x, _, ego_x = seen[3.1]
    assert car_x - ego_x == pytest.approx(50.0, abs=2.0)
