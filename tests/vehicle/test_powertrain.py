"""Engine, starter, controllers and shifter: the 'what correct means' list of vehicle-model.md."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.driving import drive_off
from vcosim.vehicle import Vehicle


def test_starts_at_rest_engine_off_in_neutral_at_origin():
    v = Vehicle()
    s = v.signals()
    assert v.time == 0.0
    assert abs(s["posX"]) < 1e-9 and abs(s["posY"]) < 1e-9
    assert s["rpm"] == 0.0 and s["engine_running"] == 0.0
    assert s["gear"] == 0.0
    assert abs(s["yaw"]) < 1e-12
    assert s["groundspeed"] < 1e-9


def test_idle_for_60_s_at_standstill(idling):
    x0, y0 = idling.signal("posX"), idling.signal("posY")
    trace = idling.trace(60.0, every=200)
    rpm = trace["rpm"]
    assert np.all(np.abs(rpm[-100:] - 800) <= 50), f"idle rpm {rpm.min():.0f}..{rpm.max():.0f}"
    moved = np.hypot(trace["posX"] - x0, trace["posY"] - y0).max()
    assert moved < 0.01, f"moved {moved} m"
    assert abs(trace["lambda_sensed"][-1] - 1.0) < 0.02
    assert abs(trace["lambda"][-1] - 1.0) < 0.02


def test_lambda_held_near_one_at_steady_part_load(idling):
    drive_off(idling)
    idling.run_for(5.0, throttle=0.25)
    assert abs(idling.signal("lambda_sensed") - 1.0) < 0.02


def test_rev_limiter_holds_in_neutral_at_full_throttle(idling):
    trace = idling.trace(5.0, every=4, throttle=1.0)
    rpm = trace["rpm"]
    assert rpm.max() > 6900, "the engine should reach the limiter"
    assert rpm.max() < 7000 + 100, f"overshoot to {rpm.max():.0f} rpm"


def test_engine_stalls_below_200_rpm_and_restarts_with_the_starter(idling):
    # First gear, clutch let out at standstill with the brake held: the engine is dragged down.
    idling.run_for(1.0, clutch=1.0, gear=1, brake=1.0)
    trace = idling.trace(2.0, every=1, clutch=0.0)
    running, rpm = trace["engine_running"], trace["rpm"]
    assert running[-1] == 0.0 and rpm[-1] < 1.0
    stall = int(np.argmax(running == 0.0))
    # It stops firing in the first step that begins below 200 rpm.
    assert rpm[stall - 1] < 200.0 <= rpm[stall - 2]
    # Clutch in, neutral, key to crank: it runs again and idles.
    idling.run_for(1.0, clutch=1.0, gear=0)
    idling.run_for(1.0, ignition=3)
    idling.run_for(3.0, ignition=2)
    assert idling.signal("engine_running") == 1.0
    assert abs(idling.signal("rpm") - 800) < 50


def test_engine_keeps_running_at_ignition_2_and_stops_when_switched_off(idling):
    idling.run_for(2.0)
    assert idling.signal("engine_running") == 1.0
    idling.run_for(3.0, ignition=0)
    assert idling.signal("engine_running") == 0.0
    assert idling.signal("rpm") == 0.0


def test_a_full_shift_takes_0_8_s(idling):
    idling.run_for(0.5, clutch=1.0)
    trace = idling.trace(2.0, every=1, gear=1)
    shifting = trace["shift_in_progress"]
    steps = int(shifting.sum())
    assert abs(steps * Vehicle.dt - 0.8) <= Vehicle.dt
    assert trace["gear"][-1] == 1.0


def test_shift_goes_one_gear_at_a_time_and_ignores_out_of_range(idling):
    idling.run_for(0.5, clutch=1.0)
    trace = idling.trace(5.0, every=1, gear=3)
    gears = trace["gear"]
    assert sorted(set(gears.tolist())) == [0.0, 1.0, 2.0, 3.0]
    assert abs(trace["shift_in_progress"].sum() * Vehicle.dt - 3 * 0.8) <= 3 * Vehicle.dt
    idling.run_for(2.0, gear=9)  # clamped to the top gear, one at a time
    assert idling.signal("gear") in (4.0, 5.0)


def test_shifter_takes_over_throttle_and_clutch(idling):
    drive_off(idling)
    idling.run_for(2.0, throttle=0.5)
    trace = idling.trace(0.8, every=1, gear=2)
    assert trace["throttle"].min() == 0.0  # released while the clutch is open
    assert trace["clutch"].max() == 1.0  # fully disengaged at the gear change
    assert trace["throttle_input"].min() == 0.5  # the driver's pedal is untouched
    assert trace["gear"][-1] == 2.0


@pytest.mark.parametrize("gear", [1, -1])
def test_automatic_mode_pulls_away_on_throttle_alone(idling, gear):
    idling.run_for(2.0, automatic=1, gear=gear)
    idling.run_for(8.0, throttle=0.5)
    s = idling.signals()
    assert s["engine_running"] == 1.0
    assert np.sign(s["velX"]) == np.sign(gear) and abs(s["velX"]) > 5.0
    if gear == 1:
        assert s["gear"] >= 2.0  # it shifted up by itself


def test_fuel_is_consumed(idling):
    before = idling.signal("fuel")
    idling.run_for(10.0, throttle=0.5)
    assert 0.0 < idling.signal("fuel") < before


def automatic_full_throttle(preset: str, seconds: float) -> dict[str, np.ndarray]:
    v = Vehicle(preset, engine_running=True)
    v.run_for(1.0, automatic=1, gear=1)
    return v.trace(seconds, every=2, throttle=1.0)


def test_automatic_changes_up_through_1_2_3_without_touching_the_limiter():
    trace = automatic_full_throttle("sedan", 12.0)
    gears, rpm = trace["gear"], trace["rpm"]
    assert {1.0, 2.0, 3.0} <= set(gears.tolist())
    first_three = gears <= 3.0
    assert rpm[first_three].max() < 7000 - 500, f"up to {rpm[first_three].max():.0f} rpm"


def test_automatic_upshift_does_not_flare_the_engine():
    """On the nightrider too (whose first gear spins its wheels up to the limiter)."""
    trace = automatic_full_throttle("nightrider", 8.0)
    shifting, rpm, gear = trace["shift_in_progress"], trace["rpm"], trace["gear"]
    starts = np.flatnonzero(np.diff(shifting) > 0) + 1
    assert len(starts) >= 2
    for start in starts:
        end = start + int(np.argmax(shifting[start:] == 0))
        # in the torque phase the input still turns with the old gear (and the car): the
        # engine goes on rising with the car by a few rpm, it does not race away
        assert rpm[start:end].max() <= 1.01 * rpm[start], f"flared in the shift at {start}"
        assert gear[end] == gear[start - 1] + 1
        # quicker than the manual's seed timing (0.8 s): it ends when the on-coming element
        # grips, within driveline.auto_shift_time (0.4 s: a torque phase of 0.1 s, then
        # the inertia phase)
        assert 0.2 <= (end - start) * 2 * Vehicle.dt <= 0.4 + 4 * Vehicle.dt
