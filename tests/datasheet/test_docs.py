"""The docs and the datasheets agree: one run, one value per figure, each checked against driving.

The datasheets in docs/vehicles/ are the only source of the vehicle figures the docs quote;
these tests fail when a page says something else, when a preset's description states a power
its engine does not make, and when the gradeability a datasheet gives is not what a drive up
that ramp shows. After a change to the vehicle model: ``vcosim vehicle report --all --docs``.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from vcosim.app import app
from vcosim.app.vehicle import preset_names
from vcosim.datasheet import docs
from vcosim.datasheet.grade import climb
from vcosim.datasheet.straight import full_load
from vcosim.vehicle import VehicleParams
from vcosim.vehicle.params import PRESET_DIR

ROOT = Path(__file__).parents[2]
SHEETS = docs.load_sheets(ROOT / docs.SHEETS)
REGENERATE = "run `vcosim vehicle report --all --docs` (or `vcosim vehicle docs`)"


def test_every_preset_has_a_full_datasheet_in_the_docs() -> None:
    assert set(preset_names()) == set(SHEETS) == set(docs.ORDER)
    assert not [name for name, sheet in SHEETS.items() if sheet["quick"]]


@pytest.mark.parametrize("page", docs.PAGES)
def test_the_docs_quote_the_datasheets(page: str) -> None:
    text = (ROOT / page).read_text()
    assert docs.INLINE.search(text) and docs.TABLE.search(text), f"{page} quotes no datasheet"
    assert docs.render(text, SHEETS, page) == text, (
        f"{page} differs from its datasheets: {REGENERATE}"
    )


def test_a_page_gets_its_tables_and_figures_from_the_json() -> None:
    text = (
        "Roll <!-- datasheet sedan roll_gradient_deg_per_g .2f -->9.99<!-- /datasheet --> deg/g, "
        "CommonRoad <!-- datasheet commonroad-bmw320i "
        "reference.steady_state.roll_gradient_deg_per_g -->1<!-- /datasheet -->.\n"
        "<!-- datasheet-table presets: generated -->\nold rows\n<!-- /datasheet-table -->\n"
    )
    out = docs.render(text, SHEETS)
    sedan = SHEETS["sedan"]["figures"]["steady_state"]["roll_gradient_deg_per_g"]
    reference = SHEETS["commonroad-bmw320i"]["reference"]["steady_state"]
    assert f".2f -->{sedan:.2f}<!--" in out
    assert f"-->{reference['roll_gradient_deg_per_g']:.3g}<!--" in out
    assert "old rows" not in out and "| peak engine power |" in out
    assert docs.render(out, SHEETS) == out
    for bad in ("<!-- datasheet no-such-car roll_gradient_deg_per_g -->1<!-- /datasheet -->",
                "<!-- datasheet sedan no_such_figure -->1<!-- /datasheet -->",
                "<!-- datasheet-table no-such-table -->\n<!-- /datasheet-table -->"):  # fmt: skip
        with pytest.raises(docs.DocsError):
            docs.render(bad, SHEETS)


def test_vehicle_docs_rewrites_a_figure_edited_by_hand(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for page in docs.PAGES:
        (tmp_path / page).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / page, tmp_path / page)
    shutil.copytree(ROOT / docs.SHEETS, tmp_path / docs.SHEETS)
    page = tmp_path / docs.PAGES[0]
    original = page.read_text()
    edited = docs.INLINE.sub(lambda m: m.group(0).replace(f"-->{m.group(4)}<", "-->42<"), original)
    page.write_text(edited)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["vehicle", "docs"])
    assert result.exit_code == 0, result.output
    assert edited != original and page.read_text() == original


def test_all_with_a_vehicle_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no checkout here: --docs is refused too, before anything runs
    runner = CliRunner()
    for args in (["--all", "--vehicle", "sedan"], ["--docs"]):
        result = runner.invoke(app, ["vehicle", "report", *args])
        assert result.exit_code == 2, result.output
    assert not list(tmp_path.iterdir())


def stated_powers(preset: str) -> list[float]:
    """Every "N kW" in the comments of a preset's TOML file."""
    comments = [line.partition("#")[2] for line in (PRESET_DIR / f"{preset}.toml").open()]
    return [float(kw) for line in comments for kw in re.findall(r"(\d+(?:\.\d+)?) kW", line)]


@pytest.mark.parametrize("preset", docs.ORDER)
def test_stated_power_is_the_engines_measured_peak(preset: str) -> None:
    load = full_load(VehicleParams.preset(preset))
    peak = float(np.max(load["power"])) / 1000
    datasheet = SHEETS[preset]["figures"]["straight_line"]["peak_power_kw"]
    assert datasheet == pytest.approx(peak, rel=0.01), REGENERATE
    stated = stated_powers(preset)
    assert stated, f"{preset}.toml states no power"
    assert stated == pytest.approx([peak] * len(stated), rel=0.03), f"{preset}: {peak:.0f} kW"


@pytest.mark.parametrize("gearbox", ["manual", "automatic"])
@pytest.mark.parametrize("preset", docs.ORDER)
def test_the_datasheets_gradeability_is_what_a_drive_up_the_ramp_shows(
    preset: str, gearbox: str
) -> None:
    figures = SHEETS[preset]["figures"]["straight_line"]
    suffix = "" if gearbox == "manual" else "_automatic"
    grade = figures[f"gradeability{suffix}_percent"] / 100
    params = VehicleParams.preset(preset)
    # within 2 % of the figure both ways (half a point of grade), and clearly not above it
    for step, climbs in ((-0.005, True), (0.005, False), (0.05, False)):
        drive = climb(params, grade + step, gearbox)  # type: ignore[arg-type]
        assert drive.climbed == climbs, (
            f"{preset}, {gearbox}, {100 * (grade + step):.1f} %: {drive}"
        )
        assert climbs or drive.failure
    # first principles: at full throttle the driven wheels spin (first gear has torque to
    # spare), so the car climbs what a spinning tyre's grip allows on the slope, no more
    spinning = figures["spinning_bound_percent"] / 100
    assert 0.75 * spinning <= grade <= spinning + 0.005
