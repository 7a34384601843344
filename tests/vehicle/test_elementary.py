"""The kernel's own atan, sin and tan: accurate to a few units in the last place, and vector code.

The physics would survive a worse fit (the kernel agreement test bounds what reaches the
states); these bounds say the functions are what their docstring claims, libm's equal.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numba
import numpy as np
import pytest

from vcosim.vehicle import Vehicle
from vcosim.vehicle import elementary as E
from vcosim.vehicle.body import suspension_forces
from vcosim.vehicle.model import N_SCRATCH, S_COMPRESSION, S_CURVES, S_NORMAL
from vcosim.vehicle.tyres import tyre_curves

MAX_ULPS = 3
RNG = np.random.default_rng(25)


def arguments(low: float, high: float) -> np.ndarray:
    """Uniform over the range, dense near zero, and wide magnitudes of both signs."""
    tiny = np.geomspace(1e-300, 1.0, 20_000) * RNG.choice([-1.0, 1.0], 20_000)
    return np.concatenate(
        [RNG.uniform(low, high, 200_000), 1e-3 * RNG.uniform(-1, 1, 20_000), tiny]
    )


@numba.njit
def _over(function: Callable[[float], float], xs: np.ndarray) -> np.ndarray:
    out = np.empty_like(xs)
    for i in range(xs.size):
        out[i] = function(xs[i])
    return out


def ulps(got: np.ndarray, exact: np.ndarray) -> np.ndarray:
    spacing = np.spacing(np.abs(exact))
    return np.abs(got - exact) / np.maximum(spacing, np.finfo(float).tiny)


FITS = {
    # a car's ranges: atan of slips and of the formula's argument (B up to 100 times a slip
    # up to 10), sin of C (up to 3) times an angle, tan of up to 0.99 pi/2
    "atan": (E.atan_fit, math.atan, arguments(-2000.0, 2000.0)),
    "sin": (E.sin_fit, math.sin, arguments(-3.0 * math.pi, 3.0 * math.pi)),
    "tan": (E.tan_fit, math.tan, arguments(-0.99 * E.HALF_PI, 0.99 * E.HALF_PI)),
}


@pytest.mark.parametrize("name", sorted(FITS))
def test_within_a_few_ulps_of_libm(name: str) -> None:
    fit, exact, xs = FITS[name]
    got = _over(fit, xs)
    error = ulps(got, np.array([exact(x) for x in xs]))
    worst = int(np.argmax(error))
    assert error.max() <= MAX_ULPS, f"{name}({xs[worst]!r}) is {error.max():g} ulps off"
    assert np.array_equal(_over(fit, -xs), -got), "odd functions give odd results"


def test_edges_as_libm() -> None:
    for x in (0.0, -0.0, math.inf, -math.inf, 1e300, -1e-310):
        assert math.copysign(1.0, E.atan_fit(x)) == math.copysign(1.0, math.atan(x))
        assert E.atan_fit(x) == pytest.approx(math.atan(x), rel=1e-15, abs=0.0)
    for fit in (E.atan_fit, E.sin_fit, E.tan_fit):
        assert math.isnan(fit(math.nan))
    assert math.copysign(1.0, E.sin_fit(-0.0)) == -1.0
    assert math.copysign(1.0, E.tan_fit(-0.0)) == -1.0


@numba.njit(error_model="numpy")
def _wheel_loops(x, params, s):  # type: ignore[no-untyped-def]
    tyre_curves(x, params[0], s, S_CURVES)
    suspension_forces(s, params[0], S_COMPRESSION, S_NORMAL)


def test_the_wheel_loops_compile_to_vector_code_where_the_vectors_are_wide() -> None:
    """A change that puts a call or an alias into them would quietly cost a fifth of the step."""
    car = Vehicle()
    _wheel_loops(car.state, car._p, np.zeros(N_SCRATCH))
    assembly = _wheel_loops.inspect_asm(_wheel_loops.signatures[0])
    packed = assembly.count("divpd") + assembly.count("mulpd")
    scalar = assembly.count("divsd") + assembly.count("mulsd")
    if E.WIDE_VECTORS:  # (vector code: 147 packed, 2 scalar; a loop left scalar: 34 and 115)
        assert packed >= 100 and scalar <= 10, f"{packed} packed and {scalar} scalar operations"
    assert (E.atan, E.sin, E.tan) == (
        (E.atan_fit, E.sin_fit, E.tan_fit)
        if E.WIDE_VECTORS
        else (E._libm_atan, E._libm_sin, E._libm_tan)
    )
