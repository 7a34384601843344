"""An entity reversing along a trajectory ends it at the trajectory's start (esmini's
``traj_use_cases.xosc``: cars at -5 m/s placed halfway along a polyline; its Car2's vertices
face along it, so it moves back along it: esmini's user guide, "Trajectory moving and
driving direction", row 7; with no heading given it would run on to the end, row 4).

Before, only the far end ended a trajectory: a storyboard waiting for the event to end ran on.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from scenariogeneration import xosc

from helpers.scenarios import ROAD, car, step_to, write_road
from vcosim.openscenario.survey import ENDED, survey

LENGTH = 50.0  # m of the trajectory
SPEED = -5.0  # m/s: backwards


def write_scenario(folder: Path) -> Path:
    """A car reverses from halfway along a 50 m polyline; the story ends with that event."""
    write_road(folder)
    entities = xosc.Entities()
    entities.add_scenario_object("Car", car())
    init = xosc.Init()
    init.add_init_action("Car", xosc.TeleportAction(xosc.LanePosition(125, 0, -1, 1)))
    line = xosc.Polyline(
        [], [xosc.WorldPosition(100, -1.75, h=0), xosc.WorldPosition(100 + LENGTH, -1.75, h=0)]
    )
    trajectory = xosc.Trajectory("back", False)
    trajectory.add_shape(line)
    follow = xosc.FollowTrajectoryAction(
        trajectory, xosc.FollowingMode.position, initialDistanceOffset=LENGTH / 2
    )
    event = xosc.Event("reverse", xosc.Priority.override)
    event.add_action("speed", step_to(SPEED))
    event.add_action("follow", follow)
    event.add_trigger(
        xosc.ValueTrigger(
            "now", 0, xosc.ConditionEdge.none,
            xosc.SimulationTimeCondition(0, xosc.Rule.greaterOrEqual),
        )
    )  # fmt: skip
    maneuver = xosc.Maneuver("m")
    maneuver.add_event(event)
    done = xosc.ValueTrigger(
        "done", 0, xosc.ConditionEdge.none,
        xosc.StoryboardElementStateCondition(
            xosc.StoryboardElementType.event, "reverse", xosc.StoryboardElementState.endTransition
        ),
        "stop",
    )  # fmt: skip
    board = xosc.StoryBoard(init, done)
    board.add_maneuver(maneuver, "Car")
    path = folder / "reverse.xosc"
    xosc.Scenario(
        "reverse", "vcosim tests", xosc.ParameterDeclarations(), entities, board,
        xosc.RoadNetwork(ROAD), xosc.Catalog(), osc_minor_version=2,
    ).write_xml(str(path))  # fmt: skip
    return path


def test_a_reversing_entity_ends_its_trajectory_at_the_start(tmp_path: Path) -> None:
    write_scenario(tmp_path)
    (run,) = survey([tmp_path], run=True, limit=30.0, workers=1).files
    assert run.run == ENDED, run.ended_by
    assert run.ended_by.startswith("the stop trigger"), run.ended_by
    # 25 m back at 5 m/s: 5 s (and a look's period)
    assert run.simulated == pytest.approx(LENGTH / 2 / -SPEED, abs=0.3)
