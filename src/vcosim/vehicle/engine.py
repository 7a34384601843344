"""Mean-value engine (seed 003, section 7.3): air path, fuel film, lambda, torque, starter.

``engine_step`` advances the air and fuel states one step and returns the torques the
driveline integrates; engine speed itself belongs to the driveline because the clutch couples
it to the wheels.
"""

from __future__ import annotations

import math

from vcosim.vehicle._jit_cache import njit
from vcosim.vehicle.layout import (
    LAMBDA_BUF_LEN,
    X_FUEL,
    X_LAMBDA_BUF,
    X_LAMBDA_I,
    X_LAMBDA_S,
    X_M_FP,
    X_MDOT_AT,
    X_OMEGA_E,
    X_P_IM,
    X_RUNNING,
    X_STEP,
)

TWO_PI = 2.0 * math.pi
LAMBDA_MAX = 5.0


IDLE_LOOKAHEAD = 0.15  # s: how far ahead the idle controller extrapolates a falling engine


@njit(error_model="numpy", inline="always")
def effective_throttle(
    pedal: float, omega_e: float, running: float, p, omega_rate: float = 0.0
) -> float:
    """Driver pedal plus the idle controller's P action below idle speed.

    The controller acts on the engine speed extrapolated ``IDLE_LOOKAHEAD`` ahead while the
    engine falls (``omega_rate`` < 0), as an engine controller's dashpot opens the idle air
    before idle is reached: through the throttle's lag and the manifold's filling, acting
    only once idle is crossed comes too late for an engine whose friction brings it down
    from high speed with the throttle shut (the seed's doubled friction stalls that way).
    """
    if running > 0.5:
        predicted = omega_e + IDLE_LOOKAHEAD * min(omega_rate, 0.0)
        if predicted < p.idle_speed:
            pedal += p.idle_gain * (p.idle_speed - predicted)
    return min(max(pedal, 0.0), 1.0)


@njit(error_model="numpy", inline="always")
def rev_limiter(omega_e: float, p) -> float:
    """Share of the fuel the rev limiter lets through: a P controller above the limit.

    The seed's limiter takes throttle away; through the throttle's 50 ms lag its gain makes
    the engine bounce by +-300 rpm. Like a real engine controller, vcosim cuts fuel instead.
    """
    return min(max(1.0 - p.rev_gain * (omega_e - p.rev_limit), 0.0), 1.0)


@njit(error_model="numpy")
def engine_step(
    x, p, throttle: float, ignition: float, dt: float, cut: float = 0.0
) -> tuple[float, float, float, float, float]:
    """Advance the engine's air/fuel states; return torques and monitoring values.

    ``cut`` is a torque reduction asked of the engine (N m; the automatic's, in the inertia
    phase of an upshift), made by retarding the spark: down to none of the indicated work
    (pumping and friction are left).

    Returns (active torque, friction torque capacity, lambda in the cylinder, injection time,
    fuel flow into the cylinders), torques in N m at the crankshaft. The active torque is
    combustion minus pumping plus the starter; friction only opposes rotation, so the
    driveline applies it as a capacity that can stop but never reverse the crankshaft.
    """
    omega_e = x[X_OMEGA_E]
    n = max(omega_e, 0.0) / TWO_PI  # rev/s
    fuel_on = ignition >= 1.5 and x[X_FUEL] > 0.0
    cranking = ignition >= 2.5

    running = x[X_RUNNING]
    if running > 0.5 and (omega_e < p.stall_speed or not fuel_on):
        running = 0.0
    elif running < 0.5 and fuel_on and omega_e > p.stall_speed:  # the starter or the wheels
        running = 1.0
    x[X_RUNNING] = running

    # Air path: demand, throttle lag, manifold filling and emptying.
    p_im = x[X_P_IM]
    mdot_max = max(p.mdot_max_per_rev * n, p.mdot_min)
    mdot_demand = p.mdot_min + throttle * (mdot_max - p.mdot_min)
    mdot_at = x[X_MDOT_AT] + dt / p.tau_th * (mdot_demand - x[X_MDOT_AT])
    x[X_MDOT_AT] = mdot_at
    # The seed's throttle flow ignores the manifold; stopping it as the manifold reaches the
    # upstream pressure (boost builds up to idle speed) keeps a stopped engine's manifold at
    # ambient pressure.
    p_up = p.p_amb + (p.p_boost - p.p_amb) * min(omega_e / p.idle_speed, 1.0)
    inflow = mdot_at * min(max((p_up - p_im) / (0.05 * p_up), 0.0), 1.0)
    eta_vol = p.c0 + p.c1 * math.sqrt(max(p_im, 0.0)) + p.c2 * math.sqrt(n)
    mdot_ac = eta_vol * p_im * n * p.V_d / (p.n_r * p.R * p.T_i)
    x[X_P_IM] = max(p_im + dt * p.R * p.T_i / p.V_i * (inflow - mdot_ac), 0.0)

    # Fuel: feed-forward from the cylinder air flow, PI on the sensed lambda.
    t_inj = 0.0
    mdot_fi = 0.0
    if running > 0.5 and n > 0.5:
        error = x[X_LAMBDA_S] - 1.0
        integral = x[X_LAMBDA_I]
        if abs(error) < 0.1:  # conditional integration: start-up and fuel cut do not wind up
            integral = min(max(integral + p.K_i_lambda * error * dt, -0.5), 0.5)
            x[X_LAMBDA_I] = integral
        correction = max(1.0 + p.K_p_lambda * error + integral, 0.0)
        t_ref = mdot_ac / (p.AF_s * p.k_inj * n) + p.t_0
        t_inj = p.t_0 + (t_ref - p.t_0) * correction
        mdot_fi = p.k_inj * n * (t_inj - p.t_0) * rev_limiter(omega_e, p)
    m_fp = x[X_M_FP]
    mdot_fc = (1.0 - p.X_fp) * mdot_fi + m_fp / p.tau_fp
    x[X_M_FP] = m_fp + dt * (p.X_fp * mdot_fi - m_fp / p.tau_fp)
    x[X_FUEL] = max(x[X_FUEL] - dt * mdot_fc / p.fuel_tank, 0.0)

    lambda_cyl = LAMBDA_MAX
    if mdot_fc > 1e-9:
        lambda_cyl = min(mdot_ac / (p.AF_s * mdot_fc), LAMBDA_MAX)

    # Lambda sensor: transport delay (ring buffer) then a first-order lag.
    delay = int(p.lambda_delay_steps)
    lambda_delayed = lambda_cyl
    if delay > 0:
        slot = X_LAMBDA_BUF + int(x[X_STEP]) % min(delay, LAMBDA_BUF_LEN)
        lambda_delayed = x[slot]
        x[slot] = lambda_cyl
    x[X_LAMBDA_S] += dt / p.tau_lambda * (lambda_delayed - x[X_LAMBDA_S])

    # Torque: indicated work of the burnt fuel (air-limited when rich), pumping, friction.
    torque = w_ig = 0.0
    if n > 0.05:
        cycles_per_s = n / p.n_r
        m_fuel = min(mdot_fc, mdot_ac / p.AF_s) / cycles_per_s
        w_ig = m_fuel * p.q_HV * p.eta_ig
        p_em = p.p_amb * (1.0 + p.cpe * n)
        w_p = p.V_d * (p_em - x[X_P_IM])
        torque = (w_ig - w_p) / (p.n_r * TWO_PI)
    fmep = p.cf0 + p.cf1 * n + p.cf2 * n * n
    friction = max(p.V_d * fmep / (p.n_r * TWO_PI), 0.0)
    if cut > 0.0:
        torque = max(torque - cut, torque - w_ig / (p.n_r * TWO_PI))
    if cranking:
        torque += p.starter_torque * max(1.0 - omega_e / p.starter_free_speed, 0.0)
    return torque, friction, lambda_cyl, t_inj, mdot_fc


@njit(error_model="numpy")
def engine_load(x, p) -> float:
    """Cylinder filling relative to full boost, in [0, 1]."""
    return min(max(x[X_P_IM] / p.p_boost, 0.0), 1.0) if x[X_RUNNING] > 0.5 else 0.0
