"""The arrays both encoders read: rotations, attitude rates and the quaternion agree."""

from __future__ import annotations

import numpy as np
import pytest

from vcosim.groundtruth.objects import euler_rates, quaternion, rotation_matrices


def matrix_of(x: float, y: float, z: float, w: float) -> np.ndarray:
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def test_the_quaternion_turns_as_the_rotation_matrix() -> None:
    rng = np.random.default_rng(7)
    attitudes = rng.uniform([-0.5, -0.5, -np.pi], [0.5, 0.5, np.pi], size=(20, 3))
    for attitude, rotation in zip(attitudes, rotation_matrices(attitudes), strict=True):
        q = quaternion(*attitude)
        assert np.linalg.norm(q) == pytest.approx(1.0)
        np.testing.assert_allclose(matrix_of(*q), rotation, atol=1e-12)
    # yaw alone: body x points along the heading
    heading = rotation_matrices(np.array([[0.0, 0.0, np.pi / 2]]))[0] @ [1.0, 0.0, 0.0]
    np.testing.assert_allclose(heading, [0.0, 1.0, 0.0], atol=1e-12)


def test_attitude_rates_follow_the_body_rates() -> None:
    level = np.zeros((1, 3))
    np.testing.assert_allclose(euler_rates(level, np.array([[0.1, 0.2, 0.3]])), [[0.1, 0.2, 0.3]])
    rolled = np.array([[np.pi / 2, 0.0, 0.0]])  # on its side, a body pitch rate turns the yaw
    np.testing.assert_allclose(
        euler_rates(rolled, np.array([[0.0, 0.4, 0.0]])), [[0.0, 0.0, 0.4]], atol=1e-12
    )
