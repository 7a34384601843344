"""`vcosim sweep` on the command line."""

from __future__ import annotations

import subprocess
import sys

from typer.testing import CliRunner

from vcosim.app import app
from vcosim.sweep.report import read_results

SWEEP = """
[scenario]
name = "cli"
duration = 0.3

[controller]
name = "cruise"
speed = 5.0

[sweep.parameters]
"controller.kp" = [0.2, 0.4]
"coupling.ext_time" = {from = 0.002, to = 0.01, num = 3}
"""


def test_sweep_command_writes_results(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(SWEEP)
    out = tmp_path / "out"
    result = CliRunner().invoke(
        app, ["sweep", str(path), "--workers", "0", "--out", str(out), "--signals"]
    )
    assert result.exit_code == 0, result.output
    assert "6 of 6 runs finished" in result.output
    assert read_results(out / "results.parquet").num_rows == 6
    assert (out / "signals.parquet").exists() and (out / "report.html").exists()
    assert (out / "sweep.toml").read_text() == SWEEP


def test_check_lists_the_runs_without_running(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(SWEEP)
    result = CliRunner().invoke(app, ["sweep", str(path), "--check", "--out", str(tmp_path / "o")])
    assert result.exit_code == 0, result.output
    assert "sweep cli: 6 runs of 0.3 s" in result.output
    assert not (tmp_path / "o").exists()


def test_a_bad_sweep_file_lists_every_problem(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(
        SWEEP.replace('"controller.kp"', '"controller.kpp"').replace(
            "duration = 0.3", "duration = -1"
        )
    )
    run = subprocess.run(
        [sys.executable, "-m", "vcosim", "sweep", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2
    assert "is invalid (2 problem(s))" in run.stderr
    assert "unknown controller parameter 'kpp'" in run.stderr
    assert "scenario.duration: Input should be greater than 0" in run.stderr
