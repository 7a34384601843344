"""A falsifying run of the cut-in search: its saved sweep file re-runs it bit for bit, and its
exported OpenSCENARIO file reads back and runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vcosim.openscenario import read_xosc
from vcosim.search.config import load_search
from vcosim.search.driver import SearchOutcome, _record, objective_of
from vcosim.search.output import write_outputs
from vcosim.sweep.config import load_sweep, parse
from vcosim.sweep.runner import run_scenario, safe_run

GAP = "world.cutter.driver.lane_change.gap"
SPEED = "world.cutter.driver.speeds.0.1"
DURATION = "world.cutter.driver.lane_change.duration"
CUT_IN = {GAP: 9.0, SPEED: 15.2, DURATION: 2.3}  # 9.8 m/s closing, 9 m: a collision


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> tuple[SearchOutcome, Path]:
    search = load_search("examples/search/cut-in.toml")
    result = safe_run(0, search.sweep.scenario, CUT_IN)
    run = _record(result, 0, objective_of(search))
    out = tmp_path_factory.mktemp("search")
    outcome = SearchOutcome(search, [run], ran=1, wall_time=1.0, backend="serial")
    write_outputs(outcome, out, worst=3)
    return outcome, out


def test_a_falsifying_run_is_written_with_its_files(written: tuple[SearchOutcome, Path]) -> None:
    outcome, out = written
    run = outcome.runs[0]
    assert run.falsifying and run.value is not None and run.value < 1.0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["first_falsifying"] == 1 and summary["worst_runs"][0]["params"] == CUT_IN
    assert summary["not_exported"] == {}
    for name in ("runs.csv", "progress.png", "region.png", "falsifying/run-0000.toml",
                 "falsifying/run-0000.xosc", "falsifying/run-0000.xodr"):  # fmt: skip
        assert (out / name).stat().st_size > 0, name


def test_its_sweep_file_runs_it_again_bit_for_bit(written: tuple[SearchOutcome, Path]) -> None:
    outcome, out = written
    again = load_sweep(out / "falsifying" / "run-0000.toml")
    assert again.runs == [CUT_IN]
    metrics, _ = run_scenario(again.scenario, again.runs[0])
    logged = outcome.runs[0].metrics
    assert json.dumps(metrics.deterministic()) == json.dumps(logged)  # every column, NaN too
    assert metrics.min_time_to_collision == outcome.runs[0].value


def test_its_openscenario_export_reads_back_and_runs(written: tuple[SearchOutcome, Path]) -> None:
    outcome, out = written
    xosc = out / "falsifying" / "run-0000.xosc"
    scenario = read_xosc(str(xosc))
    assert sorted(scenario.init) == ["cutter", "ego"] and scenario.external == ["ego"]
    sweep = parse(
        {
            "scenario": {"name": "exported", "duration": 10.0},
            "world": {"file": str(xosc)},
            "controller": {"name": "acc", "speed": 25.0, "time_gap": 1.8},
            "coupling": {"ext_time": 0.01, "timing": "lockstep"},
        }
    )
    metrics, _ = run_scenario(sweep.scenario, {})
    # the same cut-in: the exported cue is looked at every 10 ms (docs/scenarios.md), so it is
    # the world's run within that, and it falsifies the requirement too
    assert metrics.min_time_to_collision < 1.0
    assert metrics.collision == outcome.runs[0].metrics["collision"]
