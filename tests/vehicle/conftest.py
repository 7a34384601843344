from __future__ import annotations

import pytest

from helpers.driving import started
from vcosim.vehicle import Vehicle, VehicleParams


@pytest.fixture
def params() -> VehicleParams:
    """The default vehicle (friction noise is off by default)."""
    return VehicleParams()


@pytest.fixture
def idling(params: VehicleParams) -> Vehicle:
    return started(Vehicle(params))
