"""Hardening, fourth pass (issue 45): small or strange OpenSCENARIO and OpenDRIVE files.

Each reproduction of the issue is one test: an expression that failed with an internal
exception, a file nested 1,000 deep, a parameter that built a 1.2 GB string, a FIFO where a
file was expected, a file over the size bound. Each must end in one ``ConfigError`` naming
the problem (and its line where it has one), and the command in exit code 2 without a
traceback.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vcosim.app import app
from vcosim.config import MAX_INPUT_ENV, MAX_ROAD_BYTES, MAX_SCENARIO_BYTES
from vcosim.errors import ConfigError
from vcosim.openscenario.expressions import MAX_EXPRESSION, ExpressionError, evaluate
from vcosim.openscenario.reader import read_xosc
from vcosim.roads.opendrive import read_xodr

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "scenarios"


@pytest.mark.parametrize(
    ("expression", "said"),
    [
        ("sqrt(-1)", "outside its domain"),
        ("5 % 0", "outside its domain"),
        ("floor(1e308*10-1e308*10)", "outside its domain"),
        ("(-8)**0.5", "outside its domain"),
        ("pow(-8, 0.5)", "outside its domain"),
        ("+".join(["1"] * 100_000), f"at most {MAX_EXPRESSION:,}"),
        ("-" * 100_000 + "1", f"at most {MAX_EXPRESSION:,}"),
        ("-" * 4000 + "1", "nested too deep"),
        ("+".join(["1"] * 2000), "nested more than 100 deep"),
        ("(" * 2000 + "1" + ")" * 2000, "not an OpenSCENARIO expression"),
    ],
    ids=lambda v: v[:24] if isinstance(v, str) else None,
)
def test_every_arithmetic_error_and_every_size_is_a_refusal(expression: str, said: str) -> None:
    with pytest.raises(ExpressionError) as refused:
        evaluate(expression, {})
    assert said in str(refused.value)
    assert len(str(refused.value)) < 200  # the expression is quoted by its start only


def test_a_concatenation_is_bounded_before_it_is_built() -> None:
    big = "x" * 100_000
    with pytest.raises(ExpressionError, match="would make 1,200,"):
        evaluate(" + ".join(["$big"] * 12), {"big": big})
    assert evaluate("$a + _ + $b", {"a": "x" * 100, "b": "y"}) == "x" * 100 + "_y"


def scenario_copy(folder: Path) -> Path:
    """cut_in.xosc and its road in ``folder``."""
    for name in ("cut_in.xosc", "straight.xodr"):
        shutil.copy(EXAMPLES / name, folder / name)
    return folder / "cut_in.xosc"


def refusal(path: Path) -> list[str]:
    with pytest.raises(ConfigError) as refused:
        read_xosc(path)
    return refused.value.problems


def run_scenario(path: Path) -> str:
    """``vcosim sim --scenario PATH``: exit 2 and no traceback; its output."""
    result = CliRunner().invoke(app, ["sim", "--scenario", str(path), "--duration", "0.01"])
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    return result.output


def test_a_parameter_named_12000_times_is_refused_not_built(tmp_path: Path) -> None:
    path = scenario_copy(tmp_path)
    big = "x" * 100_000
    bomb = "${" + " + ".join(["$big"] * 12_000) + "}"
    declarations = (
        f'<ParameterDeclarations><ParameterDeclaration name="big" parameterType="string" '
        f'value="{big}"/>\n<ParameterDeclaration name="boom" parameterType="string" '
        f'value="{bomb}"/>'
    )
    text = path.read_text().replace("<ParameterDeclarations>", declarations, 1)
    path.write_text(text)
    line = text[: text.index('name="boom"')].count("\n") + 1
    problems = refusal(path)
    assert problems[0].startswith(f"line {line}: <ParameterDeclaration>: value=")
    assert "characters long" in problems[0] and len(problems[0]) < 400
    # a shorter expression, within the length bound, that would still make 40 MB
    text = text.replace(bomb, "${" + " + ".join(["$big"] * 400) + "}")
    path.write_text(text)
    assert "would make 40,00" in refusal(path)[0]
    assert "would make" in run_scenario(path)


def test_1000_nested_elements_are_refused_with_their_line(tmp_path: Path) -> None:
    path = scenario_copy(tmp_path)
    deep = "\n" + "<A>" * 1000 + "</A>" * 1000
    text = path.read_text().replace("<RoadNetwork>", "<RoadNetwork>" + deep, 1)
    path.write_text(text)
    line = text[: text.index("<A>")].count("\n") + 1
    assert refusal(path) == [f"line {line}: elements nested more than 100 deep"]
    assert "nested more than 100 deep" in run_scenario(path)


def test_a_catalogue_nested_1000_deep_is_refused_too(tmp_path: Path) -> None:
    from vcosim.openscenario.reader import read_root

    path = tmp_path / "deep.xosc"
    path.write_text("<OpenSCENARIO>" + "<Catalog>" * 1000 + "</Catalog>" * 1000 + "</OpenSCENARIO>")
    with pytest.raises(ConfigError, match="nested more than 100 deep"):
        read_root(path, "catalogue", catalogue=True)


def open_fifo_writer_later(fifo: Path) -> threading.Timer:
    """Unblock a reader that would wait on the FIFO (so a failing test ends, not hangs)."""

    def unblock() -> None:
        with contextlib.suppress(OSError):
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))

    timer = threading.Timer(30.0, unblock)
    timer.daemon = True
    timer.start()
    return timer


def test_a_fifo_as_scenario_or_road_is_refused_not_waited_on(tmp_path: Path) -> None:
    path = scenario_copy(tmp_path)
    (tmp_path / "straight.xodr").unlink()
    os.mkfifo(tmp_path / "straight.xodr")
    os.mkfifo(tmp_path / "fifo.xosc")
    timers = [open_fifo_writer_later(tmp_path / n) for n in ("straight.xodr", "fifo.xosc")]
    try:
        assert "LogicFile>: filepath='straight.xodr': not a regular file" in refusal(path)[0]
        assert refusal(tmp_path / "fifo.xosc") == [
            "not a regular file (a folder, a FIFO or a device)"
        ]
        with pytest.raises(ConfigError, match="not a regular file"):
            read_xodr(tmp_path / "straight.xodr")
        assert "not a regular file" in run_scenario(tmp_path / "fifo.xosc")
    finally:
        for timer in timers:
            timer.cancel()


def test_files_over_their_bound_are_refused_naming_it_and_how_to_raise_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = scenario_copy(tmp_path)
    big = tmp_path / "big.xosc"
    shutil.copy(path, big)
    os.truncate(big, MAX_SCENARIO_BYTES + 1)  # sparse: no disk, but its size says it
    (problem,) = refusal(big)
    assert problem == (
        f"{MAX_SCENARIO_BYTES + 1} bytes: an OpenSCENARIO file may have at most "
        f"{MAX_SCENARIO_BYTES} bytes (set {MAX_INPUT_ENV} to a number of MiB to raise it)"
    )
    road = tmp_path / "big.xodr"
    shutil.copy(tmp_path / "straight.xodr", road)
    os.truncate(road, MAX_ROAD_BYTES + 1)
    with pytest.raises(ConfigError, match=f"an OpenDRIVE file may have at most {MAX_ROAD_BYTES}"):
        read_xodr(road)
    # the bound is what the variable says: a small bound refuses the example, a big one reads it
    monkeypatch.setenv(MAX_INPUT_ENV, "0.001")
    assert "may have at most 1048 bytes" in refusal(path)[0]
    monkeypatch.setenv(MAX_INPUT_ENV, "100")
    assert read_xosc(path).entities


DISTRIBUTION = """<?xml version="1.0" encoding="utf-8"?>
<OpenSCENARIO>
  <FileHeader revMajor="1" revMinor="2" date="2024-01-01T00:00:00" description="d" author="a"/>
  <ParameterValueDistribution>
    <ScenarioFile filepath="cut_in.xosc"/>
    <Deterministic>
AXES    </Deterministic>
  </ParameterValueDistribution>
</OpenSCENARIO>
"""


def ranged(name: str, low: float, high: float, step: str) -> str:
    return (
        f'      <DeterministicSingleParameterDistribution parameterName="{name}">'
        f'<DistributionRange stepWidth="{step}"><Range lowerLimit="{low}" upperLimit="{high}"/>'
        "</DistributionRange></DeterministicSingleParameterDistribution>\n"
    )


def sweep_of(folder: Path, axes: str) -> Path:
    """A sweep of cut_in.xosc over the distribution with ``axes``."""
    scenario_copy(folder)
    (folder / "variations.xosc").write_text(DISTRIBUTION.replace("AXES", axes))
    sweep = (EXAMPLES / "cut_in_sweep.toml").read_text()
    path = folder / "sweep.toml"
    path.write_text(sweep.replace("cut_in_variations.xosc", "variations.xosc"))
    return path


@pytest.mark.parametrize(
    ("axes", "said"),
    [
        (ranged("EgoSpeed", 0, 6, "1e-300"), "<DistributionRange>: 6e+300 values"),
        (ranged("EgoSpeed", -1e300, 1e300, "1e-300"), "<DistributionRange>: inf values"),
        (ranged("EgoSpeed", 0, 6, "1e-6"), "<DistributionRange>: 6,000,001 values"),
        ("".join(ranged(f"P{i}", 0, 599, "1") for i in range(7)), "<Deterministic>: 2.8e+19 runs"),
        (
            "".join(ranged(f"P{i}", 0, 999, "1") for i in range(2)),
            "<Deterministic>: 1,000,000 runs",
        ),
    ],
    ids=["1e-300", "infinite", "1e-6", "7x600", "2x1000"],
)
def test_a_distribution_is_counted_before_any_run_is_made(
    tmp_path: Path, axes: str, said: str
) -> None:
    from vcosim.openscenario.distribution import read_distribution

    sweep = sweep_of(tmp_path, axes)
    with pytest.raises(ConfigError) as refused:
        read_distribution(tmp_path / "variations.xosc")
    (problem,) = refused.value.problems
    assert said in problem and "more than 100,000 (--max-runs raises the bound)" in problem
    result = CliRunner().invoke(app, ["sweep", str(sweep), "--check"])
    assert result.exit_code == 2 and isinstance(result.exception, SystemExit), result.output
    assert said.split(": ", 1)[-1] in " ".join(result.output.split())


def test_max_runs_raises_the_bound_of_a_distribution(tmp_path: Path) -> None:
    axes = ranged("EgoSpeed", 20, 23, "1") + ranged("OtherSpeed", 14, 17, "1")
    sweep = sweep_of(tmp_path, axes)
    result = CliRunner().invoke(app, ["sweep", str(sweep), "--check", "--max-runs", "10"])
    assert result.exit_code == 2 and "16 runs, more than 10 (--max-runs" in result.output
    result = CliRunner().invoke(app, ["sweep", str(sweep), "--check", "--max-runs", "3"])
    assert result.exit_code == 2 and "4 values, more than 3 (--max-runs" in result.output
    result = CliRunner().invoke(app, ["sweep", str(sweep), "--check", "--max-runs", "16"])
    assert result.exit_code == 0 and "16 runs" in result.output, result.output
