"""``vcosim fmu vehicle|coupling``: the commands build what their options say."""

from __future__ import annotations

import json
import subprocess
import zipfile

import typer
from fmpy import read_model_description
from typer.testing import CliRunner

from helpers.forks import vcosim_command
from vcosim.app.fmu import fmu_app
from vcosim.errors import ConfigError
from vcosim.fmi.metadata import CONFIG_FILE

app = typer.Typer()
app.add_typer(fmu_app, name="fmu")


def test_vehicle_command_builds_an_fmi3_manual_gearbox_fmu(tmp_path):
    out = tmp_path / "sub" / "car.fmu"
    args = ["fmu", "vehicle", str(out), "--fmi", "3", "--gearbox", "manual"]
    args += ["--vehicle", "nightrider-seed"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    description = read_model_description(str(out))
    variables = {v.name: v for v in description.modelVariables}
    assert description.fmiVersion == "3.0"
    assert variables["automatic"].start == "false"
    assert variables["gear"].start == "0"  # manual: start in neutral
    assert variables["resistance.a2"].start == "0.018"  # the seed's resistance curve
    assert said(description, out) in result.output  # it says what it wrote, as FMPy reads it


def test_coupling_command_refuses_a_name_without_fmu_and_writes_nothing(tmp_path):
    result = CliRunner().invoke(app, ["fmu", "coupling", str(tmp_path / "link.zip")])
    assert isinstance(result.exception, ConfigError)
    assert "must end in .fmu" in str(result.exception)
    assert list(tmp_path.iterdir()) == []


def test_coupling_command_takes_the_ext_time(tmp_path):
    out = tmp_path / "link.fmu"
    result = CliRunner().invoke(app, ["fmu", "coupling", str(out), "--ext-time", "0.01"])
    assert result.exit_code == 0, result.output
    with zipfile.ZipFile(out) as fmu:
        options = json.loads(fmu.read(f"resources/{CONFIG_FILE}"))
    assert options == {"step": 0.01, "interface": None}
    line = said(read_model_description(str(out)), out) + ", communication step 0.01 s"
    assert line in result.output


def said(description, path) -> str:
    """The line the commands print for an FMU, from FMPy's reading of it."""
    causes = [v.causality for v in description.modelVariables]
    return (
        f"wrote {path}: FMI {description.fmiVersion} co-simulation FMU, "
        f"{causes.count('input')} inputs, {causes.count('output')} outputs, "
        f"{causes.count('parameter')} parameters"
    )


def test_vehicle_command_refuses_a_bad_terrain_with_exit_2_and_writes_nothing(tmp_path):
    terrain = tmp_path / "bad.toml"
    terrain.write_text("hill_height = -1\n")
    done = subprocess.run(
        [*vcosim_command(), "fmu", "vehicle", str(tmp_path / "car.fmu"), "--terrain", str(terrain)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert f"terrain {terrain}: hill_height: Input should be greater than or equal to 0" in (
        done.stderr + done.stdout
    )
    assert "Traceback" not in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.toml"]
