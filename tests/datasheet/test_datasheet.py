"""The handling datasheet: a shortened run of every manoeuvre on vcosim and CommonRoad.

The full datasheet takes a minute or more; these tests run the same code on a plan with
short manoeuvres and single points, which is enough to check the keys, that every figure is
a finite number, that the plots carry ink, and that the CommonRoad reference runs.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from vcosim.datasheet import Plan, build_datasheet
from vcosim.datasheet.output import write_datasheet
from vcosim.datasheet.plots import PLOTS, pixel_variance
from vcosim.datasheet.sheet import TARGETS, Datasheet
from vcosim.vehicle import VehicleParams

TINY = Plan(
    quick=True,
    ramp_seconds=8.0,
    step_seconds=2.0,
    frequencies=(0.7, 2.0),
    swd_factors=(5.0,),
    swd_after=1.8,
    top_speed_seconds=20.0,
)
SECTIONS = (
    "steady_state",
    "step_steer",
    "frequency_response",
    "sine_with_dwell",
    "straight_line",
    "shift_quality",
)
KEY_FIGURES = {
    "steady_state": (
        "understeer_gradient_deg_per_g",
        "characteristic_speed_kmh",
        "max_lateral_acceleration_g",
        "skidpad_speed_kmh",
        "max_lateral_acceleration_torque_mode_g",
        "sideslip_gradient_deg_per_g",
        "roll_gradient_deg_per_g",
        "yaw_rate_gain_per_s",
    ),
    "step_steer": (
        "yaw_rate_response_time_s",
        "yaw_rate_peak_time_s",
        "yaw_rate_overshoot_percent",
        "lateral_acceleration_response_time_s",
    ),
    "frequency_response": ("yaw_bandwidth_hz", "phase_at_1hz_deg"),
    "sine_with_dwell": (
        "max_yaw_rate_ratio_1s_percent",
        "max_yaw_rate_ratio_1_75s_percent",
        "min_lateral_displacement_m",
    ),
    "straight_line": (
        "zero_to_100_s",
        "zero_to_100_manual_s",
        "eighty_to_120_top_gear_s",
        "top_speed_kmh",
        "peak_power_kw",
        "peak_power_rpm",
        "stopping_distance_m",
        "mfdd_m_s2",
        "f0_n",
        "f1_n_per_m_s",
        "f2_n_per_m2_s2",
        "coast_down_100kmh_m_s2",
        "gradeability_percent",
        "gradeability_automatic_percent",
        "traction_bound_percent",
        "spinning_bound_percent",
    ),
    "shift_quality": (
        "worst_upshift_1_2_m_s2",
        "worst_upshift_2_3_m_s2",
        "worst_coast_downshift_m_s2",
        "garage_shift_peak_m_s2",
    ),
}


@pytest.fixture(scope="module")
def sheet() -> Datasheet:
    return build_datasheet(VehicleParams.preset("commonroad-bmw320i"), TINY)


@pytest.fixture(scope="module")
def written(sheet: Datasheet, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return write_datasheet(sheet, tmp_path_factory.mktemp("sheet"), "test")


def test_every_key_figure_is_in_the_json(written: dict[str, Path]) -> None:
    data = json.loads(written["json"].read_text())
    assert set(SECTIONS) <= set(data["figures"])
    for section, names in KEY_FIGURES.items():
        assert set(names) <= set(data["figures"][section]), section
    assert set(TARGETS) == set(data["comparison"])
    assert data["vehicle"] == "commonroad-bmw320i"


def test_vcosim_figures_are_finite_numbers(sheet: Datasheet) -> None:
    for section, names in KEY_FIGURES.items():
        for name in names:
            value = sheet.figures[section][name]
            assert isinstance(value, float) and math.isfinite(value), (section, name, value)


def test_the_json_is_strict(sheet: Datasheet) -> None:
    json.dumps(sheet.to_dict(), allow_nan=False)  # NaN would be invalid JSON


def test_plots_are_not_blank(written: dict[str, Path]) -> None:
    for name in PLOTS:
        assert pixel_variance(written[name]) > 200.0, name


def test_html_and_markdown_show_every_plot(written: dict[str, Path]) -> None:
    page, md = written["html"].read_text(), written["markdown"].read_text()
    for name in PLOTS:
        assert written[name].name in page and written[name].name in md


def test_commonroad_reference_runs_beside_vcosim(sheet: Datasheet) -> None:
    ref = sheet.reference["steady_state"]
    # the BMW 320i set is close to neutral steer: gain near v / L = 22.2 / 2.58 = 8.6 1/s
    assert 6.0 < ref["yaw_rate_gain_per_s"] < 11.0
    assert 0.0 < sheet.reference["step_steer"]["yaw_rate_response_time_s"] < 1.0
    for name, entry in sheet.comparison.items():
        assert math.isfinite(entry["vcosim"]) and math.isfinite(entry["commonroad"]), name
    traces = sheet.runs["commonroad"]
    assert traces.step is not None and np.max(traces.step.yaw_rate) > 0.05


def test_the_mapped_preset_matches_commonroad_in_the_linear_range(sheet: Datasheet) -> None:
    gain = sheet.comparison["yaw_rate_gain_per_s"]
    assert abs(gain["difference_percent"]) <= gain["target_percent"]


@pytest.mark.parametrize("preset", ["commonroad-bmw320i", "sedan"])
def test_the_command_says_where_it_wrote_in_readable_words(
    preset: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vcosim.app import app
    from vcosim.app.console import results
    from vcosim.datasheet.output import LABELS

    monkeypatch.setattr(Plan, "make", classmethod(lambda cls, quick: TINY))  # short runs
    monkeypatch.setattr(results, "width", 200)  # a table row per line, to read it here
    args = ["vehicle", "report", "--vehicle", preset, "--out", str(tmp_path)]
    result = CliRunner().invoke(app, [*args, "--json-out", str(tmp_path / "out.json")])
    assert result.exit_code == 0, result.output
    output = result.output
    assert (
        f"written to {tmp_path}/: {preset}.html, {preset}.md, {preset}.json and {len(PLOTS)} plots"
        in output
    )
    # the targets beside CommonRoad's BMW 320i hold for the preset that maps it, only
    assert ("CommonRoad" in output) == (preset == "commonroad-bmw320i")
    data = json.loads((tmp_path / "out.json").read_text())
    for key in [*data["outside_range"], *(data["comparison"] if "CommonRoad" in output else [])]:
        label, unit = LABELS[key]
        assert f"│ {label} ({unit})" in output or f"│ {label} " in output, key
    assert not any(f"│ {key.replace('_', ' ')} " in output for key in LABELS)  # no "f0 n"


def test_a_bad_vehicle_is_refused_before_anything_runs(tmp_path: Path) -> None:
    from vcosim.app import app

    out = tmp_path / "sheets"
    for vehicle in ("no-such-car", str(tmp_path / "broken.toml")):
        (tmp_path / "broken.toml").write_text("[body]\nchassis_mass = -1\n")
        args = ["vehicle", "report", "--vehicle", vehicle, "--out", str(out)]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 2, result.output
        assert ("no-such-car" if vehicle == "no-such-car" else "chassis_mass") in result.output
    assert not out.exists()
