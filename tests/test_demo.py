"""`vcosim demo`: one run through the CLI, then checks of what it left in the run folder."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from vcosim.cli import app
from vcosim.demo import MANOEUVRE, csv_header
from vcosim.vehicle import SIGNAL_NAMES

KMH = 1 / 3.6
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[object, Path]:
    out = tmp_path_factory.mktemp("demo")
    result = CliRunner().invoke(app, ["demo", "--out", str(out)])
    folders = [p for p in out.iterdir() if p.is_dir()]
    return result, (folders[0] if len(folders) == 1 else out)


@pytest.fixture(scope="module")
def folder(demo_run: tuple[object, Path]) -> Path:
    result, path = demo_run
    assert result.exit_code == 0, result.output
    return path


@pytest.fixture(scope="module")
def signals(folder: Path) -> dict[str, np.ndarray]:
    data = np.loadtxt(folder / "signals.csv", delimiter=",", skiprows=1)
    return {name: data[:, i] for i, name in enumerate(csv_header())}


def test_cli_exits_cleanly_and_names_the_run_folder(demo_run):
    result, path = demo_run
    assert result.exit_code == 0, result.output
    assert path.name[:8].isdigit() and path.name[8] == "-"  # out/<YYYYmmdd-HHMMSS>
    assert path.name in result.output
    assert "max speed" in result.output


def test_run_folder_holds_csv_plot_and_summary(folder):
    for name in ("signals.csv", "demo.png", "summary.json"):
        assert (folder / name).is_file(), name


def test_csv_header_is_time_then_every_signal(folder):
    with (folder / "signals.csv").open(newline="") as f:
        header = next(csv.reader(f))
    assert header[0] == "time"
    assert sorted(header) == sorted(SIGNAL_NAMES)  # every signal once, time not repeated
    assert header == csv_header()


def test_csv_has_a_row_every_10_ms(signals):
    t = signals["time"]
    assert t.size > 1000
    assert np.allclose(np.diff(t), 0.01)


def test_car_reached_100_kmh_and_came_back_to_rest(signals):
    assert signals["groundspeed"].max() > 100 * KMH
    assert abs(signals["velX"][-1]) < 0.1
    assert signals["groundspeed"][-1] < 0.1


def test_engine_ran_and_is_off_at_the_end(signals):
    assert signals["engine_running"].max() == 1.0
    assert signals["engine_running"][-1] == 0.0
    assert signals["rpm"][-1] < 1.0


def test_trajectory_turned_left_by_about_90_degrees(signals):
    # The driver steers towards a heading of 90 degrees, then holds it.
    assert 1.2 < signals["yaw"][-1] < 1.9
    assert signals["posY"][-1] > 50.0


def test_plot_is_a_real_png(folder):
    data = (folder / "demo.png").read_bytes()
    assert data[:8] == PNG_MAGIC
    assert len(data) > 10_000


def test_summary_reports_times_and_speeds(folder, signals):
    summary = json.loads((folder / "summary.json").read_text())
    assert 40.0 <= summary["simulated_time_s"] <= 60.0
    assert summary["real_time_factor"] > 1.0
    assert summary["max_speed_kmh"] == pytest.approx(signals["groundspeed"].max() / KMH, abs=0.1)
    assert 5.0 < summary["zero_to_100_kmh_s"] < 15.0
    assert summary["distance_m"] > 300.0
    assert [p["name"] for p in summary["phases"]] == [p.name for p in MANOEUVRE]
    assert summary["phases_cut_short"] == []
