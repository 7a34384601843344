"""``vcosim plot``: any recorded run to a PNG (and HTML) with units, saying what it drew.

Runs recorded here as users record them: ``vcosim sim --record`` for a lone car and a world
(CSV and MCAP), and the bus logger's MCAP format. A contract client's recording is drawn in
tests/contracts/test_contract_recording.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image
from typer.testing import CliRunner

from vcosim.app import app
from vcosim.bus.catalogue import FMVM, WorldPose, WorldVehicle
from vcosim.modules.recording import McapRecorder, Recorded, export_csv

ROOT = Path(__file__).parents[2]
FOLLOW = ROOT / "examples" / "worlds" / "follow.toml"


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


def sim(*args: str) -> None:
    code, output = run("sim", "--no-coupling", "--pacing", "fast", *args)
    assert code == 0, output


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A lone car's CSV, a world's CSVs and MCAPs, a bus log of a world: 3 s each."""
    folder = tmp_path_factory.mktemp("runs")
    sim("--duration", "3", "--start-speed", "10", "--record", str(folder / "car.csv"))
    sim("--world", str(FOLLOW), "--duration", "3", "--record", str(folder / "world.csv"))
    sim("--world", str(FOLLOW), "--duration", "3", "--record", str(folder / "world.mcap"))
    with McapRecorder(folder / "bus.mcap") as log:  # what `vcosim log` writes of a world
        start = 1_700_000_000_000_000_000
        for row, name in enumerate(("lead", "ego")):
            log.write(Recorded(start, 22, WorldVehicle(row, name, 4.5, 1.8, row, 1.3)))
        for k in range(50):
            t = start + k * 20_000_000  # 50 Hz for 1 s
            for row in (0, 1):
                speed = 15.0 - 5.0 * row * k / 49
                log.write(
                    Recorded(
                        t,
                        22,
                        WorldPose(row, 40.0 * (1 - row) + 0.3 * k, 0, 0, 0, 0, 0, speed, 2000.0, 3),
                    )
                )
            log.write(Recorded(t, 16, FMVM(0.3 * k, 0, 0.5, 0, 0, 0, 10.0 + k / 49)))
    return folder


def drawn(png: Path) -> Image.Image:
    """The figure, checked to be a real one: a PNG of some size with more than a few colours."""
    image = Image.open(png)
    assert image.format == "PNG" and image.width >= 800 and image.height >= 300
    colours = image.convert("RGB").getcolors(maxcolors=1 << 20)
    assert colours is not None and len(colours) > 50  # lines, text and grid, not a blank page
    return image


def test_a_lone_cars_recording_with_units_and_what_was_drawn(runs: Path) -> None:
    code, output = run("plot", str(runs / "car.csv"), "groundspeed", "rpm", "gear", "--html")
    assert code == 0, output
    assert "car.csv: vehicle signals, 1 source(s), simulated time 0.00 to 3.00 s" in output
    lines = output.splitlines()
    speed = next(line for line in lines if line.startswith("  groundspeed (m/s): starts 10"))
    assert float(speed.split("ends ")[1].split(",")[0]) < 10.0  # it coasted
    assert any(line.startswith("  rpm (1/min): ") for line in lines)
    assert any(line.startswith("  gear (-): ") for line in lines)
    assert f"wrote {runs / 'car.png'} and {runs / 'car.html'}" in output
    assert drawn(runs / "car.png").height >= 600  # three axes, stacked
    page = (runs / "car.html").read_text()
    assert "data:image/png;base64," in page and "<td>groundspeed</td><td>m/s</td>" in page


def test_an_unknown_signal_is_one_line_exit_2_with_the_closest(runs: Path) -> None:
    code, output = run("plot", str(runs / "car.csv"), "groundsped")
    assert code == 2
    assert output.startswith(
        "error: unknown signal of car.csv 'groundsped'; did you mean 'groundspeed'? (the run "
        f"has 97; vcosim plot {runs / 'car.csv'} --list lists them)"
    )
    assert len(output.splitlines()) == 1


def test_another_faces_name_is_understood(runs: Path) -> None:
    out = runs / "aliases.png"
    code, output = run("plot", str(runs / "car.csv"), "vehicleGroundSpeed", "--png", str(out))
    assert code == 0 and "  groundspeed (m/s): starts 10" in output
    drawn(out)


@pytest.mark.parametrize("recording", ["world.csv", "world.mcap"])
def test_a_worlds_recording_draws_each_vehicle(runs: Path, recording: str) -> None:
    code, output = run("plot", str(runs / recording), "speed", "lead.posX")
    assert code == 0, output
    assert "world of 2 vehicles, 2 source(s)" in output
    for line in ("  ego.speed (m/s): starts 15", "  lead.speed (m/s): starts 15"):
        assert line in output
    lead_x = next(line for line in output.splitlines() if line.startswith("  lead.posX (m)"))
    assert float(lead_x.split("ends ")[1].split(",")[0]) > 60.0  # 40 m ahead, then 3 s at 15
    drawn(runs / f"{Path(recording).stem}.png")


def test_the_bus_loggers_recording_by_message_and_by_vehicle(runs: Path) -> None:
    code, output = run("plot", str(runs / "bus.mcap"))  # the default: every speed
    assert code == 0, output
    assert "bus log (MCAP), 4 source(s), time since the first message 0.00 to 0.98 s" in output
    assert "  FMVM.speed (m/s): starts 10, ends 11, min 10, max 11" in output
    assert "  lead.speed (m/s): starts 15, ends 15" in output
    assert "  ego.speed (m/s): starts 15, ends 10, min 10, max 15" in output
    drawn(runs / "bus.png")
    code, listed = run("plot", str(runs / "bus.mcap"), "--list")
    assert code == 0 and "lead.yaw (rad)" in listed and "WorldVehicle.length (m)" in listed


def test_the_bus_logs_csv_export_too(runs: Path) -> None:
    export_csv(runs / "bus.mcap", runs / "export.csv")  # vcosim log --csv, replay --to-csv
    code, output = run("plot", str(runs / "export.csv"), "FMVM.speed", "WorldPose.speed")
    assert code == 0, output
    assert "export.csv: bus log (CSV), 3 source(s)" in output
    assert "  FMVM.speed (m/s): starts 10, ends 11, min 10, max 11" in output
    assert "  WorldPose.speed (m/s): starts 15, ends 10, min 10, max 15" in output  # both rows


def test_a_run_that_is_no_recording_is_refused(tmp_path: Path) -> None:
    code, output = run("plot", str(tmp_path / "missing.csv"))
    assert code == 2 and "missing.csv: no such file" in output
    (tmp_path / "notes.csv").write_text("a,b\n1,2\n")
    code, output = run("plot", str(tmp_path / "notes.csv"))
    assert code == 2 and "has no time column" in output
