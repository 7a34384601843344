"""Suspension forces and the 6-DOF rigid body (quaternion attitude, Newton-Euler)."""

from __future__ import annotations

import math

from vcosim.vehicle._jit_cache import njit
from vcosim.vehicle.elementary import tan

HALF_PI = 0.5 * math.pi
TAN_LIMIT = 0.99  # tan's argument stays below 0.99 * pi/2, as the seed clamps it


@njit(error_model="numpy", inline="always")
def suspension_forces(s, p, compression: int, load: int) -> None:
    """The four corners' loads: tan-shaped spring plus damper, never pulling, none in the air.

    Into ``s[load : load + 4]``, from the compressions ``s[compression : compression + 4]``
    and their rates (the next four). The parameters are read first and the loop touches
    nothing but ``s``, so LLVM evaluates the eight tangents as vectors.
    """
    z_max, zdot_max, k_spring, c_damper = p.z_max, p.zdot_max, p.k_spring, p.c_damper
    for k in range(4):
        travel = s[compression + k]
        zs = min(travel / z_max, TAN_LIMIT)
        zd = min(max(s[compression + 4 + k] / zdot_max, -TAN_LIMIT), TAN_LIMIT)
        force = k_spring * tan(HALF_PI * zs) + c_damper * tan(HALF_PI * zd)
        s[load + k] = force if travel > 0.0 and force > 0.0 else 0.0


@njit(error_model="numpy", inline="always")
def rotation_matrix(q0: float, q1: float, q2: float, q3: float) -> tuple[float, ...]:
    """Body-to-world rotation matrix of a unit quaternion (w, x, y, z), row by row."""
    return (
        1.0 - 2.0 * (q2 * q2 + q3 * q3),
        2.0 * (q1 * q2 - q0 * q3),
        2.0 * (q1 * q3 + q0 * q2),
        2.0 * (q1 * q2 + q0 * q3),
        1.0 - 2.0 * (q1 * q1 + q3 * q3),
        2.0 * (q2 * q3 - q0 * q1),
        2.0 * (q1 * q3 - q0 * q2),
        2.0 * (q2 * q3 + q0 * q1),
        1.0 - 2.0 * (q1 * q1 + q2 * q2),
    )


@njit(error_model="numpy")
def euler_angles(q0: float, q1: float, q2: float, q3: float) -> tuple[float, float, float]:
    """Roll, pitch, yaw (rad; z-y-x Tait-Bryan) of a unit quaternion."""
    roll = math.atan2(2.0 * (q0 * q1 + q2 * q3), 1.0 - 2.0 * (q1 * q1 + q2 * q2))
    sp = min(max(2.0 * (q0 * q2 - q3 * q1), -1.0), 1.0)
    pitch = math.asin(sp)
    yaw = math.atan2(2.0 * (q0 * q3 + q1 * q2), 1.0 - 2.0 * (q2 * q2 + q3 * q3))
    return roll, pitch, yaw


@njit(error_model="numpy", inline="always")
def integrate_attitude(x, i: int, wx: float, wy: float, wz: float, dt: float) -> None:
    """Q <- normalise(q + dt/2 q (x) (0, w)): the quaternion never passes a gimbal singularity."""
    q0, q1, q2, q3 = x[i], x[i + 1], x[i + 2], x[i + 3]
    h = 0.5 * dt
    n0 = q0 + h * (-q1 * wx - q2 * wy - q3 * wz)
    n1 = q1 + h * (q0 * wx + q2 * wz - q3 * wy)
    n2 = q2 + h * (q0 * wy - q1 * wz + q3 * wx)
    n3 = q3 + h * (q0 * wz + q1 * wy - q2 * wx)
    norm = math.sqrt(n0 * n0 + n1 * n1 + n2 * n2 + n3 * n3)
    x[i], x[i + 1], x[i + 2], x[i + 3] = n0 / norm, n1 / norm, n2 / norm, n3 / norm
