"""A world exported as OpenSCENARIO on an OpenDRIVE road runs again as it ran."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from vcosim.app.cli import app
from vcosim.controllers.acc import Acc
from vcosim.openscenario import model as m
from vcosim.openscenario import read_xosc
from vcosim.openscenario.export import export_world
from vcosim.openscenario.place import on_lane
from vcosim.openscenario.storyboard import StoryboardReport, scenario_run
from vcosim.openscenario.world import start_poses
from vcosim.roads import read_xodr
from vcosim.scenarios import PacingSpec, RunSpec, build_simulation
from vcosim.tight.inprocess import couple_in_process
from vcosim.world import WorldFile

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

WORLDS = Path(__file__).parents[2] / "examples" / "worlds"


def bend() -> WorldFile:
    """A bent road: an external car, and a car starting 30 m along it that slows and moves
    one lane left at 2 s."""
    lead = {
        "name": "lead",
        "start": {"s": 30.0, "speed": 14.0},
        "driver": {
            "kind": "profile", "path": "road", "speeds": [[0, 14], [1, 14], [3, 10]],
            "lane_change": {"offset": 3.5, "duration": 2.0, "at": 2.0},
        },
    }  # fmt: skip
    ego = {"name": "ego", "start": {"x": 5.0, "y": 0.0, "speed": 12.0}}
    data = {"paths": {"road": {"points": [[0, 0], [60, 0], [200, 25]]}}, "vehicles": [ego, lead]}
    return WorldFile.from_dict(data)


def cut_in() -> WorldFile:
    """examples/worlds/cut-in.toml on a road of 700 m, not 5 km (its surface is cheaper)."""
    data = tomllib.loads((WORLDS / "cut-in.toml").read_text())
    data["paths"]["road"]["points"] = [[-100, 0], [600, 0]]
    return WorldFile.from_dict(data)


def tracks(spec: RunSpec, seconds: float) -> np.ndarray:
    """Every vehicle's (x, y) after each frame."""
    sim = build_simulation(spec)
    rows: list[np.ndarray] = []

    def look(_: float) -> None:
        assert sim.world is not None
        p = sim.world.poses()
        rows.append(np.concatenate([p["x"], p["y"]]))

    sim.run(seconds, on_progress=look)
    return np.array(rows)


@pytest.mark.parametrize(("world", "seconds"), [(bend(), 6.0), (cut_in(), 10.0)])
def test_the_exported_scenario_runs_the_world_again(
    tmp_path: Path, world: WorldFile, seconds: float
) -> None:
    road = export_world(world, tmp_path / "out.xosc")
    assert road == tmp_path / "out.xodr" and read_xodr(road).road(1)
    face, again = scenario_run(tmp_path / "out.xosc")
    fast = PacingSpec(mode="fast")
    before = tracks(RunSpec(world=world, pacing=fast), seconds)
    after = tracks(RunSpec(world=again, pacing=fast, faces=[face]), seconds)
    n = len(world.vehicles)
    assert np.ptp(before[:, n:]) > 2.0  # somebody changed lanes (or followed the bend)
    np.testing.assert_allclose(after, before, atol=0.2)


def test_what_a_scenario_cannot_say_is_refused_exit_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["world", "export", str(WORLDS / "ring.toml"), str(tmp_path / "ring.xosc")]
    )
    assert result.exit_code == 2
    assert "paths.ring: a loop" in result.output and "an IDM driver" in result.output
    assert not (tmp_path / "ring.xosc").exists()


@pytest.mark.parametrize("name", ["cut-in", "follow", "two-cars"])  # every one that exports
def test_an_example_export_reads_back_and_ends_by_its_stop_trigger(
    tmp_path: Path, name: str
) -> None:
    world = WorldFile.load(WORLDS / f"{name}.toml")
    export_world(world, tmp_path / "out.xosc", duration=8.0)
    face, again = scenario_run(tmp_path / "out.xosc")
    assert [v.name for v in again.vehicles] == [v.name for v in world.all_vehicles()]
    sim = build_simulation(RunSpec(world=again, pacing=PacingSpec(mode="fast"), faces=[face]))
    couple_in_process(sim, Acc(speed=20.0))  # each has an external ego: its controller
    report = sim.run(20.0)  # longer: the stop trigger ends it
    board = report.faces["storyboard"]
    assert isinstance(board, StoryboardReport)
    assert board.ended_by == "the stop trigger ('end') at t = 8.00 s"
    assert report.sim_time == pytest.approx(8.0, abs=0.011)


def test_the_command_line_export_ends_at_its_duration_on_a_road_under_every_car(
    tmp_path: Path,
) -> None:
    out = tmp_path / "two-cars.xosc"
    world = str(WORLDS / "two-cars.toml")
    result = CliRunner().invoke(app, ["world", "export", world, str(out), "--duration", "5"])
    assert result.exit_code == 0, result.output
    scenario = read_xosc(out)
    ((end,),) = scenario.stop.groups if scenario.stop is not None else ((),)
    assert end.test == m.SimulationTime(5.0, "greaterOrEqual")
    network = read_xodr(out.with_suffix(".xodr"))  # a world without paths: one road
    lanes = {name: on_lane(network, pose, name)[2] for name, pose in start_poses(scenario).items()}
    assert lanes == {"ego": -3, "side": -1}  # y = 0 and 6: the rightmost lane, two to its left
