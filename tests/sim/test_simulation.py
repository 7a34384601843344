from __future__ import annotations

import pytest

from vcosim.sim.face import Face
from vcosim.sim.pacing import Pacer
from vcosim.sim.simulation import Simulation
from vcosim.vehicle import Vehicle


class Recorder(Face):
    """A face that records the hook calls it gets."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.closed = 0

    def start(self, sim):
        self.calls.append("start")

    def before_step(self, sim):
        self.calls.append(f"before {sim.vehicle.step_index}")

    def after_step(self, sim):
        self.calls.append(f"after {sim.vehicle.step_index}")

    def on_frame(self, sim):
        self.calls.append("frame")

    def report(self):
        return {"calls": len(self.calls)}

    def close(self):
        self.closed += 1


def test_hooks_run_around_every_step_and_every_frame():
    sim = Simulation(Vehicle(), Pacer("fast"))
    face = sim.attach("rec", Recorder())
    report = sim.run(0.05)  # 100 steps, frames of 1/60 s
    assert face.calls[:4] == ["start", "before 0", "after 1", "before 1"]
    assert face.calls.count("frame") == report.frames["frames"] == 3  # 33 + 33 + 34 steps
    assert sum(c.startswith("before") for c in face.calls) == 100
    assert report.steps == 100 and report.sim_time == pytest.approx(0.05)
    assert report.faces["rec"]["calls"] == len(face.calls)
    assert face.closed == 1


@pytest.mark.parametrize("dilation", [0.5, 2.0])
def test_realtime_pacing_with_time_dilation(dilation):
    sim = Simulation(Vehicle(), Pacer("realtime", time_dilation=dilation))
    report = sim.run(0.5)
    # never ahead of the dilated wall clock; behind it only as far as a busy machine holds it
    assert 0.5 * dilation <= report.realtime_factor <= 1.05 * dilation
    assert report.frames["frames"] == pytest.approx(0.5 / dilation * 60, abs=2)


def test_fast_pacing_runs_ahead_of_real_time():
    report = Simulation(Vehicle(), Pacer("fast")).run(2.0)
    assert report.realtime_factor > 1.0
    assert report.frames["late_frames"] == 0


def test_stop_from_a_hook_ends_the_run_after_the_frame():
    sim = Simulation(Vehicle(), Pacer("fast"))
    sim.attach(
        "stopper",
        type(
            "Stopper", (Face,), {"on_frame": lambda self, s: s.stop() if s.time > 0.1 else None}
        )(),
    )
    report = sim.run(None)
    assert 0.1 < report.sim_time < 0.2
    assert not report.interrupted


def test_keyboard_interrupt_closes_faces_and_reports():
    sim = Simulation(Vehicle(), Pacer("fast"))
    face = sim.attach("rec", Recorder())

    def interrupt(s):
        raise KeyboardInterrupt

    sim._frame.append(interrupt)
    report = sim.run(1.0)
    assert report.interrupted and face.closed == 1


class Quiet(Recorder):
    """A face with nothing to do between its sends, every third step (``quiet_steps``)."""

    def quiet_steps(self, sim):
        return 3 - sim.vehicle.step_index % 3


@pytest.mark.parametrize("other", [None, Recorder])
def test_quiet_steps_run_in_one_call_unless_another_face_needs_every_step(other):
    sim = Simulation(Vehicle(), Pacer("lockstep", frame_rate=200.0))  # frames of 10 steps
    face = sim.attach("quiet", Quiet())
    if other is not None:
        sim.attach("every", other())
    sim.run(0.01)  # 20 steps, 2 frames
    steps = [c for c in face.calls if c.startswith("before")]
    if other is None:  # hooks at 0, 3, 6, 9 (frame end), 10, 12, ...: frames still end on time
        assert steps == [f"before {k}" for k in (0, 3, 6, 9, 10, 12, 15, 18)]
        assert face.calls.count("frame") == 2
    else:
        assert len(steps) == 20
    alone = Vehicle()
    alone.run(20)
    assert (sim.vehicle.state == alone.state).all()  # the same steps, however grouped
