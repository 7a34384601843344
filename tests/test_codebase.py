"""The architecture's import rules and the linter, run with the tests (the README's command)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

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
