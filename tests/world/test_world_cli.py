"""`vcosim sim --world`: a coupling per external vehicle, listed; a recording per vehicle."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers.peers import RawPeer
from vcosim.app import app
from vcosim.sim.recorder import csv_header


def rows(path: Path) -> list[dict[str, float]]:
    with path.open() as file:
        return [{k: float(v) for k, v in row.items()} for row in csv.DictReader(file)]


@pytest.fixture
def answering() -> Iterator[RawPeer]:
    """A controller answering each message to the endpoint that sent it, all NaN but the id
    (leave every input as it is): the run couples, and each vehicle keeps its own inputs."""
    peer = RawPeer().start()
    yield peer
    peer.stop()


def follow_world(folder: Path, controller: RawPeer) -> Path:
    """examples/worlds/follow.toml with its ego coupled to ``controller``."""
    world = folder / "two.toml"
    world.write_text(
        Path("examples/worlds/follow.toml").read_text()
        + f'[vehicles.coupling]\ncontroller = "127.0.0.1:{controller.port}"\n'
    )
    return world


def test_sim_world_lists_each_coupling_records_each_vehicle_and_logs_per_vehicle(
    tmp_path: Path, answering: RawPeer
) -> None:
    world = follow_world(tmp_path, answering)
    with world.open("a") as file:
        file.write('\n[[vehicles]]\nname = "side"\nstart = { x = 0, y = 6 }\n')
        file.write('[vehicles.coupling]\nlisten = "127.0.0.1:0"\n')
        file.write(f'controller = "127.0.0.1:{answering.port}"\n')
    result = CliRunner().invoke(
        app,
        [
            "sim",
            "--world",
            str(world),
            "--pacing",
            "fast",
            "--duration",
            "0.5",
            "--listen",
            "127.0.0.1:0",
            "--record",
            str(tmp_path / "run.csv"),
            "--debug-log",
            str(tmp_path / "logs"),
            "--json-out",
            str(tmp_path / "summary.json"),
        ],
    )
    assert result.exit_code == 0, result.output
    out = " ".join(result.output.split())  # the console wraps long lines
    assert "coupling ego: listening on 127.0.0.1:" in out
    assert "coupling side: listening on 127.0.0.1:" in out
    assert "ego: timeouts" in out and "side: timeouts" in out
    summary = json.loads((tmp_path / "summary.json").read_text())
    for name in ("ego", "side"):
        assert summary[f"coupling:{name}"]["applied"] > 0  # each endpoint was answered
        assert (tmp_path / "logs" / name / "simulinkSendLog.csv").is_file()
    assert "coupling:lead" not in summary  # driven by its profile, not from outside
    assert summary["recording"]["files"]["lead"] == str(tmp_path / "run.lead.csv")
    for name, x0 in (("lead", 40.0), ("ego", 0.0), ("side", 0.0)):
        recorded = rows(tmp_path / f"run.{name}.csv")
        assert list(recorded[0]) == csv_header()
        assert len(recorded) == 51  # the start, then every 10 ms for 0.5 s
        assert recorded[0]["posX"] == pytest.approx(x0, abs=0.01)
    lead = rows(tmp_path / "run.lead.csv")
    assert lead[-1]["posX"] - lead[0]["posX"] == pytest.approx(7.5, abs=0.2)  # 15 m/s


def test_analyze_on_a_world_log_folder_analyses_each_vehicle(
    tmp_path: Path, answering: RawPeer
) -> None:
    world = follow_world(tmp_path, answering)
    logs = tmp_path / "logs"
    ran = CliRunner().invoke(
        app,
        ["sim", "--world", str(world), "--pacing", "fast", "--duration", "0.3"]
        + ["--listen", "127.0.0.1:0", "--debug-log", str(logs)],
    )
    assert ran.exit_code == 0, ran.output
    result = CliRunner().invoke(app, ["analyze", str(logs)])
    assert result.exit_code == 0, result.output
    unwrapped = "".join(result.output.split())  # rich wraps long paths anywhere
    assert f"vcosimanalyze:{logs / 'ego'}" in unwrapped
    assert (logs / "ego" / "analysis.html").is_file()
