"""Real time you can trust (issue 25 item 5): deadline policies, lateness figures, priority.

The policies are tested on a clock of the test's own (a frame is late because the clock
says so), never on the machine's timing.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from helpers.forks import vcosim_command
from vcosim.sim import pacing
from vcosim.sim.face import Face
from vcosim.sim.pacing import Pacer
from vcosim.sim.realtime import enter_realtime
from vcosim.sim.simulation import Simulation
from vcosim.vehicle import Vehicle

FRAME = 1.0 / 60.0
STEPS = round(FRAME / 0.0005)  # physics steps of an on-time frame (33, 34 alternating)


class Clock:
    """``time`` for the pacer: sleeping advances it, and so does each reading, by 1 µs."""

    def __init__(self) -> None:
        self.now = 100.0

    def perf_counter(self) -> float:
        self.now += 1e-6
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


class SlowFrame(Face):
    """A face whose third frame takes ``late`` seconds longer than a frame is long."""

    def __init__(self, clock: Clock, late: float) -> None:
        self.clock, self.late, self.frame = clock, late, 0
        self.steps: list[int] = []
        self._index = 0

    def on_frame(self, sim: Simulation) -> None:
        self.frame += 1
        self.steps.append(sim.vehicle.step_index - self._index)
        self._index = sim.vehicle.step_index
        self.clock.now += 0.001 if self.frame != 3 else FRAME + self.late


def run(policy: str, monkeypatch: pytest.MonkeyPatch, late: float = 0.030) -> tuple:
    clock = Clock()
    monkeypatch.setattr(pacing, "time", clock)
    sim = Simulation(Vehicle(), Pacer("realtime", on_late=policy))
    face = sim.attach("slow", SlowFrame(clock, late))
    report = sim.run(0.2)
    return report, face.steps


def test_slow_catches_up_after_a_late_frame(monkeypatch: pytest.MonkeyPatch) -> None:
    report, _ = run("slow", monkeypatch)
    # the frame after the late one starts at once, to catch up, and ends late too
    assert report.frames["late_frames"] == 2 and report.frames["skipped_frames"] == 0
    assert report.frames["frame_lateness_max_ms"] == pytest.approx(30.0, abs=0.1)
    assert report.frames["frame_lateness_p50_ms"] < 0.1


def test_skip_drops_the_overrun_frames(monkeypatch: pytest.MonkeyPatch) -> None:
    report, steps = run("skip", monkeypatch)
    assert report.frames["late_frames"] == 1  # the next frame has a whole frame's time
    assert report.frames["skipped_frames"] == 2  # 30 ms late: two 16.7 ms slots overrun
    assert max(steps) <= STEPS + 1  # a frame's steps, never more
    assert report.sim_time == pytest.approx(0.2)  # the run still simulates all it was asked


def test_stop_ends_the_run_at_the_first_late_frame(monkeypatch: pytest.MonkeyPatch) -> None:
    report, steps = run("stop", monkeypatch)
    assert report.frames["stopped_late"] is True
    assert len(steps) == 3 and report.frames["frames"] == 3
    assert report.sim_time < 0.1


def test_percentiles_of_many_frames_stay_exactish(monkeypatch: pytest.MonkeyPatch) -> None:
    stats = pacing.FrameStats()
    for i in range(1000):
        stats.lateness.add(i * 1e-6)
    summary = stats.summary()
    assert summary["frame_lateness_p50_ms"] == pytest.approx(0.4995)
    assert summary["frame_lateness_p999_ms"] == pytest.approx(0.998001)
    assert summary["frame_lateness_max_ms"] == pytest.approx(0.999)


def test_an_impossible_cpu_is_a_note_not_a_failure() -> None:
    report = enter_realtime(False, 1 << 20)
    assert report.cpu is None and report.scheduler == "normal"
    assert len(report.notes) == 1 and "cannot pin to CPU 1048576" in report.notes[0]


def test_sim_with_realtime_priority_reports_what_it_got(tmp_path: Path) -> None:
    """Granted or refused, the run goes on: the JSON says which, the notes why."""
    out = tmp_path / "run.json"
    result = subprocess.run(
        [*vcosim_command(), "sim", "--no-coupling", "--duration", "0.1"]
        + ["--realtime-priority", "--cpu", "0", "--on-late", "skip", "--json-out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    run = json.loads(out.read_text())
    realtime = run["realtime"]
    assert realtime["scheduler"] == "SCHED_FIFO 50" or "SCHED_FIFO not granted" in result.stderr
    assert realtime["memory_locked"] or "mlockall refused" in result.stderr
    assert realtime["cpu"] == 0 or "cannot pin to CPU 0" in result.stderr
    for name in ("p50", "p99", "p999", "max"):
        assert run[f"frame_lateness_{name}_ms"] >= 0.0
    assert run["skipped_frames"] >= 0 and run["frames"] >= 6
