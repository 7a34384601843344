"""The architecture's import rules, the linters, a pinned mypy and the 400-line rule, as tests."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).parents[1]


def test_import_rules_hold():
    """pyproject.toml's import-linter contracts: app on top, sim and vehicle face-free, faces
    independent of each other."""
    linter = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    if linter is None:
        pytest.fail("lint-imports not installed: pip install -e '.[test]'")
    result = subprocess.run(
        [linter, "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "0 broken" in result.stdout


@pytest.mark.parametrize("command", [("check",), ("format", "--check")])
def test_ruff_finds_nothing(command: tuple[str, ...]):
    result = subprocess.run(
        [sys.executable, "-m", "ruff", *command, "src", "tests"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-3000:]


def test_types_check():
    """mypy over src/vcosim, configured in pyproject.toml (with pydantic's plugin)."""
    result = subprocess.run(
        [sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stdout[-3000:]


LONG = 400
"""A module longer than this says why in the first lines of its docstring (the house rule)."""
REASON = re.compile(
    r"^\(([^:\n]*\b(?:past|over) 400 lines\b[^:\n]*):\s+(.{40,}?)\)\s*$", re.I | re.S | re.M
)
"""``(Past 400 lines: the reason)``, or ``(One module on purpose, past 400 lines: ...)``: a
paragraph in parentheses that names the limit, then after a colon a reason of 40 characters
or more, up to the parenthesis that closes a line."""
REASON_WITHIN = 20
"""Lines from the top of the file in which the reason's parenthesis must open."""


def long_modules() -> list[Path]:
    """The package's modules over ``LONG`` lines."""
    return sorted(
        path
        for path in (ROOT / "src" / "vcosim").rglob("*.py")
        if len(path.read_text(encoding="utf-8").splitlines()) > LONG
    )


def reason_problem(source: str) -> str | None:
    """Why a long module's source breaks the rule (None: it states its reason up top)."""
    docstring = ast.get_docstring(ast.parse(source), clean=False)
    if docstring is None:
        return "no module docstring"
    found = REASON.search(docstring)
    if found is None:
        return "no '(Past 400 lines: why)' in its docstring"
    line = source[: source.index(found.group(0))].count("\n") + 1
    if line > REASON_WITHIN:
        return f"its reason opens on line {line}, past line {REASON_WITHIN}"
    return None


def test_the_reason_rule_reads_a_reason_and_refuses_its_absence():
    said = '"""Thing.\n\n(Past 400 lines on purpose: one table of modules (ids) under one lock.)"""'
    assert reason_problem(said) is None
    assert reason_problem('"""Thing.\n\n(One module, past 400 lines: ' + "x" * 40 + ')"""') is None
    assert reason_problem('"""Thing, a long one."""\n') == (
        "no '(Past 400 lines: why)' in its docstring"
    )
    assert reason_problem('"""Thing.\n\n(Past 400 lines.)"""') is not None  # no reason given
    assert reason_problem('"""Thing.\n\n(Past 400 lines: short.)"""') is not None
    late = '"""Thing.\n' + "\n" * 25 + "(Past 400 lines: " + "y" * 40 + ')"""'
    assert reason_problem(late) == "its reason opens on line 27, past line 20"
    assert reason_problem("x = 1\n") == "no module docstring"


def test_a_module_over_400_lines_states_its_reason_in_its_first_lines():
    problems = [
        f"{path.relative_to(ROOT)} ({len(path.read_text().splitlines())} lines): {problem}"
        for path in long_modules()
        if (problem := reason_problem(path.read_text(encoding="utf-8"))) is not None
    ]
    assert not problems, "\n".join(problems)


def test_mypy_is_the_pinned_version():
    """The test extra pins mypy exactly: a newer one's new errors come with a change, not a day."""
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pins = [p for p in extra["optional-dependencies"]["test"] if p.startswith("mypy")]
    assert len(pins) == 1 and "==" in pins[0], f"mypy is not pinned exactly: {pins}"
    assert version("mypy") == pins[0].partition("==")[2]
