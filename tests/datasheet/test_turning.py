"""The datasheet's turning circle: driven at full lock, against the steering geometry."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vcosim.datasheet import docs
from vcosim.datasheet.turning import circle_radius, kinematic_turning_circle, turning_circle
from vcosim.vehicle import VehicleParams


def test_the_circle_fit_finds_a_known_circle() -> None:
    angle = np.linspace(0.0, 2.0, 50)
    assert circle_radius(3.0 + 5.5 * np.cos(angle), -2.0 + 5.5 * np.sin(angle)) == pytest.approx(
        5.5, rel=1e-12
    )


def test_the_kinematic_circle_is_the_outer_front_wheels_about_the_rear_axle() -> None:
    params = VehicleParams.preset("sedan")  # L 2.8 m, track 1.55 m, 35 degrees
    centre = 2.8 / math.tan(math.radians(35.0))
    assert kinematic_turning_circle(params) == pytest.approx(
        2 * math.hypot(2.8, centre + 0.775), rel=1e-12
    )


@pytest.mark.parametrize("preset", docs.ORDER)
def test_the_driven_turning_circle_is_within_3_percent_of_the_geometry(preset: str) -> None:
    params = VehicleParams.preset(preset)
    assert turning_circle(params) == pytest.approx(kinematic_turning_circle(params), rel=0.03)


def test_parallel_steering_turns_wider() -> None:
    """The front tyres scrub against each other and the car runs wide (issue 44: +8 %)."""
    params = VehicleParams.preset("sedan").with_changes(**{"wheels.ackermann_percent": 0.0})
    assert turning_circle(params) > 1.05 * kinematic_turning_circle(params)
