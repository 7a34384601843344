"""OpenSCENARIO parameter variations: a ParameterValueDistribution of 12 variations read, and
run as a sweep (the ACC on the ego, in process) whose table has one row per variation."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.scenarios import cut_in, variations, write_road
from vcosim.errors import ConfigError
from vcosim.openscenario.distribution import read_distribution
from vcosim.sweep.backends import SerialBackend
from vcosim.sweep.config import load_sweep
from vcosim.sweep.driver import run_sweep
from vcosim.sweep.tables import results_table

SWEEP = """
[scenario]
name = "variations"
duration = 0.5
[controller]
name = "acc"
speed = 25.0
[coupling]
ext_time = 0.02
timing = "lockstep"
[sweep]
distribution = "cut_in_variations.xosc"
"""


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    here = tmp_path_factory.mktemp("variations")
    write_road(here, length=200.0)
    cut_in().write_xml(str(here / "cut_in.xosc"))
    variations(here)
    (here / "sweep.toml").write_text(SWEEP)
    return here


def test_the_distribution_is_every_combination_of_its_set_and_range(folder: Path) -> None:
    scenario, runs = read_distribution(folder / "cut_in_variations.xosc")
    assert scenario == folder / "cut_in.xosc" and len(runs) == 12
    assert runs[0] == {"EgoSpeed": "20", "OtherSpeed": "14.0"}
    assert runs[-1] == {"EgoSpeed": "30", "OtherSpeed": "20.0"}
    assert len({tuple(run.items()) for run in runs}) == 12


def test_a_stochastic_distribution_without_distributions_is_refused_with_its_line(
    folder: Path,
) -> None:
    text = (folder / "cut_in_variations.xosc").read_text()
    start, end = text.index("<Deterministic>"), text.index("</Deterministic>") + 16
    path = folder / "stochastic.xosc"
    path.write_text(text[:start] + '<Stochastic numberOfTestRuns="3"/>' + text[end:])
    line = next(i for i, s in enumerate(path.read_text().splitlines(), 1) if "Stochastic" in s)
    with pytest.raises(ConfigError, match=f"line {line}: <Stochastic>: no distribution in it"):
        read_distribution(path)


def test_a_distribution_that_is_not_xml_is_refused_with_its_line(tmp_path: Path) -> None:
    broken = tmp_path / "broken.xosc"
    broken.write_text("<OpenSCENARIO>\n  <ParameterValueDistribution")
    with pytest.raises(ConfigError, match=r"line 2: not XML"):
        read_distribution(broken)


def test_twelve_variations_run_as_a_sweep_with_a_row_each(folder: Path) -> None:
    pytest.importorskip("pyarrow")
    sweep = load_sweep(folder / "sweep.toml")
    assert len(sweep.runs) == 12 and sweep.parameters == ["world.EgoSpeed", "world.OtherSpeed"]
    outcome = run_sweep(sweep, SerialBackend(), write=False)  # the table, not the plots
    table = results_table(outcome).to_pydict()
    pairs = sorted(zip(table["world.EgoSpeed"], table["world.OtherSpeed"], strict=True))
    assert pairs == sorted((e, o) for e in (20.0, 25.0, 30.0) for o in (14.0, 16.0, 18.0, 20.0))
    assert table["status"] == ["ok"] * 12
    assert all(gap > 0.0 for gap in table["min_time_gap"])  # the cut-in comes later
