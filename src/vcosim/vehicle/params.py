"""Vehicle parameters: a validated, documented model, loaded from TOML, packed for the kernel.

(One module on purpose, past 400 lines: every parameter with its unit, range and default is
one reference, read top to bottom like the model's block diagram.)

The defaults are the built-in "nightrider" vehicle (seed 003, appendix A, calibrated where the
seed is unrealistic; every change is listed in ``docs/vehicle-model.md``). Sections group the
sub-models so a parameter file reads like the model's block diagram.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Annotated, Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from vcosim.config import deep_merge, read_config_text, validation_problems
from vcosim.constants import PHYSICS_DT
from vcosim.errors import ConfigError, UnknownNameError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

Positive = Annotated[float, Field(gt=0)]
NonNegative = Annotated[float, Field(ge=0)]
Fraction = Annotated[float, Field(ge=0, le=1)]

PRESET_DIR = Path(__file__).parent / "presets"


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True, frozen=False)


class Body(_Section):
    """Geometry and mass: a uniform plate plus a point-mass engine between the front wheels."""

    chassis_mass: Positive = 1350.0
    engine_mass: NonNegative = 250.0
    track: Positive = 2.0
    plate_height: Positive = 1.0
    wheelbase: Positive = 4.0
    ride_height: Positive = 0.69
    gravity: Positive = 9.81


class Suspension(_Section):
    """Per-corner nonlinear spring and damper: F = -k tan(pi/2 * z / z_max)."""

    spring: Positive = 20000.0
    max_compression: Positive = 0.2
    damper: Positive = 100000.0
    max_compression_speed: Positive = 15.0


class Wheels(_Section):
    """Wheel spin, brakes and steering."""

    radius: Positive = 0.25
    inertia: Positive = 1.25
    max_steer_angle_deg: Annotated[float, Field(gt=0, lt=90)] = 35.0
    steering_rate: Positive = 5.0
    brake_torque_front: NonNegative = 3000.0
    brake_torque_rear: NonNegative = 2000.0
    parking_brake_torque: NonNegative = 1500.0
    rolling_resistance: NonNegative = 0.012


class Tyres(_Section):
    """Pacejka magic formula per wheel, with relaxation lengths for a well-behaved standstill."""

    lateral_B: Positive = 18.0
    lateral_C: Positive = 1.5
    lateral_E: float = -10.0
    longitudinal_B: Positive = 10.0
    longitudinal_C: Positive = 1.4
    longitudinal_E: float = -4.0
    aligning_B: Positive = 15.0
    aligning_C: Positive = 2.0
    aligning_E: float = -4.0
    aligning_scale: NonNegative = 0.2
    force_feedback_scale: NonNegative = 1.0 / 1000.0
    friction: NonNegative = 1.0
    friction_noise_variance: NonNegative = 0.0
    noise_seed: Annotated[int, Field(ge=0)] = 0
    combined_slip: bool = True
    relaxation_length_long: Positive = 0.15
    relaxation_length_lat: Positive = 0.4
    low_speed_damping: NonNegative = 2.0
    low_speed: Positive = 3.0


class Engine(_Section):
    """Mean-value engine (seed 003, 7.3), starter, fuel/lambda control, idle, rev limit."""

    idle_speed_rpm: Positive = 800.0
    idle_gain: NonNegative = 1.0 / 4000.0
    rev_limit_rpm: Positive = 7000.0
    rev_limit_gain: NonNegative = 1.0 / 10.0
    stall_speed_rpm: Positive = 200.0
    ambient_pressure: Positive = 1.0e5
    boost: Positive = 1.85
    displacement: Positive = 0.00229
    intake_volume: Positive = 0.002
    revolutions_per_cycle: Positive = 2.0
    gas_constant: Positive = 287.0
    intake_temperature: Positive = 310.7
    inertia: Positive = 0.1
    afr_stoich: Positive = 14.6
    min_air_flow: NonNegative = 0.0036
    vol_eff_c0: float = 0.4781
    vol_eff_c1: float = 0.0011
    vol_eff_c2: float = -0.0036
    fuel_film_tau: Positive = 0.25
    fuel_film_fraction: Fraction = 0.25
    injector_dead_time: NonNegative = 0.00037
    injector_gain: Positive = 0.0078
    lambda_delay: Annotated[float, Field(ge=0, le=0.08)] = 0.08
    lambda_tau: Positive = 0.05
    throttle_tau: Positive = 0.05
    friction_c0: float = 200000.0
    friction_c1: float = -394.8
    friction_c2: float = 12.06
    exhaust_pressure_coeff: NonNegative = 0.0282
    ignition_efficiency: Positive = 1.0
    combustion_efficiency: Positive = 0.8582
    heating_value: Positive = 44.0e6
    compression_ratio: Annotated[float, Field(gt=1)] = 9.3
    gamma: Annotated[float, Field(gt=1)] = 1.3
    lambda_kp: NonNegative = 0.02
    lambda_ki: NonNegative = 0.1
    starter_torque: Positive = 120.0
    starter_free_speed_rpm: Positive = 600.0
    fuel_tank_mass: Positive = 45.0
    initial_fuel: Fraction = 1.0


class Driveline(_Section):
    """Clutch, sequential gearbox, propeller shaft, final drive, open differential, drive shafts."""

    gear_ratios: list[float] = Field(
        default_factory=lambda: [-12 / 4.1, 16 / 4.1, 7.5 / 4.1, 5.5 / 4.1, 4.5 / 4.1, 3.2 / 4.1]
    )
    final_drive: Positive = 4.1
    prop_shaft_loss: NonNegative = 0.01
    final_drive_loss: NonNegative = 0.01
    drive_shaft_loss: NonNegative = 0.01
    clutch_capacity: Positive = 700.0
    throttle_release_time: Positive = 0.2
    clutch_press_time: Positive = 0.1
    clutch_release_time: Positive = 0.5
    throttle_press_time: Positive = 0.2
    shift_time: Positive = 0.8
    auto_upshift_rpm: Positive = 5800.0
    auto_downshift_rpm: Positive = 1300.0
    auto_clutch_engage_rpm: Positive = 1100.0
    auto_clutch_full_rpm: Positive = 2000.0

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
        if problems:
            raise ValueError("; ".join(problems))
        return self


class Resistance(_Section):
    """Air drag and other body resistance, F = a0 + a1 v + a2 v^2 (rolling: see Wheels)."""

    a0: NonNegative = 0.0
    a1: NonNegative = 0.0
    a2: NonNegative = 0.45


class VehicleParams(_Section):
    """Every parameter of the vehicle model, in SI units, grouped by sub-model."""

    name: str = "nightrider"
    body: Body = Field(default_factory=Body)
    suspension: Suspension = Field(default_factory=Suspension)
    wheels: Wheels = Field(default_factory=Wheels)
    tyres: Tyres = Field(default_factory=Tyres)
    engine: Engine = Field(default_factory=Engine)
    driveline: Driveline = Field(default_factory=Driveline)
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
        try:
            data = tomllib.loads(read_config_text(path))
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError([f"not valid TOML: {exc}"], str(path)) from None
        base = data.pop("preset", None)
        if base is not None:
            merged = deep_merge(cls.preset(str(base)).model_dump(), data)
            return cls.from_dict(merged, str(path))
        return cls.from_dict(data, str(path))

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
    "steer_rate",
    "brake_f",
    "brake_r",
    "park_brake",
    "f_roll",
    # tyres
    "B_lat",
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
    "up_rpm",
    "down_rpm",
    "ac_engage",
    "ac_full",
    # resistance
    "a0",
    "a1",
    "a2",
    # time step
    "dt",
)
PARAM_DTYPE = np.dtype([(name, np.float64) for name in PACKED_FIELDS])
DT = PHYSICS_DT


def pack(params: VehicleParams, dt: float = DT) -> np.ndarray:
    """Pack parameters and derived quantities into a one-element structured array."""
    bd, su, wh, ty, en, dl, rs = (
        params.body,
        params.suspension,
        params.wheels,
        params.tyres,
        params.engine,
        params.driveline,
        params.resistance,
    )
    m_c, m_m, L, B, H = bd.chassis_mass, bd.engine_mass, bd.wheelbase, bd.track, bd.plate_height
    mu_red = m_c * m_m / (m_c + m_m)
    rpm = 2 * math.pi / 60
    v = dict(
        mass=m_c + m_m,
        a=m_c / (m_c + m_m) * L / 2,
        b=L - m_c / (m_c + m_m) * L / 2,
        c=B / 2,
        d=H / 2,
        Ixx=m_c * (B**2 + H**2) / 12,
        Iyy=m_c * (L**2 + H**2) / 12 + mu_red * L**2 / 4,
        Izz=m_c * (L**2 + B**2) / 12 + mu_red * L**2 / 4,
        ride_height=bd.ride_height,
        g=bd.gravity,
        k_spring=su.spring,
        z_max=su.max_compression,
        c_damper=su.damper,
        zdot_max=su.max_compression_speed,
        r=wh.radius,
        J_w=wh.inertia,
        max_steer=math.radians(wh.max_steer_angle_deg),
        steer_rate=wh.steering_rate,
        brake_f=wh.brake_torque_front,
        brake_r=wh.brake_torque_rear,
        park_brake=wh.parking_brake_torque,
        f_roll=wh.rolling_resistance,
        B_lat=ty.lateral_B,
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
        up_rpm=dl.auto_upshift_rpm * rpm,
        down_rpm=dl.auto_downshift_rpm * rpm,
        ac_engage=dl.auto_clutch_engage_rpm * rpm,
        ac_full=dl.auto_clutch_full_rpm * rpm,
        a0=rs.a0,
        a1=rs.a1,
        a2=rs.a2,
        dt=dt,
    )
    out = np.zeros(1, dtype=PARAM_DTYPE)
    for name in PACKED_FIELDS:
        out[0][name] = v[name]
    return out
