"""Stochastic parameter distributions drawn reproducibly from their seed, and every run's
values checked against the varied scenario's value constraints before anything runs."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from helpers.scenarios import cut_in, variations, write_road
from vcosim.app import app
from vcosim.errors import ConfigError
from vcosim.openscenario.distribution import read_distribution, seed_of
from vcosim.sweep.config import load_sweep

HEAD = """<?xml version="1.0" encoding="utf-8"?>
<OpenSCENARIO>
  <FileHeader revMajor="1" revMinor="2" date="2024-01-01T00:00:00" description="d" author="a"/>
  <ParameterValueDistribution>
    <ScenarioFile filepath="cut_in.xosc"/>
"""
TAIL = """  </ParameterValueDistribution>
</OpenSCENARIO>
"""


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    here = tmp_path_factory.mktemp("distributions")
    write_road(here, length=200.0)
    cut_in().write_xml(str(here / "cut_in.xosc"))
    variations(here)
    return here


def stochastic(folder: Path, inside: str, runs: int = 400, seed: str = ' randomSeed="7"') -> Path:
    path = folder / "stochastic.xosc"
    path.write_text(
        f'{HEAD}    <Stochastic numberOfTestRuns="{runs}"{seed}>\n{inside}    </Stochastic>\n{TAIL}'
    )
    return path


def drawn(folder: Path, distribution: str, runs: int = 400, name: str = "EgoSpeed") -> list[str]:
    inside = f'      <StochasticDistribution parameterName="{name}">{distribution}'
    inside += "</StochasticDistribution>\n"
    _, found = read_distribution(stochastic(folder, inside, runs))
    assert len(found) == runs and all(set(run) == {name} for run in found)
    return [run[name] for run in found]


def test_a_normal_distribution_is_drawn_the_same_from_the_same_seed(folder: Path) -> None:
    normal = '<NormalDistribution expectedValue="25" variance="4"/>'
    first = drawn(folder, normal)
    assert drawn(folder, normal) == first  # reproducible
    values = np.array([float(v) for v in first])
    assert abs(values.mean() - 25.0) < 4 * 2.0 / math.sqrt(400)
    assert values.std() == pytest.approx(2.0, rel=0.15)
    path = stochastic(folder, f'<StochasticDistribution parameterName="EgoSpeed">{normal}'
                      "</StochasticDistribution>", seed=' randomSeed="8"')  # fmt: skip
    assert [run["EgoSpeed"] for run in read_distribution(path)[1]] != first
    path = stochastic(folder, f'<StochasticDistribution parameterName="EgoSpeed">{normal}'
                      "</StochasticDistribution>", seed="")  # fmt: skip
    unseeded = [run["EgoSpeed"] for run in read_distribution(path)[1]]
    assert unseeded == [run["EgoSpeed"] for run in read_distribution(path)[1]]  # seed 0


def test_a_range_truncates_a_distribution(folder: Path) -> None:
    values = [float(v) for v in drawn(folder, '<NormalDistribution expectedValue="25" '
                                      'variance="25"><Range lowerLimit="24" upperLimit="26"/>'
                                      "</NormalDistribution>")]  # fmt: skip
    assert min(values) >= 24.0 and max(values) <= 26.0 and len(set(values)) > 300


def test_each_stochastic_distribution_draws_its_own_values(folder: Path) -> None:
    uniform = [float(v) for v in drawn(folder, '<UniformDistribution><Range lowerLimit="10" '
                                       'upperLimit="20"/></UniformDistribution>')]  # fmt: skip
    assert 10.0 <= min(uniform) < 10.5 and 19.5 < max(uniform) <= 20.0
    poisson = drawn(folder, '<PoissonDistribution expectedValue="3"/>')
    assert all(v.isdigit() for v in poisson)
    assert np.mean([int(v) for v in poisson]) == pytest.approx(3.0, abs=0.35)
    lognormal = [float(v) for v in drawn(folder, '<LogNormalDistribution expectedValue="20" '
                                         'variance="9"/>', runs=2000)]  # fmt: skip
    assert min(lognormal) > 0 and np.mean(lognormal) == pytest.approx(20.0, abs=0.4)
    assert np.var(lognormal) == pytest.approx(9.0, rel=0.2)
    chosen = drawn(folder, '<ProbabilityDistributionSet><Element value="20" weight="1"/>'
                   '<Element value="30" weight="3"/><Element value="40" weight="0"/>'
                   "</ProbabilityDistributionSet>")  # fmt: skip
    assert set(chosen) == {"20", "30"} and chosen.count("30") / 400 == pytest.approx(0.75, abs=0.07)
    histogram = [float(v) for v in drawn(folder, '<Histogram><Bin weight="1"><Range '
                                         'lowerLimit="0" upperLimit="1"/></Bin><Bin weight="0">'
                                         '<Range lowerLimit="1" upperLimit="5"/></Bin><Bin '
                                         'weight="1"><Range lowerLimit="5" upperLimit="6"/></Bin>'
                                         "</Histogram>")]  # fmt: skip
    assert all(0 <= v <= 1 or 5 <= v <= 6 for v in histogram)
    assert 150 < sum(v <= 1 for v in histogram) < 250


def test_several_parameters_draw_together_run_by_run(folder: Path) -> None:
    inside = (
        '<StochasticDistribution parameterName="EgoSpeed"><UniformDistribution>'
        '<Range lowerLimit="20" upperLimit="30"/></UniformDistribution></StochasticDistribution>'
        '<StochasticDistribution parameterName="OtherSpeed"><NormalDistribution '
        'expectedValue="15" variance="1"/></StochasticDistribution>'
    )
    scenario, runs = read_distribution(stochastic(folder, inside, runs=5))
    assert scenario == folder / "cut_in.xosc" and len(runs) == 5
    assert all(set(run) == {"EgoSpeed", "OtherSpeed"} for run in runs)
    assert len({run["EgoSpeed"] for run in runs}) == 5


def test_a_seed_that_is_not_a_whole_number_still_seeds() -> None:
    assert seed_of(7.0) == 7
    assert seed_of(0.5) != seed_of(0.25) and seed_of(-1.0) > 0


@pytest.mark.parametrize(
    ("distribution", "says"),
    [
        ('<UserDefinedDistribution type="mine">x</UserDefinedDistribution>',
         "<UserDefinedDistribution>: a user-defined distribution ('mine')"),
        ('<NormalDistribution expectedValue="1" variance="-1"/>',
         "<NormalDistribution>: variance=-1 is negative"),
        ('<NormalDistribution expectedValue="0" variance="1"><Range lowerLimit="50" '
         'upperLimit="51"/></NormalDistribution>',
         "<NormalDistribution>: its Range [50, 51] holds (almost) none of the distribution"),
        ('<UniformDistribution><Range lowerLimit="5" upperLimit="1"/></UniformDistribution>',
         "<Range>: upperLimit 1 is below lowerLimit 5"),
        ("<ProbabilityDistributionSet/>", "<ProbabilityDistributionSet>: an empty set"),
        ('<Histogram><Bin weight="0"><Range lowerLimit="0" upperLimit="1"/></Bin></Histogram>',
         "<Histogram>: the weights must be positive or 0, and not all 0"),
    ],
)  # fmt: skip
def test_what_cannot_be_drawn_is_refused_with_its_line(
    folder: Path, distribution: str, says: str
) -> None:
    inside = f'<StochasticDistribution parameterName="EgoSpeed">\n{distribution}\n'
    path = stochastic(folder, inside + "</StochasticDistribution>\n")
    line = 1 + next(  # the distribution is on the line after its StochasticDistribution
        i for i, s in enumerate(path.read_text().splitlines(), 1) if "parameterName" in s
    )
    with pytest.raises(ConfigError) as caught:
        read_distribution(path)
    assert caught.value.problems == [f"line {line}: {says}"]


def constrained(folder: Path) -> None:
    """The cut-in, its ego's speed constrained to at most 25 m/s."""
    path = folder / "cut_in.xosc"
    text = path.read_text()
    declared = '<ParameterDeclaration name="EgoSpeed" parameterType="double" value="25.0"/>'
    assert declared in text
    path.write_text(text.replace(declared, declared[:-2] + '><ConstraintGroup><ValueConstraint '
                                 'rule="lessOrEqual" value="25"/></ConstraintGroup>'
                                 "</ParameterDeclaration>"))  # fmt: skip


def test_a_run_outside_the_scenarios_constraints_is_refused_before_any_run(
    tmp_path: Path,
) -> None:
    write_road(tmp_path, length=200.0)
    cut_in().write_xml(str(tmp_path / "cut_in.xosc"))
    constrained(tmp_path)
    distribution = variations(tmp_path)  # the ego at 20, 25 and 30 m/s
    line = next(
        i for i, s in enumerate(distribution.read_text().splitlines(), 1) if '"EgoSpeed"' in s
    )
    declared = next(
        i
        for i, s in enumerate((tmp_path / "cut_in.xosc").read_text().splitlines(), 1)
        if 'name="EgoSpeed"' in s
    )
    with pytest.raises(ConfigError) as caught:
        read_distribution(distribution)
    assert caught.value.problems == [
        f"line {line}: <DeterministicSingleParameterDistribution>: parameter 'EgoSpeed' = '30' "
        f"(in runs '9, 10, 11, 12') is outside its constraints at line {declared} of "
        "'cut_in.xosc': (lessOrEqual 25)"
    ]
    (tmp_path / "sweep.toml").write_text(SWEEP.replace("DISTRIBUTION", distribution.name))
    result = CliRunner().invoke(app, ["sweep", str(tmp_path / "sweep.toml"), "--check"])
    assert result.exit_code == 2 and "'EgoSpeed' = '30' (in runs '9, 10, 11, 12')" in result.output


SWEEP = """
[scenario]
name = "drawn"
duration = 0.5
[controller]
name = "acc"
speed = 25.0
[coupling]
ext_time = 0.02
timing = "lockstep"
[sweep]
distribution = "DISTRIBUTION"
"""


def test_a_sweep_check_lists_the_drawn_runs(folder: Path) -> None:
    inside = (
        '<StochasticDistribution parameterName="EgoSpeed"><UniformDistribution>'
        '<Range lowerLimit="20" upperLimit="30"/></UniformDistribution></StochasticDistribution>'
    )
    path = stochastic(folder, inside, runs=6)
    (folder / "drawn.toml").write_text(SWEEP.replace("DISTRIBUTION", path.name))
    result = CliRunner().invoke(app, ["sweep", str(folder / "drawn.toml"), "--check"])
    assert result.exit_code == 0, result.output
    assert "6 runs" in result.output
    for run in read_distribution(path)[1]:
        assert f"{float(run['EgoSpeed']):.4g}"[:4] in result.output


def test_a_swept_parameter_outside_the_constraints_is_refused_before_any_run(
    tmp_path: Path,
) -> None:
    write_road(tmp_path, length=200.0)
    cut_in().write_xml(str(tmp_path / "cut_in.xosc"))
    constrained(tmp_path)
    sweep = SWEEP.split("[sweep]")[0] + (
        '[world]\nfile = "cut_in.xosc"\n[sweep.parameters]\n"world.EgoSpeed" = [20.0, 28.0]\n'
    )
    (tmp_path / "swept.toml").write_text(sweep)
    with pytest.raises(ConfigError) as caught:
        load_sweep(tmp_path / "swept.toml")
    (problem,) = caught.value.problems
    assert "parameter 'EgoSpeed' = '28.0' (given) is outside its constraints: (lessOrEqual 25)" in (
        problem
    )
    assert problem.endswith("(run 1; first: world.EgoSpeed = 28.0)")  # the second run only


def test_a_range_steps_without_floating_point_noise_and_is_bounded(tmp_path: Path) -> None:
    path = tmp_path / "range.xosc"
    single = (
        '<Deterministic><DeterministicSingleParameterDistribution parameterName="EgoSpeed">'
        '<DistributionRange stepWidth="STEP"><Range lowerLimit="0.1" upperLimit="0.5"/>'
        "</DistributionRange></DeterministicSingleParameterDistribution></Deterministic>\n"
    )
    path.write_text(HEAD + single.replace("STEP", "0.1") + TAIL)
    assert [run["EgoSpeed"] for run in read_distribution(path)[1]] == [
        "0.1", "0.2", "0.3", "0.4", "0.5"
    ]  # fmt: skip
    path.write_text(HEAD + single.replace("STEP", "1e-9") + TAIL)
    with pytest.raises(ConfigError, match="400,000,001 values, more than 100,000"):
        read_distribution(path)


def test_the_survey_reads_a_distribution_with_runs_outside_its_constraints_without_them(
    tmp_path: Path,
) -> None:
    """As the public ALKS distributions need: the runs inside are the author's scenarios."""
    from vcosim.openscenario.survey import ACCEPTED, survey

    write_road(tmp_path, length=200.0)
    cut_in().write_xml(str(tmp_path / "cut_in.xosc"))
    constrained(tmp_path)
    distribution = variations(tmp_path)  # the ego at 20, 25 and 30 m/s: 12 runs
    dropped: list[str] = []
    _, runs = read_distribution(distribution, dropped=dropped)
    assert len(runs) == 8 and {run["EgoSpeed"] for run in runs} == {"20", "25"}
    assert len(dropped) == 1 and "(in runs '9, 10, 11, 12') is outside" in dropped[0]
    (found,) = [f for f in survey([tmp_path]).files if f.path == str(distribution)]
    assert found.outcome == ACCEPTED and found.problems == dropped
