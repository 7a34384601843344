"""Ranges typical of a mid-size passenger car, each with where it comes from.

A figure outside its range is flagged in the datasheet: not an error of the model (a van or a
race car is meant to be outside), but a question for whoever chose the parameters. The sources
are listed in ``SOURCES`` and discussed in docs/datasheet.md; several ranges are indicative
bands from textbook discussions rather than one measured population, and the docs say which.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Range:
    """A typical interval of one figure; ``None`` is an open end (a legal limit)."""

    low: float | None
    high: float | None
    unit: str
    source: str
    nan_holds: bool = False  # NaN means "never happened", which is in range

    def holds(self, value: float) -> bool:
        """Whether ``value`` lies inside (a NaN only with ``nan_holds``)."""
        if value != value:  # NaN
            return self.nan_holds
        return (self.low is None or value >= self.low) and (self.high is None or value <= self.high)

    def text(self) -> str:
        """``0.5 – 5`` / ``≤ 35`` / ``≥ 1.83`` / ``never``."""
        if self.nan_holds:
            return "never"
        if self.low is None:
            return f"≤ {self.high:g}"
        if self.high is None:
            return f"≥ {self.low:g}"
        return f"{self.low:g} – {self.high:g}"


SOURCES = {
    "gillespie": "T. D. Gillespie, Fundamentals of Vehicle Dynamics, SAE 1992: ch. 6 "
    "(steady-state cornering, understeer gradient, characteristic speed), ch. 7 (roll)",
    "heissing": "B. Heißing, M. Ersoy (eds.), Chassis Handbook, Vieweg+Teubner 2011: ch. 2 "
    "(driving dynamics; ISO 4138 and ISO 7401 characteristic values of passenger cars)",
    "fmvss126": "FMVSS No. 126, 49 CFR 571.126, S5.2 (lateral stability: yaw-rate ratios "
    "≤ 35 % at 1.0 s and ≤ 20 % at 1.75 s; responsiveness: ≥ 1.83 m at 1.07 s)",
    "ece_r13h": "UN ECE Regulation 13-H, annex 3 (mean fully developed deceleration, "
    "type-0 test: ≥ 6.43 m/s²)",
    "adac": "ADAC brake tests of current cars with ABS on dry asphalt, 100–0 km/h: "
    "about 34–40 m (docs/vehicle-model.md cites the same)",
    "epa": "US EPA Test Car List data files, road-load target coefficients A, B, C of "
    "mid-size cars (converted from lbf, mph: A 110–180 N, B 0–5 N/(m/s), C 0.3–0.6 N/(m/s)²)",
    "makers": "manufacturers' data of 1.2–1.7 t saloons of 90–200 kW (performance figures)",
    "issue44": "the bound a test driver signs off (vcosim issue 44, from production automatics "
    "that keep a shift's disturbance near 0.1 g): a part-load upshift or a coast downshift "
    "≤ 1.0 m/s² outside the levels before and after, a garage shift at rest ≤ 1.5 m/s²",
    "linear": "derived: the yaw-rate gain v / (L + K v²) and the characteristic speed "
    "√(L / K) of the single-track model over the understeer band above and L 2.5–3 m",
}

PASSENGER_CAR: dict[str, Range] = {
    "understeer_gradient_deg_per_g": Range(0.5, 5.0, "deg/g", "gillespie"),
    "characteristic_speed_kmh": Range(60.0, 200.0, "km/h", "linear"),
    "yaw_rate_gain_per_s": Range(3.0, 8.0, "1/s", "linear"),
    "max_lateral_acceleration_g": Range(0.75, 1.05, "g", "heissing"),
    "sideslip_gradient_deg_per_g": Range(-4.0, 1.0, "deg/g", "heissing"),
    "roll_gradient_deg_per_g": Range(2.5, 7.0, "deg/g", "gillespie"),
    "yaw_rate_response_time_s": Range(0.08, 0.3, "s", "heissing"),
    "yaw_rate_peak_time_s": Range(0.15, 0.6, "s", "heissing"),
    "yaw_rate_overshoot_percent": Range(0.0, 40.0, "%", "heissing"),
    "lateral_acceleration_response_time_s": Range(0.15, 0.5, "s", "heissing"),
    "yaw_bandwidth_hz": Range(0.8, 3.0, "Hz", "heissing"),
    "max_yaw_rate_ratio_1s_percent": Range(None, 35.0, "%", "fmvss126"),
    "max_yaw_rate_ratio_1_75s_percent": Range(None, 20.0, "%", "fmvss126"),
    "min_lateral_displacement_m": Range(1.83, None, "m", "fmvss126"),
    "spins_from_amplitude_a": Range(99.0, None, "A", "fmvss126", nan_holds=True),
    "zero_to_100_s": Range(6.0, 12.0, "s", "makers"),
    "zero_to_100_manual_s": Range(6.0, 12.0, "s", "makers"),
    "peak_power_kw": Range(90.0, 200.0, "kW", "makers"),
    "eighty_to_120_top_gear_s": Range(7.0, 20.0, "s", "makers"),
    "top_speed_kmh": Range(180.0, 250.0, "km/h", "makers"),
    "stopping_distance_m": Range(34.0, 50.0, "m", "adac"),
    "stopping_distance_m_abs": Range(34.0, 42.0, "m", "adac"),
    "mfdd_m_s2": Range(6.43, 11.0, "m/s²", "ece_r13h"),
    "mfdd_m_s2_abs": Range(6.43, 11.0, "m/s²", "ece_r13h"),
    "f0_n": Range(80.0, 200.0, "N", "epa"),
    "f1_n_per_m_s": Range(-1.0, 6.0, "N/(m/s)", "epa"),
    "f2_n_per_m2_s2": Range(0.3, 0.6, "N/(m/s)²", "epa"),
    "gradeability_percent": Range(30.0, 70.0, "%", "makers"),
    "turning_circle_m": Range(10.0, 12.0, "m", "makers"),
    "gradeability_automatic_percent": Range(30.0, 70.0, "%", "makers"),
    "worst_upshift_1_2_m_s2": Range(None, 1.0, "m/s²", "issue44"),
    "worst_upshift_2_3_m_s2": Range(None, 1.0, "m/s²", "issue44"),
    "worst_coast_downshift_m_s2": Range(None, 1.0, "m/s²", "issue44"),
    "garage_shift_peak_m_s2": Range(None, 1.5, "m/s²", "issue44"),
}
