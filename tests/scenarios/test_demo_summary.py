"""The demo's pieces that need no run: the target profile and its per-step figures."""

from __future__ import annotations

import numpy as np
import pytest

from vcosim.scenarios.demo import SpeedProfile, TargetStep
from vcosim.scenarios.demo.coupled import target_steps
from vcosim.vehicle import SIGNAL_NAMES


def rows_of(t: np.ndarray, v: np.ndarray) -> np.ndarray:
    rows = np.zeros((t.size, len(SIGNAL_NAMES)))
    rows[:, SIGNAL_NAMES.index("time")] = t
    rows[:, SIGNAL_NAMES.index("groundspeed")] = v
    return rows


def test_profile_steps_at_its_times():
    profile = SpeedProfile()
    assert profile(0.0) == 15.0 and profile(14.99) == 15.0 and profile(15.0) == 25.0
    assert profile.at(np.array([0.0, 14.99, 15.0, 30.0])).tolist() == [15.0, 15.0, 25.0, 25.0]


def test_each_step_settles_by_its_own_band_and_end():
    t = np.arange(0.0, 30.005, 0.01)
    v = np.where(t < 15.0, 15.0 * (1 - np.exp(-t)), 25.0 - 10.0 * np.exp(-(t - 15.0)))
    first, second = target_steps(rows_of(t, v), SpeedProfile())
    # inside ±0.5 m/s from ln(15 / 0.5) = 3.401 s: the first 10 ms sample after that
    assert first == TargetStep(0.0, 15.0, 15.0, pytest.approx(15.0, abs=1e-3), 3.41)
    assert second.from_s == 15.0 and second.until_s == 30.0 and second.target_m_s == 25.0
    assert second.settling_time_s == pytest.approx(np.log(10.0 / 0.5), abs=0.01)


def test_a_step_not_settled_and_a_step_after_the_end():
    t = np.arange(0.0, 20.005, 0.01)
    steps = target_steps(
        rows_of(t, np.full_like(t, 15.0)), SpeedProfile(((0, 15), (15, 25), (25, 5)))
    )
    assert [s.settling_time_s for s in steps] == [0.0, None]  # 25 m/s never reached; 25 s never
