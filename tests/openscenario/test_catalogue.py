"""The catalogue scenarios, generated with scenariogeneration, run against the ACC example.

Cut-in, lead-vehicle brake, overtaking and stop-and-go: each ``.xosc`` becomes a world whose
ego (controller ``external``) is coupled over UDP on loopback, in lock-step, to the ACC in a
process of its own (ephemeral ports); the storyboard drives the other car. The four runs are
shared by the tests (one module fixture, the four controllers started at once).
"""

from __future__ import annotations

from contextlib import ExitStack

import pytest

from helpers.scenarios import write_all
from vcosim.controllers.acc import Acc
from vcosim.openscenario.storyboard import StoryboardReport, scenario_run
from vcosim.scenarios import CouplingFaceSpec, PacingSpec, RunSpec, build_simulation
from vcosim.scenarios.harness import ControllerProcess
from vcosim.sim.simulation import RunReport

LONGEST = 40.0  # s: every scenario's stop trigger ends it well before
EXT_TIME = 0.02  # s between exchanges with the ACC (spin 0: four controllers wait their turn)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[RunReport, dict]]:
    """Each scenario's run report and the final speed of its vehicles."""
    files = write_all(tmp_path_factory.mktemp("scenarios"))
    out = {}
    with ExitStack() as stack:
        peers = {
            name: stack.enter_context(
                ControllerProcess(Acc(speed=25.0, time_gap=1.8), step=EXT_TIME, spin=0.0)
            )
            for name in files
        }
        for name, path in files.items():
            story, world = scenario_run(path)
            coupling = CouplingFaceSpec(
                ext_time=EXT_TIME, timeout=10.0, spin=0.0, listen_port=0,
                controller_port=peers[name].port(),
            )  # fmt: skip
            spec = RunSpec(world=world, pacing=PacingSpec(mode="lockstep"), faces=[story, coupling])
            sim = build_simulation(spec)
            report = sim.run(LONGEST)
            assert sim.world is not None
            speeds = {n: v.signal("groundspeed") for n, v in sim.world.vehicles.items()}
            out[name] = (report, speeds)
    return out


def storyboard(report: RunReport) -> StoryboardReport:
    board = report.faces["storyboard"]
    assert isinstance(board, StoryboardReport)
    return board


@pytest.mark.parametrize(
    ("name", "trigger"),
    [("cut_in", "'settled'"), ("lead_brake", "'standing'"), ("overtaking", "'reached'"),
     ("stop_and_go", "'done'")],
)  # fmt: skip
def test_each_scenario_ends_by_its_stop_trigger_without_a_collision(
    runs: dict[str, tuple[RunReport, dict]], name: str, trigger: str
) -> None:
    report, _ = runs[name]
    board = storyboard(report)
    assert board.ended_by.startswith(f"the stop trigger ({trigger})"), board.ended_by
    assert report.sim_time < LONGEST
    assert all(e.state == "complete" for e in board.elements), board.ran
    assert board.collisions == 0 and report.world is not None and not report.world.collisions
    coupling = report.faces["coupling:Ego"]
    assert coupling["timeouts"] == 0 and coupling["applied"] > 0.9 * coupling["sent"]
    assert board.ego_min_time_headway is not None and board.ego_min_time_headway > 0.0


def test_the_cut_in_shortens_the_time_headway_and_the_acc_opens_it_again(
    runs: dict[str, tuple[RunReport, dict]],
) -> None:
    report, speeds = runs["cut_in"]
    board = storyboard(report)
    assert board.ego_min_time_headway is not None and board.ego_min_time_headway < 1.0
    (cut,) = (e for e in board.elements if e.kind == "event")
    assert len(cut.started) == 1 and cut.ended[0] == pytest.approx(cut.started[0] + 3.0, abs=0.02)
    assert speeds["Ego"] < speeds["Cutter"] + 1.0  # it no longer closes in


def test_behind_a_braking_lead_the_ego_stops_and_the_time_to_collision_is_reported(
    runs: dict[str, tuple[RunReport, dict]],
) -> None:
    report, speeds = runs["lead_brake"]
    board = storyboard(report)
    assert speeds["Lead"] < 0.1 and speeds["Ego"] < 0.5
    assert board.ego_min_time_to_collision is not None and board.ego_min_time_to_collision < 10.0


def test_stop_and_go_runs_each_event_twice(runs: dict[str, tuple[RunReport, dict]]) -> None:
    board = storyboard(runs["stop_and_go"][0])
    events = {e.name: e for e in board.elements if e.kind == "event"}
    assert [len(events[n].started) for n in ("stop", "go")] == [2, 2]
    stop, go = events["stop"], events["go"]
    assert stop.started[0] < stop.ended[0] < go.started[0] < go.ended[0] < stop.started[1]


def test_the_overtaker_changes_lanes_once_8_m_ahead(
    runs: dict[str, tuple[RunReport, dict]],
) -> None:
    board = storyboard(runs["overtaking"][0])
    events = {e.name: e for e in board.elements if e.kind == "event"}
    assert events["change"].ended[0] <= events["settle"].started[0]
    assert events["settle"].state == "complete"
