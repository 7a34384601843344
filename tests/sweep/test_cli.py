"""`vcosim sweep` on the command line."""

from __future__ import annotations

import subprocess

from typer.testing import CliRunner

from helpers.forks import vcosim_command
from vcosim.app import app
from vcosim.sweep.tables import read_results

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
        [*vcosim_command(), "sweep", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert run.returncode == 2
    assert not (tmp_path / "sweeps").exists()  # nothing started
    assert "is invalid (2 problem(s))" in run.stderr
    assert "unknown controller parameter 'kpp'" in run.stderr
    assert "scenario.duration: Input should be greater than 0" in run.stderr


FAULTY = """
[scenario]
name = "faulty"
duration = 0.5

[controller]
name = "sweep_faulty:Faulty"
speed = 8.0

[sweep.parameters]
"controller.fail_above" = [100.0, 0.15]
"""


def test_a_failed_run_makes_the_exit_code_1(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(FAULTY)
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["sweep", str(path), "--workers", "0", "--out", str(out)])
    assert result.exit_code == 1, result.output
    assert "2 of 2 runs finished" in result.output and "1 failed" in result.output
    assert "run 1 failed (controller.fail_above=0.15): ValueError: speed 0.2" in result.output
    assert read_results(out / "results.parquet").column("status").to_pylist() == ["ok", "failed"]


INTERRUPTED = """
[scenario]
name = "interrupted"
duration = 0.3

[controller]
name = "sweep_faulty:Interrupting"

[sweep]
mode = "list"

[sweep.parameters]
"controller.interrupt" = [false, false, true, false]
"""


def test_an_interrupt_keeps_the_finished_runs_and_exits_130(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(INTERRUPTED)
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["sweep", str(path), "--workers", "0", "--out", str(out)])
    assert result.exit_code == 130, result.output
    assert f"interrupted after 2 of 4 runs: the finished runs are in {out}" in result.output
    assert read_results(out / "results.parquet").column("run").to_pylist() == [0, 1]


def test_the_backend_options_reach_the_backend(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(
        SWEEP.replace("[sweep.parameters]", "[backend]\nworkers = 0\n\n[sweep.parameters]")
    )
    result = CliRunner().invoke(app, ["sweep", str(path), "--out", str(tmp_path / "o")])
    assert result.exit_code == 0, result.output
    assert "on serial (1 worker)" in result.output  # [backend] workers = 0: this process
    result = CliRunner().invoke(app, ["sweep", str(path), "--workers", "-1"])
    assert result.exit_code == 2
    assert "--workers: Input should be greater than or equal to 0" in result.output
