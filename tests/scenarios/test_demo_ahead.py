"""The demo's second process: kernels compiled ahead, the plot drawn there (or here)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from vcosim.scenarios.demo.ahead import AheadProcess, PlotJob
from vcosim.scenarios.metrics import CouplingTiming
from vcosim.vehicle import SIGNAL_NAMES

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def plot_job(path: Path) -> PlotJob:
    rows = np.zeros((200, len(SIGNAL_NAMES)))
    rows[:, SIGNAL_NAMES.index("time")] = np.arange(200) * 0.01
    rows[:, SIGNAL_NAMES.index("groundspeed")] = np.linspace(0.0, 15.0, 200)
    timing = CouplingTiming(message_time=np.arange(10) * 0.005, latency=np.full(10, 2e-5))
    return PlotJob(path, rows, np.full(200, 15.0), timing, 4.5, "a test of the demo's plot")


def test_the_plot_is_drawn_in_the_other_process(tmp_path: Path):
    job = plot_job(tmp_path / "demo.png")
    with AheadProcess(compile_kernels=False) as ahead:
        assert ahead.kernels_compiled()  # (nothing to compile: ready at once)
        ahead.draw(job)
        ahead.drawn(job)
        assert ahead.result() == job.path  # it said it drew it
    assert job.path.read_bytes().startswith(PNG_MAGIC)


def test_with_the_other_process_gone_the_plot_is_drawn_here(tmp_path: Path):
    job = plot_job(tmp_path / "demo.png")
    ahead = AheadProcess(compile_kernels=False)
    with ahead:
        pass  # started and stopped before the run's rows came
    ahead.draw(job)
    ahead.drawn(job)
    assert job.path.read_bytes().startswith(PNG_MAGIC)
    assert ahead.result(0.0) is None


def test_it_says_ready_once_the_kernels_are_compiled():
    # (whether the simulator then finds them in the cache: tests/vehicle/test_ahead.py)
    with AheadProcess(compile_kernels=True) as ahead:
        assert ahead.kernels_compiled(timeout=600.0)
        assert ahead.error is None


def test_a_plot_that_fails_there_fails_here_once_without_a_traceback_there(tmp_path, capfd):
    job = plot_job(tmp_path / "no such folder" / "demo.png")
    with AheadProcess(compile_kernels=False) as ahead:
        ahead.draw(job)
        with pytest.raises(FileNotFoundError):
            ahead.drawn(job)  # drawn again here, where the command reports it
    assert "Traceback" not in capfd.readouterr().err
