"""Hardening, fourth pass (issue 45): ``sweep --check`` of a sweep too large to make still
lists the problems of its runs (it listed only the run count), and ``--max-runs`` bounds it."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from vcosim.app import app

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sweeps" / "cruise-gains.toml"


def test_a_sweep_too_large_lists_its_runs_problems_too(tmp_path: Path) -> None:
    text = EXAMPLE.read_text()
    text = text.replace('base = "nightrider"', 'base = "nightrider"\nbody.chassis_mass = -5')
    text = text.replace('name = "cruise"\n', 'name = "cruise"\nspede = 3\n')
    text = text.replace(
        '"terrain.friction" = [0.3, 0.6, 1.0]',
        '"terrain.friction" = [0.3, 0.6, 1.0]\n'
        '"controller.brake_gain" = {from = 0, to = 1, num = 2000}',
    )
    path = tmp_path / "sweep.toml"
    path.write_text(text)
    result = CliRunner().invoke(app, ["sweep", str(path), "--check"])
    assert result.exit_code == 2 and isinstance(result.exception, SystemExit), result.output
    said = " ".join(result.output.split())
    assert "is invalid (3 problem(s))" in said
    assert "sweep: 216,000 runs, more than sweep.max_runs = 100,000" in said
    assert "vehicle.body.chassis_mass: Input should be greater than 0" in said
    assert "controller.spede: unknown controller parameter 'spede'" in said
    # --max-runs replaces the file's bound
    result = CliRunner().invoke(app, ["sweep", str(path), "--check", "--max-runs", "1000"])
    said = " ".join(result.output.split())
    assert result.exit_code == 2 and "'num' must be a whole number from 1 to 1,000" in said
