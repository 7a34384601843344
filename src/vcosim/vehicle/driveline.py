"""Shifter, clutch, gearbox, propeller shaft, final drive, open differential, wheel spin.

The seed's driveline is rigid: with the clutch locked, engine and driven wheels turn together.
Here the clutch is a friction element with a torque capacity: it slips when the torque needed
to keep it locked exceeds the capacity, and locks again when the slip changes sign. Brakes,
rolling resistance and engine friction are friction torques as well: they can stop a rotation
within a step but never reverse it, which keeps standstill exact.
"""

from __future__ import annotations

from numba import njit

from vcosim.vehicle.layout import (
    X_GEAR,
    X_LOCKED,
    X_OMEGA,
    X_OMEGA_E,
    X_SHIFT_T,
    X_SHIFT_TO,
)

SLIP_LOCK = 1.0  # rad/s: a slipping clutch closer than this to synchronous speed may lock
STICTION = 1.25  # static over sliding friction of brakes and bearings on a wheel at rest


@njit(cache=True)
def gear_ratio(gear: float, p) -> float:
    """Overall ratio engine/wheel for the engaged gear (0 in neutral, negative in reverse)."""
    g = int(round(gear))
    if g == 0:
        return 0.0
    ratios = (p.ratio_R, p.ratio_1, p.ratio_2, p.ratio_3, p.ratio_4, p.ratio_5)
    return ratios[0 if g < 0 else min(g, 5)] * p.final_drive


@njit(cache=True)
def shifter(x, p, target: float, dt: float, pace: float = 1.0) -> tuple[float, float]:
    """Sequential shift towards ``target``, one gear at a time, with the seed's pedal timing.

    Returns the factors (throttle, clutch engagement) the shift imposes on the driver's
    pedals: the throttle is released while the clutch is pressed, the gear changes while the
    clutch is open, then the clutch is let out and the throttle handed back. ``pace`` scales
    every time of the timing (1: the seed's; the automatic shifts faster).
    """
    t = x[X_SHIFT_T]
    if t < 0.0:
        if target == x[X_GEAR]:
            return 1.0, 1.0
        x[X_SHIFT_TO] = x[X_GEAR] + (1.0 if target > x[X_GEAR] else -1.0)
        t = 0.0
    if t < p.t_gear_change * pace:
        throttle = max(1.0 - t / (p.t_acc_release * pace), 0.0)
        clutch = max(1.0 - t / (p.t_clutch_press * pace), 0.0)
    else:
        x[X_GEAR] = x[X_SHIFT_TO]
        clutch = min((t - p.t_gear_change * pace) / (p.t_clutch_release * pace), 1.0)
        throttle = (t - (p.t_shift - p.t_acc_press) * pace) / (p.t_acc_press * pace)
        throttle = min(max(throttle, 0.0), 1.0)
    t += dt
    x[X_SHIFT_T] = -1.0 if t >= p.t_shift * pace - 0.25 * dt else t
    return throttle, clutch


@njit(cache=True)
def automatic_target(x, p, selector: float, throttle: float) -> float:
    """Gear an automatic transmission wants: selector -1 R, 0 N, >= 1 D (gears 1..5 by rpm)."""
    sel = round(selector)
    if sel <= 0.0:
        return max(sel, -1.0)
    gear = x[X_GEAR]
    if gear < 1.0:
        return 1.0
    if x[X_SHIFT_T] >= 0.0:
        return x[X_SHIFT_TO]
    # Decide on the engine speed the road speed implies in this gear (from the undriven front
    # wheels): neither a slipping clutch after a shift nor wheelspin triggers the next shift.
    omega_in = gear_ratio(gear, p) * 0.5 * (x[X_OMEGA] + x[X_OMEGA + 1])
    low = 1.9 * p.down_rpm
    upshift_at = low + min(max(throttle, 0.0), 1.0) * (p.up_rpm - low)
    if gear < 5.0 and omega_in > upshift_at:
        after = omega_in * gear_ratio(gear + 1.0, p) / gear_ratio(gear, p)
        if after > 1.15 * p.down_rpm:
            return gear + 1.0
    if gear > 1.0 and omega_in < p.down_rpm:
        return gear - 1.0
    return gear


@njit(cache=True)
def automatic_spark(x, p) -> float:
    """Share of the engine's torque the automatic lets through: none while it changes up.

    From the start of an upshift until the clutch has brought the engine down to the new
    gear's speed the spark is cut, so the engine does not flare while the clutch is open
    (the seed's pedal timing leaves the throttle half open then). Shifts to or from neutral
    and reverse are left alone, so the engine never stalls for it.
    """
    if x[X_SHIFT_T] < 0.0 or x[X_GEAR] < 1.0 or x[X_SHIFT_TO] < 1.0:
        return 1.0
    if x[X_SHIFT_TO] > x[X_GEAR]:  # changing up, before the gear change
        return 0.0
    synchronous = gear_ratio(x[X_GEAR], p) * 0.5 * (x[X_OMEGA + 2] + x[X_OMEGA + 3])
    return 0.0 if x[X_OMEGA_E] > max(synchronous, p.idle_speed) + SLIP_LOCK else 1.0


@njit(cache=True)
def automatic_clutch(omega_e: float, running: float, p) -> float:
    """Launch-clutch engagement of the automatic: open at idle, closing smoothly with rpm."""
    if running < 0.5:
        return 0.0
    s = min(max((omega_e - p.ac_engage) / (p.ac_full - p.ac_engage), 0.0), 1.0)
    return s * s * (3.0 - 2.0 * s)


@njit(cache=True)
def friction_clamp(omega_free: float, capacity_step: float) -> float:
    """Apply a friction torque (as a speed change per step) that can stop but not reverse."""
    if omega_free > capacity_step:
        return omega_free - capacity_step
    if omega_free < -capacity_step:
        return omega_free + capacity_step
    return 0.0


@njit(cache=True)
def _sign(v: float, eps: float = 1e-6) -> float:
    return 1.0 if v > eps else (-1.0 if v < -eps else 0.0)


@njit(cache=True)
def driveline_step(
    x,
    p,
    s,
    engine_torque: float,
    engine_friction: float,
    engagement: float,
    torque_mode: bool,
    dt: float,
) -> float:
    """Integrate engine speed and the four wheel speeds one step; return the clutch torque.

    Scratch ``s`` carries per wheel (index k): s[k] tyre longitudinal force (N),
    s[4+k] drive torque from outside the powertrain (torque mode), s[8+k] brake torque
    capacity, s[12+k] rolling-resistance capacity. On return: s[16+k] propulsion torque,
    s[20+k] applied brake torque, s[24+k] applied friction torque (rolling + shaft losses).
    """
    r, jw, je = p.r, p.J_w, p.J_e
    ratio = 0.0 if torque_mode else gear_ratio(x[X_GEAR], p)
    omega_e = x[X_OMEGA_E]
    w_rl, w_rr = x[X_OMEGA + 2], x[X_OMEGA + 3]
    mean_rear = 0.5 * (w_rl + w_rr)
    shared_loss = 0.5 * (p.F_k + p.F_s) * p.final_drive * p.final_drive * mean_rear

    clutch_torque = 0.0
    locked = x[X_LOCKED] > 0.5
    capacity = engagement * p.clutch_capacity
    if ratio != 0.0 and capacity > 0.0:
        acc_engine = (engine_torque - engine_friction * _sign(omega_e)) / je
        acc_rear = 0.0
        for k in (2, 3):
            loss = shared_loss + p.F_d * x[X_OMEGA + k]
            resist = s[8 + k] + s[12 + k]
            acc_rear += 0.5 * (-s[k] * r - loss - resist * _sign(x[X_OMEGA + k])) / jw
        needed = (acc_engine - ratio * acc_rear) / (1.0 / je + ratio * ratio / (2.0 * jw))
        slip = omega_e - ratio * mean_rear
        if abs(needed) <= capacity and (locked or abs(slip) < SLIP_LOCK):
            locked = True
            clutch_torque = needed
        else:
            locked = False
            direction = _sign(slip, 1e-9) if abs(slip) > 1e-9 else _sign(needed, 0.0)
            clutch_torque = capacity * direction
    else:
        locked = False

    # Engine side.
    omega_e_free = omega_e + dt * (engine_torque - clutch_torque) / je
    omega_e = max(friction_clamp(omega_e_free, dt * engine_friction / je), 0.0)

    # Wheel side.
    for k in range(4):
        drive = s[4 + k] if torque_mode else 0.0
        loss = 0.0
        if k >= 2:
            drive += 0.5 * ratio * clutch_torque
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
        if not locked and (omega_e - synchronous) * (x[X_OMEGA_E] - ratio * mean_rear) < 0.0:
            locked = True  # the slip changed sign within the step: the plates grip
        if locked:
            if synchronous >= 0.0:
                omega_e = synchronous
            else:
                locked, omega_e = False, 0.0
    x[X_OMEGA_E] = omega_e
    x[X_LOCKED] = 1.0 if locked else 0.0
    return clutch_torque
