"""The vehicle figures in the project's docs, written from the datasheets' JSON files.

Each figure is measured once, by ``vcosim vehicle report``, and kept in
``docs/vehicles/<preset>.json``; the pages that quote it get it from there, so no page can
carry a second value. Two marks, both HTML comments (invisible when rendered), say where:

- a generated table: ``<!-- datasheet-table NAME ... -->`` up to ``<!-- /datasheet-table -->``;
  everything between is rewritten by ``TABLES[NAME]``;
- one figure in running text: ``<!-- datasheet VEHICLE FIGURE FORMAT -->5.27<!-- /datasheet -->``
  where FIGURE is a key of the vehicle's figures (``roll_gradient_deg_per_g``) or a dotted
  path into its JSON (``reference.steady_state.roll_gradient_deg_per_g``) and FORMAT a Python
  format spec (``#.3g`` if left out: three significant digits, trailing zeros kept).

``render`` rewrites a page's text; ``update`` rewrites the pages of a checkout.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vcosim.datasheet.output import COMPARISON_HEAD, comparison_rows, md_table
from vcosim.errors import VcosimError

PAGES = ("docs/vehicle-model.md", "docs/datasheet.md")  # relative to the project's root
SHEETS = "docs/vehicles"
ORDER = ("nightrider", "nightrider-seed", "sedan", "commonroad-bmw320i")  # the presets table
Sheets = dict[str, dict[str, Any]]

TABLE = re.compile(
    r"(<!-- datasheet-table ([\w-]+)[^>]*-->\n)(.*?)(<!-- /datasheet-table -->)", re.S
)
INLINE = re.compile(r"<!-- datasheet (\S+) (\S+)(?: (\S+))? -->(.*?)<!-- /datasheet -->")


class DocsError(VcosimError):
    """A mark in a page that the datasheets cannot fill: an unknown vehicle, figure or table."""


def load_sheets(folder: Path) -> Sheets:
    """Every datasheet JSON in ``folder``, by vehicle name."""
    return {path.stem: json.loads(path.read_text()) for path in sorted(folder.glob("*.json"))}


def figure(sheet: dict[str, Any], name: str) -> Any:
    """A figure by key (searched in the vehicle's figures) or by dotted path into the JSON."""
    first, *rest = name.split(".")
    if first in sheet:
        value: Any = sheet
        for part in (first, *rest):
            if not isinstance(value, dict) or part not in value:
                raise DocsError(f"no figure {name!r} in the datasheet of {sheet['vehicle']}")
            value = value[part]
        return value
    found = [section[name] for section in sheet["figures"].values() if name in section]
    if len(found) != 1:
        raise DocsError(f"no single figure {name!r} in the datasheet of {sheet['vehicle']}")
    return found[0]


def number(value: Any, spec: str = "#.3g") -> str:
    """A figure as the docs print it; null (a run that never got there) is a dash."""
    if value is None:
        return "—"
    return format(value, spec).replace("-", "−")


def _one(key: str, spec: str, unit: str) -> Callable[[dict[str, Any]], str]:
    return lambda sheet: f"{number(figure(sheet, key), spec)} {unit}"


def _pair(first: str, second: str, spec: str, unit: str) -> Callable[[dict[str, Any]], str]:
    return lambda sheet: (
        f"{number(figure(sheet, first), spec)} / {number(figure(sheet, second), spec)} {unit}"
    )


def _power(sheet: dict[str, Any]) -> str:
    return (
        f"{number(figure(sheet, 'peak_power_kw'), '.0f')} kW at "
        f"{number(figure(sheet, 'peak_power_rpm'), '.0f')} rpm"
    )


def _zero_to_100(sheet: dict[str, Any]) -> str:
    manual = figure(sheet, "zero_to_100_manual_s")
    stalled = figure(sheet, "manual_launch_stalled")
    text = "stalls at launch" if stalled else number(manual)
    return f"{text} / {number(figure(sheet, 'zero_to_100_s'))} s"


def _shifts(sheet: dict[str, Any]) -> str:
    names = ("worst_upshift_1_2_m_s2", "worst_upshift_2_3_m_s2", "worst_coast_downshift_m_s2")
    return " / ".join(number(figure(sheet, name), ".2f") for name in names) + " m/s²"


PRESET_ROWS: tuple[tuple[str, Callable[[dict[str, Any]], str]], ...] = (
    ("peak engine power", _power),
    ("0–100 km/h manual / automatic", _zero_to_100),
    ("top speed (automatic)", _one("top_speed_kmh", ".0f", "km/h")),
    ("80–120 km/h in top gear", _one("eighty_to_120_top_gear_s", "#.3g", "s")),
    ("gradeability manual / automatic (driven)", _pair("gradeability_percent",
     "gradeability_automatic_percent", ".1f", "%")),
    ("grade the rear axle's grip allows, peak / spinning", _pair("traction_bound_percent",
     "spinning_bound_percent", ".1f", "%")),
    ("kerb-to-kerb turning circle driven / kinematic", _pair("turning_circle_m",
     "turning_circle_kinematic_m", ".1f", "m")),
    ("100–0 km/h without / with ABS", _pair("stopping_distance_m", "stopping_distance_m_abs",
     "#.3g", "m")),
    ("mean fully developed deceleration without / with ABS", _pair("mfdd_m_s2", "mfdd_m_s2_abs",
     "#.3g", "m/s²")),
    ("coast-down deceleration at 100 km/h", _one("coast_down_100kmh_m_s2", ".2f", "m/s²")),
    ("shift quality: worst upshift 1→2 / 2→3 / coast downshift", _shifts),
    ("garage shift N→D at rest, peak", _one("garage_shift_peak_m_s2", ".2f", "m/s²")),
    ("understeer gradient (80 km/h)", _one("understeer_gradient_deg_per_g", "#.2g", "°/g")),
    ("roll gradient", _one("roll_gradient_deg_per_g", "#.3g", "°/g")),
    ("maximum lateral acceleration, 45.72 m skidpad, own driveline",
     _one("max_lateral_acceleration_g", ".2f", "g")),
    ("… torque mode (ISO 4138 ramp, each rear wheel its own torque)",
     _one("max_lateral_acceleration_torque_mode_g", ".2f", "g")),
)  # fmt: skip


def presets_table(sheets: Sheets) -> str:
    """The presets side by side: the figures a user compares them by."""
    missing = [name for name in ORDER if name not in sheets]
    if missing:
        raise DocsError(f"no datasheet of {', '.join(missing)}")
    head = ["", *(f"`{name}`" for name in ORDER)]
    body = [[label, *(cell(sheets[name]) for name in ORDER)] for label, cell in PRESET_ROWS]
    return md_table(head, body)


def comparison_table(sheets: Sheets) -> str:
    """The mapped preset beside CommonRoad's BMW 320i in the linear range."""
    if "commonroad-bmw320i" not in sheets:
        raise DocsError("no datasheet of commonroad-bmw320i")
    return md_table(COMPARISON_HEAD, comparison_rows(sheets["commonroad-bmw320i"]["comparison"]))


TABLES: dict[str, Callable[[Sheets], str]] = {
    "presets": presets_table,
    "commonroad-comparison": comparison_table,
}


def render(text: str, sheets: Sheets, page: str = "page") -> str:
    """``text`` with every marked table and figure written from ``sheets``."""

    def table(match: re.Match[str]) -> str:
        name = match.group(2)
        if name not in TABLES:
            raise DocsError(f"{page}: unknown datasheet table {name!r}; known: {sorted(TABLES)}")
        return f"{match.group(1)}{TABLES[name](sheets)}\n{match.group(4)}"

    def inline(match: re.Match[str]) -> str:
        vehicle, name, spec = match.group(1), match.group(2), match.group(3) or "#.3g"
        if vehicle not in sheets:
            raise DocsError(f"{page}: no datasheet of {vehicle!r} for {name}")
        mark = match.group(0)[: match.start(4) - match.start(0)]  # the opening comment
        return f"{mark}{number(figure(sheets[vehicle], name), spec)}<!-- /datasheet -->"

    return INLINE.sub(inline, TABLE.sub(table, text))


def update(root: Path) -> list[Path]:
    """Rewrite the figures of ``PAGES`` under ``root`` from its ``SHEETS``; the pages changed."""
    sheets = load_sheets(root / SHEETS)
    changed = []
    for page in PAGES:
        path = root / page
        text = path.read_text()
        new = render(text, sheets, page)
        if new != text:
            path.write_text(new)
            changed.append(path)
    return changed
