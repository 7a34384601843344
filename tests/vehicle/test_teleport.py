"""Reset and teleport from the Python API: where the vehicle lands, and how it moves on."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vcosim.vehicle import Vehicle
from vcosim.vehicle.terrain import Terrain


def test_teleport_places_heads_and_rolls_the_vehicle() -> None:
    car = Vehicle(engine_running=True)
    car.step(automatic=1, gear=1)
    car.teleport(100.0, -40.0, heading=90.0, speed=15.0)
    assert car.signal("yaw") == pytest.approx(math.pi / 2)
    assert car.signal("groundspeed") == pytest.approx(15.0, abs=0.01)
    car.run_for(1.0)
    # rolling north at about 15 m/s: one second later some 15 m further along +y
    assert car.signal("posX") == pytest.approx(100.0, abs=0.2)
    assert car.signal("posY") == pytest.approx(-25.0, abs=1.0)
    assert car.signal("groundspeed") > 13.0


def test_teleport_lands_on_the_terrain_at_the_new_place(tmp_path) -> None:
    from PIL import Image

    blue = np.tile((np.arange(64) * 4).astype(np.uint8), (32, 1))  # a ramp rising along +x
    rgb = np.zeros((*blue.shape, 3), dtype=np.uint8)
    rgb[:, :, 2] = blue
    Image.fromarray(rgb).save(tmp_path / "ramp.png")
    terrain = Terrain.from_images(height_map=tmp_path / "ramp.png", hill_height=25.5, size=640)
    car = Vehicle(terrain=terrain)
    clearance = car.signal("posZ") - terrain.sample(0.0, 0.0)[0]
    car.teleport(200.0, 0.0)
    assert car.signal("posZ") - terrain.sample(200.0, 0.0)[0] == pytest.approx(clearance, abs=0.02)
    assert car.signal("pitch") == pytest.approx(-math.atan(0.04), abs=0.005)  # nose up the ramp
    car.run_for(0.5)  # parked on the slope: it stays on the ground, neither sinks nor flies
    assert car.signal("posZ") - terrain.sample(car.signal("posX"), 0.0)[0] == pytest.approx(
        clearance, abs=0.05
    )


def test_reset_starts_again_at_the_origin() -> None:
    car = Vehicle(engine_running=True)
    car.run_for(3.0, automatic=1, gear=1, throttle=0.5)
    assert car.signal("posX") > 1.0
    car.reset(engine_running=True)
    assert car.signal("time") == 0.0
    assert car.signal("posX") == pytest.approx(0.0, abs=1e-9)
    assert car.signal("groundspeed") == pytest.approx(0.0, abs=1e-6)
    assert car.signal("throttle_input") == 0.0
    assert car.signal("rpm") > 500  # idling again


@pytest.mark.parametrize("bad", [{"x": math.nan}, {"heading": math.inf}, {"speed": math.nan}])
def test_teleport_refuses_what_is_not_a_number(bad: dict[str, float]) -> None:
    car = Vehicle()
    before = car.snapshot()
    with pytest.raises(ValueError, match="finite"):
        car.teleport(**{"x": 0.0, "y": 0.0, **bad})
    assert np.array_equal(car.snapshot().state, before.state)
