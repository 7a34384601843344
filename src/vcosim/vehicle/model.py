"""The assembled vehicle model: one physics step over flat arrays, compiled with numba.

(One module on purpose, past 400 lines: the step is one compiled function whose parts numba
inlines; splitting it would scatter the signal flow below across files.)

Signal flow per step (vehicle-model.md): driver inputs -> steering actuator, shifter, idle
controller and rev limiter -> engine -> suspension loads from body pose and terrain -> tyre
forces -> driveline and wheel spin -> slip relaxation -> force and moment sums -> 6-DOF body.
Everything is semi-implicit Euler at a fixed step (0.5 ms): velocities first, then positions
with the new velocities.

The small functions a step calls for every wheel are compiled into it (numba's
``inline="always"``): LLVM leaves them as calls otherwise, and a call passes each array as
seven values and a record by pointer, so the step paid more for the calls than for their
physics. The large once-a-step parts (engine, driveline, gear choice) stay calls: inlined
they triple the kernel's compile time for a few per cent.

The step and ``advance`` are compiled without numba's reference counting (``_nrt=False``):
they allocate nothing, and counting the step's seven arrays in and out took 14 atomic
operations a step (a lone car: 440 ns a step with them, 393 without; a ring of 100 cars on
one thread: 407 and 391 ns per vehicle-step). Anything that would allocate in them fails to
compile.

Most of a step's work is done for all four wheels in loops that touch nothing but the
scratch array ``s`` and values read before the loop, which LLVM turns into vector code: the
tyres' curves, the suspension's springs (``vcosim.vehicle.elementary``), and each contact's
frame, speeds and tyre forces. A loop that also read ``x`` or the parameter record would stay
scalar: LLVM cannot tell that a store to ``s`` leaves them alone. Around them, short scalar
loops copy in what they need and sum what they give in wheel order.

Every kernel function divides as IEEE 754 does (numba's ``error_model="numpy"``): a division
by zero gives an infinity or NaN instead of raising ZeroDivisionError. Python's rule costs a
test and a branch on each of the step's ~60 divisions; the step's divisors are parameters
checked positive or guarded where a state can reach zero (speeds, the friction ellipse). The
one unguarded case, a car standing on its nose (no heading along the ground), now turns the
state to NaN where it raised before. The step may also divide by multiplying with a
reciprocal (``fastmath={"arcp"}``: a vector's three components over its length as one
division and three products, 5 % of the step), which moves results in the last bit only.
Fused multiply-adds (``"contract"``, 7 % more) are not allowed: they took a sedan's state
16 % off the kernel reference within 10 s (a shift or a wheel's lock landing a step earlier).
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from vcosim.vehicle._jit_cache import njit
from vcosim.vehicle.automatic import (
    KICKDOWN,
    LOCKUP_APPLY_TIME,
    LOCKUP_RELEASE_TIME,
    REV_MATCH_LOOKAHEAD,
    REV_MATCH_SPAN,
    automatic_shift,
    automatic_target,
    lockup_request,
)
from vcosim.vehicle.body import euler_angles, integrate_attitude, rotation_matrix, suspension_forces
from vcosim.vehicle.driveline import driveline_step, shifter
from vcosim.vehicle.elementary import atan
from vcosim.vehicle.engine import effective_throttle, engine_load, engine_step
from vcosim.vehicle.inputs import HIGH, LOW
from vcosim.vehicle.layout import (
    LAMBDA_BUF_LEN,
    N_STATES,
    TYRE_BLOCK,
    U_AUTOMATIC,
    U_BRAKE,
    U_BRAKING,
    U_CLUTCH,
    U_DRIVE_MODE,
    U_GEAR,
    U_GROUND_FRICTION,
    U_GROUND_FROM_INPUTS,
    U_GROUND_HEIGHT,
    U_HIGHBEAM,
    U_IGNITION,
    U_LOWBEAM,
    U_PARKINGBRAKE,
    U_PROPULSION,
    U_SIGNAL_L,
    U_SIGNAL_R,
    U_STEERING,
    U_THROTTLE,
    WHEEL_BLOCK,
    X_ABS,
    X_ABS_REFERENCE,
    X_ABS_SPLIT,
    X_ACCEL_SENSOR,
    X_ALPHA,
    X_CLUTCH_TORQUE,
    X_FUEL,
    X_GEAR,
    X_KAPPA,
    X_LAMBDA_BUF,
    X_LAMBDA_S,
    X_LOCKED,
    X_LOCKUP,
    X_LOCKUP_LOCKED,
    X_OMEGA,
    X_OMEGA_E,
    X_OMEGA_E_LAST,
    X_OMEGA_T,
    X_P_IM,
    X_POS,
    X_QUAT,
    X_RATE,
    X_REFUSALS,
    X_RUNNING,
    X_SHIFT_KIND,
    X_SHIFT_T,
    X_STEER,
    X_STEP,
    X_VEL,
    Y_A,
    Y_B,
    Y_C,
    Y_DELTA,
    Y_ENGINE_TORQUE,
    Y_FFB,
    Y_FUEL_FLOW,
    Y_LAMBDA,
    Y_LAMBDA_S,
    Y_LOCKED,
    Y_LOCKUP,
    Y_P_IM,
    Y_REFUSALS,
    Y_RUNNING,
    Y_SHIFTING,
    Y_SPEED,
    Y_STALLED,
    Y_T_INJ,
    Y_TIME,
    Y_TURBINE_RPM,
    Y_TYRE,
    Y_WHEEL,
    Y_YAW_RATE,
)
from vcosim.vehicle.terrain import sample_terrain
from vcosim.vehicle.tyres import (
    aligning_moment,
    friction_noise,
    low_speed_damping,
    relax_slips,
    tyre_curves,
)

# Scratch slots beyond the driveline's 0..27: contact-point speeds and the tyre results, then
# what the step's wheel loops hand on (each a block of 4 values per wheel quantity).
S_VX = 28
S_VY = 32
S_NORMAL = 36
S_FY = 40
S_MU = 44
S_CURVES = 48  # 24: the tyres' forces per unit of friction limit (tyre_curves), its slips
S_ARM = 72  # 12: attach points relative to the centre of mass, world axes (x, y, z)
S_GROUND = 84  # 16: ground height, its two slopes and its friction under each wheel
S_COMPRESSION = 100  # 8: suspension compression, then its rate
S_SURFACE = 108  # 4: the wheels' surface speeds
S_FRAME = 112  # 40: each contact's axes along, across and normal (x, y, z each), its height
S_RELAX = 152  # 12: room for relax_slips
S_ABS = 164  # 4: the brake pressure share the ABS gives each wheel
N_SCRATCH = S_ABS + 4
BLINK_PERIOD = 0.8  # s: 75 flashes a minute
DAMPED_SLIP_SPEED = 0.05  # m/s: the tyre's low-speed damper saturates beyond this slip speed


def initial_state(p: np.ndarray) -> np.ndarray:
    """At rest at the origin, heading +x, engine off, neutral, unsettled suspension."""
    x = np.zeros(N_STATES)
    rec = p[0]
    x[X_POS + 2] = rec["ride_height"] + rec["d"]
    x[X_QUAT] = 1.0
    x[X_P_IM] = rec["p_amb"]
    x[X_LAMBDA_S] = 1.0
    x[X_LAMBDA_BUF : X_LAMBDA_BUF + LAMBDA_BUF_LEN] = 1.0
    x[X_ABS : X_ABS + 4] = 1.0
    x[X_FUEL] = rec["initial_fuel"]
    x[X_SHIFT_T] = -1.0
    return x


@njit(error_model="numpy", _nrt=False)
def advance(x, u, params, y, s, height, friction, grid, n_steps: int) -> None:
    """Advance one vehicle ``n_steps`` physics steps; outputs ``y`` hold the last step."""
    p = params[0]
    for i in range(n_steps):
        physics_step(x, u, p, y, s, height, friction, grid, i == n_steps - 1)


@njit(error_model="numpy", parallel=True)
def advance_batch(xs, us, params, ys, height, friction, grid, n_steps: int) -> None:
    """Advance many independent vehicles (rows of ``xs``/``us``/``ys``) in parallel."""
    for v in prange(xs.shape[0]):
        s = np.zeros(N_SCRATCH)
        advance(xs[v], us[v], params, ys[v], s, height, friction, grid, n_steps)


@njit(error_model="numpy", parallel=True)
def advance_each(xs, us, params, ys, height, friction, grid, n_steps: int) -> None:
    """Like ``advance_batch``, but every vehicle with its own parameter record (``params[v]``)."""
    for v in prange(xs.shape[0]):
        s = np.zeros(N_SCRATCH)
        advance(xs[v], us[v], params[v : v + 1], ys[v], s, height, friction, grid, n_steps)


@njit(error_model="numpy")
def advance_each_serial(xs, us, params, ys, height, friction, grid, n_steps: int) -> None:
    """``advance_each`` on the calling thread, one vehicle after another.

    For a few vehicles stepping a few steps per call (a world with a coupled car): waking
    numba's threads and waiting for the slowest costs more than the steps, on a busy machine
    far more.
    """
    s = np.zeros(N_SCRATCH)
    for v in range(xs.shape[0]):
        advance(xs[v], us[v], params[v : v + 1], ys[v], s, height, friction, grid, n_steps)


@njit(error_model="numpy", inline="always")
def anti_lock(x, p, brake_in: float, dt: float, s, at: int) -> None:
    """ABS: the share of the brake pressure each wheel gets, into ``s[at : at + 4]``.

    It knows what a production ABS with an ESP's sensors knows (Bosch, Automotive
    Handbook): the four wheel speeds and the body's longitudinal acceleration. Under the
    brake its reference speed follows the fastest wheel's surface speed, but only within a
    band around what the accelerometer's deceleration predicts from the last reference: it
    falls at most ``abs_reference_margin`` faster than that (when every wheel slips, they
    all fall faster than the car) and rises at most ``abs_reference_rise`` faster (a wheel
    springing back from a released brake overshoots the road's speed for a moment); an
    acceleration read under the brake is gravity on a slope, not motion, and is not
    followed. Without the brake it is the fastest wheel's, rising no faster than the
    accelerometer's acceleration and that margin (a spinning wheel is not the car). The
    estimate's error is in docs/vehicle-model.md for the stops of tests/driving.

    Each wheel's controller is a slip threshold, as the first ABS generations: pressure is
    let off while the wheel slips more than ``abs_slip`` and built up again once the slip is
    below half of that; in between it holds. Around the four controllers: both rear wheels
    get the pressure of the one that locks first (select-low: the rear keeps its side grip
    and adds no yaw moment), and the front wheels' pressures may differ by a share that
    grows from none to full over ``abs_yaw_delay_time`` after the brake is pressed
    (yaw-moment build-up delay), so that on split friction the high-friction wheel's
    pressure follows the low one's at first. With the reference below ``abs_min_speed`` or
    without braking it stands aside, so the car can stop and stand.
    """
    braking = brake_in > 0.0
    w0, w1, w2, w3 = x[X_OMEGA], x[X_OMEGA + 1], x[X_OMEGA + 2], x[X_OMEGA + 3]
    fastest = max(abs(w0), abs(w1), abs(w2), abs(w3)) * p.r
    along = (x[X_ACCEL_SENSOR] if w0 + w1 + w2 + w3 >= 0.0 else -x[X_ACCEL_SENSOR]) * dt
    reference = x[X_ABS_REFERENCE]
    if braking:
        predicted = reference + min(along, 0.0)
        reference = min(fastest, predicted + p.abs_ref_rise)
        reference = max(reference, predicted - p.abs_ref_fall, 0.0)
    else:
        reference = min(fastest, reference + max(along, 0.0) + p.abs_ref_fall)
    x[X_ABS_REFERENCE] = reference
    active = braking and reference >= p.abs_v_min
    for k in range(4):
        share = 1.0
        if active:
            lock = (reference - abs(x[X_OMEGA + k]) * p.r) / reference
            share = x[X_ABS + k]
            if lock > p.abs_slip:
                share = max(share - p.abs_release, 0.0)
            elif lock < 0.5 * p.abs_slip:
                share = min(share + p.abs_apply, 1.0)
        x[X_ABS + k] = share
    split = min(x[X_ABS_SPLIT] + p.abs_split_rate, 1.0) if braking else 0.0
    x[X_ABS_SPLIT] = split
    low = min(x[X_ABS], x[X_ABS + 1]) + split
    s[at] = min(x[X_ABS], low)
    s[at + 1] = min(x[X_ABS + 1], low)
    s[at + 2] = s[at + 3] = min(x[X_ABS + 2], x[X_ABS + 3])


@njit(error_model="numpy", _nrt=False, fastmath={"arcp"})
def physics_step(x, u, p, y, s, height, friction, grid, write_outputs: bool) -> None:
    """One 0.5 ms step of the whole vehicle (pure function of x, u, p; updates x and s)."""
    for i in range(u.shape[0]):
        if not math.isfinite(u[i]):  # written past every check (a face, an FMI master):
            u[i] = 0.0  # taken as released, so one bad value cannot corrupt the state
    dt = p.dt
    # Each input within its range (``LOW``, ``HIGH``: the input catalogue's, as constants).
    throttle_in = min(max(u[U_THROTTLE], LOW[U_THROTTLE]), HIGH[U_THROTTLE])
    brake_in = min(max(u[U_BRAKE], LOW[U_BRAKE]), HIGH[U_BRAKE])
    clutch_in = min(max(u[U_CLUTCH], LOW[U_CLUTCH]), HIGH[U_CLUTCH])
    park_in = min(max(u[U_PARKINGBRAKE], LOW[U_PARKINGBRAKE]), HIGH[U_PARKINGBRAKE])
    steer_in = min(max(u[U_STEERING], LOW[U_STEERING]), HIGH[U_STEERING])
    ignition = min(max(round(u[U_IGNITION]), LOW[U_IGNITION]), HIGH[U_IGNITION])
    torque_mode = u[U_DRIVE_MODE] >= 0.5
    automatic = u[U_AUTOMATIC] >= 0.5

    # Steering actuator (rate limited), shifter, lock-up clutch, idle and rev controllers.
    limit = p.steer_rate * dt
    x[X_STEER] += min(max(steer_in - x[X_STEER], -limit), limit)
    delta = x[X_STEER] * p.max_steer
    if automatic:
        target = automatic_target(x, p, u[U_GEAR], throttle_in, brake_in)
    else:
        target = min(max(round(u[U_GEAR]), LOW[U_GEAR]), HIGH[U_GEAR])
    overlap, cut, goal = 0.0, 0.0, 0.0
    if automatic:
        # No pedal timing on the throttle: the shift's phases, not the pedal, shape it.
        engagement, overlap, cut, goal = automatic_shift(x, p, target, throttle_in, dt)
        shifting = x[X_SHIFT_T] >= 0.0 or engagement < 1.0
        wanted = lockup_request(x, p, brake_in, throttle_in, shifting)
        rate = dt / (LOCKUP_APPLY_TIME if wanted > x[X_LOCKUP] else LOCKUP_RELEASE_TIME)
        x[X_LOCKUP] += min(max(wanted - x[X_LOCKUP], -rate), rate)
        throttle_factor = 1.0
    else:
        throttle_factor, clutch_factor = shifter(x, p, target, dt)
        shifting = x[X_SHIFT_T] >= 0.0 or clutch_factor < 1.0
        engagement = min(1.0 - clutch_in, clutch_factor)
        x[X_LOCKUP] = x[X_LOCKUP_LOCKED] = 0.0
    omega_rate = (x[X_OMEGA_E] - x[X_OMEGA_E_LAST]) / dt
    x[X_OMEGA_E_LAST] = x[X_OMEGA_E]
    pedal = throttle_in * throttle_factor
    if goal > 0.0:  # the automatic's rev match, looking ahead as the idle controller does
        ahead = x[X_OMEGA_E] + REV_MATCH_LOOKAHEAD * omega_rate
        pedal = max(pedal, min(max((goal - ahead) / REV_MATCH_SPAN, 0.0), 1.0))
    throttle = effective_throttle(pedal, x[X_OMEGA_E], x[X_RUNNING], p, omega_rate)
    engine_torque, engine_friction, lambda_cyl, t_inj, fuel_flow = engine_step(
        x, p, throttle, ignition, dt, cut
    )

    # Body kinematics in the world frame.
    r00, r01, r02, r10, r11, r12, r20, r21, r22 = rotation_matrix(
        x[X_QUAT], x[X_QUAT + 1], x[X_QUAT + 2], x[X_QUAT + 3]
    )
    bu, bv, bw = x[X_VEL], x[X_VEL + 1], x[X_VEL + 2]
    bp, bq, br = x[X_RATE], x[X_RATE + 1], x[X_RATE + 2]
    vx_w = r00 * bu + r01 * bv + r02 * bw
    vy_w = r10 * bu + r11 * bv + r12 * bw
    vz_w = r20 * bu + r21 * bv + r22 * bw
    wx_w = r00 * bp + r01 * bq + r02 * br
    wy_w = r10 * bp + r11 * bq + r12 * br
    wz_w = r20 * bp + r21 * bq + r22 * br
    cos_d, sin_d = math.cos(delta), math.sin(delta)
    ground_inputs = u[U_GROUND_FROM_INPUTS] >= 0.5
    slope_x = slope_y = 0.0
    if ground_inputs:  # slope of the plane through the four given heights, in world axes
        along = (
            0.5
            * (
                u[U_GROUND_HEIGHT]
                + u[U_GROUND_HEIGHT + 1]
                - u[U_GROUND_HEIGHT + 2]
                - u[U_GROUND_HEIGHT + 3]
            )
            / (p.a + p.b)
        )
        across = (
            0.5
            * (
                u[U_GROUND_HEIGHT]
                + u[U_GROUND_HEIGHT + 2]
                - u[U_GROUND_HEIGHT + 1]
                - u[U_GROUND_HEIGHT + 3]
            )
            / (2.0 * p.c)
        )
        heading = math.atan2(r10, r00)
        ch, sh = math.cos(heading), math.sin(heading)
        slope_x, slope_y = along * ch - across * sh, along * sh + across * ch

    # Where each corner meets the ground, then the four suspension loads in one loop (the
    # tangents of their springs and dampers as vectors), and the tyres' curves (tyre_curves).
    ground_sum = 0.0
    for k in range(4):
        bx = p.a if k < 2 else -p.b
        by = p.c if k % 2 == 0 else -p.c
        # Suspension: the corner's attach point above the terrain below it.
        rx = r00 * bx + r01 * by - r02 * p.d
        ry = r10 * bx + r11 * by - r12 * p.d
        rz = r20 * bx + r21 * by - r22 * p.d
        px, py = x[X_POS] + rx, x[X_POS + 1] + ry
        if ground_inputs:
            h, hx, hy = u[U_GROUND_HEIGHT + k], slope_x, slope_y
            mu_ground = min(
                max(u[U_GROUND_FRICTION + k], LOW[U_GROUND_FRICTION]), HIGH[U_GROUND_FRICTION]
            )
        else:
            h, hx, hy, mu_ground = sample_terrain(height, friction, grid, px, py)
        ground_sum += h
        ax = vx_w + wy_w * rz - wz_w * ry
        ay = vy_w + wz_w * rx - wx_w * rz
        az = vz_w + wx_w * ry - wy_w * rx
        s[S_ARM + k], s[S_ARM + 4 + k], s[S_ARM + 8 + k] = rx, ry, rz
        s[S_GROUND + k], s[S_GROUND + 4 + k], s[S_GROUND + 8 + k] = h, hx, hy
        s[S_GROUND + 12 + k] = mu_ground
        s[S_COMPRESSION + k] = p.ride_height - (x[X_POS + 2] + rz - h)
        s[S_COMPRESSION + 4 + k] = -(az - hx * ax - hy * ay)
    suspension_forces(s, p, S_COMPRESSION, S_NORMAL)
    tyre_curves(x, p, s, S_CURVES)

    # Each contact's frame, speeds and tyre forces: one loop over the wheels on nothing but
    # ``s`` and values read before it (LLVM's vector code), then the sums in wheel order.
    for k in range(4):
        mu = s[S_GROUND + 12 + k] * p.mu
        if p.noise_std > 0.0:
            mu = max(mu + p.noise_std * friction_noise(x[X_STEP], k, p.noise_seed), 0.0)
        s[S_MU + k] = mu
        s[S_SURFACE + k] = x[X_OMEGA + k] * p.r
    z = x[X_POS + 2]
    bump = p.ride_height - p.z_max  # the attach point's height above the ground at full bump
    v_low, d_low = p.v_low, p.d_low
    # The two front wheels' headings (Ackermann: cot of the left wheel's angle is the bicycle
    # model's minus ``p.ackermann``, the right's plus it; as cosine and sine, no tangent).
    cos_l, cos_r = cos_d - p.ackermann * sin_d, cos_d + p.ackermann * sin_d
    inv_l = 1.0 / math.sqrt(cos_l * cos_l + sin_d * sin_d)
    inv_r = 1.0 / math.sqrt(cos_r * cos_r + sin_d * sin_d)
    cos_l, sin_l, cos_r, sin_r = cos_l * inv_l, sin_d * inv_l, cos_r * inv_r, sin_d * inv_r
    left_x, left_y, left_z = (
        cos_l * r00 + sin_l * r01,
        cos_l * r10 + sin_l * r11,
        cos_l * r20 + sin_l * r21,
    )
    right_x, right_y, right_z = (
        cos_r * r00 + sin_r * r01,
        cos_r * r10 + sin_r * r11,
        cos_r * r20 + sin_r * r21,
    )
    for k in range(4):
        rx, ry, rz = s[S_ARM + k], s[S_ARM + 4 + k], s[S_ARM + 8 + k]
        h, hx, hy = s[S_GROUND + k], s[S_GROUND + 4 + k], s[S_GROUND + 8 + k]
        load = s[S_NORMAL + k]
        inv = 1.0 / math.sqrt(hx * hx + hy * hy + 1.0)
        nx, ny, nz = -hx * inv, -hy * inv, inv

        # Contact patch: the foot of the ground normal through the attach point (on a slope
        # not straight below it: there the tangential forces' lever about the centre of
        # gravity would be short by the drop times the slope, and the load transfer with it),
        # but never above the wheel at full bump (a ground far above a wheel, given from
        # outside, acts on the bump stop). The attach point's drop to the ground, vertically,
        # times nz^2 is its distance down the normal's vertical component.
        foot = max(z + rz - h, bump) * (inv * inv)
        cx, cy, cz = rx + foot * hx, ry + foot * hy, rz - foot
        vcx = vx_w + wy_w * cz - wz_w * cy
        vcy = vy_w + wz_w * cx - wx_w * cz
        vcz = vz_w + wx_w * cy - wy_w * cx
        if k == 0:
            hdx, hdy, hdz = left_x, left_y, left_z
        elif k == 1:
            hdx, hdy, hdz = right_x, right_y, right_z
        else:
            hdx, hdy, hdz = r00, r10, r20
        along = hdx * nx + hdy * ny + hdz * nz
        lx, ly, lz = hdx - along * nx, hdy - along * ny, hdz - along * nz
        norm = math.sqrt(lx * lx + ly * ly + lz * lz)
        lx, ly, lz = lx / norm, ly / norm, lz / norm
        tx, ty, tz = ny * lz - nz * ly, nz * lx - nx * lz, nx * ly - ny * lx
        v_long = vcx * lx + vcy * ly + vcz * lz
        v_lat = vcx * tx + vcy * ty + vcz * tz

        limit = s[S_MU + k] * load
        f_long, f_lat = limit * s[S_CURVES + k], limit * s[S_CURVES + 4 + k]
        surface = s[S_SURFACE + k]
        rolling = max(abs(v_long), abs(surface))  # a spinning wheel is not at standstill
        # The tread's damper acts on the slip speed of a tyre at rest (mm/s as it settles);
        # a wheel locked or spinning slides, and its damper, saturated, adds next to nothing
        # to the sliding friction (unsaturated it added up to the peak within 0.1 m/s of
        # v_low: a 10-35 % step in every stop with locked wheels).
        slip_speed = min(max(surface - v_long, -DAMPED_SLIP_SPEED), DAMPED_SLIP_SPEED)
        f_long += low_speed_damping(rolling, v_low, d_low) * load * slip_speed
        f_lat -= low_speed_damping(v_long, v_low, d_low) * load * v_lat
        f_mag = math.sqrt(f_long * f_long + f_lat * f_lat)
        scale = limit / f_mag if f_mag > limit else 1.0
        s[k], s[S_FY + k] = f_long * scale, f_lat * scale
        s[S_VX + k], s[S_VY + k] = v_long, v_lat
        s[S_FRAME + k], s[S_FRAME + 4 + k], s[S_FRAME + 8 + k] = lx, ly, lz
        s[S_FRAME + 12 + k], s[S_FRAME + 16 + k], s[S_FRAME + 20 + k] = tx, ty, tz
        s[S_FRAME + 24 + k], s[S_FRAME + 28 + k], s[S_FRAME + 32 + k] = nx, ny, nz
        s[S_ARM + k], s[S_ARM + 4 + k], s[S_FRAME + 36 + k] = cx, cy, cz  # the arm from here on

    abs_on = p.abs_on > 0.5 and not torque_mode
    if abs_on:
        anti_lock(x, p, brake_in, dt, s, S_ABS)
    fx_sum = fy_sum = fz_sum = 0.0
    mx_sum = my_sum = mz_sum = 0.0
    aligning = 0.0
    for k in range(4):
        front = k < 2
        f_long, f_lat, load = s[k], s[S_FY + k], s[S_NORMAL + k]
        lx, ly, lz = s[S_FRAME + k], s[S_FRAME + 4 + k], s[S_FRAME + 8 + k]
        tx, ty, tz = s[S_FRAME + 12 + k], s[S_FRAME + 16 + k], s[S_FRAME + 20 + k]
        nx, ny, nz = s[S_FRAME + 24 + k], s[S_FRAME + 28 + k], s[S_FRAME + 32 + k]
        cx, cy, cz = s[S_ARM + k], s[S_ARM + 4 + k], s[S_FRAME + 36 + k]
        if front and write_outputs:  # force feedback: read only from the outputs
            aligning += aligning_moment(atan(x[X_ALPHA + k]), load, s[S_MU + k], p)

        fwx = f_long * lx + f_lat * tx + load * nx
        fwy = f_long * ly + f_lat * ty + load * ny
        fwz = f_long * lz + f_lat * tz + load * nz
        fx_sum += fwx
        fy_sum += fwy
        fz_sum += fwz
        mx_sum += cy * fwz - cz * fwy
        my_sum += cz * fwx - cx * fwz
        mz_sum += cx * fwy - cy * fwx

        if torque_mode:
            s[4 + k] = min(max(u[U_PROPULSION + k], LOW[U_PROPULSION]), HIGH[U_PROPULSION])
            s[8 + k] = min(max(u[U_BRAKING + k], LOW[U_BRAKING]), HIGH[U_BRAKING])
        else:
            s[4 + k] = 0.0
            s[8 + k] = brake_in * (p.brake_f if front else p.brake_r)
            if abs_on:
                s[8 + k] *= s[S_ABS + k]
        if not front:
            s[8 + k] += park_in * p.park_brake
        s[12 + k] = p.f_roll * load * p.r

    one_way = automatic and x[X_SHIFT_T] >= 0.0 and x[X_SHIFT_KIND] == KICKDOWN
    x[X_CLUTCH_TORQUE] = driveline_step(
        x,
        p,
        s,
        engine_torque,
        engine_friction,
        engagement,
        torque_mode,
        automatic,
        one_way,
        dt,
        overlap,
    )
    relax_slips(x, p, s, S_VX, S_RELAX, dt)

    # Air drag and other body resistance, against the velocity.
    speed = math.sqrt(vx_w * vx_w + vy_w * vy_w + vz_w * vz_w)
    if speed > 1e-9:
        resist = p.a0 * min(speed / 0.1, 1.0) + p.a1 * speed + p.a2 * speed * speed
        fx_sum -= resist * vx_w / speed
        fy_sum -= resist * vy_w / speed
        fz_sum -= resist * vz_w / speed

    # Newton-Euler in the body frame (contact and resistance forces; gravity added below).
    fbx = r00 * fx_sum + r10 * fy_sum + r20 * fz_sum
    fby = r01 * fx_sum + r11 * fy_sum + r21 * fz_sum
    fbz = r02 * fx_sum + r12 * fy_sum + r22 * fz_sum
    mbx = r00 * mx_sum + r10 * my_sum + r20 * mz_sum
    mby = r01 * mx_sum + r11 * my_sum + r21 * mz_sum
    mbz = r02 * mx_sum + r12 * my_sum + r22 * mz_sum
    g = p.g
    gbx, gby, gbz = -r20 * g, -r21 * g, -r22 * g
    m = p.mass
    du = fbx / m + gbx - (bq * bw - br * bv)
    dv = fby / m + gby - (br * bu - bp * bw)
    dw = fbz / m + gbz - (bp * bv - bq * bu)
    dp = (mbx - (p.Izz - p.Iyy) * bq * br) / p.Ixx
    dq = (mby - (p.Ixx - p.Izz) * br * bp) / p.Iyy
    dr = (mbz - (p.Iyy - p.Ixx) * bp * bq) / p.Izz
    bu, bv, bw = bu + dt * du, bv + dt * dv, bw + dt * dw
    bp, bq, br = bp + dt * dp, bq + dt * dq, br + dt * dr
    x[X_VEL], x[X_VEL + 1], x[X_VEL + 2] = bu, bv, bw
    x[X_ACCEL_SENSOR] = fbx / m
    x[X_RATE], x[X_RATE + 1], x[X_RATE + 2] = bp, bq, br
    x[X_POS] += dt * (r00 * bu + r01 * bv + r02 * bw)
    x[X_POS + 1] += dt * (r10 * bu + r11 * bv + r12 * bw)
    x[X_POS + 2] += dt * (r20 * bu + r21 * bv + r22 * bw)
    integrate_attitude(x, X_QUAT, bp, bq, br, dt)
    x[X_STEP] += 1.0

    if not write_outputs:
        return
    time = x[X_STEP] * dt
    # Bank A: driver controls (applied, then as asked for).
    y[Y_A + 0] = throttle
    y[Y_A + 1] = throttle_in
    y[Y_A + 2] = brake_in
    y[Y_A + 3] = brake_in
    y[Y_A + 4] = 1.0 - engagement
    y[Y_A + 5] = clutch_in
    y[Y_A + 6] = park_in
    y[Y_A + 7] = park_in
    y[Y_A + 8] = x[X_STEER]
    y[Y_A + 9] = steer_in
    # Bank B: kinematics.
    r00, r01, r02, r10, r11, r12, r20, r21, r22 = rotation_matrix(
        x[X_QUAT], x[X_QUAT + 1], x[X_QUAT + 2], x[X_QUAT + 3]
    )
    y[Y_B + 0] = x[X_POS]
    y[Y_B + 1] = x[X_POS + 1]
    y[Y_B + 2] = x[X_POS + 2]
    vx_w = r00 * bu + r01 * bv + r02 * bw
    vy_w = r10 * bu + r11 * bv + r12 * bw
    y[Y_B + 3] = vx_w
    y[Y_B + 4] = vy_w
    y[Y_B + 5] = r20 * bu + r21 * bv + r22 * bw
    y[Y_B + 6] = math.sqrt(vx_w * vx_w + vy_w * vy_w)
    y[Y_B + 7] = fbx / m
    y[Y_B + 8] = fby / m
    y[Y_B + 9] = fbz / m
    roll, pitch, yaw = euler_angles(x[X_QUAT], x[X_QUAT + 1], x[X_QUAT + 2], x[X_QUAT + 3])
    y[Y_B + 10] = roll
    y[Y_B + 11] = pitch
    y[Y_B + 12] = yaw
    y[Y_B + 13] = x[X_POS + 2] - 0.25 * ground_sum
    # Bank C: status.
    rpm = x[X_OMEGA_E] * 60.0 / (2.0 * math.pi)
    blink = 1.0 if (time % BLINK_PERIOD) < 0.5 * BLINK_PERIOD else 0.0
    y[Y_C + 0] = ignition
    y[Y_C + 1] = x[X_GEAR]
    y[Y_C + 2] = x[X_FUEL]
    y[Y_C + 3] = engine_load(x, p)
    y[Y_C + 4] = 1.0 if u[U_HIGHBEAM] >= 0.5 else 0.0
    y[Y_C + 5] = 1.0 if u[U_LOWBEAM] >= 0.5 else 0.0
    y[Y_C + 6] = p.rev_limit * 60.0 / (2.0 * math.pi)
    y[Y_C + 7] = 1.0 if x[X_GEAR] < -0.5 else 0.0
    y[Y_C + 8] = rpm
    y[Y_C + 9] = blink if u[U_SIGNAL_L] >= 0.5 else 0.0
    y[Y_C + 10] = blink if u[U_SIGNAL_R] >= 0.5 else 0.0
    y[Y_C + 11] = 0.25 * p.r * (x[X_OMEGA] + x[X_OMEGA + 1] + x[X_OMEGA + 2] + x[X_OMEGA + 3])
    # Banks D-G: wheels; then the extra signals.
    for k in range(4):
        base = Y_WHEEL + WHEEL_BLOCK * k
        y[base + 0] = x[X_OMEGA + k]
        y[base + 1] = x[X_OMEGA + k] * p.r
        y[base + 2] = s[20 + k]
        y[base + 3] = s[16 + k]
        y[base + 4] = s[24 + k]
        y[base + 5] = s[S_NORMAL + k]
        tyre = Y_TYRE + TYRE_BLOCK * k
        y[tyre + 0] = x[X_KAPPA + k]
        y[tyre + 1] = atan(x[X_ALPHA + k])
        y[tyre + 2] = s[k]
        y[tyre + 3] = s[S_FY + k]
        y[tyre + 4] = s[S_MU + k]
    y[Y_TIME] = time
    y[Y_RUNNING] = x[X_RUNNING]
    y[Y_ENGINE_TORQUE] = engine_torque - engine_friction
    y[Y_P_IM] = x[X_P_IM]
    y[Y_LAMBDA] = lambda_cyl
    y[Y_LAMBDA_S] = x[X_LAMBDA_S]
    y[Y_T_INJ] = t_inj
    y[Y_SHIFTING] = 1.0 if shifting else 0.0
    y[Y_LOCKED] = x[X_LOCKED]
    y[Y_DELTA] = delta
    y[Y_YAW_RATE] = r20 * bp + r21 * bq + r22 * br
    y[Y_SPEED] = math.sqrt(bu * bu + bv * bv + bw * bw) * (1.0 if bu >= 0.0 else -1.0)
    y[Y_FFB] = min(max(p.ffb_scale * aligning, -1.0), 1.0)
    y[Y_FUEL_FLOW] = fuel_flow
    y[Y_STALLED] = 1.0 if ignition >= 1.5 and x[X_RUNNING] < 0.5 else 0.0
    y[Y_REFUSALS] = x[X_REFUSALS]
    y[Y_TURBINE_RPM] = x[X_OMEGA_T] * 60.0 / (2.0 * math.pi) if automatic else rpm
    y[Y_LOCKUP] = x[X_LOCKUP_LOCKED]
