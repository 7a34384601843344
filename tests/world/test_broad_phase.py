"""The world's broad phase: every pair whose circles may touch, and none missed."""

from __future__ import annotations

import numpy as np
import pytest

from vcosim.world.geometry import candidate_pairs


def brute_force(cx: np.ndarray, cy: np.ndarray, radius: np.ndarray, margin: float, own: int) -> set:
    """Every pair (i < j) with one of the world's own, by checking them all."""
    n = cx.shape[0]
    return {
        (i, j)
        for i in range(n)
        for j in range(i + 1, n)
        if i < own and np.hypot(cx[j] - cx[i], cy[j] - cy[i]) <= radius[i] + radius[j] + margin
    }


@pytest.mark.parametrize(("n", "own", "margin"), [(300, 1, 160.0), (300, 7, 2.0), (200, 200, 5.0),
                                                  (50, 0, 10.0), (1, 1, 0.0)])  # fmt: skip
def test_the_sweep_finds_exactly_the_pairs_a_check_of_all_of_them_finds(
    n: int, own: int, margin: float
) -> None:
    """Also with few of the world's boxes among many external ones (SUMO's), where the sweep
    from an external box skips to the world's boxes only."""
    rng = np.random.default_rng(n + own)
    cx, cy = rng.uniform(0.0, 800.0, n), rng.uniform(0.0, 300.0, n)
    radius = rng.uniform(0.5, 12.0, n)
    pairs = candidate_pairs(cx, cy, radius, margin, own)
    found = [tuple(pair) for pair in pairs.tolist()]
    assert len(found) == len(set(found))
    assert set(found) == brute_force(cx, cy, radius, margin, own)
    assert own < 2 or len(found) > 0  # the cases do have pairs to find
