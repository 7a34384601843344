"""The figure definitions on synthetic signals whose answers are known in closed form."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vcosim.datasheet.figures import (
    braking,
    coast_down,
    frequency_point,
    frequency_response,
    step_response,
)
from vcosim.datasheet.manoeuvres import SAMPLE, STEP_START, Trace, step_steer, swd_steer
from vcosim.datasheet.ranges import PASSENGER_CAR, Range


def _trace(t: np.ndarray, delta: np.ndarray, yaw_rate: np.ndarray) -> Trace:
    zeros = np.zeros_like(t)
    return Trace(t, delta, yaw_rate, yaw_rate * 20.0, zeros, zeros, zeros + 20, zeros, zeros)


def test_step_response_of_a_first_order_lag() -> None:
    tau = 0.1
    t = np.arange(0, 4, SAMPLE)
    delta = step_steer(t, 0.02)
    t50 = STEP_START + 0.05
    r = np.where(t > t50, 0.2 * (1 - np.exp(-(t - t50) / tau)), 0.0)
    fig = step_response(_trace(t, delta, r))
    assert fig["yaw_rate_response_time_s"] == pytest.approx(tau * math.log(10), abs=0.01)
    assert fig["yaw_rate_overshoot_percent"] == pytest.approx(0.0, abs=0.5)


def test_frequency_point_reads_gain_and_phase() -> None:
    f = 1.0
    t = np.arange(0, 4, SAMPLE)
    delta = 0.01 * np.sin(2 * math.pi * f * t)
    r = 0.05 * np.sin(2 * math.pi * f * t - math.radians(30))
    gain, phase = frequency_point(_trace(t, delta, r), f)
    assert gain == pytest.approx(5.0, rel=1e-3)
    assert phase == pytest.approx(-30.0, abs=0.1)


def test_bandwidth_is_where_the_gain_falls_3_db() -> None:
    f = (0.5, 1.0, 2.0, 4.0)
    gains = [8.0, 8.0, 8.0 / math.sqrt(2), 4.0]
    fig = frequency_response(f, gains, [-10, -20, -40, -70], 8.0)
    assert fig["yaw_bandwidth_hz"] == pytest.approx(2.0, rel=0.01)
    assert fig["phase_at_1hz_deg"] == pytest.approx(-20.0)


def test_constant_deceleration_braking() -> None:
    t = np.arange(0, 4, 0.002)
    speed = np.maximum(100 / 3.6 - 9.0 * t, 0.0)
    fig = braking(t, speed)
    assert fig["stopping_distance_m"] == pytest.approx((100 / 3.6) ** 2 / 18.0, rel=1e-3)
    assert fig["mfdd_m_s2"] == pytest.approx(9.0, rel=1e-3)


def test_coast_down_recovers_the_road_load() -> None:
    mass, f0, f1, f2 = 1500.0, 120.0, 2.0, 0.45
    t = np.arange(0, 200, 0.05)
    v = np.empty_like(t)
    v[0] = 130 / 3.6
    for i in range(1, len(t)):
        v[i] = v[i - 1] - 0.05 * (f0 + f1 * v[i - 1] + f2 * v[i - 1] ** 2) / mass
    fig = coast_down(t, v, mass)
    assert fig["f0_n"] == pytest.approx(f0, rel=0.05)
    assert fig["f2_n_per_m2_s2"] == pytest.approx(f2, rel=0.05)


def test_sine_with_dwell_profile_follows_fmvss_126() -> None:
    t = np.arange(0, 4, SAMPLE)
    delta = swd_steer(t, 1.0)
    trough = STEP_START + 0.75 / 0.7
    assert delta[t < STEP_START].max() == 0.0
    assert delta.max() == pytest.approx(1.0, abs=1e-3) and delta.min() == pytest.approx(-1.0)
    dwell = (t > trough + 0.01) & (t < trough + 0.49)
    assert np.allclose(delta[dwell], -1.0)
    assert np.all(delta[t > STEP_START + 1 / 0.7 + 0.5 + SAMPLE] == 0.0)


def test_ranges_flag_outside_values_and_nan() -> None:
    rng = Range(1.0, 2.0, "s", "gillespie")
    assert rng.holds(1.5) and not rng.holds(2.5) and not rng.holds(math.nan)
    assert Range(None, 35.0, "%", "fmvss126").holds(-100.0)
    assert all(r.source for r in PASSENGER_CAR.values())


def test_a_run_that_ends_in_a_spin_is_flagged_not_measured() -> None:
    from vcosim.datasheet.figures import sine_with_dwell, swd_summary
    from vcosim.datasheet.manoeuvres import swd_completion

    t = np.arange(0, swd_completion() + 0.5, SAMPLE)  # ended before T0 + 1.75 s
    delta = swd_steer(t, 0.05)
    point = sine_with_dwell(_trace(t, delta, delta * 8.0))
    assert point["spun"] == 1.0 and math.isnan(point["yaw_rate_ratio_1s_percent"])
    t = np.arange(0, swd_completion() + 2.5, SAMPLE)
    delta = swd_steer(t, 0.05)
    calm = sine_with_dwell(_trace(t, delta, delta * 8.0))
    assert calm["spun"] == 0.0 and calm["yaw_rate_ratio_1_75s_percent"] == pytest.approx(0.0)
    summary = swd_summary({5.0: calm, 6.0: point})
    assert summary["spins_from_amplitude_a"] == 6.0
    assert summary["max_yaw_rate_ratio_1s_percent"] == pytest.approx(0.0, abs=1e-9)
