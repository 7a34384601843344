"""The key figures of each manoeuvre, computed the same way from either model's traces.

Definitions follow the standards (ISO 4138, ISO 7401, FMVSS 126, ECE R13-H, SAE J2263);
docs/datasheet.md states each one. Angles are reported in degrees, accelerations in g where
the field does so (deg/g gradients), times in seconds.
"""

from __future__ import annotations

import math

import numpy as np

from vcosim.datasheet.manoeuvres import (
    SAMPLE,
    STEP_START,
    SWD_FREQUENCY,
    Trace,
    swd_completion,
)

G = 9.81
LINEAR_RANGE = (0.5, 4.0)  # m/s^2: the linear range of the comparison (a_y <= 4 m/s^2)
SPIN_BETA = math.radians(10)  # a ramp run ends for the figures once the sideslip passes this


def smooth(values: np.ndarray, seconds: float) -> np.ndarray:
    """Centred moving average over ``seconds`` (the lateral acceleration is differentiated)."""
    n = max(1, round(seconds / SAMPLE))
    if n == 1 or len(values) < n:
        return values
    kernel = np.ones(n) / n
    padded = np.pad(values, (n // 2, n - 1 - n // 2), mode="edge")
    return np.convolve(padded, kernel, mode="valid")


def _slope(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Least-squares line y = slope x + intercept."""
    slope, intercept = np.polyfit(x, y, 1)
    return float(slope), float(intercept)


def _rising_part(trace: Trace, a_y: np.ndarray) -> int:
    """Samples up to the peak lateral acceleration, while the car is in a steady state.

    That ends where the sideslip passes ``SPIN_BETA`` or a_y = v r stops holding.
    """
    unsteady = np.abs(a_y - trace.speed * trace.yaw_rate) > 1.0  # a_y = v r when steady
    over = np.nonzero((np.abs(trace.beta) > SPIN_BETA) | unsteady)[0]
    end = int(over[0]) if len(over) else len(trace.t)
    return int(np.argmax(a_y[:end])) + 1


def steady_state(trace: Trace, wheelbase: float) -> dict[str, float | str]:
    """ISO 4138 constant speed, slowly increasing steer: gradients over the linear range.

    The ramp is slow but not infinitely so: the outputs lag the steering by a roughly
    constant time, which shifts each line but not its slope, so every gradient and the gain
    are slopes of straight-line fits.
    """
    a_y = smooth(trace.a_y, 0.5)
    end = _rising_part(trace, a_y)
    a_y = a_y[:end]
    delta, r, beta, roll = (
        arr[:end] for arr in (trace.delta, trace.yaw_rate, trace.beta, trace.roll)
    )
    lo, hi = LINEAR_RANGE
    linear = (a_y >= lo) & (a_y <= hi)
    speed = float(np.mean(trace.speed[:end][linear]))
    steer_slope, steer_zero = _slope(a_y[linear], delta[linear])
    understeer = steer_slope - wheelbase / speed**2  # rad per m/s^2
    return {
        "speed_kmh": speed * 3.6,
        "understeer_gradient_deg_per_g": math.degrees(understeer) * G,
        "steer_gradient_deg_per_g": math.degrees(steer_slope) * G,
        "steer_character": "understeer" if understeer > 0 else "oversteer",
        "characteristic_speed_kmh": math.sqrt(wheelbase / max(abs(understeer), 1e-9)) * 3.6,
        "yaw_rate_gain_per_s": _slope(delta[linear], r[linear])[0],
        "max_lateral_acceleration_g": float(np.max(a_y)) / G,
        "sideslip_gradient_deg_per_g": math.degrees(_slope(a_y[linear], beta[linear])[0]) * G,
        "roll_gradient_deg_per_g": math.degrees(_slope(a_y[linear], roll[linear])[0]) * G,
        "steer_at_4ms2_deg": math.degrees(steer_zero + 4.0 * steer_slope),
        "steer_at_03g_deg": math.degrees(steer_zero + 0.3 * G * steer_slope),
    }


def _first_at(t: np.ndarray, values: np.ndarray, level: float, after: float) -> float:
    """First time after ``after`` that ``values`` reaches ``level`` (interpolated)."""
    idx = np.nonzero((t >= after) & (values >= level))[0]
    if not len(idx):
        return math.nan
    i = int(idx[0])
    if i == 0 or values[i] == values[i - 1]:
        return float(t[i])
    return float(t[i - 1] + (level - values[i - 1]) / (values[i] - values[i - 1]) * SAMPLE)


def step_response(trace: Trace) -> dict[str, float]:
    """ISO 7401 step: times from 50 % steer to 90 % (response) and to the peak of each output."""
    t, delta = trace.t, trace.delta
    t50 = _first_at(t, delta, 0.5 * delta[-1], 0.0)
    tail = t >= t[-1] - 1.0
    a_y = smooth(trace.a_y, 0.02)
    r_ss, ay_ss = float(np.mean(trace.yaw_rate[tail])), float(np.mean(a_y[tail]))
    after = t >= t50
    peak = int(np.argmax(np.where(after, trace.yaw_rate, -np.inf)))
    return {
        "steady_yaw_rate_deg_s": math.degrees(r_ss),
        "steady_lateral_acceleration": ay_ss,
        "yaw_rate_response_time_s": _first_at(t, trace.yaw_rate, 0.9 * r_ss, t50) - t50,
        "yaw_rate_peak_time_s": float(t[peak]) - t50,
        "yaw_rate_overshoot_percent": (float(trace.yaw_rate[peak]) / r_ss - 1) * 100,
        "lateral_acceleration_response_time_s": _first_at(t, a_y, 0.9 * ay_ss, t50) - t50,
    }


def _phasor(t: np.ndarray, values: np.ndarray, frequency: float) -> complex:
    """Complex amplitude of ``values`` at ``frequency`` (least squares with an offset)."""
    w = 2 * math.pi * frequency
    basis = np.column_stack([np.sin(w * t), np.cos(w * t), np.ones_like(t)])
    (s, c, _), *_ = np.linalg.lstsq(basis, values, rcond=None)
    return complex(s, c)


def frequency_point(trace: Trace, frequency: float) -> tuple[float, float]:
    """Yaw-rate gain (1/s) and phase (deg) over the last two periods of a sine run."""
    window = trace.t >= trace.t[-1] - 2 / frequency
    t = trace.t[window]
    ratio = _phasor(t, trace.yaw_rate[window], frequency) / _phasor(
        t, trace.delta[window], frequency
    )
    return abs(ratio), math.degrees(math.atan2(ratio.imag, ratio.real))


def frequency_response(
    frequencies: tuple[float, ...], gains: list[float], phases: list[float], static_gain: float
) -> dict[str, float]:
    """Bandwidth: the frequency where the gain falls 3 dB below the steady-state gain."""
    f = np.asarray(frequencies)
    gain = np.asarray(gains) / static_gain
    phase = np.degrees(np.unwrap(np.radians(phases)))
    below = np.nonzero(gain < 1 / math.sqrt(2))[0]
    if len(below) and below[0] > 0:
        i = int(below[0])
        x0, x1 = math.log(f[i - 1]), math.log(f[i])
        frac = (gain[i - 1] - 1 / math.sqrt(2)) / (gain[i - 1] - gain[i])
        bandwidth = math.exp(x0 + frac * (x1 - x0))
    else:
        bandwidth = float(f[-1]) if not len(below) else float(f[0])
    return {
        "yaw_bandwidth_hz": bandwidth,
        "yaw_bandwidth_reached": float(len(below) > 0),
        "gain_peak_ratio": float(np.max(gain)),
        "phase_at_1hz_deg": float(np.interp(0.0, np.log(f), phase)),
    }


def _at(trace: Trace, values: np.ndarray, time: float) -> float:
    """A value at a time, NaN past the end of a run that stopped early."""
    return float(np.interp(time, trace.t, values)) if time <= trace.t[-1] else math.nan


def sine_with_dwell(trace: Trace) -> dict[str, float]:
    """FMVSS 126: yaw-rate ratios at T0 + 1 s and T0 + 1.75 s, lateral displacement at 1.07 s."""
    t0 = swd_completion()
    reversal = STEP_START + 0.5 / SWD_FREQUENCY
    lobe = (trace.t >= reversal) & (trace.t <= t0 + 1.0)
    peak = float(np.min(trace.yaw_rate[lobe])) if lobe.any() else math.nan
    spun = trace.t[-1] < t0 + 1.75 or bool(np.any(np.abs(trace.beta) > math.radians(45)))
    if spun:  # the ratios of a spinning car measure the spin, not the recovery: none
        peak = math.nan
    return {
        "spun": float(spun),  # the run ended early or the car slid past 45 deg: it spun
        "peak_yaw_rate_deg_s": math.degrees(peak),
        "yaw_rate_ratio_1s_percent": _at(trace, trace.yaw_rate, t0 + 1.0) / peak * 100,
        "yaw_rate_ratio_1_75s_percent": _at(trace, trace.yaw_rate, t0 + 1.75) / peak * 100,
        "lateral_displacement_m": _at(trace, trace.y, STEP_START + 1.07)
        - _at(trace, trace.y, STEP_START),
    }


def _nanmax(values: list[float]) -> float:
    finite = [v for v in values if math.isfinite(v)]
    return max(finite) if finite else math.nan


def swd_summary(points: dict[float, dict[str, float]]) -> dict[str, float]:
    """The worst case over the amplitudes.

    The largest ratios of the runs that did not spin, the smallest displacement at >= 5 A,
    and the smallest amplitude at which the car spun (NaN: it never did).
    """
    ratios_1 = [p["yaw_rate_ratio_1s_percent"] for p in points.values()]
    ratios_175 = [p["yaw_rate_ratio_1_75s_percent"] for p in points.values()]
    displaced = [p["lateral_displacement_m"] for f, p in points.items() if f >= 5.0]
    spins = [f for f, p in points.items() if p["spun"]]
    return {
        "max_yaw_rate_ratio_1s_percent": _nanmax(ratios_1),
        "max_yaw_rate_ratio_1_75s_percent": _nanmax(ratios_175),
        "spins_from_amplitude_a": min(spins) if spins else math.nan,
        "min_lateral_displacement_m": float(np.nanmin(displaced)) if displaced else math.nan,
    }


def crossing(t: np.ndarray, values: np.ndarray, level: float) -> float:
    """First time ``values`` reaches ``level`` from below (interpolated), NaN if never."""
    idx = np.nonzero(values >= level)[0]
    if not len(idx) or idx[0] == 0:
        return math.nan
    i = int(idx[0])
    frac = (level - values[i - 1]) / (values[i] - values[i - 1])
    return float(t[i - 1] + frac * (t[i] - t[i - 1]))


def braking(t: np.ndarray, speed: np.ndarray) -> dict[str, float]:
    """Stopping distance from the pedal and ECE R13-H's mean fully developed deceleration."""
    distance = np.concatenate([[0.0], np.cumsum(0.5 * (speed[1:] + speed[:-1]) * np.diff(t))])
    v0 = speed[0]
    stopped = np.nonzero(speed <= 0.05)[0]
    end = int(stopped[0]) if len(stopped) else len(t) - 1
    s_b = float(np.interp(-0.8 * v0, -speed[: end + 1], distance[: end + 1]))
    s_e = float(np.interp(-0.1 * v0, -speed[: end + 1], distance[: end + 1]))
    return {
        "stopping_distance_m": float(distance[end]),
        "stopping_time_s": float(t[end]),
        "mfdd_m_s2": ((0.8 * v0) ** 2 - (0.1 * v0) ** 2) / (2 * (s_e - s_b)),
    }


def coast_down(t: np.ndarray, speed: np.ndarray, equivalent_mass: float) -> dict[str, float]:
    """SAE J2263-style road-load fit F = F0 + F1 v + F2 v^2 from the deceleration."""
    v = smooth(speed, 0.5)
    decel = -np.gradient(v, t)
    keep = (v > 15 / 3.6) & (v < 125 / 3.6)
    if not keep.any() or np.ptp(v[keep]) < 5.0:  # hardly slows down (no resistance): F0 only
        f2, f1, f0 = 0.0, 0.0, float(np.mean(equivalent_mass * decel))
    else:
        f2, f1, f0 = np.polyfit(v[keep], equivalent_mass * decel[keep], 2)
    return {
        "f0_n": float(f0),
        "f1_n_per_m_s": float(f1),
        "f2_n_per_m2_s2": float(f2),
        "road_load_100kmh_n": float(f0 + f1 * 27.78 + f2 * 27.78**2),
    }
