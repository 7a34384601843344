"""Inputs through the Python API: non-finite values refused, ranges clamped, ground in reach."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vcosim.errors import UnknownNameError, VcosimError
from vcosim.vehicle import Terrain, Vehicle, VehicleBatch
from vcosim.vehicle import layout as L
from vcosim.vehicle.vehicle import GROUND_REACH, InputError


@pytest.mark.parametrize(
    "inputs,named",
    [
        ({"steering": math.nan}, "steering"),
        ({"throttle": 0.5, "brake": math.inf}, "brake"),
        ({"propulsion_torque": [0, 0, -math.inf, 0]}, "propulsion_torque"),
        ({"ground_height": [0, math.nan, 0, 0]}, "ground_height"),
        ({"gear": "first"}, "gear"),
    ],
)
def test_a_bad_input_is_refused_by_name_and_changes_nothing(inputs, named):
    v = Vehicle()
    v.run(100, throttle=0.2)
    before = v.snapshot()
    for call in (v.step, v.set_inputs, lambda **i: v.run(10, **i)):
        with pytest.raises(InputError, match=f"vehicle input {named}") as err:
            call(**inputs)
        assert isinstance(err.value, ValueError) and isinstance(err.value, VcosimError)
        np.testing.assert_array_equal(v.state, before.state)
        np.testing.assert_array_equal(v.input_array, before.inputs)
    v.run(100)  # and it drives on
    assert np.all(np.isfinite(v.outputs))


def test_a_batch_refuses_a_nan_for_one_vehicle_and_keeps_every_row():
    batch = VehicleBatch(3)
    rows = batch.input_rows.copy()
    with pytest.raises(InputError, match="throttle"):
        batch.run(10, throttle=[0.1, math.nan, 0.3])
    np.testing.assert_array_equal(batch.input_rows, rows)


def test_finite_values_out_of_range_are_clamped_as_on_the_wire():
    v = Vehicle()
    v.run(200, steering=7.0, throttle=-3.0, brake=1e300)
    s = v.signals()
    assert s["steering_input"] == 1.0 and s["throttle_input"] == 0.0 and s["brake_input"] == 1.0
    v.run(
        2000,
        drive_mode="torques",
        propulsion_torque=[0, 0, 1e300, 1e300],
        braking_torque=[-1e300, 0, 0, 0],
    )
    s = v.signals()
    assert s["wheelRL_propulsionTorque"] == 1.0e5  # the coupling faces' limit
    assert s["wheelFL_brakingTorque"] == 0.0
    assert np.all(np.isfinite(v.state))


def test_ground_far_above_the_vehicle_is_refused_with_the_reason():
    v = Vehicle()
    with pytest.raises(InputError, match=r"ground_height .* above the vehicle's centre"):
        v.step(ground_from_inputs=1, ground_height=[1e6] * 4)
    assert v.inputs["ground_from_inputs"] == 0.0
    v.step(ground_from_inputs=1, ground_height=[GROUND_REACH - 1.0] * 4)  # within reach


def test_a_ground_jump_given_on_the_wire_pushes_the_car_up_and_it_recovers():
    """Faces write the input array directly: the kernel bounds a buried wheel (bump stop)."""
    v = Vehicle()
    u = v.input_array
    u[L.U_GROUND_FROM_INPUTS] = 1.0
    u[L.U_GROUND_FRICTION : L.U_GROUND_FRICTION + 4] = 1.0
    u[L.U_GROUND_HEIGHT : L.U_GROUND_HEIGHT + 4] = 1.0e6
    v.run(2000)
    assert np.all(np.isfinite(v.state)) and v.signal("posZ") > 1.0
    u[L.U_GROUND_HEIGHT : L.U_GROUND_HEIGHT + 4] = 0.0
    v.run(40000)  # it falls back onto the ground and comes to rest
    assert np.all(np.isfinite(v.state))
    assert v.signal("altitude") == pytest.approx(Vehicle().signal("altitude"), abs=0.01)


def test_a_vehicle_on_ground_a_thousand_kilometres_up_drives_as_at_sea_level():
    height = np.full((3, 3), 1.0e6)
    plateau = Terrain(
        height=height,
        friction=np.ones_like(height),
        road=None,
        grid=np.array([-1000.0, -1000.0, 1000.0]),
    )
    up, down = Vehicle(terrain=plateau), Vehicle()
    for v in (up, down):
        v.run(4000, drive_mode="torques", propulsion_torque=[0, 0, 300, 300])
    assert up.signal("posZ") - 1.0e6 == pytest.approx(down.signal("posZ"), abs=1e-6)
    assert up.signal("posX") == pytest.approx(down.signal("posX"), abs=1e-6)


def test_a_non_finite_value_written_past_every_check_is_taken_as_released():
    """The faces and the FMU write the input array directly; the kernel is the last guard."""
    v = Vehicle()
    v.run(100)
    v.input_array[L.U_STEERING] = math.nan
    v.input_array[L.U_PROPULSION] = math.inf
    v.run(2000)
    assert v.input_array[L.U_STEERING] == 0.0 and v.input_array[L.U_PROPULSION] == 0.0
    assert np.all(np.isfinite(v.state)) and np.all(np.isfinite(v.outputs))


def test_places_so_far_away_that_rounding_eats_the_motion_are_refused():
    with pytest.raises(ValueError, match="lost to rounding"):
        Vehicle().teleport(1e300, 0.0)
    height = np.full((2, 2), 1e300)
    with pytest.raises(VcosimError, match="lost to rounding"):
        Terrain(height=height, friction=np.ones_like(height), road=None, grid=np.array([0, 0, 1.0]))
    v = Vehicle()
    v.teleport(1e6, -1e6)  # a thousand kilometres is fine
    v.run(2000, drive_mode="torques", propulsion_torque=[0, 0, 300, 300])
    assert v.signal("posX") > 1e6 + 0.1


# -- the fast path: scalar inputs given as plain numbers (one dict lookup and check each) ------
@pytest.mark.parametrize(
    "inputs,named",
    [
        ({"throttle": math.nan}, "throttle"),
        ({"throttle": 0.2, "steering": -math.inf}, "steering"),
        ({"brake": np.float64(math.nan)}, "brake"),
        ({"clutch": np.float32(math.inf)}, "clutch"),
        ({"gear": 10**400}, "gear"),  # beyond a float's range
        ({"throttle": np.longdouble("1e400")}, "throttle"),  # finite, but not as a float
    ],
)
def test_a_plain_number_that_is_not_finite_is_refused_by_name_and_changes_nothing(inputs, named):
    v = Vehicle()
    v.run(100, throttle=0.2)
    before = v.snapshot()
    for call in (v.step, v.set_inputs, lambda **i: v.run(10, **i)):
        with pytest.raises(InputError, match=f"vehicle input {named} = .*finite numbers"):
            call(**inputs)
        np.testing.assert_array_equal(v.state, before.state)
        np.testing.assert_array_equal(v.input_array, before.inputs)


@pytest.mark.parametrize("text", ["0.5", np.str_("0.5"), b"1", "first"])
def test_text_is_not_a_number_even_when_it_reads_as_one(text):
    v = Vehicle()
    before = v.input_array.copy()
    for inputs in ({"throttle": text}, {"steering": 0.1, "throttle": text}):
        with pytest.raises(InputError, match="vehicle input throttle = .* is not a number"):
            v.step(**inputs)
    with pytest.raises(InputError, match="propulsion_torque = .* is not a number"):
        v.step(propulsion_torque=[text] * 4)
    np.testing.assert_array_equal(v.input_array, before)


@pytest.mark.parametrize("value", [1j, np.complex128(0.5), np.datetime64("2020-01-01")])
def test_complex_numbers_and_dates_are_not_inputs(value):
    v = Vehicle()
    before = v.input_array.copy()
    with pytest.raises(InputError, match="vehicle input steering = .* is not a number"):
        v.step(steering=value)
    np.testing.assert_array_equal(v.input_array, before)


def test_the_first_bad_input_is_the_one_reported():
    """The fast path hands over to the general one at the first input it cannot take."""
    v = Vehicle()
    before = v.input_array.copy()
    with pytest.raises(InputError, match="vehicle input throttle"):
        v.step(throttle=math.nan, throttel=0.3)
    with pytest.raises(UnknownNameError, match="did you mean 'throttle'"):
        v.step(throttel=0.3, throttle=math.nan)
    with pytest.raises(UnknownNameError):
        v.step(steering=0.1, throttel=0.3)
    np.testing.assert_array_equal(v.input_array, before)


def test_bools_ints_and_numpy_scalars_are_written_as_the_general_path_writes_them():
    plain = {
        "throttle": np.float32(0.1),
        "brake": 0.25,
        "gear": np.int8(2),
        "highbeam": True,
        "signal_L": np.bool_(True),
        "ignition": np.uint64(2),
        "automatic": 1,
        "steering": np.float16(-0.5),
    }
    fast, general = Vehicle(), Vehicle()
    fast.step(**plain)
    general.step(**{name: np.asarray(value) for name, value in plain.items()})  # 0-d arrays
    np.testing.assert_array_equal(fast.input_array, general.input_array)
    np.testing.assert_array_equal(fast.state, general.state)
    assert fast.inputs["throttle"] == float(np.float32(0.1)) and fast.inputs["gear"] == 2.0
    assert fast.inputs["highbeam"] == fast.inputs["signal_L"] == 1.0


def test_scalars_reach_every_vehicle_of_a_batch_and_a_nan_still_changes_none():
    batch = VehicleBatch(2)
    batch.set_inputs(throttle=0.4, gear=np.int64(1))
    assert np.all(batch.input_rows[:, L.U_THROTTLE] == 0.4)
    assert np.all(batch.input_rows[:, L.U_GEAR] == 1.0)
    rows = batch.input_rows.copy()
    with pytest.raises(InputError, match="steering"):
        batch.set_inputs(throttle=0.1, steering=math.nan)
    np.testing.assert_array_equal(batch.input_rows, rows)


def test_a_clone_and_a_bound_vehicle_step_their_own_arrays():
    """One step runs on arguments gathered once: they must follow the vehicle's arrays."""
    original = Vehicle(engine_running=True)
    twin = original.clone()
    before = original.snapshot()
    twin.step(throttle=1.0)
    np.testing.assert_array_equal(original.state, before.state)
    np.testing.assert_array_equal(original.input_array, before.inputs)
    assert twin.step_index == original.step_index + 1
    rows = np.tile(original.state, (2, 1)), np.tile(original.input_array, (2, 1))
    outputs = np.tile(original.outputs, (2, 1))
    original.bind(rows[0][1], rows[1][1], outputs[1])
    original.step(throttle=0.5)
    assert rows[1][1, L.U_THROTTLE] == 0.5 and rows[0][1, L.X_STEP] == before.state[L.X_STEP] + 1
    assert rows[0][0, L.X_STEP] == before.state[L.X_STEP]  # the other row untouched
