"""The survey of a corpus: what it reads, refuses and ranks, on the project's own samples."""

from __future__ import annotations

import math
import shutil
from dataclasses import replace
from pathlib import Path

from typer.testing import CliRunner

from vcosim.app import app
from vcosim.openscenario import model as m
from vcosim.openscenario import read_xosc
from vcosim.openscenario.survey import (
    ACCEPTED,
    HORIZON_MARGIN,
    REFUSED,
    _limit,
    horizon,
    reason_of,
    survey,
)

EXAMPLES = Path(__file__).parents[2] / "examples" / "scenarios"


def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "corpus"
    shutil.copytree(EXAMPLES / "public" / "esmini", folder / "esmini")
    for name in ("cut_in.xosc", "straight.xodr"):
        shutil.copy(EXAMPLES / name, folder / name)
    text = (folder / "cut_in.xosc").read_text()
    for minor in ("4", "5"):  # versions no reader knows: refused, one reason
        (folder / f"future_{minor}.xosc").write_text(
            text.replace('revMinor="2"', f'revMinor="{minor}"', 1)
        )
    return folder


def test_a_folder_is_read_file_by_file_catalogues_left_out(tmp_path: Path) -> None:
    report = survey([corpus(tmp_path)])
    outcomes = {Path(f.path).name: f.outcome for f in report.files}
    assert "VehicleCatalog.xosc" not in outcomes
    assert outcomes["cut_in.xosc"] == ACCEPTED
    assert outcomes["cut-in_external.xosc"] == ACCEPTED
    assert outcomes["future_4.xosc"] == outcomes["future_5.xosc"] == REFUSED
    ((reason, found, alone),) = report.reasons()
    assert (found, alone) == (2, 2) and "<FileHeader>: OpenSCENARIO N" in reason
    (counts,) = report.corpora().values()
    assert counts["files"] == len(outcomes) and counts[REFUSED] == 2


def test_reasons_drop_lines_files_and_names() -> None:
    one = reason_of("line 12 of Vehicles.xosc: <Vehicle>: vehicleCategory='tram' is not supported")
    two = reason_of("line 80: <Vehicle>: vehicleCategory='boat' is not supported")
    assert one == two == "<Vehicle>: vehicleCategory=… is not supported"


def test_the_command_prints_the_table_and_runs_the_accepted(tmp_path: Path) -> None:
    folder = corpus(tmp_path)
    for extra in folder.glob("future_*.xosc"):
        extra.unlink()
    shutil.rmtree(folder / "esmini")
    out = tmp_path / "survey.json"
    result = CliRunner().invoke(
        app,
        ["scenario", "survey", str(folder), "--run", "--workers", "0", "--json-out", str(out)],
    )
    assert result.exit_code == 0, result.output
    assert "corpus" in result.output and "1 (100%)" in result.output
    assert '"run": "ended"' in out.read_text()


def test_a_stop_trigger_by_the_clock_is_the_file_s_own_limit(tmp_path: Path) -> None:
    text = (EXAMPLES / "cut_in.xosc").read_text()
    start = text.index("<ConditionGroup>", text.index("<StopTrigger>\n"))
    late = text.index("<ConditionGroup>", start + 1)
    text = text[:start] + text[late:]  # only the clock stops it
    (tmp_path / "clock.xosc").write_text(text.replace('value="40.0"', 'value="6.0"', 1))
    shutil.copy(EXAMPLES / "straight.xodr", tmp_path / "straight.xodr")
    (clock,) = survey([tmp_path], run=True, limit=2.0).files
    # run past the survey's 2 s to the 6 s the file says it lasts, ended by its trigger
    assert clock.run == "ended" and clock.ended_by.startswith("the stop trigger ('late')")
    assert 6.0 < clock.simulated <= 6.0 + HORIZON_MARGIN


def test_a_horizon_is_known_only_from_groups_of_clock_conditions() -> None:
    def at(value: float, rule: str = "greaterThan", edge: str = "rising") -> m.Condition:
        return m.Condition("t", 0.5, edge, m.SimulationTime(value, rule), 1)

    other = m.Condition("e", 0.0, "none", m.ElementState("event", "cut", "endTransition"), 2)
    assert horizon(None) is None
    assert horizon(m.Trigger(((at(10.0), at(20.0, "greaterOrEqual")), (at(30.0),)))) == 20.5
    assert horizon(m.Trigger(((at(10.0), other),))) is None  # the event may never end
    assert horizon(m.Trigger(((at(10.0, "lessThan"),),))) is None
    assert horizon(m.Trigger(((at(10.0, edge="falling"),),))) is None
    assert horizon(m.Trigger(((other,), (at(8.0),)))) == 8.5
    assert horizon(m.Trigger(((at(math.inf),),))) is None  # a criterion: never


def test_without_a_clock_stop_the_acts_clock_stops_are_the_horizon(tmp_path: Path) -> None:
    def clock(value: float) -> m.Trigger:
        return m.Trigger(
            ((m.Condition("t", 0.0, "rising", m.SimulationTime(value, "greaterThan"), 1),),)
        )

    def scenario(*stops: m.Trigger | None) -> m.Scenario:
        acts = tuple(m.Act(f"act {k}", (), None, stop, 1) for k, stop in enumerate(stops))
        return replace(
            read_xosc(EXAMPLES / "cut_in.xosc"), stories=(m.Story("s", acts, 1),), stop=None
        )

    assert _limit(scenario(clock(120.0), clock(80.0)), 60.0) == 120.0 + HORIZON_MARGIN
    assert _limit(scenario(clock(120.0), None), 60.0) == 60.0  # one act's end unknown
    assert _limit(scenario(clock(30.0)), 60.0) == 60.0  # never shorter than asked
