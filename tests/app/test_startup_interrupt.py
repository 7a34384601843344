"""Ctrl-C or SIGTERM while a command is still starting: one line says nothing was recorded."""

from __future__ import annotations

import subprocess
import sys

import pytest
from typer.testing import CliRunner

import vcosim.scenarios.build
from vcosim.app import app


def test_an_interrupt_while_the_simulator_builds_is_said_and_exits_130(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def interrupted(*_: object, **__: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(vcosim.scenarios.build, "build_simulation", interrupted)
    result = CliRunner().invoke(app, ["sim", "--no-coupling", "--duration", "1"])
    assert result.exit_code == 130
    assert "interrupted while starting: nothing was recorded" in result.output


def test_an_interrupt_while_importing_is_said_and_exits_130() -> None:
    # The entry point routes SIGTERM to an interrupt before importing the commands; a
    # KeyboardInterrupt raised by that import stands for a SIGTERM arriving then.
    code = (
        "import sys, builtins\n"
        "real = builtins.__import__\n"
        "def slow(name, *a, **k):\n"
        "    if name == 'vcosim.app.cli': raise KeyboardInterrupt\n"
        "    return real(name, *a, **k)\n"
        "builtins.__import__ = slow\n"
        "sys.argv = ['vcosim', 'sim']\n"
        "from vcosim.app import main\n"
        "main()\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 130
    assert result.stderr.strip() == "interrupted while starting: nothing was recorded"


@pytest.mark.parametrize("signum", ["SIGTERM", "SIGINT"])
def test_a_signal_before_the_run_ends_the_program_at_once_even_inside_an_eval(signum: str) -> None:
    # Typer evaluates annotations with eval(); a KeyboardInterrupt through one made CPython
    # 3.11 die by SIGINT (a traceback, exit -2) whatever the program did after.
    code = (
        "import os, signal\n"
        "from vcosim.interrupts import install_sigterm_as_interrupt\n"
        "install_sigterm_as_interrupt()\n"
        "print('started', flush=True)\n"
        f"eval('os.kill(os.getpid(), signal.{signum}) or [0 for _ in range(10**7)]')\n"
        "print('still running')\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert (result.returncode, result.stdout) == (130, "started\n")
    assert result.stderr.strip() == "interrupted while starting: nothing was recorded"
