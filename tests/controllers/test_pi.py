"""The PI speed law both cruise examples use: its effort and its anti-windup."""

from __future__ import annotations

import pytest

from vcosim.controllers.pi import pi_step


def test_within_the_limit_the_integral_grows_by_the_error() -> None:
    effort, integral = pi_step(2.0, 1.0, kp=0.25, ki=0.08, limit=1.0, dt=0.01)
    assert effort == pytest.approx(0.25 * 2.0 + 0.08 * 1.0)
    assert integral == pytest.approx(1.0 + 2.0 * 0.01)


def test_saturated_the_integral_holds_unless_the_error_pulls_back() -> None:
    # effort 1.5 > limit 1, error still positive: winding up further is refused
    assert pi_step(2.0, 12.5, kp=0.5, ki=0.04, limit=1.0, dt=0.01) == pytest.approx((1.5, 12.5))
    # effort saturated high, but the error is now negative: the integral unwinds
    effort, integral = pi_step(-1.0, 50.0, kp=0.5, ki=0.04, limit=1.0, dt=0.01)
    assert effort == pytest.approx(1.5) and integral == pytest.approx(50.0 - 0.01)


def test_the_limit_is_the_actuators() -> None:
    # in N m (cruise-torque): 600 N m is the limit, not 1
    effort, integral = pi_step(2.0, 0.0, kp=150.0, ki=40.0, limit=600.0, dt=0.01)
    assert effort == 300.0 and integral == pytest.approx(0.02)
