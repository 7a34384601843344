"""Help that reads well: flags without a value type, paragraphs that wrap, a quiet closed pipe."""

from __future__ import annotations

import subprocess
import sys

import pytest
import typer
from typer.testing import CliRunner

from vcosim.app import app
from vcosim.app.cli import reflow


def command_paths() -> list[list[str]]:
    """Every command and group, as the words that reach it (the root is [])."""
    paths: list[list[str]] = []

    def walk(command: object, words: list[str]) -> None:
        paths.append(words)
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, [*words, name])

    walk(typer.main.get_command(app), [])
    return paths


@pytest.mark.parametrize("words", command_paths(), ids=lambda w: " ".join(w) or "vcosim")
def test_no_flag_shows_a_value_type(words: list[str]) -> None:
    result = CliRunner().invoke(app, [*words, "--help"])
    assert result.exit_code == 0, result.output
    assert "--help" in result.output and "<bool>" not in result.output


def test_a_flag_given_a_value_says_how_to_write_it() -> None:
    result = CliRunner().invoke(app, ["vehicle", "report", "--quick", "true"])
    assert result.exit_code == 2
    assert result.output.startswith(
        "error: --quick takes no value: write --quick to turn it on, leave it out to keep it off"
    )
    result = CliRunner().invoke(app, ["sim", "--engine", "false"])
    assert result.exit_code == 2
    assert result.output.startswith("error: --engine takes no value: write --engine or --no-engine")


def test_docstring_paragraphs_become_one_line_each_for_the_terminal_to_wrap() -> None:
    text = """First line.

    A paragraph broken
    at the source's width.

    - a list
    - stays as it is
    """
    assert reflow(text) == (
        "First line.\n\nA paragraph broken at the source's width.\n\n- a list\n- stays as it is"
    )
    # the docstring breaks "yaw-rate frequency / response" across two source lines, at 70
    # characters; a help 100 characters wide fills its lines instead
    result = CliRunner().invoke(app, ["vehicle", "report", "--help"], env={"COLUMNS": "100"})
    assert "yaw-rate frequency response, FMVSS 126" in result.output


@pytest.mark.parametrize("words", [[], ["sim"], ["fmu", "vehicle"]], ids=" ".join)
def test_help_into_a_pipe_its_reader_closed_ends_quietly(words: list[str]) -> None:
    # the reader is gone before vcosim starts writing, as `vcosim --help | head -1` gets it
    child = subprocess.Popen(
        [sys.executable, "-m", "vcosim", *words, "--help"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None and child.stderr is not None
    child.stdout.close()
    errors = child.stderr.read()
    assert child.wait(timeout=60) == 0
    assert errors == ""
