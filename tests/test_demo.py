"""`vcosim demo`: the coupled run once through the CLI, then checks of its run folder.

Also one run of `vcosim demo --manoeuvre`, the signal recorder, and the matching of replies to
messages the timing plot relies on.
"""

from __future__ import annotations

import csv
import json
import resource
import time
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from vcosim.app import app
from vcosim.app.demo import ProgressBar
from vcosim.scenarios.demo import MANOEUVRE
from vcosim.sim.pacing import Pacer
from vcosim.sim.recorder import SignalRecorder, csv_header
from vcosim.sim.simulation import Simulation
from vcosim.vehicle import SIGNAL_NAMES, Vehicle

KMH = 1 / 3.6
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
DEBUG_LOGS = {  # file: (columns, at least this many rows)
    "simulinkSendLog.csv": (1 + 111, 5000),
    "simulinkReceiveLog.csv": (1 + 64, 5000),
    "simulinkPhysicsStepsLog.csv": (1, 50000),
}


def cpu_seconds() -> float:
    """CPU time of this process and its ended children: what a run costs, whatever the load."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def invoke_demo(out: Path, *args: str) -> tuple[object, Path, float]:
    """The demo's result, its run folder, and the CPU seconds it took."""
    begin = cpu_seconds()
    result = CliRunner().invoke(app, ["demo", "--out", str(out), *args])
    cpu = cpu_seconds() - begin
    folders = [p for p in out.iterdir() if p.is_dir()]
    return result, (folders[0] if len(folders) == 1 else out), cpu


def load_signals(folder: Path) -> dict[str, np.ndarray]:
    data = np.loadtxt(folder / "signals.csv", delimiter=",", skiprows=1)
    return {name: data[:, i] for i, name in enumerate(csv_header())}


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[object, Path, float]:
    return invoke_demo(tmp_path_factory.mktemp("demo"))


@pytest.fixture(scope="module")
def folder(demo_run: tuple[object, Path, float]) -> Path:
    result, path, _ = demo_run
    assert result.exit_code == 0, result.output
    return path


@pytest.fixture(scope="module")
def signals(folder: Path) -> dict[str, np.ndarray]:
    return load_signals(folder)


@pytest.fixture(scope="module")
def summary(folder: Path) -> dict:
    return json.loads((folder / "summary.json").read_text())


# -- the coupled run ----------------------------------------------------------------------------
def test_cli_exits_cleanly_and_names_the_run_folder(demo_run):
    result, path, _ = demo_run
    assert result.exit_code == 0, result.output
    assert path.name[:8].isdigit() and path.name[8] == "-"  # out/<YYYYmmdd-HHMMSS>
    assert path.name in result.output
    assert "messages sent / applied" in result.output


def test_costs_well_under_a_minute_of_cpu(demo_run):
    # The bound for the whole command ("well within a minute"), judged on CPU time so
    # a busy machine cannot fail it; the wall time lives in the demo's own summary.
    assert demo_run[2] < 60.0


def test_run_folder_holds_logs_signals_plot_and_summary(folder, summary):
    names = {*DEBUG_LOGS, "vcosimCouplingEvents.csv", "signals.csv", "demo.png", "summary.json"}
    names.add("spec.toml")  # the run's RunSpec (its controller ran apart)
    assert {p.name for p in folder.iterdir()} == names
    assert set(summary["files"]) == names


@pytest.mark.parametrize("name", DEBUG_LOGS)
def test_debug_logs_parse_with_beamngs_columns(folder, name):
    columns, min_rows = DEBUG_LOGS[name]
    with (folder / name).open() as f:
        assert len(f.readline().split(",")) == columns  # the header line
    rows = np.loadtxt(folder / name, delimiter=",", skiprows=1, ndmin=2)
    assert rows.shape[1] == columns
    assert rows.shape[0] >= min_rows
    assert np.all(np.diff(rows[:, 0]) >= 0)  # wall-clock times, in order


def test_every_message_was_answered_in_order(folder):
    sent = np.loadtxt(folder / "simulinkSendLog.csv", delimiter=",", skiprows=1, usecols=1)
    applied = np.loadtxt(folder / "simulinkReceiveLog.csv", delimiter=",", skiprows=1, usecols=1)
    assert np.array_equal(sent, np.arange(sent.size))  # no reset: ids 0, 1, 2, ...
    assert np.array_equal(applied, sent[1 : applied.size + 1])  # id 0 is never applied
    assert applied.size >= sent.size - 2  # and the last reply may land after the end


def test_no_timeouts_and_nothing_dropped(summary):
    coupling = summary["coupling"]
    assert coupling["timeouts"] == 0
    assert coupling["sent"] == 6000  # 30 s at one message per 5 ms
    assert coupling["stale"] == coupling["malformed"] == coupling["rejected_peers"] == 0
    assert summary["controller_report"]["answered"] == coupling["sent"]
    assert summary["controller_report"]["resets"] == 0
    assert summary["interrupted"] is False


def test_signals_csv_has_every_signal_every_10_ms(folder, signals):
    with (folder / "signals.csv").open(newline="") as f:
        header = next(csv.reader(f))
    assert header == csv_header()
    assert sorted(header) == sorted(SIGNAL_NAMES)
    assert signals["time"].size > 2000
    assert np.allclose(np.diff(signals["time"]), 0.01)
    assert signals["time"][-1] == pytest.approx(30.0)


def test_speed_follows_the_target_profile(signals, summary):
    t, v = signals["time"], signals["groundspeed"]
    before_step = (t > 12.0) & (t <= 15.0)
    assert np.all(np.abs(v[before_step] - 15.0) < 0.5)
    assert abs(v[-1] - 25.0) < 0.5
    assert summary["final_target_m_s"] == 25.0
    assert summary["final_speed_m_s"] == pytest.approx(v[-1], abs=1e-3)
    assert all(step["settling_time_s"] is not None for step in summary["target_profile"])


def test_summary_reports_times(summary):
    assert summary["simulated_time_s"] == pytest.approx(30.0)
    assert summary["real_time_factor"] > 0.0  # how fast a lock-step run goes is the machine's
    assert summary["total_wall_time_s"] >= summary["wall_time_s"] > 0
    assert summary["reply_latency_ms"]["median"] > 0


def test_plot_is_a_real_png(folder):
    data = (folder / "demo.png").read_bytes()
    assert data[:8] == PNG_MAGIC
    assert len(data) > 10_000


# -- the scripted manoeuvre ---------------------------------------------------------------------
def test_manoeuvre_drives_accelerates_turns_and_stops(tmp_path):
    result, folder, _ = invoke_demo(tmp_path, "--manoeuvre")
    assert result.exit_code == 0, result.output
    assert folder.name in result.output
    assert {p.name for p in folder.iterdir()} == {"signals.csv", "demo.png", "summary.json"}
    assert (folder / "demo.png").read_bytes()[:8] == PNG_MAGIC
    s = load_signals(folder)
    assert np.allclose(np.diff(s["time"]), 0.01)
    assert s["groundspeed"].max() > 100 * KMH
    assert s["groundspeed"][-1] < 0.1
    assert s["engine_running"].max() == 1.0 and s["engine_running"][-1] == 0.0
    assert 1.2 < s["yaw"][-1] < 1.9 and s["posY"][-1] > 50.0  # turned left by about 90°
    summary = json.loads((folder / "summary.json").read_text())
    assert [p["name"] for p in summary["phases"]] == [p.name for p in MANOEUVRE]
    assert summary["phases_cut_short"] == []


# -- Ctrl-C ------------------------------------------------------------------------------------
def interrupt_at(monkeypatch: pytest.MonkeyPatch, seconds: float) -> None:
    """One Ctrl-C once the progress bar shows ``seconds`` simulated (where a user presses it)."""
    shown, pressed = ProgressBar.__call__, []

    def show_then_interrupt(bar: ProgressBar, progress) -> None:
        shown(bar, progress)
        if progress.done >= seconds and not pressed:
            pressed.append(progress.done)
            raise KeyboardInterrupt

    monkeypatch.setattr(ProgressBar, "__call__", show_then_interrupt)


def test_ctrl_c_in_the_coupled_run_says_what_it_kept(tmp_path, monkeypatch):
    interrupt_at(monkeypatch, 1.0)
    result, folder, _ = invoke_demo(tmp_path)
    assert result.exit_code == 130, result.output
    assert "nothing was recorded" not in result.output
    (said,) = [line for line in result.output.splitlines() if line.startswith("interrupted")]
    kept = {p.name for p in folder.iterdir()}
    assert {"signals.csv", "demo.png", "summary.json", *DEBUG_LOGS} <= kept
    assert said.startswith("interrupted after ") and " of 30 s simulated: kept in " in said
    assert said.endswith(f"{folder}: {', '.join(sorted(kept))}")
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["interrupted"] is True and 1.0 <= summary["simulated_time_s"] < 30.0


def test_ctrl_c_before_anything_is_written_leaves_no_empty_folder(tmp_path, monkeypatch):
    interrupt_at(monkeypatch, 1.0)
    result, _, _ = invoke_demo(tmp_path, "--manoeuvre")
    assert result.exit_code == 130, result.output
    assert result.output.rstrip().endswith("interrupted: nothing was recorded")
    assert list(tmp_path.iterdir()) == []


# -- building blocks ----------------------------------------------------------------------------
def test_signal_recorder_samples_every_n_steps_and_grows():
    sim = Simulation(Vehicle(), Pacer("fast"))
    recorder = sim.attach("signals", SignalRecorder(every=1))
    sim.run(2.5)  # 5000 steps: more than one preallocated block
    t = recorder.column("time")
    assert recorder.rows.shape == (5001, len(SIGNAL_NAMES))
    assert t[0] == 0.0 and t[-1] == pytest.approx(2.5)
    assert np.allclose(np.diff(t), sim.dt)
