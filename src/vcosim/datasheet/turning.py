"""Kerb-to-kerb turning circle, found by driving: full lock at walking pace.

The car pulls away in D with the wheel at full left lock and a speed controller holds
``WALKING`` m/s; after ``SETTLE_SECONDS`` the outer (right) front wheel's centre is traced
over one circle and a least-squares circle fitted through it. Its diameter is the kerb-to-kerb
turning circle as the model has it (the tyre's width, which the model does not have, would
add about 0.2 m). Beside it the kinematic one: the turning centre on the rear axle's line,
L / tan(delta) from its middle, and the outer front wheel L ahead and half a track outside.
"""

from __future__ import annotations

import math

import numpy as np

from vcosim.vehicle import Vehicle, VehicleParams

WALKING = 1.2  # m/s
SETTLE_SECONDS = 4.0
DRIVER_STEPS = 20  # the speed controller acts every 10 ms
GAIN, INTEGRAL_GAIN = 0.5, 0.3  # per m/s of speed error, and per m of it


def circle_radius(x: np.ndarray, y: np.ndarray) -> float:
    """Radius of the least-squares circle through the points (Kasa's algebraic fit)."""
    design = np.column_stack([x, y, np.ones_like(x)])
    c, *_ = np.linalg.lstsq(design, x * x + y * y, rcond=None)
    return float(math.sqrt(c[2] + c[0] * c[0] / 4 + c[1] * c[1] / 4))


def kinematic_turning_circle(params: VehicleParams) -> float:
    """Diameter of the outer front wheel's path about the kinematic turning centre (m)."""
    rec = params.pack()[0]
    wheelbase = float(rec["a"] + rec["b"])
    centre = wheelbase / math.tan(float(rec["max_steer"]))
    return 2 * math.hypot(wheelbase, centre + float(rec["c"]))


def turning_circle(params: VehicleParams) -> float:
    """Kerb-to-kerb turning circle driven at full lock and ``WALKING`` m/s (m)."""
    rec = params.pack()[0]
    car = Vehicle(params, engine_running=True)
    car.step(automatic=1, gear=1, brake=1.0, steering=1.0)
    car.run_for(1.0)
    kinematic = kinematic_turning_circle(params)
    seconds = SETTLE_SECONDS + math.pi * kinematic / WALKING
    dt = DRIVER_STEPS * car.dt
    integral = 0.0
    xs, ys = [], []
    for i in range(round(seconds / dt)):
        error = WALKING - car.signal("speed")
        command = GAIN * error + integral
        if -1.0 < command < 1.0:  # integrate only while not saturated
            integral += INTEGRAL_GAIN * error * dt
        car.run(
            DRIVER_STEPS, throttle=min(max(command, 0.0), 1.0), brake=min(max(-command, 0.0), 1.0)
        )
        if i * dt >= SETTLE_SECONDS:
            yaw = car.signal("yaw")
            ahead, outside = float(rec["a"]), -float(rec["c"])
            xs.append(car.signal("posX") + ahead * math.cos(yaw) - outside * math.sin(yaw))
            ys.append(car.signal("posY") + ahead * math.sin(yaw) + outside * math.cos(yaw))
    return 2 * circle_radius(np.array(xs), np.array(ys))


def turning_figures(params: VehicleParams) -> dict[str, float]:
    """The driven turning circle and the kinematic one."""
    return {
        "turning_circle_m": turning_circle(params),
        "turning_circle_kinematic_m": kinematic_turning_circle(params),
    }
