"""The skidpad figure: what limits each car, and that the sheets in docs/vehicles carry it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vcosim.datasheet import docs
from vcosim.datasheet.figures import G
from vcosim.datasheet.skidpad import RADIUS, skidpad_grip
from vcosim.vehicle import VehicleParams

SHEETS = Path(__file__).parents[2] / docs.SHEETS


def grip(preset: str, friction: float | None = None) -> dict[str, float]:
    params = VehicleParams.preset(preset)
    if friction is not None:
        params = params.with_changes(**{"tyres.friction": friction})
    return skidpad_grip(params)


def test_the_figure_is_a_steady_state_on_the_circle() -> None:
    held = grip("sedan")
    speed = held["skidpad_speed_kmh"] / 3.6
    # speed times yaw rate, steady on the circle, is v^2 / R
    assert held["skidpad_lateral_acceleration_g"] == pytest.approx(speed**2 / RADIUS / G, rel=0.01)


def test_a_car_its_tyres_limit_holds_in_proportion_to_friction() -> None:
    dry, wet = grip("sedan"), grip("sedan", friction=0.6)
    ratio = wet["skidpad_lateral_acceleration_g"] / dry["skidpad_lateral_acceleration_g"]
    assert 0.55 <= ratio <= 0.68, ratio


def test_a_car_on_ice_gets_its_figure_too() -> None:
    """The steps start at 0.1 g, so that a car on mu 0.3 has a figure (not NaN)."""
    held = grip("sedan", friction=0.3)["skidpad_lateral_acceleration_g"]
    assert 0.25 <= held <= 0.32, held


def test_a_car_its_open_differential_limits_loses_little_to_lower_friction() -> None:
    """nightrider's inner rear wheel spins first: load transfer, not friction, sets its limit."""
    dry, wet = grip("nightrider"), grip("nightrider", friction=0.6)
    ratio = wet["skidpad_lateral_acceleration_g"] / dry["skidpad_lateral_acceleration_g"]
    assert ratio >= 0.8, ratio
    sheet = json.loads((SHEETS / "nightrider.json").read_text())["figures"]["steady_state"]
    # each wheel its own torque (torque mode) holds far more than the open differential lets
    assert (
        sheet["max_lateral_acceleration_torque_mode_g"]
        > 1.2 * dry["skidpad_lateral_acceleration_g"]
    )


@pytest.mark.parametrize("preset", docs.ORDER)
def test_the_datasheets_lateral_grip_is_the_skidpads(preset: str) -> None:
    sheet = json.loads((SHEETS / f"{preset}.json").read_text())["figures"]["steady_state"]
    held = grip(preset)
    assert sheet["max_lateral_acceleration_g"] == pytest.approx(
        held["skidpad_lateral_acceleration_g"], rel=0.005
    ), "run `vcosim vehicle report --all --docs`"
    assert sheet["skidpad_speed_kmh"] == pytest.approx(held["skidpad_speed_kmh"], rel=0.005)
