"""The sweep file: forms of parameters, expansion into runs, every problem at once."""

from __future__ import annotations

from pathlib import Path

import pytest

from vcosim.errors import ConfigError
from vcosim.sweep.config import load_sweep, parse, resolve

EXAMPLES = Path(__file__).parents[2] / "examples" / "sweeps"


def problems(data: dict) -> list[str]:
    with pytest.raises(ConfigError) as info:
        parse(data, "t.toml")
    assert info.value.source == "t.toml"
    return info.value.problems


def test_grid_varies_the_first_parameter_slowest(make_sweep):
    sweep = make_sweep({"controller.kp": [0.1, 0.2], "terrain.friction": [0.5, 0.7, 1.0]})
    assert len(sweep.runs) == 6
    assert sweep.runs[:4] == [
        {"controller.kp": 0.1, "terrain.friction": 0.5},
        {"controller.kp": 0.1, "terrain.friction": 0.7},
        {"controller.kp": 0.1, "terrain.friction": 1.0},
        {"controller.kp": 0.2, "terrain.friction": 0.5},
    ]
    assert sweep.parameters == ["controller.kp", "terrain.friction"]


def test_ranges_lists_and_fixed_values(make_sweep):
    sweep = make_sweep(
        {
            "controller.speed": {"from": 5, "to": 15, "num": 3},
            "coupling.ext_time": {"from": 0.001, "to": 0.1, "num": 3, "log": True},
            "controller.ki": 0.1,
        },
        mode="list",
    )
    assert [r["controller.speed"] for r in sweep.runs] == [5.0, 10.0, 15.0]
    assert [r["coupling.ext_time"] for r in sweep.runs] == pytest.approx([0.001, 0.01, 0.1])
    assert all(r["controller.ki"] == 0.1 for r in sweep.runs)


def test_random_draws_are_seeded_and_in_bounds(make_sweep):
    spec = {
        "vehicle.tyres.friction": {"low": 0.3, "high": 1.0},
        "coupling.ext_time": {"low": 0.001, "high": 0.02, "log": True},
        "vehicle.tyres.noise_seed": {"low": 0, "high": 1000, "integer": True},
        "controller.speed": [5.0, 10.0],
    }
    a = make_sweep(spec, mode="random", sweep={"samples": 40, "seed": 7})
    b = make_sweep(spec, mode="random", sweep={"samples": 40, "seed": 7})
    c = make_sweep(spec, mode="random", sweep={"samples": 40, "seed": 8})
    assert a.runs == b.runs != c.runs
    assert len(a.runs) == 40
    for run in a.runs:
        assert 0.3 <= run["vehicle.tyres.friction"] < 1.0
        assert 0.001 <= run["coupling.ext_time"] < 0.02
        assert isinstance(run["vehicle.tyres.noise_seed"], int)
        assert run["controller.speed"] in (5.0, 10.0)


def test_every_bad_parameter_path_is_reported_at_once():
    found = problems(
        {
            "sweep": {
                "parameters": {
                    "controller.kpp": [1, 2],
                    "vehicle.tyres.fiction": [0.5],
                    "vehicle.tyres": [1],
                    "coupling.ext_tim": [0.001],
                    "vehicles.body.wheelbase": [3.0],
                    "sweep.seed": [1],
                    "scenario.duration": {"low": 1, "high": 2},
                    "terrain.friction": {"from": 0.1, "to": 1.0},
                }
            }
        }
    )
    assert found == [
        "sweep.parameters.'controller.kpp': unknown controller parameter 'kpp'; did you mean "
        "'kp'? (valid: speed, kp, ki, brake_gain, integral)",
        "sweep.parameters.'vehicle.tyres.fiction': unknown parameter of vehicle.tyres "
        "'fiction'; did you mean 'friction'? (valid: lateral_B, lateral_C, lateral_E, "
        "lateral_B_rear, longitudinal_B, longitudinal_C, longitudinal_E, aligning_B, "
        "aligning_C, aligning_E, "
        "aligning_scale, force_feedback_scale, friction, friction_noise_variance, noise_seed, "
        "combined_slip, relaxation_length_long, relaxation_length_lat, low_speed_damping, "
        "low_speed)",
        "sweep.parameters.'vehicle.tyres': vehicle.tyres is a section; name one of its keys",
        "sweep.parameters.'coupling.ext_tim': unknown coupling parameter 'ext_tim'; did you "
        "mean 'ext_time'? (valid: ext_time, ping_time, window, send_skips, send_offset, "
        "timeout, memory, timing, compute_time, busy_time, transport)",
        "sweep.parameters.'vehicles.body.wheelbase': must start with one of scenario, "
        "vehicle, terrain, controller, coupling, metrics, world (got 'vehicles'; did you mean "
        "'vehicle'?)",
        "sweep.parameters.'sweep.seed': must start with one of scenario, vehicle, terrain, "
        "controller, coupling, metrics, world (got 'sweep')",
        "sweep.parameters.'terrain.friction': missing 'num'",
        "sweep.parameters.'scenario.duration': a {low, high} distribution needs mode = "
        "'random'; give values or {from, to, num}",
    ]


def test_file_level_problems_name_their_keys():
    found = problems(
        {
            "scenario": {"duration": -1, "speed": 3},
            "coupling": {"ext_time": "fast", "timing": "soon"},
            "sweep": {"mode": "grid", "samples": 3},
            "output": {"worst": 0},
            "extra": {},
        }
    )
    assert found == [
        "scenario.duration: Input should be greater than 0",
        "scenario.speed: unknown key",
        "coupling.ext_time: Input should be a valid number, unable to parse string as a number",
        "coupling.timing: Input should be 'lockstep' or 'realtime'",
        "output.worst: Input should be greater than or equal to 1",
        "extra: unknown key",
        "sweep.samples: only for mode = 'random' (mode is 'grid')",  # the next stage, too
    ]


def test_every_run_is_checked_before_anything_runs():
    found = problems(
        {
            "scenario": {"gearbox": "manual"},
            "sweep": {
                "parameters": {
                    "vehicle.tyres.friction": [1.0, -0.5],
                    "scenario.initial_speed": [0.0, 5.0],
                }
            },
            "output": {"signal_names": ["groundsped"]},
        }
    )
    run_problems = [
        "scenario.initial_speed: a speed > 0 needs gearbox = 'automatic' (runs 1, 3; first: "
        "vehicle.tyres.friction = 1.0, scenario.initial_speed = 5.0)",
        "vehicle.tyres.friction: Input should be greater than or equal to 0 (runs 2, 3; "
        "first: vehicle.tyres.friction = -0.5, scenario.initial_speed = 0.0)",
    ]
    assert found == [
        "output.signal_names: unknown signal 'groundsped'; did you mean 'groundspeed'? "
        "(valid: " + found[0].split("(valid: ")[1],
        *run_problems,  # a problem of the file does not hide those of the runs
    ]
    found = problems(
        {
            "scenario": {"gearbox": "manual"},
            "sweep": {
                "parameters": {
                    "vehicle.tyres.friction": [1.0, -0.5],
                    "scenario.initial_speed": [0.0, 5.0],
                }
            },
        }
    )
    assert found == run_problems


def test_scenario_rules_across_keys():
    found = problems(
        {
            "scenario": {
                "duration": 2.0,
                "manoeuvre": [{"time": 3.0, "steerin": 0.1}, {"time": 1.0, "brake": "hard"}],
            },
            "controller": {"name": "cruse"},
            "coupling": {"transport": "udp", "timing": "realtime"},
            "metrics": {"signal": "speedd", "target": "controller.speed"},
        }
    )
    assert found[0] == "scenario.manoeuvre.0.time: 3 s is not before the end of the run (2 s)"
    assert found[1].startswith(
        "scenario.manoeuvre.0.steerin: unknown vehicle input 'steerin'; did you mean 'steering'?"
    )
    assert found[2] == "scenario.manoeuvre.1.brake: must be a number"
    assert found[3] == (
        "coupling.transport: 'udp' needs timing = 'lockstep' (a real-time UDP "
        "run is not reproducible)"
    )
    assert found[4].startswith("metrics.signal: unknown signal 'speedd'; did you mean 'speed'?")
    assert found[5].startswith(
        "controller.name: unknown controller 'cruse'; did you mean 'cruise'?"
    )
    assert found[6].startswith("metrics.target: 'controller.speed' is not a number")
    assert len(found) == 7


def test_targets_default_to_the_controllers_setpoint(make_sweep):
    sweep = make_sweep({"controller.speed": [6.0]})
    run = resolve(sweep.scenario, sweep.runs[0])
    assert (run.metric_signal, run.target) == ("groundspeed", 6.0)
    heading = parse({"controller": {"name": "heading"}})
    run = resolve(heading.scenario, {})
    assert (run.metric_signal, run.target) == ("yaw_deg", 30.0)  # the dataclass default
    free = parse({"controller": {"name": "none"}})
    assert resolve(free.scenario, {}).target is None


def test_the_examples_are_valid():
    gains = load_sweep(EXAMPLES / "cruise-gains.toml")
    assert len(gains.runs) == 3 * 4 * 3 * 3
    assert gains.parameters == [
        "controller.kp",
        "controller.ki",
        "controller.speed",
        "terrain.friction",
    ]
    timing = load_sweep(EXAMPLES / "timing.toml")
    assert len(timing.runs) == 20
    assert timing.scenario.coupling.compute_time == "measured"


def test_unreadable_and_malformed_files(tmp_path):
    with pytest.raises(ConfigError, match="cannot read"):
        load_sweep(tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("[scenario\nname = 1")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_sweep(bad)


def test_relative_paths_are_relative_to_the_sweep_file(tmp_path):
    (tmp_path / "car.toml").write_text("[tyres]\nfriction = 0.7\n")
    path = tmp_path / "s.toml"
    path.write_text('[vehicle]\nbase = "car.toml"\n[terrain]\nheight_map = "none.png"\n')
    with pytest.raises(ConfigError) as info:
        load_sweep(path)
    assert info.value.problems == [f"terrain.height_map: no such file: {tmp_path}/none.png"]
    path.write_text('[vehicle]\nbase = "car.toml"\n')
    sweep = load_sweep(path)
    assert resolve(sweep.scenario, {}).vehicle.tyres.friction == 0.7


def test_every_stage_is_checked_when_the_file_has_problems():
    found = problems(
        {
            "scenario": {"duration": -1, "manoeuvre": [{"time": "soon"}]},
            "controller": {"name": "cruse"},
            "coupling": {"timing": "soon"},
            "sweep": {
                "samples": 4,
                "parameters": {"terrain.frictoin": [0.5], "vehicle.tyres.friction": [1.0, -1.0]},
            },
        }
    )
    assert found[:4] == [
        "scenario.duration: Input should be greater than 0",
        "scenario.manoeuvre.0.time: Input should be a valid number, unable to parse string "
        "as a number",
        "coupling.timing: Input should be 'lockstep' or 'realtime'",
        "sweep.parameters.'terrain.frictoin': unknown terrain parameter 'frictoin'; did you "
        "mean 'friction'? (valid: friction, height_map, road_map, friction_map, hill_height, "
        "size, road_friction, offroad_friction, road, road_cell)",
    ]
    assert found[4] == "sweep.samples: only for mode = 'random' (mode is 'grid')"
    assert found[5].startswith(  # every run, though the file had problems
        "controller.name: unknown controller 'cruse'; did you mean 'cruise'?"
    )
    assert found[5].endswith("(runs 0, 1; first: vehicle.tyres.friction = 1.0)")
    assert found[6] == (
        "vehicle.tyres.friction: Input should be greater than or equal to 0 (run 1; first: "
        "vehicle.tyres.friction = -1.0)"
    )
    assert len(found) == 7


def test_a_bad_mode_does_not_judge_the_parameters_by_the_default_one():
    found = problems(
        {
            "sweep": {
                "mode": "randm",
                "samples": 3,
                "parameters": {"terrain.friction": {"low": 0.2, "high": 1.0}},
            }
        }
    )
    assert found == ["sweep.mode: Input should be 'grid', 'list' or 'random'"]


def test_the_backend_section():
    sweep = parse({"backend": {"workers": 0}})
    assert sweep.backend.workers == 0 and not sweep.backend.uses_ray
    assert parse({"backend": {"ray_address": "10.0.0.1:6379"}}).backend.uses_ray
    assert problems({"backend": {"workers": -1, "cores": 2}}) == [
        "backend.workers: Input should be greater than or equal to 0",
        "backend.cores: unknown key",
    ]


def test_a_sweep_too_large_is_refused_before_any_run_is_built():
    data = {
        "scenario": {"name": "huge", "duration": 1.0},
        "controller": {"name": "cruise", "speed": 8.0},
        "sweep": {
            "parameters": {
                "controller.kp": {"from": 0.1, "to": 1.0, "num": 10_000},
                "controller.ki": {"from": 0.0, "to": 1.0, "num": 1_000},
            }
        },
    }
    found = problems(data)
    assert found == [
        "sweep: 10,000,000 runs, more than sweep.max_runs = 100,000 "
        "(fewer values, or raise max_runs (--max-runs) if the sweep really is that large)"
    ]
    data["sweep"]["parameters"]["controller.ki"] = {"from": 0.0, "to": 1.0, "num": 10**12}
    assert problems(data) == [
        "sweep.parameters.'controller.ki': 'num' must be a whole number from 1 to 100,000 "
        "(sweep.max_runs, or --max-runs, raises the bound)"
    ]
    data["sweep"] = {"mode": "random", "samples": 10**9, "parameters": {"controller.kp": [1.0]}}
    assert "sweep: 1,000,000,000 runs" in problems(data)[0]


def test_max_runs_can_be_raised_for_a_sweep_that_is_that_large(make_sweep):
    parameters = {"controller.kp": {"from": 0.1, "to": 1.0, "num": 30}}
    with pytest.raises(ConfigError, match="'num' must be a whole number from 1 to 20"):
        make_sweep(parameters, sweep={"max_runs": 20})
    parameters["controller.ki"] = {"from": 0.1, "to": 1.0, "num": 2}
    with pytest.raises(ConfigError, match="60 runs, more than sweep.max_runs = 30"):
        make_sweep(parameters, sweep={"max_runs": 30})
    del parameters["controller.ki"]
    assert len(make_sweep(parameters, sweep={"max_runs": 30}).runs) == 30
