"""What a simulation's vehicles are at one instant, in the terms ground-truth formats use.

``Objects.of(sim)`` reads every vehicle of the host (the lone car, or each of a world's) into
arrays, one row per vehicle in the host's order: the box (size and centre), attitude, world
velocity, world acceleration, attitude rates and lights. ASAM OSI and Foxglove both describe a
vehicle so, and both encoders read these arrays instead of the vehicle's signals.

Conventions (ISO 8855, as vcosim's and OSI's): world x east, y north, z up; roll, pitch, yaw
are z-y-x Euler angles. The box is the one the world collides with (the plate between the
axles plus a wheel radius fore and aft, the track wide), ``height`` tall from the ground:
the centre of gravity's ride height plus half the plate. Its centre is a fixed point of the
body, ``centre_offset`` from the centre of gravity in the body frame.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from vcosim.vehicle import VehicleView
from vcosim.vehicle import layout as L

if TYPE_CHECKING:
    from vcosim.sim.simulation import Simulation

_B = L.Y_B
_POSITION = slice(_B, _B + 3)
_VELOCITY = slice(_B + 3, _B + 6)
_SPECIFIC_FORCE = slice(_B + 7, _B + 10)
_ATTITUDE = slice(_B + 10, _B + 13)
_SIGNAL = L.SIGNAL_INDEX


@dataclass(frozen=True)
class Shape:
    """A vehicle's box and where it sits on the body (m; body frame, from the CoG)."""

    length: float
    width: float
    height: float
    centre_offset: tuple[float, float, float]
    rear_axle: tuple[float, float, float]
    """The middle of the rear axle from the CoG: OSI's vehicle reference point."""
    wheel_radius: float

    @classmethod
    def of(cls, vehicle: VehicleView) -> Shape:
        """The box of ``vehicle``, from its parameters (as the world's collision box)."""
        packed = vehicle.params.pack()
        a, b = float(packed["a"][0]), float(packed["b"][0])
        body, radius = vehicle.params.body, vehicle.params.wheels.radius
        height = body.ride_height + body.plate_height / 2
        return cls(
            length=a + b + 2 * radius,
            width=body.track,
            height=height,
            centre_offset=((a - b) / 2, 0.0, height / 2 - body.ride_height),
            rear_axle=(-b, 0.0, radius - body.ride_height),
            wheel_radius=radius,
        )


@dataclass
class Objects:
    """Every vehicle at one instant: a row per vehicle, columns x, y, z where there are 3."""

    time: float
    names: list[str]
    shapes: list[Shape]
    cog: np.ndarray
    centre: np.ndarray
    orientation: np.ndarray  # roll, pitch, yaw (rad)
    velocity: np.ndarray  # world frame (m/s)
    acceleration: np.ndarray  # world frame, gravity removed (m/s2)
    orientation_rate: np.ndarray  # d(roll, pitch, yaw)/dt (rad/s)
    signals: np.ndarray  # each vehicle's outputs (a copy), for lights and plots

    @classmethod
    def of(cls, sim: Simulation, shapes: dict[str, Shape]) -> Objects:
        """Read every vehicle of ``sim`` (``shapes``: each one's ``Shape``, by name)."""
        names = list(sim.vehicles)
        rows = len(names)  # none in a world of objects only: (0, k) arrays
        outputs = np.array([sim.vehicles[n].outputs for n in names]).reshape(rows, L.N_OUTPUTS)
        rates = np.array([sim.vehicles[n].state[L.X_RATE : L.X_RATE + 3] for n in names])
        rates = rates.reshape(rows, 3)
        attitude = outputs[:, _ATTITUDE]
        offsets = np.array([shapes[n].centre_offset for n in names]).reshape(rows, 3)
        rotations = rotation_matrices(attitude)
        cog = outputs[:, _POSITION].copy()
        gravity = np.array([[0.0, 0.0, sim.vehicles[n].params.body.gravity] for n in names])
        gravity = gravity.reshape(rows, 3)
        return cls(
            time=sim.time,
            names=names,
            shapes=[shapes[n] for n in names],
            cog=cog,
            centre=cog + np.einsum("nij,nj->ni", rotations, offsets),
            orientation=attitude.copy(),
            velocity=outputs[:, _VELOCITY].copy(),
            acceleration=np.einsum("nij,nj->ni", rotations, outputs[:, _SPECIFIC_FORCE]) - gravity,
            orientation_rate=euler_rates(attitude, rates),
            signals=outputs,
        )

    def signal(self, name: str) -> np.ndarray:
        """One signal of every vehicle."""
        return self.signals[:, _SIGNAL[name]]


def shapes_of(sim: Simulation) -> dict[str, Shape]:
    """The ``Shape`` of every vehicle of ``sim`` (read once: parameters do not change)."""
    return {name: Shape.of(vehicle) for name, vehicle in sim.vehicles.items()}


def rotation_matrices(attitude: np.ndarray) -> np.ndarray:
    """Body-to-world rotations of z-y-x Euler angles (roll, pitch, yaw), one per row."""
    cr, sr = np.cos(attitude[:, 0]), np.sin(attitude[:, 0])
    cp, sp = np.cos(attitude[:, 1]), np.sin(attitude[:, 1])
    cy, sy = np.cos(attitude[:, 2]), np.sin(attitude[:, 2])
    return np.stack(
        [
            np.stack([cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr], axis=-1),
            np.stack([sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr], axis=-1),
            np.stack([-sp, cp * sr, cp * cr], axis=-1),
        ],
        axis=1,
    )


def euler_rates(attitude: np.ndarray, body_rates: np.ndarray) -> np.ndarray:
    """d(roll, pitch, yaw)/dt from the body's angular velocity (p, q, r), one per row."""
    roll, pitch = attitude[:, 0], attitude[:, 1]
    p, q, r = body_rates[:, 0], body_rates[:, 1], body_rates[:, 2]
    cr, sr = np.cos(roll), np.sin(roll)
    cp = np.maximum(np.cos(pitch), math.cos(math.radians(89.9)))  # never upright on its nose
    turning = q * sr + r * cr
    return np.stack([p + turning * np.tan(pitch), q * cr - r * sr, turning / cp], axis=-1)


def quaternion(roll: float, pitch: float, yaw: float) -> tuple[float, float, float, float]:
    """(x, y, z, w) of z-y-x Euler angles: how Foxglove (and ROS) write a rotation."""
    cr, sr = math.cos(roll / 2), math.sin(roll / 2)
    cp, sp = math.cos(pitch / 2), math.sin(pitch / 2)
    cy, sy = math.cos(yaw / 2), math.sin(yaw / 2)
    return (
        sr * cp * cy - cr * sp * sy,
        cr * sp * cy + sr * cp * sy,
        cr * cp * sy - sr * sp * cy,
        cr * cp * cy + sr * sp * sy,
    )
