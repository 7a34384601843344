"""What users expect of `vcosim sim`: a recording, a start pose and speed, a terrain."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from typer.testing import CliRunner

from vcosim.app import app


def sim(*args: str) -> str:
    result = CliRunner().invoke(app, ["sim", "--no-coupling", "--pacing", "fast", *args])
    assert result.exit_code == 0, result.output
    return result.output


def last_row(path: Path) -> dict[str, float]:
    with path.open() as file:
        rows = list(csv.DictReader(file))
    return {k: float(v) for k, v in rows[-1].items()} | {"rows": len(rows)}


def test_record_start_pose_and_speed(tmp_path: Path) -> None:
    out = tmp_path / "signals.csv"
    sim("--duration", "2", "--start-pose", "10,5,90", "--start-speed", "10", "--record", str(out))
    row = last_row(out)
    assert row["rows"] == 201  # the start, then one row every 10 ms (100 Hz) for 2 s
    assert row["posX"] == pytest.approx(10.0, abs=0.1)
    # north from 10 m/s, in gear with the automatic in D: engine braking slows it to ~8.5 m/s
    assert row["posY"] == pytest.approx(5.0 + 2 * 9.3, abs=0.5)
    assert row["gear"] >= 2 and row["rpm"] > 1500
    assert row["yaw"] == pytest.approx(np.pi / 2, abs=0.01)


def test_record_rate_and_mcap(tmp_path: Path) -> None:
    reader = pytest.importorskip("mcap.reader")
    out = tmp_path / "signals.mcap"
    sim("--duration", "1", "--record", str(out), "--record-rate", "50")
    with out.open("rb") as file:
        messages = list(reader.make_reader(file).iter_messages(topics=["/vehicle/signals"]))
    assert len(messages) == 51  # (with the foxglove extra the file also has /scene and /tf)
    schema, channel, message = messages[-1]
    assert channel.topic == "/vehicle/signals"
    row = json.loads(message.data)
    assert row["time"] == pytest.approx(1.0, abs=1e-3) and message.log_time == round(
        row["time"] * 1e9
    )


def test_terrain_file_is_driven_on(tmp_path: Path) -> None:
    blue = np.tile((np.arange(64) * 4).astype(np.uint8), (32, 1))  # rising along +x
    rgb = np.zeros((*blue.shape, 3), dtype=np.uint8)
    rgb[:, :, 2] = blue
    Image.fromarray(rgb).save(tmp_path / "ramp.png")
    (tmp_path / "hill.toml").write_text('height_map = "ramp.png"\nhill_height = 25.5\nsize = 640\n')
    out = tmp_path / "s.csv"
    sim("--duration", "0.5", "--terrain", str(tmp_path / "hill.toml"), "--record", str(out))
    row = last_row(out)
    assert row["pitch"] == pytest.approx(-np.arctan(0.04), abs=0.005)  # parked on the ramp
    assert row["posZ"] > 12.0  # the ramp is 12.6 m high at the origin


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--start-pose", "north"], "--start-pose"),
        (["--record", "x.txt"], ".csv or .mcap"),
        (["--debug-log", "logs"], "--debug-log"),
    ],
)
def test_bad_sim_options_are_one_line(args: list[str], says: str) -> None:
    result = CliRunner().invoke(app, ["sim", "--no-coupling", "--duration", "0.1", *args])
    assert result.exit_code == 2, result.output
    (line,) = [x for x in result.output.splitlines() if x.startswith("error:")]
    assert says in line
