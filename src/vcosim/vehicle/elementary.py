"""atan, sin and tan for the tyres and springs, as arithmetic LLVM can turn into vector code.

A step takes 20 atans, 8 sines and 8 tangents (the tyres' magic formula and slip angles, the
suspension's end stops). As libm calls they were about 35 % of the step: a call is opaque to
LLVM, which runs one after the other and spills every live register around each. Written out
as plain IEEE arithmetic, the step's loops over the wheels (``tyre_curves``,
``suspension_forces``) become vector code: the tyres' eight curves at once with AVX-512, four
at a time with AVX2. The approximations are the Cephes library's (S. Moshier: range
reduction, then a rational or polynomial fit on the reduced range; its coefficients below),
within 3 units in the last place of the correctly rounded value over the ranges a car
reaches (tests/vehicle/test_elementary.py), rounded alike on every machine; libm's differ
between its builds in the last bit.

With vectors of two doubles (SSE2 alone, ARM's NEON) the written-out functions lose to
libm's scalar ones (100 cars, compiled for a bare x86-64: 597 ns per vehicle-step against
509-518), so there ``atan``, ``sin`` and ``tan`` are libm's (``WIDE_VECTORS``).
"""

from __future__ import annotations

import math

import llvmlite.binding as llvm

from vcosim.vehicle._jit_cache import njit


def wide_vectors() -> bool:
    """Whether this CPU's vectors hold four doubles or more (AVX2, AVX-512, SVE)."""
    features = llvm.get_host_cpu_features()
    return any(features.get(name, False) for name in ("avx2", "avx512f", "sve"))


WIDE_VECTORS = wide_vectors()

HALF_PI = 0.5 * math.pi
QUARTER_PI = 0.25 * math.pi
FOUR_OVER_PI = 4.0 / math.pi
MOREBITS = 6.123233995736765886130e-17  # pi/2 minus its nearest double
TAN_3PI_8 = 2.41421356237309504880

# atan(t) = t + t^3 P(t^2) / Q(t^2) on |t| <= 0.66 (Q's leading coefficient is 1).
ATAN_P = (
    -8.750608600031904122785e-1,
    -1.615753718733365076637e1,
    -7.500855792314704667340e1,
    -1.228866684490136173410e2,
    -6.485021904942025371773e1,
)
ATAN_Q = (
    2.485846490142306297962e1,
    1.650270098316988542046e2,
    4.328810604912902668951e2,
    4.853903996359136964868e2,
    1.945506571482613964425e2,
)
# sin and cos on |z| <= pi/4, after z = x - k pi/4 with pi/4 split in three parts.
SIN_COEFFS = (
    1.58962301576546568060e-10,
    -2.50507477628578072866e-8,
    2.75573136213857245213e-6,
    -1.98412698295895385996e-4,
    8.33333333332211858878e-3,
    -1.66666666666666307295e-1,
)
COS_COEFFS = (
    -1.13585365213876817300e-11,
    2.08757008419747316778e-9,
    -2.75573141792967388112e-7,
    2.48015872888517045348e-5,
    -1.38888888888730564116e-3,
    4.16666666666665929218e-2,
)
SIN_PI_4 = (7.85398125648498535156e-1, 3.77489470793079817668e-8, 2.69515142907905952645e-15)
# tan(z) = z + z^3 P(z^2) / Q(z^2) on |z| <= pi/4 (Q's leading coefficient is 1).
TAN_P = (-1.30936939181383777646e4, 1.15351664838587416140e6, -1.79565251976484877988e7)
TAN_Q = (
    1.36812963470692954678e4,
    -1.32089234440210967447e6,
    2.50083801823357915839e7,
    -5.38695755929454629881e7,
)
TAN_PI_4 = (7.853981554508209228515625e-1, 7.94662735614792836714e-9, 3.06161699786838294307e-17)


@njit(error_model="numpy", inline="always")
def atan_fit(x: float) -> float:
    """Arc tangent (rad, in [-pi/2, pi/2]); NaN gives NaN."""
    a = abs(x)
    big, mid = a > TAN_3PI_8, a > 0.66
    # atan(a) = base + atan(n / d): pi/2 - atan(1/a) above tan(3 pi/8), pi/4 +
    # atan((a - 1)/(a + 1)) above 0.66, and the fit's t + t z P(z)/Q(z) at t = n/d, z = t^2,
    # as n (Q~ + N P~) / (d Q~) with N = n^2 and P~, Q~ the fit's polynomials made homogeneous
    # in N and d^2: one division where there were two (divisions are the slow part of it).
    # Beyond 1e20, atan(a) rounds to pi/2; capping d there keeps d^10 finite.
    n = -1.0 if big else (a - 1.0 if mid else a)
    d = min(a, 1e20) if big else (a + 1.0 if mid else 1.0)
    base = HALF_PI if big else (QUARTER_PI if mid else 0.0)
    extra = MOREBITS if big else (0.5 * MOREBITS if mid else 0.0)
    nn, w = n * n, d * d
    w2 = w * w
    w3, w4 = w2 * w, w2 * w2
    p0, p1, p2, p3, p4 = ATAN_P
    q0, q1, q2, q3, q4 = ATAN_Q
    p = (((p0 * nn + p1 * w) * nn + p2 * w2) * nn + p3 * w3) * nn + p4 * w4
    q = ((((nn + q0 * w) * nn + q1 * w2) * nn + q2 * w3) * nn + q3 * w4) * nn + q4 * (w4 * w)
    r = n * (q + nn * p) / (d * q)
    return math.copysign(base + (r + extra), x)


@njit(error_model="numpy", inline="always")
def _reduce(x: float, pi_4: tuple[float, float, float]) -> tuple[int, float]:
    """|x| less the even multiple k of pi/4 nearest it, and k's octant (k mod 8).

    pi/4 comes in three parts, each with few enough bits that its product with k is exact.
    """
    a = abs(x)
    k = int(a * FOUR_OVER_PI)
    k += k & 1
    y = float(k)
    d1, d2, d3 = pi_4
    return k & 7, ((a - y * d1) - y * d2) - y * d3


@njit(error_model="numpy", inline="always")
def sin_fit(x: float) -> float:
    """Sine; ``x`` in rad, within +-1e9 (beyond, pi/4 in three parts no longer reduces it)."""
    j, z = _reduce(x, SIN_PI_4)
    zz = z * z
    if j & 2:  # within pi/4 of an odd multiple of pi/2: the cosine's polynomial
        c0, c1, c2, c3, c4, c5 = COS_COEFFS
        poly = ((((c0 * zz + c1) * zz + c2) * zz + c3) * zz + c4) * zz + c5
        r = 1.0 - 0.5 * zz + zz * zz * poly
    else:
        s0, s1, s2, s3, s4, s5 = SIN_COEFFS
        poly = ((((s0 * zz + s1) * zz + s2) * zz + s3) * zz + s4) * zz + s5
        r = z + z * (zz * poly)
    sign = math.copysign(1.0, x)
    return -sign * r if j > 3 else sign * r


@njit(error_model="numpy", inline="always")
def tan_fit(x: float) -> float:
    """Tangent; ``x`` in rad, within +-1e9."""
    j, z = _reduce(x, TAN_PI_4)
    zz = z * z
    p0, p1, p2 = TAN_P
    q0, q1, q2, q3 = TAN_Q
    p = (p0 * zz + p1) * zz + p2
    q = (((zz + q0) * zz + q1) * zz + q2) * zz + q3
    # tan(z) = z (Q + z^2 P) / Q, and tan(z + pi/2) = -1 / tan(z): one division either way.
    top = z * (q + zz * p)
    odd = (j & 2) != 0
    r = (-q if odd else top) / (top if odd else q)
    return math.copysign(1.0, x) * r


@njit(error_model="numpy", inline="always")
def _libm_atan(x: float) -> float:
    return math.atan(x)


@njit(error_model="numpy", inline="always")
def _libm_sin(x: float) -> float:
    return math.sin(x)


@njit(error_model="numpy", inline="always")
def _libm_tan(x: float) -> float:
    return math.tan(x)


if WIDE_VECTORS:
    atan, sin, tan = atan_fit, sin_fit, tan_fit
else:
    atan, sin, tan = _libm_atan, _libm_sin, _libm_tan
