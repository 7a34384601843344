"""The per-vehicle-parameters batch kernel steps each row exactly as the single-vehicle kernel."""

import numpy as np

from vcosim.vehicle import Vehicle, VehicleParams
from vcosim.vehicle.model import advance_each


def test_each_row_matches_its_own_vehicle() -> None:
    light = Vehicle(
        VehicleParams().with_changes(**{"body.chassis_mass": 900.0}), engine_running=True
    )
    heavy = Vehicle(engine_running=True)
    light.set_inputs(throttle=0.6)
    heavy.set_inputs(throttle=0.3, steering=0.1)
    cars = (light, heavy)
    xs = np.stack([car._x.copy() for car in cars])
    us = np.stack([car._u.copy() for car in cars])
    ys = np.stack([car._y.copy() for car in cars])
    params = np.concatenate([car._p for car in cars])

    advance_each(xs, us, params, ys, *light._terrain, 400)
    for row, car in enumerate(cars):
        car.run(400)
        assert np.array_equal(xs[row], car._x)
        assert np.array_equal(ys[row], car._y)
    assert not np.array_equal(xs[0], xs[1])
