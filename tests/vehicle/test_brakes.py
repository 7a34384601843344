"""Brake balance, ABS and the realistic "sedan" preset (docs/vehicle-model.md, "Brakes")."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vcosim.vehicle import Vehicle, VehicleParams

KMH = 1 / 3.6


def stopping_distance(params: VehicleParams, speed: float = 100 * KMH) -> tuple[float, dict]:
    """Full pedal from ``speed`` on a straight: distance to standstill, and the trace."""
    v = Vehicle(params)
    v.teleport(0.0, 0.0, 0.0, speed)
    trace = v.trace(8.0, every=10, brake=1.0)
    assert trace["groundspeed"][-1] < 0.01, "did not stop within 8 s"
    return float(trace["posX"][-1]), trace


def test_nightrider_keeps_the_seeds_split_without_abs():
    p = VehicleParams.preset("nightrider")
    rec = p.pack()[0]
    assert p.brakes.abs is False and p.brakes.front_share is None
    assert (rec["brake_f"], rec["brake_r"], rec["abs_on"]) == (3000.0, 2000.0, 0.0)


def test_front_share_splits_the_same_total_between_the_axles():
    rec = VehicleParams().with_changes(**{"brakes.front_share": 0.75}).pack()[0]
    assert rec["brake_f"] == pytest.approx(3750.0) and rec["brake_r"] == pytest.approx(1250.0)


def test_sedan_is_a_realistic_passenger_car():
    p = VehicleParams.preset("sedan")
    v = Vehicle(p)
    assert v.signal("posZ") == pytest.approx(0.55, abs=0.02)  # centre of gravity above ground
    rec = p.pack()[0]
    assert rec["brake_f"] / (rec["brake_f"] + rec["brake_r"]) == pytest.approx(0.7)
    assert p.brakes.abs is True
    assert rec["b"] / (rec["a"] + rec["b"]) == pytest.approx(0.53, abs=0.01)  # front weight


def test_abs_shortens_the_stop_from_100_kmh_and_keeps_the_wheels_turning():
    sedan = VehicleParams.preset("sedan")
    with_abs, trace = stopping_distance(sedan)
    locked, locked_trace = stopping_distance(sedan.with_changes(**{"brakes.abs": False}))
    # docs: ADAC tests of cars with ABS on dry asphalt stop from 100 km/h in 35-40 m.
    assert 35.0 <= with_abs <= 43.0, f"ABS: {with_abs:.1f} m"
    assert with_abs < locked - 8.0, f"ABS {with_abs:.1f} m, locked {locked:.1f} m"
    fast = trace["groundspeed"] > 5.0
    for wheel in ("FL", "FR"):
        rolling = trace[f"wheel{wheel}_wheelSpeed"][fast] / trace["groundspeed"][fast]
        assert rolling.min() > 0.4, f"{wheel} locked under ABS"
        locked_rolling = locked_trace[f"wheel{wheel}_wheelSpeed"] / np.maximum(
            locked_trace["groundspeed"], 1e-9
        )
        assert locked_rolling[locked_trace["groundspeed"] > 5.0].min() < 0.05


def test_abs_stands_aside_at_walking_pace_so_the_car_stops_and_stands():
    v = Vehicle("sedan")
    v.teleport(0.0, 0.0, 0.0, 10.0)
    trace = v.trace(6.0, every=1, brake=0.5)
    assert trace["velX"][-1] == pytest.approx(0.0, abs=1e-6)
    stopped = int(np.argmax(trace["groundspeed"] < 1e-6))
    assert 0 < stopped < len(trace["time"]) - 2000
    assert np.ptp(trace["posX"][stopped + 2000 :]) < 1e-4


def lane_deviation_braking_in_a_turn(params: VehicleParams, radius: float = 150.0) -> float:
    """Largest distance from a circle of ``radius`` while a path-following driver brakes.

    The car rolls onto the circle at 80 km/h, follows it for 1.5 s (pure pursuit, 100 Hz),
    then brakes with full pedal while still steering along it, to a stop.
    """
    v = Vehicle(params)
    v.teleport(0.0, 0.0, 0.0, 80 * KMH)
    wheelbase = params.body.wheelbase
    max_steer = math.radians(params.wheels.max_steer_angle_deg)
    worst = 0.0
    for i in range(1200):
        x, y, yaw = v.signal("posX"), v.signal("posY"), v.signal("yaw")
        speed = v.signal("groundspeed")
        if i >= 150:
            worst = max(worst, abs(math.hypot(x, y - radius) - radius))
            if speed < 0.5:
                return worst
        lookahead = max(0.6 * speed, 4.0)
        ahead = math.atan2(y - radius, x) + lookahead / radius
        aim = math.atan2(radius + radius * math.sin(ahead) - y, radius * math.cos(ahead) - x)
        delta = math.atan2(2.0 * wheelbase * math.sin(aim - yaw), lookahead)
        v.run(20, steering=min(max(delta / max_steer, -1.0), 1.0), brake=float(i >= 150))
    raise AssertionError("did not stop within 12 s")


def test_braking_in_a_turn_with_abs_holds_the_lane():
    sedan = VehicleParams.preset("sedan")
    with_abs = lane_deviation_braking_in_a_turn(sedan)
    locked = lane_deviation_braking_in_a_turn(sedan.with_changes(**{"brakes.abs": False}))
    assert with_abs < 0.8, f"left the lane by {with_abs:.2f} m with ABS"  # lane: 3.5 m, car 1.8
    assert locked > 1.5, f"locked front wheels still steered ({locked:.2f} m)"
