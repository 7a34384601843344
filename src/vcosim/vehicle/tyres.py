"""Tyre forces: Pacejka's magic formula with relaxation lengths and (optional) combined slip.

The seed's slip definitions divide by the wheel or vehicle speed and are singular at
standstill. Here the slips are first-order states that relax towards their steady-state values
over a relaxation length (Pacejka, *Tire and Vehicle Dynamics*, ch. 7): at speed they equal
the seed's slips; at rest they act as a stiff, damped tyre spring, so a parked car neither
creeps nor jitters.
"""

from __future__ import annotations

import math

import numpy as np

from vcosim.vehicle._jit_cache import njit
from vcosim.vehicle.elementary import atan, sin
from vcosim.vehicle.layout import X_ALPHA, X_KAPPA, X_OMEGA


@njit(error_model="numpy", inline="always")
def magic_formula(slip: float, b: float, c: float, e: float) -> float:
    """Normalised magic formula (D = 1): sin(C atan(B s - E (B s - atan(B s))))."""
    bs = b * slip
    return sin(c * atan(bs - e * (bs - atan(bs))))


@njit(error_model="numpy", inline="always")
def tyre_curves(x, p, s, at: int) -> None:
    """Each tyre's force per unit of its friction limit, from the transient slips, into ``s``.

    ``s[at + k]`` is wheel ``k``'s longitudinal force and ``s[at + 4 + k]`` its lateral force,
    both over mu times the load (so the forces are these times ``mu * load``, wheel frame).
    One loop over the eight curves with nothing but arithmetic in it: LLVM evaluates them as
    vectors (all eight at once with AVX-512, four at a time with AVX2), where one by one they
    were a third of the step.

    With combined slip on, both slips are normalised by their peak values and the magic
    formula is evaluated at the combined normalised slip, so the resultant stays inside the
    friction ellipse (a Bakker-Nyborg-Pacejka style similarity method). Off, the two
    directions are independent, as in the seed. The rear's lateral slip is scaled by
    ``lat_scale_rear``: the formula depends on B only through B times the slip, so that stands
    for the rear tyres' own lateral B.
    """
    # The slips copied into the scratch and the parameters read into locals first: with
    # every load and store of the loop in ``s``, LLVM can prove the lanes independent.
    for i in range(8):
        s[at + 8 + i] = x[X_KAPPA + (i & 3)]
        s[at + 16 + i] = x[X_ALPHA + (i & 3)]
    combined = p.combined >= 0.5
    kappa_peak, alpha_peak, rear_scale = p.kappa_peak, p.alpha_peak, p.lat_scale_rear
    per_kappa, per_alpha = 1.0 / kappa_peak, 1.0 / alpha_peak
    b_long, c_long, e_long = p.B_long, p.C_long, p.E_long
    b_lat, c_lat, e_lat = p.B_lat, p.C_lat, p.E_lat
    for i in range(8):
        lateral = i >= 4
        kappa = s[at + 8 + i]
        # (each wheel's slip angle in both of its lanes: the duplicate is free with AVX-512;
        # a loop of four for it alone, which LLVM unrolls and leaves scalar, measured the
        # same there and 3 % faster with AVX2)
        alpha = atan(s[at + 16 + i]) * (1.0 if (i & 3) < 2 else rear_scale)
        share, slip = 1.0, alpha if lateral else kappa
        if combined:
            rx = kappa * per_kappa
            ry = alpha * per_alpha
            rho = math.sqrt(rx * rx + ry * ry)
            share = (ry if lateral else rx) / rho if rho >= 1e-12 else 0.0
            slip = rho * (alpha_peak if lateral else kappa_peak)
        b = b_lat if lateral else b_long
        c = c_lat if lateral else c_long
        e = e_lat if lateral else e_long
        s[at + i] = share * magic_formula(slip, b, c, e)


@njit(error_model="numpy", inline="always")
def low_speed_damping(v_long: float, v_low: float, d_low: float) -> float:
    """Damping factor (s/m, times the load) that fades out above ``v_low`` (speed ``v_long``).

    The relaxation states make the tyre a spring at standstill; this adds the damper that a
    real tyre's hysteresis provides, so the spring does not ring. (The parameters come as
    values: the step reads them before its wheel loop, whose vector code they would block.)
    """
    fade = 1.0 - abs(v_long) / v_low
    return d_low * fade if fade > 0.0 else 0.0


@njit(error_model="numpy", inline="always")
def relax_slips(x, p, s, road: int, room: int, dt: float) -> None:
    """Advance the four wheels' transient slips one step (implicit in the decay term, so stable).

    Longitudinal: d kappa/dt = (slip_speed - max(|v|, |r w|) kappa) / sigma_long, whose steady
    state is the seed's slip in [-1, 1]. Lateral: d tan_a/dt = (-v_lat - |v| tan_a)/sigma_lat,
    whose steady state is tan of the slip angle. Near standstill the states stand for the
    tread's deflection, which friction bounds: they are limited to the slip where the
    linearised tyre reaches its friction limit (1 / (B C)), so a tyre that slid to a stop
    does not spring the car back. The longitudinal limit fades with the faster of road and
    wheel surface: a wheel spinning on the spot slides as it would at speed.

    ``s[road : road + 4]`` are the contact points' speeds along the wheels, the next four
    across them. The states are copied to ``s[room : room + 12]`` and the parameters read
    first, so that the loop touches nothing but ``s`` and LLVM makes vector code of it.
    """
    for k in range(4):
        s[room + k] = x[X_OMEGA + k] * p.r
        s[room + 4 + k] = x[X_KAPPA + k]
        s[room + 8 + k] = x[X_ALPHA + k]
    long_rate, lat_rate, per_v_low = dt / p.sigma_long, dt / p.sigma_lat, 1.0 / p.v_low
    kappa_sat, alpha_sat = p.kappa_sat, p.alpha_sat
    for k in range(4):
        v_long, v_lat, surface = s[road + k], s[road + 4 + k], s[room + k]
        ref = max(abs(v_long), abs(surface))
        kappa = (s[room + 4 + k] + long_rate * (surface - v_long)) / (1.0 + long_rate * ref)
        tan_alpha = (s[room + 8 + k] - lat_rate * v_lat) / (1.0 + lat_rate * abs(v_long))
        kappa_max = kappa_sat + min(ref * per_v_low, 1.0) * (1.0 - kappa_sat)
        alpha_max = alpha_sat + min(abs(v_long) * per_v_low, 1.0) * (TAN_ALPHA_MAX - alpha_sat)
        s[room + 4 + k] = min(max(kappa, -kappa_max), kappa_max)
        s[room + 8 + k] = min(max(tan_alpha, -alpha_max), alpha_max)
    for k in range(4):
        x[X_KAPPA + k], x[X_ALPHA + k] = s[room + 4 + k], s[room + 8 + k]


TAN_ALPHA_MAX = 10.0  # 84 degrees: beyond, a sliding tyre's force no longer changes


@njit(error_model="numpy", inline="always")
def aligning_moment(slip_angle: float, load: float, mu: float, p) -> float:
    """Self-aligning moment (N m, about the ground normal) that drives force feedback."""
    return -p.al_scale * mu * load * magic_formula(slip_angle, p.B_al, p.C_al, p.E_al)


@njit(error_model="numpy")
def friction_noise(step: float, wheel: int, seed: float) -> float:
    """Reproducible standard-normal noise from (step, wheel, seed): a counter-based hash.

    A hash instead of a random stream keeps ``snapshot``/``restore`` exact and batches
    independent of execution order.
    """
    key = np.uint64(int(step) * 4 + wheel) * _GOLDEN + np.uint64(int(seed)) * _M1
    u1 = _unit(_mix(key))
    u2 = _unit(_mix(key ^ _M2))
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


@njit(error_model="numpy")
def _mix(z: np.uint64) -> np.uint64:
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


@njit(error_model="numpy")
def _unit(z: np.uint64) -> float:
    return (float(z >> np.uint64(11)) + 0.5) / 9007199254740992.0
