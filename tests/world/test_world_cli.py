"""`vcosim sim --world`: a coupling per external vehicle, listed; a recording per vehicle."""

from __future__ import annotations

import csv
import json
import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vcosim.app import app
from vcosim.sim.recorder import csv_header


def rows(path: Path) -> list[dict[str, float]]:
    with path.open() as file:
        return [{k: float(v) for k, v in row.items()} for row in csv.DictReader(file)]


def silent_controller() -> socket.socket:
    """A controller address that never answers."""
    silent = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    silent.bind(("127.0.0.1", 0))
    return silent


def follow_world(folder: Path, controller: socket.socket) -> Path:
    """examples/worlds/follow.toml with its ego coupled to ``controller``."""
    world = folder / "two.toml"
    world.write_text(
        Path("examples/worlds/follow.toml").read_text()
        + f'[vehicles.coupling]\ncontroller = "127.0.0.1:{controller.getsockname()[1]}"\n'
    )
    return world


def test_sim_world_lists_each_coupling_records_each_vehicle_and_logs_per_vehicle(
    tmp_path: Path,
) -> None:
    silent = silent_controller()
    world = follow_world(tmp_path, silent)
    with world.open("a") as file:
        file.write('\n[[vehicles]]\nname = "side"\nstart = { x = 0, y = 6 }\n')
        file.write('[vehicles.coupling]\nlisten = "127.0.0.1:0"\n')
        file.write(f'controller = "127.0.0.1:{silent.getsockname()[1]}"\n')
    try:
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
                "--timeout",
                "0.01",
                "--record",
                str(tmp_path / "run.csv"),
                "--debug-log",
                str(tmp_path / "logs"),
                "--json-out",
                str(tmp_path / "summary.json"),
            ],
        )
    finally:
        silent.close()
    assert result.exit_code == 0, result.output
    out = " ".join(result.output.split())  # the console wraps long lines
    assert "coupling ego: listening on 127.0.0.1:" in out
    assert "coupling side: listening on 127.0.0.1:" in out
    assert "ego: timeouts" in out and "side: timeouts" in out
    summary = json.loads((tmp_path / "summary.json").read_text())
    for name in ("ego", "side"):
        assert summary[f"coupling:{name}"]["timeouts"] > 0  # nobody answered
        assert summary[f"coupling:{name}"]["applied"] == 0
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


def test_analyze_on_a_world_log_folder_analyses_each_vehicle(tmp_path: Path) -> None:
    silent = silent_controller()
    world = follow_world(tmp_path, silent)
    logs = tmp_path / "logs"
    try:
        ran = CliRunner().invoke(
            app,
            ["sim", "--world", str(world), "--pacing", "fast", "--duration", "0.3"]
            + ["--listen", "127.0.0.1:0", "--timeout", "0.01", "--debug-log", str(logs)],
        )
    finally:
        silent.close()
    assert ran.exit_code == 0, ran.output
    result = CliRunner().invoke(app, ["analyze", str(logs)])
    assert result.exit_code == 0, result.output
    unwrapped = "".join(result.output.split())  # rich wraps long paths anywhere
    assert f"vcosimanalyze:{logs / 'ego'}" in unwrapped
    assert (logs / "ego" / "analysis.html").is_file()
