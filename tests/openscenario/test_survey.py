"""The survey of a corpus: what it reads, refuses and ranks, on the project's own samples."""

from __future__ import annotations

import shutil
from pathlib import Path

from typer.testing import CliRunner

from vcosim.app import app
from vcosim.openscenario.survey import ACCEPTED, REFUSED, reason_of, survey

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
