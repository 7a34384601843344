"""A road file puts the car on the road: its first driving lane, a road position, or a refusal."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vcosim.app import app
from vcosim.errors import ConfigError
from vcosim.roads import read_xodr
from vcosim.roads.starts import lane_start, nearest_lane, on_a_driving_lane

EXAMPLES = Path(__file__).parents[2] / "examples" / "scenarios"
E6MINI = EXAMPLES / "public" / "esmini" / "xodr" / "e6mini.xodr"


@pytest.fixture
def away(tmp_path: Path) -> Path:
    """The example straight road (500 m, lanes -2..2), moved to start at (300, -200), to NW."""
    text = (EXAMPLES / "straight.xodr").read_text()
    moved = text.replace('x="0" y="0" hdg="0"', 'x="300" y="-200" hdg="2.0"')
    assert moved != text
    path = tmp_path / "away.xodr"
    path.write_text(moved)
    return path


def rows_of(path: Path) -> list[dict[str, str]]:
    with path.open() as file:
        return list(csv.DictReader(file))


def test_without_a_start_the_car_drives_on_the_first_driving_lane_of_the_first_road(
    away: Path, tmp_path: Path
):
    record = tmp_path / "r.csv"
    args = ["sim", "--terrain", str(away), "--no-coupling", "--pacing", "fast"]
    result = CliRunner().invoke(app, [*args, "--duration", "3", "--record", str(record)])
    assert result.exit_code == 0, result.output
    rows = rows_of(record)
    assert len(rows) == 301
    assert {(row["road_id"], row["lane_id"]) for row in rows} == {("1", "-1")}
    first = rows[0]
    assert math.hypot(float(first["posX"]) - 300.0, float(first["posY"]) + 200.0) < 6.0
    assert float(first["road_s"]) == pytest.approx(5.0, abs=0.5)  # at its start, 5 m in
    assert float(first["road_t"]) == pytest.approx(-1.75, abs=0.1)  # the lane's centre


def test_e6minis_first_driving_lane_is_behind_a_border_lane():
    network = read_xodr(E6MINI)
    x, y, heading = lane_start(network)
    assert on_a_driving_lane(network, x, y)
    assert network.locate(x, y).lane[0] == -2  # lane -1 is a border
    assert heading == pytest.approx(math.degrees(network.position("0", 5.0, -2)[3][0]), abs=1e-9)


def test_a_road_position_faces_the_lanes_traffic(away: Path):
    network = read_xodr(away)
    x, y, heading = lane_start(network, "1", 1, 100.0)  # a left lane: traffic against s
    along = math.degrees(2.0)
    assert (heading - along) % 360.0 == pytest.approx(180.0)
    at = network.locate(x, y)
    assert (at.road[0], at.lane[0], at.s[0]) == ("1", 1, pytest.approx(100.0))
    x, y, _ = lane_start(network, "1", 1)  # its start is the road's end, 5 m in
    assert network.locate(x, y).s[0] == pytest.approx(495.0)
    with pytest.raises(ConfigError, match=r"no driving lane 3 at s = 495 m \(its driving lanes"):
        lane_start(network, "1", 3)
    with pytest.raises(ConfigError, match="beyond road '1'"):
        lane_start(network, "1", -1, 600.0)


def test_a_start_pose_on_the_cli_takes_a_road_position(away: Path, tmp_path: Path):
    record = tmp_path / "r.csv"
    result = CliRunner().invoke(
        app,
        [
            "sim", "--terrain", str(away), "--no-coupling", "--pacing", "fast",
            "--duration", "0.5", "--record", str(record), "--start-pose", "road=1,lane=-2,s=200",
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    rows = rows_of(record)
    assert {(row["road_id"], row["lane_id"]) for row in rows} == {("1", "-2")}
    assert float(rows[0]["road_s"]) == pytest.approx(200.0, abs=0.5)


def test_a_start_off_every_lane_is_refused_before_the_run_naming_the_nearest(away: Path):
    result = CliRunner().invoke(
        app, ["sim", "--terrain", str(away), "--no-coupling", "--start-pose", "0,0,0"]
    )
    assert result.exit_code == 2, result.output
    near = nearest_lane(read_xodr(away), 0.0, 0.0)
    assert "(0, 0) is on no driving lane of the road; the nearest is road '1'" in result.output
    assert f"--start-pose {near.option()}" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    "given",
    ["road=1,lane=x", "road=1,line=2", "road=1,road=2", "road=1,s=-3", "road=1,lane="],
)
def test_a_road_position_that_does_not_parse_is_a_usage_error(away: Path, given: str):
    result = CliRunner().invoke(
        app, ["sim", "--terrain", str(away), "--no-coupling", "--start-pose", given]
    )
    assert result.exit_code == 2, result.output
    assert "--start-pose" in result.output


def test_a_road_position_without_a_road_is_refused():
    result = CliRunner().invoke(app, ["sim", "--no-coupling", "--start-pose", "road=1"])
    assert result.exit_code == 2, result.output
    assert "a road position needs an OpenDRIVE road" in result.output
