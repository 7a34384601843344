"""The coupled demo: the cruise controller and the simulator over UDP, in lock-step.

The simulator in this process, the ``cruise`` example controller in a ``ControllerBlock`` in
another (its own GIL), exchanging BeamNG's datagrams over UDP on loopback in lock-step, as
fast as the pair can, for 30 s of simulated time. The controller's target speed steps from 15
to 25 m/s at 15 s. The run folder gets BeamNG's three coupling debug CSVs, ``signals.csv``,
``demo.png`` (speed against target, pedals, rpm and gear, coupling timing) and
``summary.json``.
"""

from __future__ import annotations

import contextlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from vcosim.arrays import FloatArray
from vcosim.controllers.cruise import Cruise
from vcosim.interrupts import sigterm_as_interrupt
from vcosim.reports import Report
from vcosim.scenarios.build import build_simulation
from vcosim.scenarios.demo.ahead import AheadProcess, PlotJob
from vcosim.scenarios.harness import ControllerProcess
from vcosim.scenarios.manoeuvres import RECORD_EVERY, OnProgress, Progress
from vcosim.scenarios.metrics import CouplingTiming, column, percentile, rounded, settling_time
from vcosim.scenarios.spec import CouplingFaceSpec, PacingSpec, RunSpec
from vcosim.sim.face import COUPLING
from vcosim.sim.recorder import SignalRecorder
from vcosim.sim.simulation import RunReport, Simulation
from vcosim.tight.endpoint import CouplingReport
from vcosim.tight.views import Controls, SimulatorMessage

DURATION = 30.0  # simulated seconds of the coupled run
EXT_TIME = 0.005  # the controller's step (s): a message every 10 physics steps
SETTLE_BAND = 0.5  # m/s: settled once the speed stays this close to the target


@dataclass(frozen=True)
class SpeedProfile:
    """A stepped target speed: ``(from_time_s, speed_m_s)`` pairs in time order."""

    steps: tuple[tuple[float, float], ...] = ((0.0, 15.0), (15.0, 25.0))

    def __call__(self, t: float) -> float:
        """The target at time ``t`` (s)."""
        target = self.steps[0][1]
        for start, value in self.steps:
            if t >= start:
                target = value
        return target

    def at(self, t: FloatArray) -> FloatArray:
        """The target at each of the times ``t``."""
        starts = np.array([s for s, _ in self.steps])
        speeds = np.array([v for _, v in self.steps])
        return speeds[np.maximum(np.searchsorted(starts, t, side="right") - 1, 0)]


@dataclass
class ProfileCruise:
    """The ``cruise`` example with its target speed taken from a profile at ``msg.time``.

    ``msg.time`` is the controller's own clock (messages answered times its step), which in a
    lock-step run without timeouts is the simulated time of the message.
    """

    profile: SpeedProfile = field(default_factory=SpeedProfile)
    cruise: Cruise = field(default_factory=Cruise)

    def __call__(self, msg: SimulatorMessage) -> Controls:
        """Set the target for this moment, then one step of the PI controller."""
        self.cruise.speed = self.profile(msg.time)
        return self.cruise(msg)


@dataclass(frozen=True)
class TargetStep:
    """How the speed followed one step of the target profile."""

    from_s: float
    until_s: float
    target_m_s: float
    speed_at_until_m_s: float
    settling_time_s: float | None  # None: not settled by the next step (or the end)


@dataclass(frozen=True)
class Latency:
    """Wall time from a message's send to its reply being applied (ms)."""

    median: float | None
    p99: float | None
    max: float | None


@dataclass
class CoupledSummary(Report):
    """``summary.json`` of the coupled run."""

    vehicle: str
    controller: str
    pacing: str
    interrupted: bool
    simulated_time_s: float
    wall_time_s: float
    real_time_factor: float
    setup_time_s: float
    total_wall_time_s: float
    controller_step_s: float
    coupling: CouplingReport  # the coupling endpoint's report
    reply_latency_ms: Latency
    controller_report: dict[str, object] | None  # the controller block's; None: it sent none
    target_profile: list[TargetStep]
    final_speed_m_s: float
    final_target_m_s: float
    settle_band_m_s: float
    rows: int
    files: list[str]

    def save(self, folder: Path) -> None:
        """Write ``folder/summary.json``."""
        (folder / "summary.json").write_text(json.dumps(self.to_dict(), indent=2) + "\n")


def target_steps(rows: FloatArray, profile: SpeedProfile) -> list[TargetStep]:
    """Per step of the profile reached in the run: the speed at its end and its settling."""
    t, v = column(rows, "time"), column(rows, "groundspeed")
    ends = [*(start for start, _ in profile.steps[1:]), float(t[-1])]
    return [
        TargetStep(
            from_s=start,
            until_s=round(min(end, float(t[-1])), 3),
            target_m_s=target,
            speed_at_until_m_s=round(float(v[t <= end][-1]), 3),
            settling_time_s=rounded(
                settling_time(t[t <= end], v[t <= end], target, SETTLE_BAND, since=start), 2
            ),
        )
        for (start, target), end in zip(profile.steps, ends, strict=True)
        if start <= t[-1]
    ]


class CoupledDemo:
    """The cruise controller (another process) and the simulator over UDP, in lock-step."""

    title = "vcosim demo: coupled run"
    preparing = (
        "Starting the controller process, preparing the vehicle "
        "(compiles the physics on the first run)…"
    )

    def __init__(
        self,
        vehicle: str = "nightrider",
        *,
        duration: float = DURATION,
        profile: SpeedProfile | None = None,
        compile_ahead: bool = False,
    ) -> None:
        """A coupled demo of ``duration`` simulated seconds following ``profile``.

        ``compile_ahead``: the vehicle's kernels are not in numba's cache yet (the first run);
        another process compiles those its step calls and the coupling's meanwhile
        (``AheadProcess``).
        """
        self.vehicle = vehicle
        self.duration = duration
        self.profile = profile or SpeedProfile()
        self.controller = ControllerProcess(ProfileCruise(self.profile), EXT_TIME, duration)
        self.compile_ahead = compile_ahead
        self.ahead = AheadProcess(compile_kernels=compile_ahead)
        self.sim: Simulation | None = None
        self.spec = RunSpec()
        self.report: RunReport | None = None
        self.controller_report: dict[str, object] | None = None
        self.setup_time = self.total_wall_time = 0.0
        self._stack = contextlib.ExitStack()
        self._begin = 0.0
        self._port = 0
        self._folder = Path()
        self._recorder = SignalRecorder(RECORD_EVERY)
        self._start_time = 0.0

    def __enter__(self) -> CoupledDemo:
        self._begin = time.perf_counter()
        self._stack.enter_context(sigterm_as_interrupt())  # SIGTERM ends it like Ctrl-C
        self._stack.enter_context(self.ahead)
        self._stack.enter_context(self.controller)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def prepare(self) -> None:
        """Build the simulation (selector in D, still at time 0); wait for the controller."""
        self.spec = RunSpec(
            vehicle=self.vehicle, gearbox="manual", pacing=PacingSpec(mode="lockstep")
        )
        self.sim = build_simulation(self.spec)
        self.sim.vehicle.set_inputs(automatic=1, gear=1)
        self._port = self.controller.port()
        if self.compile_ahead:
            self.ahead.kernels_compiled()  # then the endpoint loads them from the cache
        self.setup_time = time.perf_counter() - self._begin

    def run(self, folder: Path, on_progress: OnProgress | None = None) -> None:
        """Couple and run for ``duration``, debug logs into ``folder``; stop the controller."""
        from vcosim.tight.endpoint import CouplingConfig, SimulatorEndpoint

        sim = self.sim
        if sim is None:
            raise RuntimeError("prepare() comes before run()")
        self._folder = folder
        config = CouplingConfig(
            listen_port=0, controller_port=self._port, ext_time=EXT_TIME, debug_log=folder
        )
        sim.attach("coupling", SimulatorEndpoint(config))
        coupled = [CouplingFaceSpec(**config.model_dump())]  # the run as it was made, kept
        self.spec.model_copy(update={"duration": self.duration, "faces": coupled}).save(
            folder / "spec.toml"
        )
        sim.attach("signals", self._recorder)
        start = self._start_time = sim.time
        label, shown = "cruise, lock-step", 0.0

        def show(sim_time: float) -> None:
            nonlocal shown
            now = time.perf_counter()
            if on_progress is not None and now - shown > 0.05:
                shown = now
                done = sim_time - start
                on_progress(Progress(label, done, self.duration, done / (now - sim.wall_start)))

        if on_progress is not None:
            on_progress(Progress(label, 0.0, self.duration, 0.0))
        report = self.report = sim.run(self.duration, on_progress=show)
        if on_progress is not None:
            on_progress(Progress(label, report.sim_time, self.duration, report.realtime_factor))
        if not report.interrupted:  # the block ends by itself after the last message
            self.controller.result()
        block = self.controller.stop()
        self.controller_report = None if block is None else block.to_dict()

    def write(self) -> CoupledSummary:
        """``signals.csv``, ``demo.png`` and ``summary.json`` into the run folder."""
        report, sim, folder = self.report, self.sim, self._folder
        if report is None or sim is None:
            raise RuntimeError("run() comes before write()")
        rows = self._recorder.rows
        timing = CouplingTiming.from_logs(folder, self._start_time, sim.dt)
        vehicle = sim.vehicle.params.name
        title = (
            f"vcosim demo: the cruise controller (its own process) and {vehicle} "
            f"over UDP in lock-step, {report.sim_time:.0f} s simulated at "
            f"{report.realtime_factor:.1f}x real time"
        )
        t, v = column(rows, "time"), column(rows, "groundspeed")
        plot = PlotJob(
            folder / "demo.png", rows, self.profile.at(t), timing, report.realtime_factor, title
        )
        self.ahead.draw(plot)  # in the other process, while this one writes the rest
        self._recorder.write_csv(folder / "signals.csv")
        latency_ms = timing.latency * 1e3
        endpoint_report = report.faces[COUPLING]
        if not isinstance(endpoint_report, CouplingReport):
            raise TypeError(f"the coupling reported a {type(endpoint_report).__name__}")
        latency = Latency(*(rounded(percentile(latency_ms, q), 4) for q in (50, 99, 100)))
        steps = target_steps(rows, self.profile)
        self.ahead.drawn(plot)
        self.total_wall_time = time.perf_counter() - self._begin
        summary = CoupledSummary(
            vehicle=vehicle,
            controller="cruise (PI on speed through throttle and brake), own process",
            pacing="lockstep",
            interrupted=report.interrupted,
            simulated_time_s=round(report.sim_time, 3),
            wall_time_s=round(report.wall_time, 3),
            real_time_factor=round(report.realtime_factor, 2),
            setup_time_s=round(self.setup_time, 3),
            total_wall_time_s=round(self.total_wall_time, 3),
            controller_step_s=EXT_TIME,
            coupling=endpoint_report,
            reply_latency_ms=latency,
            controller_report=self.controller_report,
            target_profile=steps,
            final_speed_m_s=round(float(v[-1]), 3),
            final_target_m_s=self.profile(float(t[-1])),
            settle_band_m_s=SETTLE_BAND,
            rows=int(rows.shape[0]),
            files=sorted({p.name for p in folder.iterdir()} | {"summary.json"}),
        )
        summary.save(folder)
        return summary
