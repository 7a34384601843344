"""The first run after an install says it compiles, and a pipe never falls silent for long."""

from __future__ import annotations

import io
import time
from pathlib import Path

import pytest
from rich.console import Console

from vcosim.app.console import COMPILE_NOTE, Heartbeat, announce_compiling
from vcosim.app.demo import ProgressBar
from vcosim.scenarios.manoeuvres import Progress


def piped() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, force_terminal=False, width=200), out


def test_an_empty_cache_is_announced_and_a_full_one_is_not(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    console, out = piped()
    assert announce_compiling(console)
    assert out.getvalue().startswith(COMPILE_NOTE)
    assert f"numba caches them in {tmp_path})" in out.getvalue()  # the cache in use
    (tmp_path / "vcosim" / "vehicle").mkdir(parents=True)
    (tmp_path / "vcosim" / "vehicle" / "model.physics_step-40.py312.nbi").write_bytes(b"")
    console, out = piped()
    assert not announce_compiling(console)
    assert out.getvalue() == ""


def test_a_heartbeat_on_a_pipe_says_what_goes_on_then_that_it_still_does():
    console, out = piped()
    with Heartbeat(console, "compiling…", period=0.01):
        deadline = time.monotonic() + 60
        while out.getvalue().count("still at it") < 2 and time.monotonic() < deadline:
            time.sleep(0.01)  # (polling for the lines the thread prints)
    lines = out.getvalue().splitlines()
    assert lines[0] == "compiling…"
    assert len(lines) >= 3 and all("still at it" in line for line in lines[1:])


@pytest.mark.parametrize("total", [30.0])
def test_the_demos_progress_on_a_pipe_is_lines_the_last_one_at_the_end(total: float):
    console, out = piped()
    with ProgressBar(console) as bar:
        for done in (0.0, 0.1, 0.2, total):
            bar(Progress("cruise, lock-step", done, total, 0.0 if done == 0 else 5.0))
    lines = out.getvalue().splitlines()
    assert lines[0] == "cruise, lock-step:   0.0 / 30.0 s simulated, 0.0x real time"
    assert lines[-1] == "cruise, lock-step:  30.0 / 30.0 s simulated, 5.0x real time"


def test_the_demos_progress_on_a_pipe_goes_on_while_no_report_comes(monkeypatch):
    monkeypatch.setattr("vcosim.app.demo.HEARTBEAT", 0.01)
    console, out = piped()
    with ProgressBar(console) as bar:
        bar(Progress("cruise, lock-step", 1.5, 30.0, 2.0))  # then the run waits, reporting nothing
        deadline = time.monotonic() + 60
        while out.getvalue().count("\n") < 3 and time.monotonic() < deadline:
            time.sleep(0.01)  # (polling for the lines the thread prints)
    lines = out.getvalue().splitlines()
    assert len(lines) >= 3 and set(lines) == {
        "cruise, lock-step:   1.5 / 30.0 s simulated, 2.0x real time"
    }
