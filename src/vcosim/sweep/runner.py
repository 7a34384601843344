"""One run of a sweep: a pure function of (scenario, parameters) -> metrics (+ signals).

The vehicle is coupled to its controller in this process (``vcosim.tight.inprocess``) with the
tight coupling's scheduling, stepped without a wall clock, so a run is deterministic: the same
scenario and parameters give the same metrics bit for bit, on any worker (friction noise is
seeded by ``vehicle.tyres.noise_seed``). Only the columns a run's ``RunMetrics.wall_clock``
names measure the wall clock. Definitions of every metric: ``docs/sweeps.md``.
"""

from __future__ import annotations

import contextlib
import math
import traceback
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from vcosim.reports import Report
from vcosim.scenarios.build import StartError, build_simulation, endpoints
from vcosim.scenarios.metrics import step_response
from vcosim.scenarios.spec import PacingSpec, RunSpec, StartSpec
from vcosim.sim.face import COUPLING
from vcosim.sim.pacing import PacingMode
from vcosim.sim.simulation import RunReport, Simulation
from vcosim.stats import Samples
from vcosim.sweep.config import RunConfig, Scalar, Scenario, resolve
from vcosim.sweep.faces import (
    ManoeuvrePlayer,
    MeasuredDelayLink,
    Recorder,
    SignalSpec,
    UdpController,
    busy,
)
from vcosim.sweep.metrics import (
    MEASURED_COMPUTE_COLUMNS,
    TIMING_COLUMNS,
    RunMetrics,
    min_realtime_factor,
    with_tracking,
)
from vcosim.sweep.world import WorldProbe
from vcosim.tight.controller import Responder
from vcosim.tight.endpoint import CouplingReport, SimulatorEndpoint
from vcosim.tight.inprocess import InProcessLink, couple_in_process
from vcosim.vehicle import layout as L
from vcosim.world.bank_h import fill_range_slots

__all__ = [
    "RunError",
    "RunResult",
    "SignalSpec",
    "execute",
    "run_scenario",
    "run_spec",
    "safe_run",
]

RunError = StartError  # a run that cannot start as its scenario says (kept for importers)


@dataclass
class RunResult(Report):
    """The outcome of one run: its metrics, or the error that ended it."""

    index: int
    params: dict[str, Scalar]
    status: str = "ok"  # "ok" or "failed"
    metrics: RunMetrics = field(default_factory=RunMetrics)
    error: str = ""
    traceback: str = ""
    signals: dict[str, np.ndarray] | None = None

    @property
    def failed(self) -> bool:
        """True when the run raised."""
        return self.status != "ok"

    def to_dict(self) -> dict[str, Any]:
        """Index, status, parameters, error and every metric column, JSON-friendly."""
        return {
            "run": self.index,
            "status": self.status,
            "params": dict(self.params),
            "error": self.error,
            "metrics": self.metrics.to_dict(),
        }


def run_spec(cfg: RunConfig) -> RunSpec:
    """The ``RunSpec`` of one run: the vehicle, start and pacing ``vcosim sim`` would build.

    The controller, the manoeuvre and the recorder are the sweep's own faces (``execute``).
    """
    sc, cp = cfg.scenario.scenario, cfg.scenario.coupling
    pacing = PacingSpec(mode=PacingMode.lockstep if cp.timing == "lockstep" else PacingMode.fast)
    if cfg.world is not None:  # the world's vehicles as its file says; the controller: its ego
        faces = [] if cfg.storyboard is None else [cfg.storyboard]  # an OpenSCENARIO world's
        return RunSpec(world=cfg.world, pacing=pacing, duration=sc.duration, faces=faces)
    return RunSpec(
        vehicle=cfg.vehicle,
        terrain=cfg.scenario.terrain,
        start=StartSpec(speed=sc.initial_speed, how=sc.start),
        gearbox=sc.gearbox,
        engine=True,
        pacing=pacing,
        duration=sc.duration,
    )


def _couple(cfg: RunConfig, sim: Simulation) -> tuple[Samples | list[float], UdpController | None]:
    """Attach the controller as ``[coupling]`` says: its measured times, and a UDP block."""
    run, cp = cfg.scenario, cfg.scenario.coupling
    if cfg.factory is None:
        return [], None
    step_fn = cfg.factory(**run.controller.params)
    if cp.busy_time > 0:
        step_fn = busy(step_fn, cp.busy_time)
    if cp.transport == "udp":
        udp = UdpController(sim, step_fn, cp)
        return udp.compute, udp
    config = cp.endpoint_config()
    if cp.compute_time == "measured" and cp.timing == "realtime":
        step = config.schedule(sim.dt).controller_step(sim.dt)
        responder = Responder(step_fn, step, cp.memory)
        link = MeasuredDelayLink(responder, lambda: sim.vehicle.step_index, sim.dt, cp.ping_time)
        sim.attach("coupling", SimulatorEndpoint(config, link=link))
        return responder.compute, None
    delay = cp.simulated_compute_time + cp.ping_time
    endpoint = couple_in_process(sim, step_fn, config, memory=cp.memory, compute_time=delay)
    assert isinstance(endpoint.link, InProcessLink)  # couple_in_process gives it one
    return endpoint.link.responder.compute, None


def run_scenario(
    scenario: Scenario, params: Mapping[str, Scalar], signals: SignalSpec | None = None
) -> tuple[RunMetrics, dict[str, np.ndarray] | None]:
    """Run ``scenario`` with ``params`` applied: the metrics, and the signals if asked for."""
    return execute(resolve(scenario, params), signals)


def execute(
    cfg: RunConfig, signals: SignalSpec | None = None
) -> tuple[RunMetrics, dict[str, np.ndarray] | None]:
    """Run a resolved configuration."""
    sc = cfg.scenario.scenario
    sim = build_simulation(run_spec(cfg))
    probe = None if sim.world is None else sim.attach("world", WorldProbe(sim.world))
    compute, udp = _couple(cfg, sim)
    endpoint = endpoints(sim).get(None)
    if probe is not None and endpoint is not None:
        endpoint.fill_custom = fill_range_slots  # the ego's range sensor in bank H
    metric_index = None
    if cfg.metric_signal is not None:
        metric_index = L.SIGNAL_INDEX[
            "yaw" if cfg.metric_signal == "yaw_deg" else cfg.metric_signal
        ]
    recorder = Recorder(round(sc.duration / sim.dt), metric_index, signals)
    if sc.manoeuvre:
        events = [(e.time, e.inputs) for e in sc.manoeuvre]
        sim.attach("manoeuvre", ManoeuvrePlayer(events, sim.dt))
    sim.attach("record", recorder)
    try:
        report = sim.run(sc.duration)
    finally:
        if udp is not None:
            udp.close()
    if report.interrupted:
        raise KeyboardInterrupt
    kept = recorder.signals(sim.dt) if signals is not None else None
    metrics = _metrics(cfg, sim.dt, report, recorder, compute)
    return (metrics if probe is None else probe.metrics(metrics, report)), kept


def _metrics(
    cfg: RunConfig, dt: float, report: RunReport, recorder: Recorder, compute: Samples | list[float]
) -> RunMetrics:
    cp = cfg.scenario.coupling
    measured = np.asarray(compute, dtype=float)
    p99 = float(np.percentile(measured, 99)) if measured.size else math.nan
    measuring = cp.compute_time is None or cp.compute_time == "measured"
    m = RunMetrics(
        max_lateral_acceleration=float(np.nanmax(np.abs(recorder.acc_y))),  # a run may end early
        wall_time=report.wall_time,
        sim_speed=report.realtime_factor,
        wall_clock=TIMING_COLUMNS + (MEASURED_COMPUTE_COLUMNS if measuring else ()),
    )
    if cfg.metric_signal is not None:
        t = np.arange(recorder.steps + 1, dtype=np.float64) * dt
        y = recorder.metric
        if cfg.metric_signal == "yaw_deg":
            y = np.degrees(np.unwrap(y))
        if cfg.target is not None:
            band = cfg.scenario.metrics
            m = with_tracking(
                m,
                step_response(
                    t,
                    y,
                    cfg.target,
                    band=band.band,
                    band_min=band.band_min,
                    steady_window=band.steady_window,
                ),
            )
        else:
            m.final_value = float(y[-1])
    coupling = report.faces.get(COUPLING)
    if isinstance(coupling, CouplingReport):
        schedule = cp.schedule(dt)
        step = schedule.controller_step(dt)
        used = p99 if measuring else cp.simulated_compute_time
        m.controller_step = step
        m.send_skips = float(schedule.send_skips)
        m.window = float(schedule.window)
        m.compute_time = used
        m.sent = float(coupling.sent)
        m.applied = float(coupling.applied)
        if not math.isnan(used):
            m.min_realtime_factor = min_realtime_factor(step, schedule.window, used, cp.ping_time)
    if measured.size:
        m.compute_time_median = float(np.median(measured))
        m.compute_time_p99 = p99
        m.compute_time_max = float(measured.max())
    return m


def safe_run(
    index: int, scenario: Scenario, params: Mapping[str, Scalar], signals: SignalSpec | None = None
) -> RunResult:
    """``run_scenario`` that never raises (but for Ctrl-C): a failure is a failed result."""
    try:
        metrics, recorded = run_scenario(scenario, params, signals)
    except Exception as exc:  # noqa: BLE001 - any failure of a run is recorded, the sweep goes on
        return RunResult(
            index,
            dict(params),
            "failed",
            RunMetrics(),
            error=f"{type(exc).__name__}: {exc}".strip(),
            traceback=traceback.format_exc(),
        )
    return RunResult(index, dict(params), "ok", metrics, signals=recorded)


_warm = False


def warm_up(scenario: Scenario) -> None:
    """Load the compiled kernels of this process with a short run (once per process)."""
    global _warm
    if _warm:
        return
    _warm = True
    short = scenario.model_copy(deep=True)
    short.scenario.duration = 0.05
    short.scenario.initial_speed = 0.0
    short.scenario.manoeuvre = []
    short.coupling.busy_time = 0.0
    short.coupling.transport = "in-process"
    with contextlib.suppress(Exception):  # the real runs report their own problems
        run_scenario(short, {})
