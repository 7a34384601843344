"""The one metrics module: settling, step responses, acceleration times, distances."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from vcosim.scenarios.metrics import (
    KMH,
    column,
    distance,
    percentile,
    rounded,
    settling_time,
    step_response,
    time_to_speed,
)
from vcosim.vehicle import SIGNAL_NAMES

T = np.arange(0.0, 10.0, 0.01)


def test_settling_time_of_a_first_order_step():
    tau, target, band = 0.5, 10.0, 0.1
    y = target * (1 - np.exp(-T / tau))
    exact = -tau * math.log(band / target)  # where the error falls below the band
    assert settling_time(T, y, target, band) == pytest.approx(exact, abs=0.01)


def test_settling_time_counts_from_since_and_ignores_what_came_before():
    y = np.where(T < 5.0, 0.0, 1.0)  # a step of the target at 5 s, followed at once
    assert settling_time(T, y, 1.0, 0.1) == pytest.approx(5.0)
    assert settling_time(T, y, 1.0, 0.1, since=5.0) == 0.0
    assert settling_time(T, y, 1.0, 0.1, since=4.0) == pytest.approx(1.0)


def test_settling_time_is_none_when_outside_at_the_end():
    y = np.where(T < 9.99, 1.0, 2.0)
    assert settling_time(T, y, 1.0, 0.5) is None


def test_step_response_of_an_overshooting_signal():
    y = 5.0 + 3.0 * (1 - np.exp(-T) * np.cos(4 * T))  # step 5 -> 8, damped oscillation
    r = step_response(T, y, 8.0)
    assert r.step_size == 3.0 and r.band == pytest.approx(0.1)  # max(2 % of 3, 0.1)
    assert r.overshoot == pytest.approx(float(np.max(y) - 8.0))
    assert r.overshoot_pct == pytest.approx(100 * r.overshoot / 3.0)
    assert 0.0 < r.settling_time < 5.0
    assert abs(r.steady_state_error) < 1e-3 and r.final_value == pytest.approx(8.0, abs=1e-3)


def test_step_response_that_never_settles_and_a_zero_step():
    slow = step_response(T, 5.0 + 3.0 * (1 - np.exp(-T / 10)), 8.0)
    assert slow.settling_time == math.inf and slow.overshoot == 0.0
    flat = step_response(T, 8.0 + 0.5 * np.sin(T), 8.0)
    assert flat.overshoot == pytest.approx(0.5, abs=1e-3) and math.isnan(flat.overshoot_pct)


def test_step_response_keys_are_the_sweeps():
    d = step_response(T, np.ones_like(T), 2.0).to_dict()
    assert list(d) == [
        "settling_time",
        "overshoot",
        "overshoot_pct",
        "steady_state_error",
        "final_value",
        "target",
        "step_size",
        "band",
    ]
    assert all(isinstance(v, float) for v in d.values())
    json.dumps(d)


def test_time_to_speed_interpolates_the_crossing():
    v = np.clip(5.0 * (T - 1.0), 0.0, None)  # 5 m/s² from the pedal at 1 s
    pressed = T >= 1.0
    assert time_to_speed(T, v, pressed, 100 * KMH) == pytest.approx(100 * KMH / 5.0)
    assert time_to_speed(T, v, pressed, 100.0) is None  # never that fast
    assert time_to_speed(T, v, np.zeros_like(T, dtype=bool), 5.0) is None  # pedal never down


def test_distance_integrates_speed():
    assert distance(T, np.full_like(T, 3.0)) == pytest.approx(3.0 * T[-1])
    assert distance(T, T) == pytest.approx(T[-1] ** 2 / 2)


def test_percentile_rounded_and_column():
    assert percentile(np.array([]), 50) is None
    assert percentile(np.arange(101.0), 99) == pytest.approx(99.0)
    assert rounded(None, 2) is None and rounded(1.23456, 2) == 1.23
    rows = np.arange(2 * len(SIGNAL_NAMES), dtype=float).reshape(2, -1)
    i = SIGNAL_NAMES.index("groundspeed")
    assert column(rows, "groundspeed").tolist() == [i, len(SIGNAL_NAMES) + i]
