"""Every malformed configuration file is refused: a ConfigError whose first problem names it.

Over 200 files across vehicle, world, sweep, contract, interface CSV and terrain (TOML and
pictures), from :mod:`fuzz.config_cases`, read in process by the loaders the commands use;
then one file of each kind through the command line (in process too): exit code 2, no
traceback.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fuzz.config_cases import LOADERS, Case, all_cases
from vcosim.app import app
from vcosim.errors import ConfigError

CASES = all_cases()


def first_problem(case: Case, folder: Path) -> str:
    """The first problem the loader lists (an assertion error if it accepts or crashes)."""
    path = case.write(folder)
    try:
        LOADERS[case.kind](path)
    except ConfigError as error:
        return error.problems[0]
    raise AssertionError(f"{case.kind} {case.name}: accepted")


def test_over_200_malformed_files_of_six_kinds(tmp_path: Path) -> None:
    assert len(CASES) >= 200
    assert set(Counter(c.kind for c in CASES)) == set(LOADERS)
    wrong = []
    for case in CASES:
        problem = first_problem(case, tmp_path)  # any other exception fails here
        if case.key.lower() not in problem.lower():
            wrong.append(f"{case.kind} {case.name}: {problem!r} does not name {case.key!r}")
    assert not wrong, "\n".join(wrong)


def pick(kind: str, name: str) -> Case:
    return next(c for c in CASES if c.kind == kind and c.name.startswith(name))


@pytest.mark.parametrize(
    ("case", "command"),
    [
        (pick("sweep", "deep-table"), ["sweep", "{}", "--check"]),
        (pick("sweep", "controller.speed"), ["sweep", "{}", "--check"]),
        (pick("contract", "huge"), ["connect", "{}"]),
        (pick("interface", "200kB-field"), ["sim", "--interface", "{}", "--duration", "0.01"]),
        (pick("interface", "not-utf8"), ["sim", "--interface", "{}", "--duration", "0.01"]),
        (pick("vehicle", "body.chassis_mass"), ["sim", "--vehicle", "{}", "--duration", "0.01"]),
        (pick("world", "vehicles.0.start.x"), ["sim", "--world", "{}", "--duration", "0.01"]),
        (pick("terrain", "13000x13000"), ["sim", "--terrain", "{}", "--duration", "0.01"]),
    ],
    ids=lambda v: v.name if isinstance(v, Case) else None,
)
def test_the_commands_end_2_naming_the_file_without_a_traceback(
    case: Case, command: list[str], tmp_path: Path
) -> None:
    path = case.write(tmp_path)
    result = CliRunner().invoke(app, [w.replace("{}", str(path)) for w in command])
    assert result.exit_code == 2, result.output
    assert (
        "Traceback" not in result.output
        and result.exception is None
        or isinstance(result.exception, SystemExit)
    )
    assert case.key.lower() in result.output.lower()


def test_bad_numbers_and_other_problems_of_every_section_are_listed_in_one_pass(
    tmp_path: Path,
) -> None:
    from vcosim.sweep.config.load import load_sweep
    from vcosim.world.spec import WorldFile

    sweep = tmp_path / "sweep.toml"
    sweep.write_text(
        '[scenario]\nname = "x"\nduration = 1e308\ninitial_speed = -3.0\n'
        '[vehicle]\nbase = "nightrider"\n[controller]\nname = "cruise"\nspeed = nan\n'
        "[sweep]\nbogus = 1\n"
    )
    with pytest.raises(ConfigError) as error:
        load_sweep(sweep)
    listed = "\n".join(error.value.problems)
    for key in ("scenario.duration", "controller.speed", "initial_speed", "bogus"):
        assert key in listed, listed
    world = tmp_path / "world.toml"
    world.write_text(
        '[[vehicles]]\nname = "a"\nstart = { x = 1e308, y = 0 }\ndriver = { kind = "nobody" }\n'
        '[[vehicles]]\nname = "b"\nstart = { x = 0, y = inf }\n'
    )
    with pytest.raises(ConfigError) as error:
        WorldFile.load(world)
    listed = "\n".join(error.value.problems)
    for key in ("vehicles.0.start.x", "vehicles.1.start.y", "kind"):
        assert key in listed, listed
