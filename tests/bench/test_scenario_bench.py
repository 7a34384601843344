"""``vcosim bench scenario`` builds its scenario of every kind of entity and times it against
the same cars without the storyboard: the figures are there and consistent (not how fast)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from vcosim.app import app
from vcosim.bench.scenario import measure_scenario_bench, write_scenario
from vcosim.openscenario import read_xosc


def test_the_scenario_holds_every_kind_of_entity(tmp_path: Path) -> None:
    scenario = read_xosc(write_scenario(tmp_path, count=100))
    kinds = [(e.kind, e.category) for e in scenario.entities.values()]
    assert len(kinds) == 100 and scenario.external == ["Ego"]
    assert {("pedestrian", "pedestrian"), ("misc", "obstacle"), ("vehicle", "truck"),
            ("vehicle", "trailer")} <= set(kinds)  # fmt: skip
    assert scenario.entities["Truck"].trailer == "Trailer"


def test_the_bench_times_both_runs_and_says_their_ratio() -> None:
    bench = measure_scenario_bench(seconds=1.0, repeats=1, count=20)
    assert bench.entities == 20 and bench.kinematic == 9  # 6 walkers, 1 obstacle, truck, trailer
    assert bench.sim_seconds == 1.0 and bench.realtime_factor > 0
    ratio = bench.realtime_factor / bench.world_realtime_factor
    assert abs(bench.storyboard_vs_world - ratio) < 0.01
    assert bench.meets_target == (bench.realtime_factor >= bench.target) and bench.ratios() == {}


def test_the_command_prints_json() -> None:
    result = CliRunner().invoke(app, ["bench", "scenario", "--json", "--seconds", "0.5", "--quick"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output.strip().splitlines()[-1])
    assert report["entities"] == 100 and report["sim_seconds"] == 0.5
