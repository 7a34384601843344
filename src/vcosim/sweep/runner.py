"""One run of a sweep: a pure function of (scenario, parameters) -> metrics (+ signals).

The vehicle is coupled to its controller in this process (``vcosim.tight.inprocess``) with the
tight coupling's scheduling, stepped without a wall clock, so a run is deterministic: the same
scenario and parameters give the same metrics bit for bit, on any worker (friction noise is
seeded by ``vehicle.tyres.noise_seed``). Only the timing columns (``TIMING_COLUMNS``) measure
the wall clock. Definitions of every metric: ``docs/sweeps.md``.
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from vcosim.errors import VcosimError
from vcosim.sim.pacing import Pacer
from vcosim.sim.simulation import Simulation
from vcosim.sweep.config import DERIVED_SIGNALS, RunConfig, Scalar, Scenario, resolve
from vcosim.tight.controller import Responder
from vcosim.tight.endpoint import CouplingConfig, SimulatorEndpoint
from vcosim.tight.inprocess import InProcessLink, couple_in_process
from vcosim.vehicle import Vehicle
from vcosim.vehicle import layout as L
from vcosim.vehicle.terrain import Terrain
from vcosim.vehicle.vehicle import set_inputs


@dataclass(frozen=True)
class Metric:
    """A metric column: its unit, which end is the worst case, and what it is."""

    name: str
    unit: str
    worst: str  # "max", "min" or "abs" (largest magnitude)
    description: str


METRICS = (
    Metric(
        "settling_time",
        "s",
        "max",
        "time after which the signal stays within the band around the target (inf: never)",
    ),
    Metric(
        "overshoot",
        "signal",
        "max",
        "largest excursion beyond the target, in the direction of the step",
    ),
    Metric("overshoot_pct", "%", "max", "overshoot as a percentage of the step"),
    Metric(
        "steady_state_error",
        "signal",
        "abs",
        "target minus the mean of the signal over the last steady_window seconds",
    ),
    Metric("max_lateral_acceleration", "m/s2", "max", "largest |accY| over the run"),
    Metric(
        "min_realtime_factor",
        "-",
        "min",
        "lowest real-time factor the coupling allows: >= 1 keeps real time",
    ),
)
"""The metrics every run yields, in column order."""

DETAIL_COLUMNS = (
    "final_value",
    "target",
    "step_size",
    "band",
    "controller_step",
    "send_skips",
    "window",
    "compute_time",
    "sent",
    "applied",
)
"""Further deterministic columns: the quantities the metrics were computed from."""

TIMING_COLUMNS = (
    "wall_time",
    "sim_speed",
    "compute_time_median",
    "compute_time_p99",
    "compute_time_max",
)
"""Columns measured on the wall clock; they differ between otherwise identical runs."""

RESULT_COLUMNS = (*(m.name for m in METRICS), *DETAIL_COLUMNS, *TIMING_COLUMNS)

SPEED_TOLERANCE = 0.05  # m/s: the initial speed is reached when within this for HOLD_STEPS
HOLD_STEPS = 2000  # 1 s
MAX_PREROLL_STEPS = 240_000  # 120 s
PREROLL_CHUNK = 10  # steps between two updates of the pre-roll speed controller
_ACC_Y = L.SIGNAL_INDEX["accY"]


class RunError(VcosimError):
    """A run could not be carried out as its scenario says."""


@dataclass
class RunResult:
    """The outcome of one run: its metrics, or the error that ended it."""

    index: int
    params: dict[str, Scalar]
    status: str = "ok"  # "ok" or "failed"
    metrics: dict[str, float] = field(default_factory=dict)
    error: str = ""
    traceback: str = ""
    signals: dict[str, np.ndarray] | None = None

    @property
    def failed(self) -> bool:
        """True when the run raised."""
        return self.status != "ok"


@dataclass(frozen=True)
class SignalSpec:
    """Which signals to keep from each run, and how often (every ``every`` physics steps)."""

    names: tuple[str, ...]
    every: int = 20


# -- the metrics -------------------------------------------------------------------------------


def tracking_metrics(
    t: np.ndarray,
    y: np.ndarray,
    target: float,
    *,
    band: float = 0.02,
    band_min: float = 0.1,
    steady_window: float = 2.0,
) -> dict[str, float]:
    """Settling time, overshoot and steady-state error of ``y`` following a step to ``target``.

    ``t[0]``, ``y[0]``: the start of the run. The step is ``target - y[0]``; the band is
    ``max(band * |step|, band_min)``.
    """
    step = float(target - y[0])
    tolerance = max(band * abs(step), band_min)
    error = y - target
    outside = np.abs(error) > tolerance
    if not outside.any():
        settling = 0.0
    elif outside[-1]:
        settling = math.inf
    else:
        settling = float(t[np.flatnonzero(outside)[-1] + 1] - t[0])
    if step != 0.0:
        overshoot = max(0.0, float(np.max(np.sign(step) * error)))
        overshoot_pct = 100.0 * overshoot / abs(step)
    else:
        overshoot, overshoot_pct = float(np.max(np.abs(error))), math.nan
    last = t >= t[-1] - steady_window
    return {
        "settling_time": settling,
        "overshoot": overshoot,
        "overshoot_pct": overshoot_pct,
        "steady_state_error": float(target - np.mean(y[last])),
        "final_value": float(y[-1]),
        "target": float(target),
        "step_size": step,
        "band": tolerance,
    }


def min_realtime_factor(
    controller_step: float, window: int, compute_time: float, ping_time: float
) -> float:
    """The lowest real-time factor a coupling with this timing allows.

    A controller that computes for ``compute_time`` per message keeps up with one message per
    ``controller_step`` only if ``compute_time <= controller_step`` (throughput), and each reply
    must arrive within ``window`` messages: ``compute_time + ping_time <= window *
    controller_step`` (latency). Otherwise every send step waits and simulated time runs slower
    than the wall clock by the larger ratio.
    """
    throughput = controller_step / compute_time if compute_time > 0 else math.inf
    latency = (
        window * controller_step / (compute_time + ping_time)
        if compute_time + ping_time > 0
        else math.inf
    )
    return min(throughput, latency)


# -- the faces a run attaches ------------------------------------------------------------------


class Recorder:
    """Records the metric signal and accY at every step, and chosen signals every N steps."""

    def __init__(self, steps: int, metric_index: int | None, spec: SignalSpec | None) -> None:
        self.steps = steps
        self.metric_index = metric_index
        self.metric = np.full(steps + 1, np.nan)
        self.acc_y = np.full(steps + 1, np.nan)
        self.spec = spec
        self._rows: np.ndarray | None = None
        self._columns: list[int] = []
        if spec is not None:
            self._columns = [
                L.SIGNAL_INDEX["yaw" if n in DERIVED_SIGNALS else n] for n in spec.names
            ]
            self._rows = np.full((steps // spec.every + 1, len(self._columns)), np.nan)
        self._i = 0
        self._row = 0
        self._countdown = 0
        self._y: np.ndarray = np.empty(0)

    def start(self, sim: Simulation) -> None:
        """Take the first sample (time 0 of the run)."""
        self._y = sim.vehicle.outputs
        self._i = 0
        self._row = 0
        self._countdown = 0
        self._sample()

    def after_step(self, sim: Simulation) -> None:
        """Take a sample after every physics step."""
        self._i += 1
        self._sample()

    def _sample(self) -> None:
        y, i = self._y, self._i
        if i > self.steps:
            return
        if self.metric_index is not None:
            self.metric[i] = y[self.metric_index]
        self.acc_y[i] = y[_ACC_Y]
        if self._rows is not None:
            if self._countdown == 0:
                self._rows[self._row] = y[self._columns]
                self._row += 1
                self._countdown = self.spec.every  # type: ignore[union-attr]
            self._countdown -= 1

    def signals(self, dt: float) -> dict[str, np.ndarray]:
        """The kept signals, with their time (s from the start of the run)."""
        if self._rows is None or self.spec is None:
            return {}
        rows = self._rows[: self._row]
        out = {"time": np.arange(rows.shape[0]) * self.spec.every * dt}
        for k, name in enumerate(self.spec.names):
            column = rows[:, k]
            out[name] = np.degrees(np.unwrap(column)) if name == "yaw_deg" else column.copy()
        return out


class Manoeuvre:
    """Changes held vehicle inputs at given times of the run (before the step at that time)."""

    def __init__(self, events: list[tuple[float, dict[str, Any]]], dt: float) -> None:
        order = sorted(range(len(events)), key=lambda i: events[i][0])
        self.events = [(round(events[i][0] / dt), events[i][1]) for i in order]
        self._next = 0
        self._start = 0

    def start(self, sim: Simulation) -> None:
        """Count the events' steps from the start of the run."""
        self._start = sim.vehicle.step_index
        self._next = 0

    def before_step(self, sim: Simulation) -> None:
        """Apply every event that is due."""
        events = self.events
        while (
            self._next < len(events)
            and sim.vehicle.step_index - self._start >= events[self._next][0]
        ):
            set_inputs(sim.vehicle.input_array, events[self._next][1])
            self._next += 1


class MeasuredDelayLink(InProcessLink):
    """An in-process link whose replies land after the *measured* computation time."""

    def __init__(
        self, responder: Responder, clock: Callable[[], int], dt: float, ping_time: float
    ) -> None:
        super().__init__(responder, clock, 0)
        self.dt = dt
        self.ping_time = ping_time

    def reply_delay(self) -> int:
        """The measured computation time of the reply just computed, plus the round trip."""
        return math.ceil(round((self.responder.compute[-1] + self.ping_time) / self.dt, 9))


def busy(step_fn: Callable[[Any], Any], seconds: float) -> Callable[[Any], Any]:
    """``step_fn`` made to compute for at least ``seconds`` (a busy wait: real CPU time)."""

    def step(msg: Any) -> Any:
        end = time.perf_counter() + seconds
        out = step_fn(msg)
        while time.perf_counter() < end:
            pass
        return out

    return step


# -- building and running ----------------------------------------------------------------------


@lru_cache(maxsize=8)
def _image_terrain(
    height_map: str | None,
    road_map: str | None,
    friction_map: str | None,
    hill_height: float,
    size: float,
    road_friction: float,
    offroad_friction: float,
) -> Terrain:
    return Terrain.from_images(
        height_map,
        road_map,
        friction_map,
        hill_height=hill_height,
        size=size,
        road_friction=road_friction,
        offroad_friction=offroad_friction,
    )


def build_terrain(run: Scenario) -> Terrain:
    """Flat ground of ``terrain.friction``, or the pictures' terrain scaled by it."""
    t = run.terrain
    if t.flat:
        return Terrain.flat(t.friction)
    base = _image_terrain(
        t.height_map,
        t.road_map,
        t.friction_map,
        t.hill_height,
        t.size,
        t.road_friction,
        t.offroad_friction,
    )
    if t.friction == 1.0:
        return base
    return Terrain(base.height, base.friction * t.friction, base.road, base.grid)


def reach_speed(car: Vehicle, speed: float) -> None:
    """Drive (PI on the pedals) until the speed holds within 0.05 m/s for 1 s.

    The run starts from there: the vehicle keeps the throttle that holds the speed.
    """
    index = L.SIGNAL_INDEX["groundspeed"]
    y = car.outputs
    integral, held = 0.0, 0
    chunk_time = PREROLL_CHUNK * car.dt
    for _ in range(MAX_PREROLL_STEPS // PREROLL_CHUNK):
        error = speed - y[index]
        effort = 0.3 * error + 0.1 * integral
        if -1.0 < effort < 1.0 or effort * error < 0:
            integral += error * chunk_time
        car.run(
            PREROLL_CHUNK,
            throttle=min(max(effort, 0.0), 1.0),
            brake=min(max(-0.5 * effort, 0.0), 1.0),
        )
        held = held + PREROLL_CHUNK if abs(speed - y[index]) < SPEED_TOLERANCE else 0
        if held >= HOLD_STEPS:
            car.step(brake=0.0)
            return
    raise RunError(
        f"scenario.initial_speed: {speed:g} m/s not reached in "
        f"{MAX_PREROLL_STEPS * car.dt:g} s (speed {y[index]:.2f} m/s)"
    )


def _coupling_config(cp: Any, **extra: Any) -> CouplingConfig:
    return CouplingConfig(
        ext_time=cp.ext_time,
        ping_time=cp.ping_time,
        window=cp.window,
        send_skips=cp.send_skips,
        send_offset=cp.send_offset,
        **extra,
    )


class _UdpController:
    """A ``ControllerBlock`` in a thread on loopback: the UDP transport of a run."""

    def __init__(self, sim: Simulation, step_fn: Callable[[Any], Any], cp: Any) -> None:
        from vcosim.tight import ControllerBlock

        step = _coupling_config(cp).schedule(sim.dt).controller_step(sim.dt)
        self.block = ControllerBlock(
            step_fn, listen_port=0, sim_port=0, spin=0.0, step=step, memory=cp.memory
        )
        sim.attach(
            "coupling",
            SimulatorEndpoint(
                _coupling_config(cp, listen_port=0, controller_port=self.block.address[1], spin=0.0)
            ),
        )
        self.thread = threading.Thread(
            target=self.block.run, daemon=True, name="sweep udp controller"
        )
        self.thread.start()

    @property
    def compute(self) -> list[float]:
        return self.block.responder.compute

    def close(self) -> None:
        self.block.stop()
        self.thread.join(timeout=5)


def run_scenario(
    scenario: Scenario, params: Mapping[str, Scalar], signals: SignalSpec | None = None
) -> tuple[dict[str, float], dict[str, np.ndarray] | None]:
    """Run ``scenario`` with ``params`` applied: the metrics, and the signals if asked for."""
    return execute(resolve(scenario, params), signals)


def execute(
    cfg: RunConfig, signals: SignalSpec | None = None
) -> tuple[dict[str, float], dict[str, np.ndarray] | None]:
    """Run a resolved configuration."""
    run = cfg.scenario
    sc, cp = run.scenario, run.coupling
    car = Vehicle(cfg.vehicle, build_terrain(run), engine_running=True)
    if sc.gearbox == "automatic":
        car.step(automatic=1, gear=1)  # selector in D: pedals and steering are enough
    if sc.initial_speed > 0:
        reach_speed(car, sc.initial_speed)
    sim = Simulation(car, Pacer("lockstep" if cp.timing == "lockstep" else "fast", dt=car.dt))
    udp: _UdpController | None = None
    compute: list[float] = []
    if cfg.factory is not None:
        step_fn = cfg.factory(**run.controller.params)
        if cp.busy_time > 0:
            step_fn = busy(step_fn, cp.busy_time)
        if cp.transport == "udp":
            udp = _UdpController(sim, step_fn, cp)
            compute = udp.compute
        elif cp.compute_time == "measured" and cp.timing == "realtime":
            config = _coupling_config(cp)
            responder = Responder(
                step_fn, config.schedule(sim.dt).controller_step(sim.dt), cp.memory
            )
            link = MeasuredDelayLink(responder, lambda: car.step_index, sim.dt, cp.ping_time)
            sim.attach("coupling", SimulatorEndpoint(config, link=link))
            compute = responder.compute
        else:
            delay = (0.0 if cp.compute_time == "measured" else cp.compute_time) + cp.ping_time
            endpoint = couple_in_process(
                sim, step_fn, _coupling_config(cp), memory=cp.memory, compute_time=delay
            )
            compute = endpoint.link.responder.compute
    steps = round(sc.duration / sim.dt)
    metric_index = None
    if cfg.metric_signal is not None:
        metric_index = L.SIGNAL_INDEX[
            "yaw" if cfg.metric_signal == "yaw_deg" else cfg.metric_signal
        ]
    recorder = Recorder(steps, metric_index, signals)
    if sc.manoeuvre:
        sim.attach("manoeuvre", Manoeuvre([(e.time, e.inputs) for e in sc.manoeuvre], sim.dt))
    sim.attach("record", recorder)
    try:
        report = sim.run(sc.duration)
    finally:
        if udp is not None:
            udp.close()
    if report.interrupted:
        raise KeyboardInterrupt
    return _metrics(cfg, sim, report, recorder, compute), (
        recorder.signals(sim.dt) if signals is not None else None
    )


def _metrics(
    cfg: RunConfig, sim: Simulation, report: Any, recorder: Recorder, compute: list[float]
) -> dict[str, float]:
    run = cfg.scenario
    cp = run.coupling
    nan = math.nan
    out: dict[str, float] = dict.fromkeys(RESULT_COLUMNS, nan)
    t = np.arange(recorder.steps + 1) * sim.dt
    if cfg.target is not None and cfg.metric_signal is not None:
        y = recorder.metric
        if cfg.metric_signal == "yaw_deg":
            y = np.degrees(np.unwrap(y))
        m = run.metrics
        out.update(
            tracking_metrics(
                t, y, cfg.target, band=m.band, band_min=m.band_min, steady_window=m.steady_window
            )
        )
    elif cfg.metric_signal is not None:
        out["final_value"] = float(recorder.metric[-1])
    out["max_lateral_acceleration"] = float(np.max(np.abs(recorder.acc_y)))
    coupling = report.faces.get("coupling")
    measured = np.asarray(compute, dtype=float)
    if coupling is not None:
        schedule = _coupling_config(cp).schedule(sim.dt)
        step = schedule.controller_step(sim.dt)
        if cp.compute_time == "measured":
            used = float(np.percentile(measured, 99)) if measured.size else nan
        else:
            used = float(cp.compute_time)
        out.update(
            controller_step=step,
            send_skips=float(schedule.send_skips),
            window=float(schedule.window),
            compute_time=used,
            sent=float(coupling["sent"]),
            applied=float(coupling["applied"]),
            min_realtime_factor=min_realtime_factor(step, schedule.window, used, cp.ping_time)
            if not math.isnan(used)
            else nan,
        )
    if measured.size:
        out.update(
            compute_time_median=float(np.median(measured)),
            compute_time_p99=float(np.percentile(measured, 99)),
            compute_time_max=float(measured.max()),
        )
    out["wall_time"] = report.wall_time
    out["sim_speed"] = report.realtime_factor
    return out


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
            dict.fromkeys(RESULT_COLUMNS, math.nan),
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
