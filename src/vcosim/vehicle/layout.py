"""Index layout of the flat arrays the physics kernel works on.

The kernel is a set of pure functions over four float64 arrays: the state ``x``, the inputs
``u``, the packed parameters ``p`` and the outputs ``y``. Named integer constants (frozen into
the compiled code by numba) keep the kernel readable; the name tuples below are the public
names of the outputs (the inputs' are in ``vcosim.vehicle.inputs``).
"""

from __future__ import annotations

WHEELS = ("FL", "FR", "RL", "RR")

# --- inputs ---------------------------------------------------------------------------------
U_THROTTLE = 0
U_BRAKE = 1
U_CLUTCH = 2
U_PARKINGBRAKE = 3
U_STEERING = 4
U_GEAR = 5
U_IGNITION = 6
U_HIGHBEAM = 7
U_LOWBEAM = 8
U_SIGNAL_L = 9
U_SIGNAL_R = 10
U_DRIVE_MODE = 11  # 0 pedals, 1 wheel torques
U_PROPULSION = 12  # 4 values FL FR RL RR
U_BRAKING = 16  # 4 values FL FR RL RR
U_AUTOMATIC = 20  # 0 manual gearbox and clutch, 1 torque-converter automatic
U_GROUND_FROM_INPUTS = 21  # 1: the ground under each wheel comes from the two inputs below
U_GROUND_HEIGHT = 22  # 4 values FL FR RL RR (m), e.g. from the visualisation (VMFM)
U_GROUND_FRICTION = 26  # 4 values FL FR RL RR
N_INPUTS = 30
# The inputs' names, ranges and kinds: vcosim.vehicle.inputs (the catalogue).

# --- state ----------------------------------------------------------------------------------
X_POS = 0  # 3: world position of the centre of gravity (m)
X_QUAT = 3  # 4: body-to-world rotation (w, x, y, z)
X_VEL = 7  # 3: velocity in the body frame (m/s)
X_RATE = 10  # 3: angular velocity in the body frame (rad/s)
X_OMEGA = 13  # 4: wheel spin (rad/s)
X_KAPPA = 17  # 4: transient longitudinal slip (relaxation-length state)
X_ALPHA = 21  # 4: transient lateral slip, tan of the slip angle (relaxation-length state)
X_OMEGA_E = 25  # engine speed (rad/s)
X_P_IM = 26  # intake manifold pressure (Pa)
X_MDOT_AT = 27  # throttle air mass flow (kg/s)
X_M_FP = 28  # fuel puddle mass (kg)
X_LAMBDA_S = 29  # sensed (delayed and lagged) lambda
X_LAMBDA_I = 30  # integral of the lambda error (fuel controller)
X_RUNNING = 31  # 1 while the engine fires
X_GEAR = 32  # engaged gear -1..5
X_SHIFT_T = 33  # time into the current shift (s), -1 when no shift is running
X_SHIFT_TO = 34  # target gear of the running shift
X_LOCKED = 35  # 1 while the clutch is locked
X_STEER = 36  # applied steering in [-1, 1] after the rate limit
X_FUEL = 37  # fuel level [0, 1]
X_STEP = 38  # step counter (time = step * dt)
X_LAMBDA_BUF = 39  # ring buffer of lambda_cyl for the lambda-sensor transport delay
LAMBDA_BUF_LEN = 160  # tau_d / dt = 0.08 s / 0.5 ms
X_ABS = X_LAMBDA_BUF + LAMBDA_BUF_LEN  # 4: brake pressure the ABS lets through, per wheel [0, 1]
X_OMEGA_T = X_ABS + 4  # torque converter's turbine speed (rad/s), automatic only
X_LOCKUP = X_ABS + 5  # lock-up clutch engagement [0, 1]
X_LOCKUP_LOCKED = X_ABS + 6  # 1 while the lock-up clutch is locked (engine and turbine as one)
X_SELECTOR = X_ABS + 7  # the automatic's selector as last seen (-1 R, 0 N, 1 D)
X_REFUSALS = X_ABS + 8  # selector requests the automatic refused (R or D against the motion)
X_OMEGA_E_LAST = X_ABS + 9  # engine speed one step ago (rad/s): the idle controller's dashpot
X_ABS_SPLIT = X_ABS + 10  # how far the ABS lets the front wheels' pressures differ [0, 1]
X_SHIFT_KIND = X_ABS + 11  # the automatic's running shift: 1 up, 2 garage, 3 kickdown, 4 coast down
X_CLUTCH_TORQUE = X_ABS + 12  # torque the clutch or shift elements carried last step (N m)
X_ABS_REFERENCE = X_ABS + 13  # the ABS's reference speed, estimated from the wheels (m/s)
X_ACCEL_SENSOR = X_ABS + 14  # the body's longitudinal accelerometer, last step (m/s^2)
X_SHIFT_HELD = X_ABS + 15  # torque the engaged element held when a coast downshift began (N m)
N_STATES = X_ABS + 16

# --- outputs: banks A-G in wire order (message slots 1..60), then extras ----------------------
BANK_NAMES = (
    # A driver controls
    "throttle",
    "throttle_input",
    "brake",
    "brake_input",
    "clutch",
    "clutch_input",
    "parkingbrake",
    "parkingbrake_input",
    "steering",
    "steering_input",
    # B kinematics
    "posX",
    "posY",
    "posZ",
    "velX",
    "velY",
    "velZ",
    "groundspeed",
    "accX",
    "accY",
    "accZ",
    "roll",
    "pitch",
    "yaw",
    "altitude",
    # C status
    "ignitionLevel",
    "gear",
    "fuel",
    "engineLoad",
    "highbeam",
    "lowbeam",
    "maxrpm",
    "reverse",
    "rpm",
    "signal_L",
    "signal_R",
    "wheelspeed",
    # D-G wheels
    *(
        f"wheel{w}_{q}"
        for w in WHEELS
        for q in (
            "angularVelocity",
            "wheelSpeed",
            "brakingTorque",
            "propulsionTorque",
            "frictionTorque",
            "downForce",
        )
    ),
)
N_BANKS = len(BANK_NAMES)  # 60

Y_A = 0
Y_B = 10
Y_C = 24
Y_WHEEL = 36  # 4 blocks of 6
WHEEL_BLOCK = 6

EXTRA_NAMES = (
    "time",
    "engine_running",
    "engine_torque",
    "manifold_pressure",
    "lambda",
    "lambda_sensed",
    "injection_time",
    "shift_in_progress",
    "clutch_locked",
    "road_wheel_angle",
    "yaw_rate",
    "speed",
    "force_feedback",
    "fuel_flow",
    *(f"wheel{w}_{q}" for w in WHEELS for q in ("slip", "slipAngle", "Fx", "Fy", "friction")),
    "engine_stalled",
    "shift_refusals",
    "turbine_rpm",
    "lockup_locked",
)
SIGNAL_NAMES = BANK_NAMES + EXTRA_NAMES
Y_EXTRA = N_BANKS
Y_TIME = Y_EXTRA + 0
Y_RUNNING = Y_EXTRA + 1
Y_ENGINE_TORQUE = Y_EXTRA + 2
Y_P_IM = Y_EXTRA + 3
Y_LAMBDA = Y_EXTRA + 4
Y_LAMBDA_S = Y_EXTRA + 5
Y_T_INJ = Y_EXTRA + 6
Y_SHIFTING = Y_EXTRA + 7
Y_LOCKED = Y_EXTRA + 8
Y_DELTA = Y_EXTRA + 9
Y_YAW_RATE = Y_EXTRA + 10
Y_SPEED = Y_EXTRA + 11
Y_FFB = Y_EXTRA + 12
Y_FUEL_FLOW = Y_EXTRA + 13
Y_TYRE = Y_EXTRA + 14  # 4 blocks of 5
TYRE_BLOCK = 5
Y_STALLED = Y_TYRE + 4 * TYRE_BLOCK
Y_REFUSALS = Y_STALLED + 1
Y_TURBINE_RPM = Y_STALLED + 2
Y_LOCKUP = Y_STALLED + 3
N_OUTPUTS = len(SIGNAL_NAMES)
SIGNAL_INDEX = {name: i for i, name in enumerate(SIGNAL_NAMES)}
