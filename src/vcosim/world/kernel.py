"""``advance_each`` without threads, for worlds too small to share out.

``vcosim.vehicle.model.advance_each`` hands the vehicles to numba's thread pool; each call
then pays for waking the threads and waiting for the slowest, which a world of a few cars
stepping one physics step per call (a coupled car) feels, and a busy machine far more. This
is the same loop on the calling thread. (Proposed for ``vehicle/model.py`` beside
``advance_each``; imported inside ``physics_cache`` so its cache follows the physics sources.)
"""

from __future__ import annotations

import numpy as np
from numba import njit

from vcosim.vehicle.model import N_SCRATCH, advance


@njit(cache=True)
def advance_each_serial(xs, us, params, ys, height, friction, grid, n_steps: int) -> None:
    """Like ``advance_each`` (a parameter record per vehicle), one vehicle after another."""
    s = np.zeros(N_SCRATCH)
    for v in range(xs.shape[0]):
        advance(xs[v], us[v], params[v : v + 1], ys[v], s, height, friction, grid, n_steps)
