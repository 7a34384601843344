"""Shifter, clutch, gearbox, propeller shaft, final drive, open differential, wheel spin.

The seed's driveline is rigid: with the clutch locked, engine and driven wheels turn together.
Here the clutch is a friction element with a torque capacity: it slips when the torque needed
to keep it locked exceeds the capacity, and locks again when the slip changes sign. Brakes,
rolling resistance and engine friction are friction torques as well: they can stop a rotation
within a step but never reverse it, which keeps standstill exact.
"""

from __future__ import annotations

import math

from vcosim.vehicle._jit_cache import njit
from vcosim.vehicle.layout import (
    X_CLUTCH_TORQUE,
    X_GEAR,
    X_LOCKED,
    X_LOCKUP,
    X_LOCKUP_LOCKED,
    X_OMEGA,
    X_OMEGA_E,
    X_OMEGA_E_LAST,
    X_OMEGA_T,
    X_REFUSALS,
    X_SELECTOR,
    X_SHIFT_KIND,
    X_SHIFT_T,
    X_SHIFT_TO,
    X_VEL,
)

SLIP_LOCK = 1.0  # rad/s: a slipping clutch closer than this to synchronous speed may lock
STICTION = 1.25  # static over sliding friction of brakes and bearings on a wheel at rest


@njit(error_model="numpy", inline="always")
def gear_ratio(gear: float, p) -> float:
    """Overall ratio engine/wheel for the engaged gear (0 in neutral, negative in reverse)."""
    g = int(round(gear))
    if g == 0:
        return 0.0
    ratios = (p.ratio_R, p.ratio_1, p.ratio_2, p.ratio_3, p.ratio_4, p.ratio_5)
    return ratios[0 if g < 0 else min(g, 5)] * p.final_drive


@njit(error_model="numpy")
def shifter(x, p, target: float, dt: float) -> tuple[float, float]:
    """The manual's shift towards ``target`` with the seed's pedal timing, one gear at a time.

    Returns the factors (throttle, clutch engagement) the shift imposes on the driver's
    pedals: the throttle is released while the clutch is pressed, the gear changes while the
    clutch is open, then the clutch is let out and the throttle handed back. (The automatic
    shifts in phases of its own: ``automatic_shift``.)
    """
    t = x[X_SHIFT_T]
    if t < 0.0:
        if target == x[X_GEAR]:
            return 1.0, 1.0
        x[X_SHIFT_TO] = x[X_GEAR] + (1.0 if target > x[X_GEAR] else -1.0)
        t = 0.0
    if t < p.t_gear_change:
        throttle = max(1.0 - t / p.t_acc_release, 0.0)
        clutch = max(1.0 - t / p.t_clutch_press, 0.0)
    else:
        x[X_GEAR] = x[X_SHIFT_TO]
        clutch = min((t - p.t_gear_change) / p.t_clutch_release, 1.0)
        throttle = (t - (p.t_shift - p.t_acc_press)) / p.t_acc_press
        throttle = min(max(throttle, 0.0), 1.0)
    t += dt
    x[X_SHIFT_T] = -1.0 if t >= p.t_shift - 0.25 * dt else t
    return throttle, clutch


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
    if t < release:  # the engaged element lets go of its torque linearly, from what it held
        left = release - t
        held = abs(x[X_CLUTCH_TORQUE]) * max(left - dt, 0.0) / left
        return held / p.shift_capacity, 0.0, False
    slip, synchronous = _on_coming(x, p)
    if abs(slip) < SLIP_LOCK and x[X_LOCKED] > 0.5:
        return 1.0, 0.0, True
    # The engine, not the car, brings engine and turbine up to the new gear's speed and a
    # little past it (the rev match); the on-coming element only takes the turbine's inertia
    # as it follows the engine, grips once the speeds meet, and past its time closes the
    # rest with the car's momentum.
    rising = max(x[X_OMEGA_E] - x[X_OMEGA_E_LAST], 0.0) / dt
    late = max(t - span, 0.0) * CLOSING_RATE
    engagement = (p.J_t * rising + 1.0 + late) / p.shift_capacity
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


LOCKUP_APPLY_TIME = 0.5  # s: the lock-up clutch closes over this
LOCKUP_RELEASE_TIME = 0.05  # s: and opens over this


@njit(error_model="numpy", inline="always")
def converter_torques(omega_p: float, omega_t: float, p) -> tuple[float, float]:
    """Torque on the pump (engine) and on the turbine (N m) of the torque converter.

    Capacity-factor model: with the pump faster, the pump absorbs ``C w_p^2 (1 - SR^6)``
    (SR = w_t / w_p, the speed ratio: constant capacity up to near coupling, none at SR = 1)
    and the turbine gets that times the torque ratio, falling linearly from the stall ratio
    to 1 at the coupling point. Driven from the wheels (turbine faster) it works as a fluid
    coupling the other way, which is what makes engine braking in D.
    """
    c = p.tc_capacity
    if omega_p > omega_t:
        sr = omega_t / omega_p if omega_t > 0.0 else 0.0
        sr3 = sr * sr * sr
        torque = c * omega_p * omega_p * (1.0 - sr3 * sr3)
        ratio = p.tc_ratio + (1.0 - p.tc_ratio) * min(sr / p.tc_coupling, 1.0)
        return torque, ratio * torque
    if omega_t > omega_p:
        sr = max(omega_p, 0.0) / omega_t
        sr3 = sr * sr * sr
        torque = -c * omega_t * omega_t * (1.0 - sr3 * sr3)
        return torque, torque
    return 0.0, 0.0


@njit(error_model="numpy", inline="always")
def friction_clamp(omega_free: float, capacity_step: float) -> float:
    """Apply a friction torque (as a speed change per step) that can stop but not reverse."""
    if omega_free > capacity_step:
        return omega_free - capacity_step
    if omega_free < -capacity_step:
        return omega_free + capacity_step
    return 0.0


@njit(error_model="numpy", inline="always")
def _sign(v: float, eps: float = 1e-6) -> float:
    return 1.0 if v > eps else (-1.0 if v < -eps else 0.0)


@njit(error_model="numpy")
def driveline_step(
    x,
    p,
    s,
    engine_torque: float,
    engine_friction: float,
    engagement: float,
    torque_mode: bool,
    automatic: bool,
    one_way: bool,
    dt: float,
    overlap: float = 0.0,
) -> float:
    """Integrate engine, turbine and the four wheel speeds one step; return the clutch torque.

    The gearbox's clutch (the driver's, or the automatic's shift elements at ``engagement``
    of their capacity) couples an input shaft to the driven wheels: the engine with the
    manual; with the automatic the converter's turbine, or engine and turbine as one while
    the lock-up clutch is locked. ``one_way``: the clutch only drives, never holds back (the
    automatic's shift elements in a kickdown: the engine revs up to the new gear's speed by
    itself before they grip, so the car is not slowed). ``overlap`` (the automatic's torque
    phase): the share of the input torque the on-coming element (the target gear's ratio)
    takes, slipping, while the off-going one (the engaged gear) stays locked and carries
    the rest; the output torque moves from the old gear's ratio to the new one's.

    Scratch ``s`` carries per wheel (index k): s[k] tyre longitudinal force (N),
    s[4+k] drive torque from outside the powertrain (torque mode), s[8+k] brake torque
    capacity, s[12+k] rolling-resistance capacity. On return: s[16+k] propulsion torque,
    s[20+k] applied brake torque, s[24+k] applied friction torque (rolling + shaft losses).
    """
    r, jw = p.r, p.J_w
    ratio = 0.0 if torque_mode else gear_ratio(x[X_GEAR], p)
    omega_e = x[X_OMEGA_E]
    w_rl, w_rr = x[X_OMEGA + 2], x[X_OMEGA + 3]
    mean_rear = 0.5 * (w_rl + w_rr)
    shared_loss = 0.5 * (p.F_k + p.F_s) * p.final_drive * p.final_drive * mean_rear

    bridged = automatic and x[X_LOCKUP_LOCKED] > 0.5 and x[X_LOCKUP] >= 1.0
    pump = lockup_torque = 0.0
    if not automatic:
        omega_in, j_in, torque_in, friction_in = omega_e, p.J_e, engine_torque, engine_friction
        capacity = engagement * p.clutch_capacity
    elif bridged:
        omega_in, j_in = omega_e, p.J_e + p.J_t
        torque_in, friction_in = engine_torque, engine_friction
        capacity = engagement * p.shift_capacity
    else:
        omega_in = x[X_OMEGA_T]
        pump, turbine = converter_torques(omega_e, omega_in, p)
        # A slipping lock-up clutch passes the torque that would close its slip within the
        # step, up to its capacity: it closes without chattering across zero slip.
        closing = (omega_e - omega_in) / (dt * (1.0 / p.J_e + 1.0 / p.J_t))
        grip = x[X_LOCKUP] * p.clutch_capacity
        lockup_torque = min(max(closing, -grip), grip)
        j_in, torque_in, friction_in = p.J_t, turbine + lockup_torque, 0.0
        capacity = engagement * p.shift_capacity

    # The torque phase: the on-coming element takes its share of the input torque, slipping
    # (when its slip drives the torque that way), outside the off-going element's lock.
    on_torque = on_ratio = 0.0
    if overlap > 0.0 and ratio != 0.0:
        on_ratio = gear_ratio(x[X_SHIFT_TO], p)
        if torque_in * (omega_in - on_ratio * mean_rear) > 0.0:
            on_torque = overlap * torque_in
            torque_in -= on_torque
    on_wheel = 0.5 * on_ratio * on_torque

    clutch_torque = 0.0
    locked = x[X_LOCKED] > 0.5
    if ratio != 0.0 and capacity > 0.0:
        acc_in = (torque_in - friction_in * _sign(omega_in)) / j_in
        acc_rear = 0.0
        for k in (2, 3):
            loss = shared_loss + p.F_d * x[X_OMEGA + k]
            resist = s[8 + k] + s[12 + k]
            acc_rear += 0.5 * (on_wheel - s[k] * r - loss - resist * _sign(x[X_OMEGA + k])) / jw
        needed = (acc_in - ratio * acc_rear) / (1.0 / j_in + ratio * ratio / (2.0 * jw))
        slip = omega_in - ratio * mean_rear
        if abs(needed) <= capacity and (locked or abs(slip) < SLIP_LOCK):
            locked = True
            clutch_torque = needed
        else:
            locked = False
            direction = _sign(slip, 1e-9) if abs(slip) > 1e-9 else _sign(needed, 0.0)
            clutch_torque = capacity * direction
        if one_way and clutch_torque * ratio < 0.0:
            locked, clutch_torque = False, 0.0
    else:
        locked = False

    # Input side; the engine never turns backwards, the turbine may (reverse, rolling back).
    omega_in_new = friction_clamp(
        omega_in + dt * (torque_in - clutch_torque) / j_in, dt * friction_in / j_in
    )
    turbine_alone = automatic and not bridged
    if not turbine_alone:
        omega_in_new = max(omega_in_new, 0.0)
    else:
        omega_e_free = omega_e + dt * (engine_torque - pump - lockup_torque) / p.J_e
        omega_e = max(friction_clamp(omega_e_free, dt * engine_friction / p.J_e), 0.0)

    # Wheel side.
    for k in range(4):
        drive = s[4 + k] if torque_mode else 0.0
        loss = 0.0
        if k >= 2:
            drive += 0.5 * ratio * clutch_torque + on_wheel
            loss = shared_loss + p.F_d * x[X_OMEGA + k]
        w = x[X_OMEGA + k]
        w_free = w + dt * (drive - s[k] * r - loss) / jw
        brake, roll = s[8 + k], s[12 + k]
        grip = STICTION if w == 0.0 else 1.0
        w_new = friction_clamp(w_free, grip * dt * (brake + roll) / jw)
        applied = abs(w_free - w_new) * jw / dt
        share = brake / (brake + roll) if brake + roll > 0.0 else 0.0
        x[X_OMEGA + k] = w_new
        s[16 + k] = drive
        s[20 + k] = applied * share
        s[24 + k] = applied * (1.0 - share) + abs(loss)

    if ratio != 0.0 and capacity > 0.0:
        synchronous = ratio * 0.5 * (x[X_OMEGA + 2] + x[X_OMEGA + 3])
        if not locked and (omega_in_new - synchronous) * (omega_in - ratio * mean_rear) < 0.0:
            locked = True  # the slip changed sign within the step: the plates grip
        if locked:
            if synchronous >= 0.0 or turbine_alone:
                omega_in_new = synchronous
            else:
                locked, omega_in_new = False, 0.0
    x[X_LOCKED] = 1.0 if locked else 0.0
    if not automatic:
        x[X_OMEGA_E] = omega_in_new
    elif bridged:
        x[X_OMEGA_E] = x[X_OMEGA_T] = omega_in_new
    else:
        x[X_OMEGA_T] = omega_in_new
        x[X_OMEGA_E] = omega_e
        closed = x[X_LOCKUP] >= 1.0 and abs(omega_e - omega_in_new) < SLIP_LOCK
        if closed:
            x[X_OMEGA_E] = omega_in_new
        x[X_LOCKUP_LOCKED] = 1.0 if closed else 0.0
    return clutch_torque
