"""Write a datasheet: JSON of the key figures, PNG plots, an HTML report and a Markdown page.

The HTML and the Markdown are rendered from the same rows, so they always say the same.
"""

from __future__ import annotations

import html
import json
import math
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

from vcosim.datasheet.plots import write_plots
from vcosim.datasheet.ranges import PASSENGER_CAR
from vcosim.datasheet.sheet import Datasheet

LABELS = {  # figure: (label, unit)
    "understeer_gradient_deg_per_g": ("understeer gradient", "deg/g"),
    "steer_gradient_deg_per_g": ("steer gradient dδ/da_y (road wheel)", "deg/g"),
    "characteristic_speed_kmh": ("characteristic (critical if oversteer) speed", "km/h"),
    "yaw_rate_gain_per_s": ("yaw-rate gain r/δ, linear range", "1/s"),
    "max_lateral_acceleration_g": (
        "maximum lateral acceleration (45.72 m skidpad, own driveline, steady)",
        "g",
    ),
    "skidpad_speed_kmh": ("… its speed on the skidpad", "km/h"),
    "max_lateral_acceleration_torque_mode_g": (
        "… torque mode: the ISO 4138 ramp's peak, each rear wheel its own torque",
        "g",
    ),
    "sideslip_gradient_deg_per_g": ("sideslip gradient", "deg/g"),
    "roll_gradient_deg_per_g": ("roll gradient", "deg/g"),
    "steady_lateral_acceleration": ("steady lateral acceleration", "m/s²"),
    "yaw_rate_response_time_s": ("yaw-rate response time (50 % steer to 90 %)", "s"),
    "yaw_rate_peak_time_s": ("yaw-rate peak response time", "s"),
    "yaw_rate_overshoot_percent": ("yaw-rate overshoot", "%"),
    "lateral_acceleration_response_time_s": ("lateral-acceleration response time", "s"),
    "yaw_bandwidth_hz": ("yaw-rate bandwidth (−3 dB)", "Hz"),
    "gain_peak_ratio": ("peak gain over steady-state gain", "—"),
    "phase_at_1hz_deg": ("yaw-rate phase at 1 Hz", "deg"),
    "amplitude_a_deg": ("A: road-wheel angle at 0.3 g", "deg"),
    "max_yaw_rate_ratio_1s_percent": ("largest yaw-rate ratio 1.0 s after (runs not spun)", "%"),
    "max_yaw_rate_ratio_1_75s_percent": ("largest yaw-rate ratio 1.75 s after", "%"),
    "min_lateral_displacement_m": ("smallest lateral displacement at 1.07 s (≥ 5 A)", "m"),
    "spins_from_amplitude_a": ("smallest amplitude at which it spins", "A"),
    "zero_to_100_s": ("0–100 km/h, automatic", "s"),
    "zero_to_100_manual_s": ("0–100 km/h, manual (shifts at 6000 rpm)", "s"),
    "eighty_to_120_top_gear_s": ("80–120 km/h in top gear", "s"),
    "top_speed_kmh": ("top speed", "km/h"),
    "peak_power_kw": ("peak engine power (full load)", "kW"),
    "peak_power_rpm": ("engine speed at peak power", "rpm"),
    "gradeability_percent": ("gradeability, manual, first gear (driven up ramps)", "%"),
    "gradeability_automatic_percent": ("gradeability, automatic in D (driven up ramps)", "%"),
    "traction_bound_percent": ("steepest grade the driven axle's peak grip allows", "%"),
    "spinning_bound_percent": ("… and its grip when spinning (full throttle)", "%"),
    "turning_circle_m": ("kerb-to-kerb turning circle (full lock, 1.2 m/s, driven)", "m"),
    "turning_circle_kinematic_m": (
        "… kinematic (outer front wheel about the rear axle's line)",
        "m",
    ),
    "stopping_distance_m": ("braking 100–0 km/h, ABS off: stopping distance", "m"),
    "mfdd_m_s2": ("braking, ABS off: mean fully developed deceleration", "m/s²"),
    "stopping_distance_m_abs": ("braking 100–0 km/h, ABS on: stopping distance", "m"),
    "mfdd_m_s2_abs": ("braking, ABS on: mean fully developed deceleration", "m/s²"),
    "f0_n": ("coast-down F0", "N"),
    "f1_n_per_m_s": ("coast-down F1", "N/(m/s)"),
    "f2_n_per_m2_s2": ("coast-down F2", "N/(m/s)²"),
    "road_load_100kmh_n": ("road load at 100 km/h", "N"),
    "coast_down_100kmh_m_s2": ("coast-down deceleration at 100 km/h", "m/s²"),
    "worst_upshift_1_2_m_s2": ("upshift 1→2 at throttle 0.2–0.4, worst", "m/s²"),
    "worst_upshift_2_3_m_s2": ("upshift 2→3 at throttle 0.2–0.4, worst", "m/s²"),
    "worst_coast_downshift_m_s2": ("coast downshift from 80 km/h to a stop, worst", "m/s²"),
    "garage_shift_peak_m_s2": ("garage shift N→D at rest, no brake: peak", "m/s²"),
}
SECTIONS = {
    "steady_state": "Steady-state circular driving (ISO 4138, constant speed 80 km/h)",
    "step_steer": "Step steer (ISO 7401, 80 km/h, 4 m/s²)",
    "frequency_response": "Frequency response (sine steer, 80 km/h, 2 m/s²)",
    "sine_with_dwell": "Sine with dwell (FMVSS 126, 80 km/h, 1.5 A to 6.5 A)",
    "straight_line": "Straight line",
    "shift_quality": "Shift quality (automatic in D on the flat: how far the 20 ms mean "
    "acceleration leaves the band between the levels before and after each shift)",
}


@dataclass
class Row:
    """One figure of vcosim beside CommonRoad's and the typical range."""

    label: str
    unit: str
    vcosim: str
    commonroad: str
    typical: str
    outside: bool


def _number(value: Any) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "—"
    if isinstance(value, float):
        return f"{value:.0f}" if abs(value) >= 1000 else f"{value:#.3g}"
    return str(value)


def rows(sheet: Datasheet) -> dict[str, list[Row]]:
    """The datasheet's tables by section, in the order of ``LABELS``."""
    out: dict[str, list[Row]] = {}
    for section in SECTIONS:
        ours, ref = sheet.figures[section], sheet.reference.get(section, {})
        out[section] = [
            Row(
                label,
                unit,
                _number(ours[key]),
                _number(ref.get(key)),
                PASSENGER_CAR[key].text() if key in PASSENGER_CAR else "",
                key in sheet.outside_range,
            )
            for key, (label, unit) in LABELS.items()
            if key in ours
        ]
    return out


def comparison_rows(comparison: dict[str, dict[str, Any]]) -> list[list[str]]:
    """The linear-range targets as table rows (from ``Datasheet.comparison`` or its JSON)."""
    return [
        [
            LABELS[name][0],
            _number(c["vcosim"]),
            _number(c["commonroad"]),
            f"{c['difference_percent']:+.0f} %",
            f"± {c['target_percent']:g} %",
            "yes" if c["met"] else "no",
        ]
        for name, c in comparison.items()
    ]


MAPPED_PRESET = "commonroad-bmw320i"
COMPARISON_TITLE = "Beside CommonRoad's BMW 320i in the linear range (a_y ≤ 4 m/s²)"
COMPARISON_NOTE = (
    "The targets are those of the preset commonroad-bmw320i, which maps CommonRoad's set; "
    "any other preset is a different car and differs as it should. The understeer "
    "gradient's difference is a share of CommonRoad's steer gradient dδ/da_y: both cars are "
    "near neutral steer, where a share of the understeer gradient itself says nothing. The "
    "peak response time is only defined with an overshoot; CommonRoad's has almost none."
)
COMPARISON_HEAD = ["linear range", "vcosim", "CommonRoad", "difference", "target", "met"]
TABLE_HEAD = ["figure", "unit", "vcosim", "CommonRoad BMW 320i", "typical car", ""]


def markdown(sheet: Datasheet, plots: dict[str, Path], command: str) -> str:
    """The datasheet as a Markdown page (for docs/vehicles/)."""
    lines = [
        f"# Datasheet: `{sheet.vehicle}`",
        "",
        f"Generated by `{command}` (vcosim {version('vcosim')}, "
        f"{'quick' if sheet.quick else 'full'} manoeuvre set, {sheet.seconds:.0f} s). "
        "Regenerate rather than edit. How each figure is defined, where the typical ranges "
        "come from, and how CommonRoad's BMW 320i maps into vcosim: "
        "[docs/datasheet.md](../datasheet.md). ⚠ marks a figure outside the typical range of "
        "a mid-size passenger car.",
        "",
        f"## {COMPARISON_TITLE}",
        "",
        md_table(COMPARISON_HEAD, comparison_rows(sheet.comparison)),
        "",
        COMPARISON_NOTE,
    ]
    for section, table in rows(sheet).items():
        lines += ["", f"## {SECTIONS[section]}", ""]
        body = [[r.label, r.unit, r.vcosim, r.commonroad, r.typical, "⚠" if r.outside else ""]
                for r in table]  # fmt: skip
        lines += [md_table(TABLE_HEAD, body)]
        if section in plots:  # shift quality has its table only
            lines += ["", f"![{SECTIONS[section]}]({plots[section].name})"]
    return "\n".join(lines) + "\n"


def md_table(head: list[str], body: list[list[str]]) -> str:
    """A Markdown table."""
    out = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    out += ["| " + " | ".join(cells) + " |" for cells in body]
    return "\n".join(out)


def html_page(sheet: Datasheet, plots: dict[str, Path], command: str) -> str:
    """The datasheet as one HTML page; the plots are files beside it."""

    def table(head: list[str], body: list[list[str]], flags: list[bool]) -> str:
        cells = "".join(f"<th>{html.escape(h)}</th>" for h in head)
        out = [f"<table><tr>{cells}</tr>"]
        for row, flag in zip(body, flags, strict=True):
            style = ' class="out"' if flag else ""
            tds = "".join(f"<td>{html.escape(c)}</td>" for c in row)
            out.append(f"<tr{style}>{tds}</tr>")
        return "\n".join(out) + "</table>"

    comparison = comparison_rows(sheet.comparison)
    mapped = sheet.vehicle == MAPPED_PRESET  # another car is meant to differ: no red
    parts = [
        "<!doctype html><meta charset='utf-8'>",
        f"<title>vcosim datasheet: {html.escape(sheet.vehicle)}</title>",
        "<style>body{font-family:sans-serif;max-width:1100px;margin:auto}"
        "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;"
        "padding:2px 8px}tr.out{background:#fdd}img{max-width:100%}</style>",
        f"<h1>Datasheet: {html.escape(sheet.vehicle)}</h1>",
        f"<p>Generated by <code>{html.escape(command)}</code> in {sheet.seconds:.0f} s "
        f"({'quick' if sheet.quick else 'full'} manoeuvre set). Red rows lie outside the "
        "typical range of a mid-size passenger car (sources: docs/datasheet.md).</p>",
        f"<h2>{html.escape(COMPARISON_TITLE)}</h2>",
        table(COMPARISON_HEAD, comparison, [row[-1] == "no" and mapped for row in comparison]),
        f"<p>{html.escape(COMPARISON_NOTE)}</p>",
    ]
    for section, table_rows in rows(sheet).items():
        body = [[r.label, r.unit, r.vcosim, r.commonroad, r.typical, ""] for r in table_rows]
        parts += [
            f"<h2>{html.escape(SECTIONS[section])}</h2>",
            table(TABLE_HEAD, body, [r.outside for r in table_rows]),
        ]
        if section in plots:
            parts.append(
                f"<img src='{plots[section].name}' alt='{html.escape(SECTIONS[section])}'>"
            )
    return "\n".join(parts) + "\n"


def write_datasheet(sheet: Datasheet, folder: Path, command: str) -> dict[str, Path]:
    """Write ``<vehicle>.json``, ``.html``, ``.md`` and the plots into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    stem = sheet.vehicle
    plots = write_plots(sheet, folder, stem)
    files = {"json": folder / f"{stem}.json", "html": folder / f"{stem}.html",
             "markdown": folder / f"{stem}.md"}  # fmt: skip
    files["json"].write_text(json.dumps(sheet.to_dict(), indent=2) + "\n")
    files["html"].write_text(html_page(sheet, plots, command))
    files["markdown"].write_text(markdown(sheet, plots, command))
    return {**files, **plots}
