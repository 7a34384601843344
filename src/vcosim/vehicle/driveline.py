"""Manual shifter, clutch, gearbox, shafts, final drive, open differential, wheel spin.

(The automatic's controller, which drives the same shift elements: ``automatic``.)

The seed's driveline is rigid: with the clutch locked, engine and driven wheels turn together.
Here the clutch is a friction element with a torque capacity: it slips when the torque needed
to keep it locked exceeds the capacity, and locks again when the slip changes sign. Brakes,
rolling resistance and engine friction are friction torques as well: they can stop a rotation
within a step but never reverse it, which keeps standstill exact.
"""

from __future__ import annotations

from vcosim.vehicle._jit_cache import njit
from vcosim.vehicle.layout import (
    X_GEAR,
    X_LOCKED,
    X_LOCKUP,
    X_LOCKUP_LOCKED,
    X_OMEGA,
    X_OMEGA_E,
    X_OMEGA_T,
    X_SHIFT_T,
    X_SHIFT_TO,
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
