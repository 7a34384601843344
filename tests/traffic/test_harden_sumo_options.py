"""Hardening, fourth pass (issue 45): SUMO's options in a world or run file are data.

A file may give only the options docs/traffic.md lists, and SUMO writes its outputs only
below the run's folder: ``--log /anywhere``, ``--fcd-output ../x`` and
``--save-configuration`` (which made SUMO save and exit: a FatalTraCIError, exit 1) are
refused with their key before SUMO starts. The Python API takes any option but those that
make SUMO exit instead of running.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import tomli_w
import tomllib
from typer.testing import CliRunner

from vcosim.app import app
from vcosim.errors import ConfigError
from vcosim.scenarios.spec import RunSpec
from vcosim.world import WorldFile
from vcosim.world.sumo_spec import FILE_OPTIONS, SumoSpec, file_option_problems

EXAMPLES = Path(__file__).parents[2] / "examples"
BAD = ["--save-configuration", "saved.cfg", "--log", "/tmp/anywhere.log",
       "--fcd-output", "../up.xml", "--tripinfo-output=~/x.xml"]  # fmt: skip
GOOD = ["--ignore-route-errors", "true", "--thread-rngs", "8", "--fcd-output", "out/fcd.xml",
        "--no-warnings", "--default.action-step-length=0.1", "-a", "more.add.xml"]  # fmt: skip


def test_each_option_a_file_may_not_give_is_named() -> None:
    assert file_option_problems(BAD) == [
        "'--save-configuration' is not an option a file may give",
        "--log '/tmp/anywhere.log': a file writes only below the run's folder "
        "(a relative path without '..')",
        "--fcd-output '../up.xml': a file writes only below the run's folder "
        "(a relative path without '..')",
        "--tripinfo-output '~/x.xml': a file writes only below the run's folder "
        "(a relative path without '..')",
    ]
    assert file_option_problems(GOOD) == []
    assert file_option_problems(["--thread-rngs"]) == ["--thread-rngs needs a value"]
    assert "--save-configuration" not in FILE_OPTIONS


def test_a_run_file_with_them_is_refused_before_sumo_starts(tmp_path: Path) -> None:
    path = tmp_path / "run.spec.toml"
    path.write_text(tomli_w.dumps({"sumo": {"config": "x.sumocfg", "options": BAD}}))
    with pytest.raises(ConfigError) as caught:
        RunSpec.from_toml(path)
    (problem,) = caught.value.problems
    assert problem.startswith("sumo.options: '--save-configuration' is not an option")
    result = CliRunner().invoke(app, ["sim", "--spec", str(path)])
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit) and "Traceback" not in result.output
    assert "--log '/tmp/anywhere.log'" in " ".join(result.output.split())
    path.write_text(tomli_w.dumps({"sumo": {"config": "x.sumocfg", "options": GOOD}}))
    assert RunSpec.from_toml(path).sumo == SumoSpec(config="x.sumocfg", options=GOOD)


def test_a_world_file_with_them_is_refused_too(tmp_path: Path) -> None:
    source = EXAMPLES / "worlds" / "sumo-junction.toml"
    data = tomllib.loads(source.read_text())
    data["sumo"]["config"] = str((source.parent / data["sumo"]["config"]).resolve())
    data["sumo"]["options"] = ["--error-log", "/etc/cron.d/x"]
    world = tmp_path / "world.toml"
    world.write_text(tomli_w.dumps(data))
    with pytest.raises(ConfigError, match=r"sumo.options: --error-log '/etc/cron.d/x'"):
        WorldFile.load(world)
    result = CliRunner().invoke(app, ["sim", "--world", str(world), "--duration", "0.01"])
    assert result.exit_code == 2 and "--error-log" in result.output, result.output
    data["sumo"]["options"] = ["--error-log", "errors.txt"]
    world.write_text(tomli_w.dumps(data))
    assert WorldFile.load(world).sumo is not None


def test_the_api_takes_any_option_but_saving_the_configuration() -> None:
    assert SumoSpec(config="x.sumocfg", options=["--log", "/tmp/x.log"]).options
    with pytest.raises(ValueError, match="would save its configuration and exit"):
        SumoSpec(config="x.sumocfg", options=["--save-configuration", "x.cfg"])
