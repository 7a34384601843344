"""Gradeability found by driving: the steepest ramp the car climbs from a standing start.

A surplus-force estimate (the largest acceleration on the flat turned into a slope) says
nothing about grip on the slope, where the rear axle of a rear-driven car is unloaded as the
slope steepens and the car stops climbing long before its engine runs out of torque. So the
car is driven: it stands on a constant slope held by the brake with the engine idling,
pulls away at full throttle, and either climbs ``CLIMB_DISTANCE`` metres or fails (rolls
back, stalls, or is still short of the distance after ``CLIMB_SECONDS``). Bisection on the
slope finds the boundary between the two to ``GRADE_RESOLUTION``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from vcosim.datasheet.manoeuvres import launch_clutch
from vcosim.vehicle import Terrain, Vehicle, VehicleParams
from vcosim.vehicle.gearbox import Gearbox
from vcosim.vehicle.tyres import magic_formula

CLIMB_DISTANCE = 25.0  # m along the slope
CLIMB_SECONDS = 60.0  # s after the brake is released
ROLLBACK = 0.3  # m: a hill start that slips back further has failed
GRADE_RESOLUTION = 0.005  # the bisection stops when the bracket is narrower (0.5 % grade)
HOLD_SECONDS = 1.0  # on the brake at idle, then on the brake at full throttle, each this long
DRIVER_STEPS = 20  # the driver acts every 10 ms


def ramp(grade: float, behind: float = 30.0, ahead: float = 70.0) -> Terrain:
    """A plane rising along +x at ``grade`` (height over distance), the car's start at x = 0.

    Two height samples on one row: bilinear interpolation makes the plane exact in between,
    level beyond either end.
    """
    height = np.array([[-grade * behind, grade * ahead]])
    return Terrain(height, np.ones_like(height), None, np.array([-behind, 0.0, behind + ahead]))


@dataclass(frozen=True)
class Climb:
    """One drive up a ramp: whether it made the distance, and if not, how it failed."""

    grade: float  # height over distance
    climbed: bool
    failure: str  # "", "rolled back", "stalled" or "too slow"
    seconds: float  # from the brake's release to success or failure
    distance: float  # m along the slope when the run ended


def climb(params: VehicleParams, grade: float, gearbox: Gearbox) -> Climb:
    """Pull away up a ramp of ``grade`` as a driver would, and see whether the car gets up.

    Both gearboxes: held on the brake for ``HOLD_SECONDS`` at idle (manual: first gear,
    clutch pressed; automatic: D), then full throttle on the brake for as long, then the brake
    released. The manual's driver works the clutch on the revs throughout
    (``launch_clutch``); the automatic drives itself.
    """
    car = Vehicle(params, ramp(grade), engine_running=True)
    automatic = gearbox is Gearbox.automatic
    if automatic:
        car.step(brake=1.0, automatic=1, gear=1)
    else:
        car.step(brake=1.0, clutch=1.0, gear=1)
    car.run_for(HOLD_SECONDS)
    along = math.sqrt(1.0 + grade * grade)  # m along the slope per m of x

    def drive() -> None:
        if not automatic:
            car.set_inputs(clutch=launch_clutch(car.signal("rpm")))
        car.run(DRIVER_STEPS)

    car.set_inputs(throttle=1.0)
    for _ in range(round(HOLD_SECONDS / (DRIVER_STEPS * car.dt))):
        drive()
    car.set_inputs(brake=0.0)
    start, x0 = car.time, car.signal("posX")
    failure = "too slow"
    while car.time - start < CLIMB_SECONDS:
        drive()
        distance = (car.signal("posX") - x0) * along
        if car.signal("engine_running") < 0.5:
            failure = "stalled"
            break
        if distance < -ROLLBACK:
            failure = "rolled back"
            break
        if distance >= CLIMB_DISTANCE:
            return Climb(grade, True, "", car.time - start, distance)
    distance = (car.signal("posX") - x0) * along
    return Climb(grade, False, failure, car.time - start, distance)


def gradeability(params: VehicleParams, gearbox: Gearbox) -> tuple[Climb | None, Climb | None]:
    """The steepest ramp climbed and the gentlest failed, ``GRADE_RESOLUTION`` apart.

    Starts from a bracket of level ground and 100 % (45 degrees); the outcome is taken to
    change once along the slope (one boundary), which the tests check on either side. None
    for a side that does not exist: no climb on level ground, or no failure at 100 %.
    """
    lowest, steepest = climb(params, 0.0, gearbox), climb(params, 1.0, gearbox)
    if not lowest.climbed:
        return None, lowest
    if steepest.climbed:
        return steepest, None
    while steepest.grade - lowest.grade > GRADE_RESOLUTION:
        attempt = climb(params, 0.5 * (lowest.grade + steepest.grade), gearbox)
        if attempt.climbed:
            lowest = attempt
        else:
            steepest = attempt
    return lowest, steepest


def traction_bound(params: VehicleParams, cog_height: float, spinning: bool = False) -> float:
    """The steepest grade the driven rear axle's grip allows, standing on it (first principles).

    On a slope of angle t the rear axle carries m g (a cos t + h sin t) / L; at most mu of
    that pushes uphill against m g sin t, so tan t <= mu a / (L - mu h), with a the centre of
    gravity's distance behind the front axle and h its height. mu is the tyres' peak friction
    on a road of 1, or with ``spinning`` what the tyre keeps when it spins (longitudinal slip
    1), as it does at full throttle on the steepest slope the car can climb.
    """
    rec = params.pack()[0]
    a, wheelbase = float(rec["a"]), float(rec["a"] + rec["b"])
    tyres = params.tyres
    mu = tyres.friction
    if spinning:
        mu *= magic_formula(1.0, tyres.longitudinal_B, tyres.longitudinal_C, tyres.longitudinal_E)
    return mu * a / (wheelbase - mu * cog_height)
