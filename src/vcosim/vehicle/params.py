"""Vehicle parameters: a validated, documented model, loaded from TOML, packed for the kernel.

(One module on purpose, past 400 lines: every parameter with its unit, range and default is
one reference, read top to bottom like the model's block diagram.)

The defaults are the built-in "nightrider" vehicle (seed 003, appendix A, calibrated where the
seed is unrealistic; every change is listed in ``docs/vehicle-model.md``). Sections group the
sub-models so a parameter file reads like the model's block diagram.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from vcosim.config import deep_merge, read_toml, validation_problems, with_number_problems
from vcosim.constants import PHYSICS_DT
from vcosim.errors import ConfigError, UnknownNameError

PRESET_DIR = Path(__file__).parent / "presets"


def span(default: Any, low: float, high: float, *, open_low: bool = False) -> Any:
    """A parameter's default and its plausible range [low, high] (``open_low``: low excluded).

    The ranges keep the model meaningful and stable at its fixed step: beyond them a value
    is a typing error (a mass of 1e308 kg) or breaks the physics (a spring so stiff that the
    0.5 ms step cannot follow it). Every float must be finite (``allow_inf_nan=False``).
    """
    if open_low:
        return Field(default, gt=low, le=high)
    return Field(default, ge=low, le=high)


class _Section(BaseModel):
    model_config = ConfigDict(
        extra="forbid", validate_assignment=True, frozen=False, allow_inf_nan=False
    )


class Body(_Section):
    """Geometry and mass: a uniform plate plus a point-mass engine between the front wheels.

    The inertias follow from the plate (the seed's formula) unless given: a real car's mass
    sits further from its centre than a uniform plate's, so a realistic preset states them.
    """

    chassis_mass: float = span(1350.0, 0.0, 50000.0, open_low=True)
    engine_mass: float = span(250.0, 0.0, 10000.0)
    track: float = span(2.0, 0.5, 5.0)
    plate_height: float = span(1.0, 0.05, 5.0)
    wheelbase: float = span(4.0, 0.5, 20.0)
    ride_height: float = span(0.69, 0.05, 5.0)
    gravity: float = span(9.81, 0.0, 30.0, open_low=True)
    roll_inertia: float | None = span(None, 1.0, 1.0e6)
    pitch_inertia: float | None = span(None, 1.0, 1.0e7)
    yaw_inertia: float | None = span(None, 1.0, 1.0e7)


class Suspension(_Section):
    """Per-corner nonlinear spring and damper: F = -k tan(pi/2 * z / z_max)."""

    spring: float = span(20000.0, 100.0, 1.0e6)
    max_compression: float = span(0.2, 0.01, 2.0)
    damper: float = span(100000.0, 10.0, 1.0e6)
    max_compression_speed: float = span(15.0, 0.1, 100.0)


class Wheels(_Section):
    """Wheel spin, brakes and steering (brake balance and ABS: ``Brakes``).

    ``max_steer_angle_deg`` is the road-wheel angle of the single front wheel of the bicycle
    model at full lock: the kinematic turning centre lies on the rear axle, L / tan(angle)
    from its middle. ``ackermann_percent`` splits it between the two front wheels: the
    difference of their cotangents is that share of track / wheelbase (100: both wheels at
    right angles to the radius from that centre, no scrub; 0: parallel steering, both at the
    same angle). The mean of the two cotangents is always the bicycle model's, so the
    kinematic turning circle is the same for every percentage.
    """

    radius: float = span(0.25, 0.05, 2.0)
    inertia: float = span(1.25, 0.05, 100.0)
    max_steer_angle_deg: float = span(35.0, 0.0, 89.0, open_low=True)
    ackermann_percent: float = span(100.0, 0.0, 150.0)
    steering_rate: float = span(5.0, 0.0, 1000.0, open_low=True)
    brake_torque_front: float = span(3000.0, 0.0, 1.0e5)
    brake_torque_rear: float = span(2000.0, 0.0, 1.0e5)
    parking_brake_torque: float = span(1500.0, 0.0, 1.0e5)
    rolling_resistance: float = span(0.012, 0.0, 0.5)


class Brakes(_Section):
    """Brake balance and the anti-lock controller (vcosim additions; the seed has neither).

    ``front_share``, when given, splits the total service-brake torque of the four wheels
    (``2 (brake_torque_front + brake_torque_rear)``) between the axles; without it the two
    per-wheel torques of ``Wheels`` stand as they are (the seed's 3000/2000: 0.6 front).
    ABS: per wheel, every physics step, the brake pressure is let off while the wheel's slip
    exceeds ``abs_slip`` and built up again once it is below half of that, at the rates of
    ``abs_release_time`` and ``abs_apply_time`` (full pressure to none and back); below
    ``abs_min_speed`` it stands aside so the car can stop and stand. As production systems
    do (Bosch, Automotive Handbook), both rear wheels get the pressure of the one that locks
    first (select-low), and the front wheels' pressures may differ by a share that grows from
    none to full over ``abs_yaw_delay_time`` from the start of braking (yaw-moment build-up
    delay), so that on split friction the yaw moment builds slowly enough to hold the car.
    The slip is taken against a reference speed estimated as production systems do, from
    the wheels: the fastest wheel's, moving from the speed the longitudinal accelerometer
    predicts by at most ``abs_reference_margin`` (m/s^2) down and ``abs_reference_rise`` up.
    """

    front_share: float | None = span(None, 0.0, 1.0)
    abs: bool = False
    abs_slip: float = span(0.2, 0.01, 1.0)
    abs_release_time: float = span(0.03, 0.001, 5.0)
    abs_apply_time: float = span(0.1, 0.001, 5.0)
    abs_min_speed: float = span(2.0, 0.1, 30.0)
    abs_yaw_delay_time: float = span(1.0, 0.001, 10.0)
    abs_reference_margin: float = span(0.5, 0.0, 10.0)
    abs_reference_rise: float = span(10.0, 0.0, 1000.0)


class Tyres(_Section):
    """Pacejka magic formula per wheel, with relaxation lengths for a well-behaved standstill.

    ``lateral_B_rear`` (default: ``lateral_B``) gives the rear tyres their own cornering
    stiffness: with one tyre all round and D proportional to the load, the car is neutral
    steer in the linear range; a stiffer rear makes it understeer, as real cars do.
    """

    lateral_B: float = span(18.0, 0.0, 100.0, open_low=True)
    lateral_C: float = span(1.5, 0.0, 3.0, open_low=True)
    lateral_E: float = span(-10.0, -50.0, 1.0)
    lateral_B_rear: float | None = span(None, 0.0, 100.0, open_low=True)
    longitudinal_B: float = span(10.0, 0.0, 100.0, open_low=True)
    longitudinal_C: float = span(1.4, 0.0, 3.0, open_low=True)
    longitudinal_E: float = span(-4.0, -50.0, 1.0)
    aligning_B: float = span(15.0, 0.0, 100.0, open_low=True)
    aligning_C: float = span(2.0, 0.0, 3.0, open_low=True)
    aligning_E: float = span(-4.0, -50.0, 1.0)
    aligning_scale: float = span(0.2, 0.0, 10.0)
    force_feedback_scale: float = span(1.0 / 1000.0, 0.0, 1.0)
    friction: float = span(1.0, 0.0, 5.0)
    friction_noise_variance: float = span(0.0, 0.0, 1.0)
    noise_seed: Annotated[int, Field(ge=0, le=2**53)] = 0
    combined_slip: bool = True
    relaxation_length_long: float = span(0.15, 0.01, 10.0)
    relaxation_length_lat: float = span(0.4, 0.01, 10.0)
    low_speed_damping: float = span(2.0, 0.0, 100.0)
    low_speed: float = span(3.0, 0.0, 50.0, open_low=True)


class Engine(_Section):
    """Mean-value engine (seed 003, 7.3), starter, fuel/lambda control, idle, rev limit."""

    idle_speed_rpm: float = span(800.0, 100.0, 5000.0)
    idle_gain: float = span(1.0 / 4000.0, 0.0, 1.0)
    rev_limit_rpm: float = span(7000.0, 500.0, 30000.0)
    rev_limit_gain: float = span(1.0 / 10.0, 0.0, 10.0)
    stall_speed_rpm: float = span(200.0, 10.0, 5000.0)
    ambient_pressure: float = span(1.0e5, 1.0e4, 1.0e6)
    boost: float = span(1.85, 0.1, 10.0)
    displacement: float = span(0.00229, 1.0e-5, 0.1)
    intake_volume: float = span(0.002, 1.0e-5, 1.0)
    revolutions_per_cycle: float = span(2.0, 1.0, 2.0)
    gas_constant: float = span(287.0, 100.0, 1000.0)
    intake_temperature: float = span(310.7, 150.0, 600.0)
    inertia: float = span(0.1, 0.005, 100.0)
    afr_stoich: float = span(14.6, 1.0, 50.0)
    min_air_flow: float = span(0.0036, 0.0, 1.0)
    vol_eff_c0: float = span(0.4781, -10.0, 10.0)
    vol_eff_c1: float = span(0.0011, -1.0, 1.0)
    vol_eff_c2: float = span(-0.0036, -1.0, 1.0)
    fuel_film_tau: float = span(0.25, 0.001, 100.0)
    fuel_film_fraction: float = span(0.25, 0.0, 1.0)
    injector_dead_time: float = span(0.00037, 0.0, 0.01)
    injector_gain: float = span(0.0078, 0.0, 1.0, open_low=True)
    lambda_delay: float = span(0.08, 0.0, 0.08)
    lambda_tau: float = span(0.05, 0.001, 10.0)
    throttle_tau: float = span(0.05, 0.001, 10.0)
    friction_c0: float = span(200000.0, -1.0e7, 1.0e7)
    friction_c1: float = span(-394.8, -1.0e5, 1.0e5)
    friction_c2: float = span(12.06, -1.0e3, 1.0e3)
    exhaust_pressure_coeff: float = span(0.0282, 0.0, 1.0)
    ignition_efficiency: float = span(1.0, 0.0, 1.0, open_low=True)
    combustion_efficiency: float = span(0.8582, 0.0, 1.0, open_low=True)
    heating_value: float = span(44.0e6, 1.0e6, 2.0e8)
    compression_ratio: float = span(9.3, 1.0, 30.0, open_low=True)
    gamma: float = span(1.3, 1.0, 2.0, open_low=True)
    lambda_kp: float = span(0.02, 0.0, 10.0)
    lambda_ki: float = span(0.1, 0.0, 100.0)
    starter_torque: float = span(120.0, 0.0, 5000.0, open_low=True)
    starter_free_speed_rpm: float = span(600.0, 0.0, 5000.0, open_low=True)
    fuel_tank_mass: float = span(45.0, 0.0, 5000.0, open_low=True)
    initial_fuel: float = span(1.0, 0.0, 1.0)

    @model_validator(mode="after")
    def _check(self) -> Engine:
        problems = []
        if not self.stall_speed_rpm < self.idle_speed_rpm < self.rev_limit_rpm:
            problems.append(
                "stall_speed_rpm < idle_speed_rpm < rev_limit_rpm must hold, got "
                f"{self.stall_speed_rpm:g}, {self.idle_speed_rpm:g}, {self.rev_limit_rpm:g}"
            )
        if self.displacement > 20 * self.intake_volume:
            problems.append(
                "displacement over 20 x intake_volume: the manifold would empty faster than "
                "the 0.5 ms step can follow"
            )
        if problems:
            raise ValueError("; ".join(problems))
        return self


class Driveline(_Section):
    """Clutch, sequential gearbox, propeller shaft, final drive, open differential, drive shafts.

    With ``automatic`` selected the same gear set becomes a torque-converter automatic: a
    converter of capacity factor ``converter_k_factor`` (engine rpm over the square root of
    the torque it absorbs with the turbine held) multiplies torque by up to
    ``converter_torque_ratio`` at stall, falling to 1 at ``converter_coupling_point`` (turbine
    over pump speed); a lock-up clutch (capacity ``clutch_capacity``) bridges it in 2nd gear
    and up once the turbine turns faster than ``lockup_rpm``; shift elements of capacity
    ``shift_element_capacity`` change gear in ``auto_shift_time``. R and D engage only below
    ``auto_engage_max_speed`` against the motion.
    """

    gear_ratios: list[Annotated[float, Field(ge=-50.0, le=50.0)]] = Field(
        default_factory=lambda: [-12 / 4.1, 16 / 4.1, 7.5 / 4.1, 5.5 / 4.1, 4.5 / 4.1, 3.2 / 4.1]
    )
    final_drive: float = span(4.1, 0.0, 50.0, open_low=True)
    prop_shaft_loss: float = span(0.01, 0.0, 10.0)
    final_drive_loss: float = span(0.01, 0.0, 10.0)
    drive_shaft_loss: float = span(0.01, 0.0, 10.0)
    clutch_capacity: float = span(700.0, 0.0, 1.0e5, open_low=True)
    throttle_release_time: float = span(0.2, 0.0, 10.0, open_low=True)
    clutch_press_time: float = span(0.1, 0.0, 10.0, open_low=True)
    clutch_release_time: float = span(0.5, 0.0, 10.0, open_low=True)
    throttle_press_time: float = span(0.2, 0.0, 10.0, open_low=True)
    shift_time: float = span(0.8, 0.0, 20.0, open_low=True)
    auto_shift_time: float = span(0.4, 0.0, 20.0, open_low=True)
    auto_upshift_rpm: float = span(5800.0, 100.0, 30000.0)
    auto_downshift_rpm: float = span(1300.0, 100.0, 30000.0)
    converter_k_factor: float = span(140.0, 20.0, 1000.0)
    converter_torque_ratio: float = span(2.0, 1.0, 5.0)
    converter_coupling_point: float = span(0.85, 0.3, 0.99)
    turbine_inertia: float = span(0.05, 0.005, 10.0)
    lockup_rpm: float = span(1400.0, 100.0, 30000.0)
    shift_element_capacity: float = span(1800.0, 0.0, 1.0e5, open_low=True)
    auto_engage_max_speed: float = span(1.5, 0.1, 30.0)

    @model_validator(mode="after")
    def _check(self) -> Driveline:
        problems = []
        if len(self.gear_ratios) != 6:
            problems.append("gear_ratios needs 6 values: reverse, then gears 1 to 5")
        elif self.gear_ratios[0] >= 0 or any(r <= 0 for r in self.gear_ratios[1:]):
            problems.append("gear_ratios: reverse must be negative, gears 1 to 5 positive")
        slowest = max(self.throttle_release_time, self.clutch_press_time) + max(
            self.clutch_release_time, self.throttle_press_time
        )
        if self.shift_time < slowest:
            problems.append(f"shift_time must be at least {slowest:g} s for the pedal timings")
        if not 1.9 * self.auto_downshift_rpm < self.auto_upshift_rpm:
            problems.append(
                "auto_upshift_rpm must be above 1.9 x auto_downshift_rpm (the light-throttle "
                "upshift point)"
            )
        if problems:
            raise ValueError("; ".join(problems))
        return self


class Resistance(_Section):
    """Air drag and other body resistance, F = a0 + a1 v + a2 v^2 (rolling: see Wheels)."""

    a0: float = span(0.0, 0.0, 1.0e5)
    a1: float = span(0.0, 0.0, 1.0e4)
    a2: float = span(0.45, 0.0, 100.0)


class VehicleParams(_Section):
    """Every parameter of the vehicle model, in SI units, grouped by sub-model."""

    name: str = "nightrider"
    body: Body = Field(default_factory=Body)
    suspension: Suspension = Field(default_factory=Suspension)
    wheels: Wheels = Field(default_factory=Wheels)
    tyres: Tyres = Field(default_factory=Tyres)
    engine: Engine = Field(default_factory=Engine)
    driveline: Driveline = Field(default_factory=Driveline)
    brakes: Brakes = Field(default_factory=Brakes)
    resistance: Resistance = Field(default_factory=Resistance)

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str = "vehicle parameters") -> VehicleParams:
        """Validate a nested dict; every problem is reported at once with its dotted key."""
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise ConfigError(validation_problems(exc), source) from None

    @classmethod
    def from_toml(cls, path: str | Path) -> VehicleParams:
        """Load a TOML parameter file; missing keys keep the built-in defaults."""
        path = Path(path)

        def build(data: dict[str, Any]) -> VehicleParams:
            data = dict(data)
            base = data.pop("preset", None)
            if base is not None:
                merged = deep_merge(cls.preset(str(base)).model_dump(), data)
                return cls.from_dict(merged, str(path))
            return cls.from_dict(data, str(path))

        return with_number_problems(read_toml(path, numbers=False), str(path), build)

    @classmethod
    def preset(cls, name: str) -> VehicleParams:
        """A built-in vehicle by name: "nightrider" (default) or "nightrider-seed"."""
        names = sorted(p.stem for p in PRESET_DIR.glob("*.toml"))
        if name not in names:
            raise ConfigError([str(UnknownNameError("vehicle preset", name, names))])
        return cls.from_toml(PRESET_DIR / f"{name}.toml")

    def with_changes(self, **dotted: Any) -> VehicleParams:
        """A copy with dotted keys changed, e.g. ``with_changes(**{"tyres.friction": 0.5})``."""
        data = self.model_dump()
        for key, value in dotted.items():
            node = data
            *parents, leaf = key.split(".")
            for part in parents:
                node = node[part]
            node[leaf] = value
        return VehicleParams.from_dict(data)

    def pack(self) -> np.ndarray:
        """The parameter record the kernel reads (primary values plus derived quantities)."""
        return pack(self)


# --- packing for the kernel -----------------------------------------------------------------


def magic_formula(slip: float, b: float, c: float, e: float) -> float:
    """Normalised magic formula sin(C atan(B s - E (B s - atan(B s)))); D = 1."""
    bs = b * slip
    return math.sin(c * math.atan(bs - e * (bs - math.atan(bs))))


def peak_slip(b: float, c: float, e: float) -> float:
    """Slip at which the normalised magic formula peaks (for combined-slip normalisation)."""
    grid = np.linspace(1e-4, 1.5, 15001)
    bs = b * grid
    values = np.sin(c * np.arctan(bs - e * (bs - np.arctan(bs))))
    return float(grid[int(np.argmax(values))])


PACKED_FIELDS = (
    # body
    "mass",
    "a",
    "b",
    "c",
    "d",
    "Ixx",
    "Iyy",
    "Izz",
    "ride_height",
    "g",
    # suspension
    "k_spring",
    "z_max",
    "c_damper",
    "zdot_max",
    # wheels
    "r",
    "J_w",
    "max_steer",
    "ackermann",
    "steer_rate",
    "brake_f",
    "brake_r",
    "park_brake",
    "f_roll",
    # brakes
    "abs_on",
    "abs_slip",
    "abs_release",
    "abs_apply",
    "abs_v_min",
    "abs_split_rate",
    "abs_ref_fall",
    "abs_ref_rise",
    # tyres
    "B_lat",
    "lat_scale_rear",
    "C_lat",
    "E_lat",
    "B_long",
    "C_long",
    "E_long",
    "B_al",
    "C_al",
    "E_al",
    "al_scale",
    "ffb_scale",
    "mu",
    "noise_std",
    "noise_seed",
    "combined",
    "kappa_peak",
    "alpha_peak",
    "kappa_sat",
    "alpha_sat",
    "sigma_long",
    "sigma_lat",
    "d_low",
    "v_low",
    # engine
    "idle_speed",
    "idle_gain",
    "rev_limit",
    "rev_gain",
    "stall_speed",
    "p_amb",
    "p_boost",
    "mdot_max_per_rev",
    "V_d",
    "V_i",
    "n_r",
    "R",
    "T_i",
    "J_e",
    "AF_s",
    "mdot_min",
    "c0",
    "c1",
    "c2",
    "tau_fp",
    "X_fp",
    "t_0",
    "k_inj",
    "lambda_delay_steps",
    "tau_lambda",
    "tau_th",
    "cf0",
    "cf1",
    "cf2",
    "cpe",
    "eta_ig",
    "q_HV",
    "K_p_lambda",
    "K_i_lambda",
    "starter_torque",
    "starter_free_speed",
    "fuel_tank",
    "initial_fuel",
    # driveline
    "ratio_R",
    "ratio_1",
    "ratio_2",
    "ratio_3",
    "ratio_4",
    "ratio_5",
    "final_drive",
    "F_k",
    "F_s",
    "F_d",
    "clutch_capacity",
    "t_acc_release",
    "t_clutch_press",
    "t_clutch_release",
    "t_acc_press",
    "t_shift",
    "t_gear_change",
    "auto_pace",
    "up_rpm",
    "down_rpm",
    "tc_capacity",
    "tc_ratio",
    "tc_coupling",
    "J_t",
    "lockup_speed",
    "shift_capacity",
    "auto_v_engage",
    # resistance
    "a0",
    "a1",
    "a2",
    # time step
    "dt",
)
PARAM_DTYPE = np.dtype([(name, np.float64) for name in PACKED_FIELDS])
DT = PHYSICS_DT


def body_properties(
    chassis_mass: float,
    engine_mass: float,
    wheelbase: float,
    track: float,
    plate_height: float,
    roll_inertia: float,
    pitch_inertia: float,
    yaw_inertia: float,
) -> tuple[float, float, float, float, float, float]:
    """Mass, CoG behind the front axle (a) and before the rear (b), and the three inertias.

    A plain function of floats (an inertia of 0 is one not given: the plate's follows), so
    that the native FMU compiles this very code for the masses a master sets
    (``vcosim.fmi.native``). Squares are products: ``x**2`` is ``pow``, which compiled code
    does not call, and the two may differ in the last bit.
    """
    m_c, m_m, L, B, H = chassis_mass, engine_mass, wheelbase, track, plate_height
    mu_red = m_c * m_m / (m_c + m_m)
    mass = m_c + m_m
    a = m_c / (m_c + m_m) * L / 2
    b = L - m_c / (m_c + m_m) * L / 2
    i_xx = roll_inertia if roll_inertia > 0.0 else m_c * (B * B + H * H) / 12
    i_yy = (
        pitch_inertia if pitch_inertia > 0.0 else m_c * (L * L + H * H) / 12 + mu_red * (L * L) / 4
    )
    i_zz = yaw_inertia if yaw_inertia > 0.0 else m_c * (L * L + B * B) / 12 + mu_red * (L * L) / 4
    return mass, a, b, i_xx, i_yy, i_zz


def brake_torques(front: float, rear: float, front_share: float) -> tuple[float, float]:
    """Per-wheel brake torques front and rear: as given, or split by ``front_share`` (< 0: none).

    A plain function of floats, compiled into the native FMU as it is (``body_properties``).
    """
    if front_share < 0.0:
        return front, rear
    total = front + rear
    return front_share * total, (1.0 - front_share) * total


def pack(params: VehicleParams, dt: float = DT) -> np.ndarray:
    """Pack parameters and derived quantities into a one-element structured array."""
    bd, su, wh, br, ty, en, dl, rs = (
        params.body,
        params.suspension,
        params.wheels,
        params.brakes,
        params.tyres,
        params.engine,
        params.driveline,
        params.resistance,
    )
    mass, a, b, i_xx, i_yy, i_zz = body_properties(
        bd.chassis_mass,
        bd.engine_mass,
        bd.wheelbase,
        bd.track,
        bd.plate_height,
        bd.roll_inertia or 0.0,
        bd.pitch_inertia or 0.0,
        bd.yaw_inertia or 0.0,
    )
    rpm = 2 * math.pi / 60
    brake_f, brake_r = brake_torques(
        wh.brake_torque_front,
        wh.brake_torque_rear,
        -1.0 if br.front_share is None else br.front_share,
    )
    v = dict(
        mass=mass,
        a=a,
        b=b,
        c=bd.track / 2,
        d=bd.plate_height / 2,
        Ixx=i_xx,
        Iyy=i_yy,
        Izz=i_zz,
        ride_height=bd.ride_height,
        g=bd.gravity,
        k_spring=su.spring,
        z_max=su.max_compression,
        c_damper=su.damper,
        zdot_max=su.max_compression_speed,
        r=wh.radius,
        J_w=wh.inertia,
        max_steer=math.radians(wh.max_steer_angle_deg),
        ackermann=wh.ackermann_percent / 100.0 * (bd.track / 2) / bd.wheelbase,
        steer_rate=wh.steering_rate,
        brake_f=brake_f,
        brake_r=brake_r,
        park_brake=wh.parking_brake_torque,
        f_roll=wh.rolling_resistance,
        abs_on=1.0 if br.abs else 0.0,
        abs_slip=br.abs_slip,
        abs_release=dt / br.abs_release_time,
        abs_apply=dt / br.abs_apply_time,
        abs_v_min=br.abs_min_speed,
        abs_split_rate=dt / br.abs_yaw_delay_time,
        abs_ref_fall=br.abs_reference_margin * dt,
        abs_ref_rise=br.abs_reference_rise * dt,
        B_lat=ty.lateral_B,
        lat_scale_rear=(ty.lateral_B_rear or ty.lateral_B) / ty.lateral_B,
        C_lat=ty.lateral_C,
        E_lat=ty.lateral_E,
        B_long=ty.longitudinal_B,
        C_long=ty.longitudinal_C,
        E_long=ty.longitudinal_E,
        B_al=ty.aligning_B,
        C_al=ty.aligning_C,
        E_al=ty.aligning_E,
        al_scale=ty.aligning_scale,
        ffb_scale=ty.force_feedback_scale,
        mu=ty.friction,
        noise_std=math.sqrt(ty.friction_noise_variance),
        noise_seed=float(ty.noise_seed),
        combined=1.0 if ty.combined_slip else 0.0,
        kappa_peak=peak_slip(ty.longitudinal_B, ty.longitudinal_C, ty.longitudinal_E),
        alpha_peak=peak_slip(ty.lateral_B, ty.lateral_C, ty.lateral_E),
        kappa_sat=1.0 / (ty.longitudinal_B * ty.longitudinal_C),
        alpha_sat=1.0 / (ty.lateral_B * ty.lateral_C),
        sigma_long=ty.relaxation_length_long,
        sigma_lat=ty.relaxation_length_lat,
        d_low=ty.low_speed_damping,
        v_low=ty.low_speed,
        idle_speed=en.idle_speed_rpm * rpm,
        idle_gain=en.idle_gain / rpm,
        rev_limit=en.rev_limit_rpm * rpm,
        rev_gain=en.rev_limit_gain / rpm,
        stall_speed=en.stall_speed_rpm * rpm,
        p_amb=en.ambient_pressure,
        p_boost=en.ambient_pressure * en.boost,
        mdot_max_per_rev=en.ambient_pressure
        * en.boost
        * en.displacement
        / (en.revolutions_per_cycle * en.gas_constant * en.intake_temperature),
        V_d=en.displacement,
        V_i=en.intake_volume,
        n_r=en.revolutions_per_cycle,
        R=en.gas_constant,
        T_i=en.intake_temperature,
        J_e=en.inertia,
        AF_s=en.afr_stoich,
        mdot_min=en.min_air_flow,
        c0=en.vol_eff_c0,
        c1=en.vol_eff_c1,
        c2=en.vol_eff_c2,
        tau_fp=en.fuel_film_tau,
        X_fp=en.fuel_film_fraction,
        t_0=en.injector_dead_time,
        k_inj=en.injector_gain,
        lambda_delay_steps=float(round(en.lambda_delay / dt)),
        tau_lambda=en.lambda_tau,
        tau_th=en.throttle_tau,
        cf0=en.friction_c0,
        cf1=en.friction_c1,
        cf2=en.friction_c2,
        cpe=en.exhaust_pressure_coeff,
        eta_ig=en.combustion_efficiency
        * (1 - en.compression_ratio ** (1 - en.gamma))
        * en.ignition_efficiency,
        q_HV=en.heating_value,
        K_p_lambda=en.lambda_kp,
        K_i_lambda=en.lambda_ki,
        starter_torque=en.starter_torque,
        starter_free_speed=en.starter_free_speed_rpm * rpm,
        fuel_tank=en.fuel_tank_mass,
        initial_fuel=en.initial_fuel,
        ratio_R=dl.gear_ratios[0],
        ratio_1=dl.gear_ratios[1],
        ratio_2=dl.gear_ratios[2],
        ratio_3=dl.gear_ratios[3],
        ratio_4=dl.gear_ratios[4],
        ratio_5=dl.gear_ratios[5],
        final_drive=dl.final_drive,
        F_k=dl.prop_shaft_loss,
        F_s=dl.final_drive_loss,
        F_d=dl.drive_shaft_loss,
        clutch_capacity=dl.clutch_capacity,
        t_acc_release=dl.throttle_release_time,
        t_clutch_press=dl.clutch_press_time,
        t_clutch_release=dl.clutch_release_time,
        t_acc_press=dl.throttle_press_time,
        t_shift=dl.shift_time,
        t_gear_change=dl.shift_time - max(dl.clutch_release_time, dl.throttle_press_time),
        auto_pace=dl.auto_shift_time / dl.shift_time,
        up_rpm=dl.auto_upshift_rpm * rpm,
        down_rpm=dl.auto_downshift_rpm * rpm,
        tc_capacity=(1.0 / rpm) ** 2 / dl.converter_k_factor**2,
        tc_ratio=dl.converter_torque_ratio,
        tc_coupling=dl.converter_coupling_point,
        J_t=dl.turbine_inertia,
        lockup_speed=dl.lockup_rpm * rpm,
        shift_capacity=dl.shift_element_capacity,
        auto_v_engage=dl.auto_engage_max_speed,
        a0=rs.a0,
        a1=rs.a1,
        a2=rs.a2,
        dt=dt,
    )
    out = np.zeros(1, dtype=PARAM_DTYPE)
    for name in PACKED_FIELDS:
        out[0][name] = v[name]
    return out
