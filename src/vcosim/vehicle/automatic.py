"""The automatic's controller: which gear it wants, and how it shifts there.

A gearbox controller's work, over the same arrays as the driveline (``vcosim.vehicle.
driveline`` integrates what it asks for): the gear from road speed and pedal
(``automatic_target``), the shift in phases (``automatic_shift``: torque and inertia phases
with the engine's torque cut, rev-matched coast downshifts, ramped garage shifts, kickdowns)
and the lock-up clutch (``lockup_request``). What the shifts do, with figures:
docs/vehicle-model.md, "Shift quality".
"""

from __future__ import annotations

import math

from vcosim.vehicle._jit_cache import njit
from vcosim.vehicle.driveline import SLIP_LOCK, converter_torques, gear_ratio
from vcosim.vehicle.layout import (
    X_CLUTCH_TORQUE,
    X_GEAR,
    X_LOCKED,
    X_LOCKUP,
    X_OMEGA,
    X_OMEGA_E,
    X_OMEGA_E_LAST,
    X_OMEGA_T,
    X_REFUSALS,
    X_SELECTOR,
    X_SHIFT_HELD,
    X_SHIFT_KIND,
    X_SHIFT_T,
    X_SHIFT_TO,
    X_VEL,
)

LOCKUP_APPLY_TIME = 0.5  # s: the lock-up clutch closes over this
LOCKUP_RELEASE_TIME = 0.05  # s: and opens over this
KICKDOWN_THROTTLE = 0.9  # pedal beyond which the automatic kicks down
KICKDOWN_RPM_SHARE = 0.85  # of the full-throttle upshift speed: the kickdown's highest rpm
BRAKE_HOLD = 0.1  # brake pedal beyond which the automatic does not change up


@njit(error_model="numpy")
def gear_for_speed(omega_out: float, p) -> float:
    """The forward gear an automatic engages rolling at output speed ``omega_out`` (rad/s).

    The highest gear that keeps the turbine above the light-throttle upshift point's share
    for the gear below it: the gear it would be driving in at that speed.
    """
    for g in range(5, 1, -1):
        if gear_ratio(float(g), p) * omega_out >= 1.9 * p.down_rpm:
            return float(g)
    return 1.0


@njit(error_model="numpy")
def automatic_target(x, p, selector: float, throttle: float, brake: float) -> float:
    """Gear the automatic wants: selector -1 R, 0 N, >= 1 D (gears 1..5 by road speed).

    Gears are chosen from the road speed (the body's, as a gearbox controller takes it from
    the ABS's reference speed), so locked or spinning wheels never pick a gear. R and D
    engage only while the car is slower than ``auto_v_engage`` against them; a request
    beyond that leaves the box in neutral and is counted once (``shift_refusals``). With the
    brake pressed beyond a light touch (``BRAKE_HOLD``) it does not change up (an automatic
    holds or changes down under the brake), unless the engine reaches the full-throttle
    upshift speed.
    """
    sel = max(min(round(selector), 1.0), -1.0)
    fresh = sel != x[X_SELECTOR]
    x[X_SELECTOR] = sel
    gear = x[X_GEAR]
    shifting = x[X_SHIFT_T] >= 0.0
    v = x[X_VEL]
    if sel < 0.0:
        if gear < 0.0 or (shifting and x[X_SHIFT_TO] < 0.0) or v < p.auto_v_engage:
            return -1.0
        if fresh:
            x[X_REFUSALS] += 1.0
        return 0.0
    if sel == 0.0:
        return 0.0
    if gear < 1.0 and not (shifting and x[X_SHIFT_TO] >= 1.0):
        if v > -p.auto_v_engage:
            return gear_for_speed(max(v, 0.0) / p.r, p)
        if fresh:
            x[X_REFUSALS] += 1.0
        return 0.0
    if shifting:
        return x[X_SHIFT_TO]
    pedal = min(max(throttle, 0.0), 1.0)
    omega_out = max(v, 0.0) / p.r
    omega_in = gear_ratio(gear, p) * omega_out
    low = 1.9 * p.down_rpm
    upshift_at = low + pedal * (p.up_rpm - low)
    if pedal >= KICKDOWN_THROTTLE:
        for g in range(1, int(gear)):
            if gear_ratio(float(g), p) * omega_out < KICKDOWN_RPM_SHARE * p.up_rpm:
                return float(g)
    above = gear_ratio(gear + 1.0, p) * omega_out if gear < 5.0 else 0.0
    holding = brake > BRAKE_HOLD and omega_in < p.up_rpm
    if omega_in > upshift_at and above > 1.15 * p.down_rpm and not holding:
        return gear + 1.0
    below = gear_ratio(gear - 1.0, p) * omega_out if gear > 1.0 else math.inf
    if omega_in < p.down_rpm * (1.0 + pedal) and below < 0.9 * upshift_at:
        return gear - 1.0
    return gear


UPSHIFT, GARAGE, KICKDOWN, COAST_DOWN = 1.0, 2.0, 3.0, 4.0  # the automatic's kinds of shift
TORQUE_PHASE = 0.25  # share of auto_shift_time for the torque phase; the inertia phase the rest
GARAGE_PACE = 2.5  # a garage shift (into D or R from N or the other) takes this x auto_shift_time
GARAGE_PEDAL = 9.0  # ... over 1 + this x the pedal: 0.1 s of rise at 0.4 s shifts, full throttle
INERTIA_FLOOR = 0.1  # s: the shortest time the slip control plans to close the slip in
CLOSING_RATE = 200.0  # N m/s: a coast downshift's element grips by this much more past its time
REV_MATCH_SPAN = 30.0  # rad/s: the rev match's throttle is fully open this far below its aim
REV_MATCH_LOOKAHEAD = 0.2  # s: it aims with the engine speed extrapolated this far
REV_MATCH_OVER = 1.03  # and at this much over the new gear's speed, so the speeds meet
OVERTIME = 3.0  # an upshift's slip is closed by this x its time, whatever the engine can do
COAST_HOLD = 0.4  # share of the engine braking a coast downshift keeps through its rev match


@njit(error_model="numpy", inline="always")
def _on_coming(x, p) -> tuple[float, float]:
    """Engage the target gear's element (slipping); return its slip and synchronous speed."""
    if x[X_GEAR] != x[X_SHIFT_TO]:
        x[X_GEAR] = x[X_SHIFT_TO]
        x[X_LOCKED] = 0.0
    synchronous = gear_ratio(x[X_GEAR], p) * 0.5 * (x[X_OMEGA + 2] + x[X_OMEGA + 3])
    return x[X_OMEGA_T] - synchronous, synchronous


@njit(error_model="numpy")
def _upshift(x, p, t: float, span: float) -> tuple[float, float, float, bool]:
    """Torque phase, then inertia phase: (engagement, overlap, engine torque cut, done)."""
    torque_phase = TORQUE_PHASE * span
    if t < torque_phase:
        return 1.0, t / torque_phase, 0.0, False
    slip, _ = _on_coming(x, p)
    if (abs(slip) < SLIP_LOCK and x[X_LOCKED] > 0.5) or t >= (OVERTIME + 0.5) * span:
        return 1.0, 0.0, 0.0, True
    # The slip follows (1 - tau)^2 to zero by the end: its rate falls to zero with it, so the
    # input lands on the new gear's speed without a jerk; no faster than the engine's torque
    # (about the pump's) can take engine and turbine down, or the converter would (into the
    # car); but closed by ``OVERTIME``, the converter taking what the engine can't.
    pump, turbine = converter_torques(x[X_OMEGA_E], x[X_OMEGA_T], p)
    rate = 2.0 * slip / max(span - t, INERTIA_FLOOR)
    rate = min(rate, max(pump, 0.0) / (p.J_e + p.J_t))
    rate = max(rate, 2.0 * slip / max(OVERTIME * span - t, INERTIA_FLOOR), 0.0)
    engagement = max(turbine + p.J_t * rate, 1.0) / p.shift_capacity
    return engagement, 0.0, (p.J_e + p.J_t) * rate, False


@njit(error_model="numpy")
def _coast_downshift(x, p, t: float, span: float, dt: float) -> tuple[float, float, bool]:
    """Release, rev match, grip: (engagement, engine speed asked for, done)."""
    release = TORQUE_PHASE * span
    kept = COAST_HOLD * x[X_SHIFT_HELD]  # the engine braking kept, at the old gear's ratio
    if t < release:  # the engaged element lets go of its torque linearly down to ``kept``
        left = release - t
        held = kept + (abs(x[X_CLUTCH_TORQUE]) - kept) * max(left - dt, 0.0) / left
        return max(held, kept) / p.shift_capacity, 0.0, False
    old_ratio = gear_ratio(x[X_GEAR], p)
    slip, synchronous = _on_coming(x, p)
    if abs(slip) < SLIP_LOCK and x[X_LOCKED] > 0.5:
        return 1.0, 0.0, True
    # The engine, not the car, brings engine and turbine up to the new gear's speed and a
    # little past it (the rev match); the on-coming element takes the turbine's inertia as
    # it follows the engine and, slipping, the share of the engine braking the off-going one
    # kept (the same torque at the wheels, at the new ratio), so the car does not lose its
    # engine braking all at once; it grips once the speeds meet, and past its time closes
    # the rest with the car's momentum.
    rising = max(x[X_OMEGA_E] - x[X_OMEGA_E_LAST], 0.0) / dt
    late = max(t - span, 0.0) * CLOSING_RATE
    drag = kept * old_ratio / max(gear_ratio(x[X_GEAR], p), 1e-9)
    engagement = (p.J_t * rising + 1.0 + late + drag) / p.shift_capacity
    return engagement, REV_MATCH_OVER * synchronous + SLIP_LOCK, False


@njit(error_model="numpy")
def automatic_shift(
    x, p, target: float, throttle: float, dt: float
) -> tuple[float, float, float, float]:
    """The automatic's shift towards ``target`` as a calibrated gearbox controller runs it.

    Returns (engagement: the shift elements' capacity over ``shift_capacity``, overlap: the
    on-coming element's share of the input torque in the torque phase, the torque reduction
    the gearbox asks of the engine (N m), the engine speed it asks for (a rev match; 0:
    none)). The kind of shift is chosen when it starts (``X_SHIFT_KIND``):

    - **upshift**: a torque phase of ``TORQUE_PHASE`` x ``auto_shift_time`` hands the input
      torque from the off-going element (old ratio) to the on-coming one while the input
      still turns with the old gear, so the output torque moves from the old gear's level
      to the new one's without a hole; then the inertia phase, the rest of
      ``auto_shift_time``: the on-coming element slips, its capacity set each step to the
      turbine's torque plus what brings the slip to zero by the end along (1 - tau)^2, and
      the engine's torque is cut by what its and the turbine's inertia give up, so they come
      down without pushing the car. It ends when the element locks;
    - **coast downshift** (pedal below 0.1): the engaged element lets go of its torque over
      the first quarter; then the throttle brings the engine up to the new gear's speed (a
      rev match) and the on-coming element grips once the speeds meet;
    - **garage** (into D or R from N or the other): the gear engages at once and the
      elements' capacity rises from 0 to the converter's stall torque at the engine's speed
      (at idle: the creep torque) over ``GARAGE_PACE`` x ``auto_shift_time`` (1 s; shorter
      with the pedal pressed, 0.1 s at full throttle), then to full: the car creeps off, it
      does not lurch; into N the elements open at once;
    - **kickdown** (a downshift under power): the elements open, the engine revs up by
      itself, the gear changes at 0.375 and the elements close by 1 x ``auto_shift_time``
      (the seed's clutch timing scaled); they only drive (one way).
    """
    t = x[X_SHIFT_T]
    gear = x[X_GEAR]
    span = p.auto_pace * p.t_shift  # auto_shift_time
    if t >= 0.0 and target != x[X_SHIFT_TO] and target <= 0.0:
        t = -1.0  # N or R asked in a running shift: at once
    if t < 0.0:
        if target == gear:
            return 1.0, 0.0, 0.0, 0.0
        x[X_SHIFT_TO] = target
        if gear < 1.0 or target < 1.0:
            x[X_SHIFT_KIND] = GARAGE
            x[X_GEAR] = target
            if target == 0.0:
                return 1.0, 0.0, 0.0, 0.0
        elif target > gear:
            x[X_SHIFT_KIND] = UPSHIFT
        else:
            x[X_SHIFT_KIND] = KICKDOWN if throttle >= 0.1 else COAST_DOWN
            x[X_SHIFT_HELD] = abs(x[X_CLUTCH_TORQUE])
        t = 0.0
    kind = x[X_SHIFT_KIND]
    engagement, overlap, cut, goal, done = 1.0, 0.0, 0.0, 0.0, False
    if kind == UPSHIFT:
        engagement, overlap, cut, done = _upshift(x, p, t, span)
    elif kind == COAST_DOWN:
        engagement, goal, done = _coast_downshift(x, p, t, span, dt)
    elif kind == GARAGE:
        # Up to the converter's stall torque at the engine's speed (at idle: what it creeps
        # with), over a rise the pedal shortens (a driver pulling away at once is not held).
        rise = GARAGE_PACE * span / (1.0 + GARAGE_PEDAL * min(max(throttle, 0.0), 1.0))
        omega = max(x[X_OMEGA_E], p.idle_speed)
        stall = min(p.tc_ratio * p.tc_capacity * omega * omega, p.shift_capacity)
        if t < rise:
            engagement = stall * t / rise / p.shift_capacity
        else:
            close = min((t - rise) / (TORQUE_PHASE * span), 1.0)
            engagement = (stall + close * (p.shift_capacity - stall)) / p.shift_capacity
            done = close >= 1.0
    else:
        pace = p.auto_pace
        if t < p.t_gear_change * pace:
            engagement = max(1.0 - t / (p.t_clutch_press * pace), 0.0)
        else:
            x[X_GEAR] = x[X_SHIFT_TO]
            engagement = min((t - p.t_gear_change * pace) / (p.t_clutch_release * pace), 1.0)
        done = t >= p.t_shift * pace - 0.25 * dt
    t += dt
    x[X_SHIFT_T] = -1.0 if done else t
    return engagement, overlap, cut, goal


@njit(error_model="numpy")
def lockup_request(x, p, brake: float, throttle: float, shifting: bool) -> float:
    """Lock-up engagement the automatic asks for: bridged in 2nd and up at cruise.

    It closes once the turbine turns faster than ``lockup_speed`` and opens below 80 % of
    that, on any brake (the wheels may lock: the engine must not follow them), in every
    shift, at a kickdown pedal (the converter multiplies the torque) and whenever the
    engine is near idle.
    """
    if brake > 0.0 or shifting or x[X_GEAR] < 2.0 or x[X_OMEGA_E] < 1.2 * p.idle_speed:
        return 0.0
    if throttle >= KICKDOWN_THROTTLE:
        return 0.0
    hold = 0.8 if x[X_LOCKUP] > 0.0 else 1.0
    return 1.0 if x[X_OMEGA_T] > hold * p.lockup_speed else 0.0
