"""A sweep over a world: the ACC drives the ego through a cut-in; gap, collision and jerk."""

from __future__ import annotations

import math

import pytest

from vcosim.errors import ConfigError
from vcosim.sweep.config import load_sweep, parse
from vcosim.sweep.runner import run_scenario

GAP = "world.cutter.driver.lane_change.gap"
SPEED = "world.cutter.driver.speeds.0.1"


def test_the_cut_in_sweep_measures_gaps_collisions_and_jerk_and_repeats_exactly() -> None:
    sweep = load_sweep("examples/sweeps/cut-in.toml")
    assert len(sweep.runs) == 12 and sweep.runs[0] == {GAP: 5.0, SPEED: 10.0}
    safe, _ = run_scenario(sweep.scenario, {GAP: 30.0, SPEED: 20.0})
    assert safe.collision == 0.0
    assert safe.min_distance > 10.0 and 0.5 < safe.min_time_gap < 1.8
    assert 0.0 < safe.peak_jerk < math.inf
    # closing at 5 m/s from ~28 m, the ACC opens the gap: seconds to collision, never 0
    assert 1.0 < safe.min_time_to_collision < math.inf
    hit, _ = run_scenario(sweep.scenario, {GAP: 20.0, SPEED: 10.0})  # 15 m/s closing, 20 m
    assert hit.collision == 1.0 and hit.min_distance == 0.0 and hit.min_time_to_collision == 0.0
    again, _ = run_scenario(sweep.scenario, {GAP: 30.0, SPEED: 20.0})
    assert again.deterministic() == safe.deterministic()


def test_world_overrides_are_checked_with_the_world_file() -> None:
    with pytest.raises(ConfigError) as caught:
        parse(
            {
                "scenario": {"initial_speed": 5.0},
                "world": {"file": "examples/worlds/cut-in-slow.toml"},
                "controller": {"name": "acc"},
                "sweep": {
                    "parameters": {
                        "world.cutter.driver.speeds.3.1": 4.0,
                        "world.cutter.driver.gapp": 4.0,
                    }
                },
            }
        )
    text = str(caught.value)
    assert "world.cutter.driver.speeds.3: no item 3 (the list has 1)" in text
    assert "world: vehicles.1.driver.profile.gapp: unknown key" in text
    assert "scenario.initial_speed: a world's vehicles start as its file says" in text
    with pytest.raises(ConfigError, match="world.ego: there is no world.file"):
        parse({"world": {"ego": {"engine": False}}, "controller": {"name": "acc"}})
