from __future__ import annotations

import pytest

from vcosim.errors import ConfigError, UnknownNameError, VcosimError
from vcosim.vehicle import Vehicle, VehicleParams


def write(tmp_path, text: str):
    path = tmp_path / "car.toml"
    path.write_text(text)
    return path


def test_defaults_are_the_nightrider_vehicle():
    p = VehicleParams()
    assert p.name == "nightrider"
    assert p.body.chassis_mass == 1350 and p.wheels.radius == 0.25
    assert VehicleParams.preset("nightrider") == p


def test_seed_preset_loads_and_differs():
    seed = VehicleParams.preset("nightrider-seed")
    assert seed.tyres.combined_slip is False
    assert seed.engine.friction_c0 == 233820 * 2
    Vehicle(seed).run(100)


def test_toml_overrides_keep_other_defaults(tmp_path):
    p = VehicleParams.from_toml(write(tmp_path, "[body]\nchassis_mass = 1500\n"))
    assert p.body.chassis_mass == 1500 and p.body.engine_mass == 250


def test_unknown_key_is_rejected_naming_it(tmp_path):
    with pytest.raises(ConfigError) as err:
        VehicleParams.from_toml(write(tmp_path, "[body]\nchasis_mass = 1500\n"))
    assert "body.chasis_mass: unknown key" in str(err.value)


def test_negative_mass_is_rejected_naming_the_key(tmp_path):
    with pytest.raises(ConfigError) as err:
        VehicleParams.from_toml(write(tmp_path, "[body]\nchassis_mass = -5\n"))
    assert "body.chassis_mass" in str(err.value)
    assert "greater than 0" in str(err.value)


def test_zero_wheel_radius_is_rejected_naming_the_key(tmp_path):
    with pytest.raises(ConfigError) as err:
        VehicleParams.from_toml(write(tmp_path, "[wheels]\nradius = 0\n"))
    assert "wheels.radius" in str(err.value)


def test_every_problem_is_listed_at_once(tmp_path):
    text = "[body]\nchassis_mass = -1\n[wheels]\nradius = 0\nwidth = 3\n"
    with pytest.raises(ConfigError) as err:
        VehicleParams.from_toml(write(tmp_path, text))
    assert len(err.value.problems) == 3
    assert str(tmp_path / "car.toml") in str(err.value)


def test_broken_toml_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="not valid TOML"):
        VehicleParams.from_toml(write(tmp_path, "[body\n"))


def test_unknown_preset_suggests_the_closest():
    with pytest.raises(ConfigError, match="did you mean 'nightrider'"):
        VehicleParams.preset("nightrder")


def test_unknown_input_name_suggests_the_closest():
    with pytest.raises(UnknownNameError, match="did you mean 'throttle'") as err:
        Vehicle().step(throtle=1.0)
    assert isinstance(err.value, VcosimError)


def test_torque_inputs_need_four_values():
    with pytest.raises(ConfigError, match="propulsion_torque: needs 4 values"):
        Vehicle().step(propulsion_torque=[1, 2])


def test_non_finite_and_absurd_values_are_refused_each_with_its_key(tmp_path):
    text = (
        "[body]\nchassis_mass = 1e308\n[suspension]\nspring = inf\n[tyres]\nlateral_E = nan\n"
        "[driveline]\ngear_ratios = [-3, 3, 2, nan, 1, 0.8]\n"
    )
    with pytest.raises(ConfigError) as err:
        VehicleParams.from_toml(write(tmp_path, text))
    problems = err.value.problems
    assert len(problems) == 4
    for key in ("body.chassis_mass", "suspension.spring", "tyres.lateral_E", "gear_ratios.3"):
        assert any(key in p for p in problems), f"{key} not named in {problems}"


def test_inconsistent_engine_and_gearbox_speeds_are_refused(tmp_path):
    text = "[engine]\nrev_limit_rpm = 700\n[driveline]\nauto_upshift_rpm = 2000\n"
    with pytest.raises(ConfigError) as err:
        VehicleParams.from_toml(write(tmp_path, text))
    text = str(err.value)
    assert "idle_speed_rpm < rev_limit_rpm" in text and "auto_upshift_rpm" in text


def test_every_preset_is_within_the_documented_ranges():
    for name in ("nightrider", "nightrider-seed", "sedan"):
        Vehicle(VehicleParams.preset(name)).run(10)


def test_parameters_the_fixed_step_cannot_follow_are_refused_before_the_start():
    unstable = VehicleParams().with_changes(
        **{
            "body.chassis_mass": 50.0,
            "body.engine_mass": 0.0,
            "suspension.damper": 1.0e6,
            "suspension.max_compression_speed": 0.1,
        }
    )
    with pytest.raises(ConfigError, match="does not stand on its wheels"):
        Vehicle(unstable)
