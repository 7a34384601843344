"""``vcosim demo``: the simulator and a controller coupled over UDP, or a scripted manoeuvre.

``vcosim demo`` (``run_coupled``) is the coupled run: the simulator in this process, the
``cruise`` example controller in a ``ControllerBlock`` in another process (its own GIL), two
parties exchanging BeamNG's datagrams over UDP on loopback in lock-step, as fast as they can,
for 30 s of simulated time. The controller's target speed steps from 15 to 25 m/s at 15 s.
The run folder gets BeamNG's three coupling debug CSVs, ``signals.csv``, ``demo.png`` (speed
against target, pedals, rpm and gear, coupling timing) and ``summary.json``.

``vcosim demo --manoeuvre`` (``run_manoeuvre``) drives the vehicle alone through a table of
phases (``MANOEUVRE``): start the engine, accelerate through the gears, brake, turn. Each phase
has a name, a duration, the driver's inputs (fixed values, or a function of the vehicle and the
time into the phase, evaluated every 10 ms) and optionally a condition that ends it early; a
phase with a condition treats its duration as the expected one and gives up after
``LIMIT_FACTOR`` times as long. Same outputs, with the trajectory instead of the coupling.

Both record every signal every 10 ms, show a progress bar on simulated seconds, and share the
run folder, the plotting helpers and the summary.
"""

from __future__ import annotations

import contextlib
import json
import math
import multiprocessing as mp
import os
import queue
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from vcosim.controllers.cruise import Cruise
from vcosim.errors import VcosimError
from vcosim.sim.recorder import SignalRecorder, write_csv
from vcosim.tight.views import Controls, SimulatorMessage
from vcosim.vehicle import SIGNAL_NAMES, Vehicle

KMH = 1 / 3.6
RECORD_EVERY = 20  # physics steps (10 ms) between recorded rows and driver decisions


# == shared: run folder, progress bar, plots, summary =========================================
def run_folder(out: Path) -> Path:
    """A new ``out/<YYYYmmdd-HHMMSS>`` folder (suffixed if that second is taken)."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    folder, n = out / stamp, 1
    while folder.exists():
        n += 1
        folder = out / f"{stamp}-{n}"
    folder.mkdir(parents=True)
    return folder


def progress_bar(console: Console) -> Progress:
    """The demo's progress bar: simulated seconds, the real-time factor, wall time."""
    return Progress(
        TextColumn("[bold]{task.description:<18}"),
        BarColumn(),
        TextColumn("{task.completed:5.1f} / {task.total:4.1f} s simulated"),
        TextColumn("{task.fields[rtf]:>6.1f}x real time"),
        TimeElapsedColumn(),
        console=console,
    )


def column(rows: np.ndarray, name: str) -> np.ndarray:
    """One signal of recorded rows (columns in ``SIGNAL_NAMES`` order)."""
    return rows[:, SIGNAL_NAMES.index(name)]


def _pyplot() -> Any:
    """Pyplot, on the headless Agg backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _figure(title: str) -> tuple[Any, Any]:
    """A 2x2 figure with a title; returns the figure and the 2x2 axes."""
    fig, axes = _pyplot().subplots(2, 2, figsize=(13, 8.5), constrained_layout=True)
    fig.suptitle(title)
    return fig, axes


def _save(fig: Any, axes: Any, path: Path) -> None:
    """Grid the main axes (not their twins), save, close."""
    for ax in np.ravel(axes):
        ax.grid(alpha=0.3)
    fig.savefig(path, dpi=110)
    _pyplot().close(fig)


def _legend(ax: Any, *others: Any, loc: str = "upper right") -> None:
    """One legend for the lines of ``ax`` and its twin axes."""
    lines = [ln for a in (ax, *others) for ln in a.get_lines() if ln.get_label()[:1] != "_"]
    ax.legend(lines, [ln.get_label() for ln in lines], loc=loc)


def plot_gear(ax: Any, rows: np.ndarray) -> Any:
    """Gear as steps on a twin axis of ``ax``; returns the twin."""
    twin = ax.twinx()
    twin.step(
        column(rows, "time"), column(rows, "gear"), where="post", color="tab:orange", label="gear"
    )
    twin.set(ylabel="gear", ylim=(-1.5, 6.5), yticks=range(-1, 6))
    return twin


def plot_pedals(ax: Any, rows: np.ndarray, names: Iterable[str], title: str) -> None:
    """Pedals (0-1) over time; ``<pedal>_input`` (what was asked) dashed in the pedal's colour."""
    t = column(rows, "time")
    colors = {"throttle": "tab:green", "brake": "tab:red", "clutch": "tab:purple"}
    for name in names:
        pedal, asked = name.removesuffix("_input"), name.endswith("_input")
        ax.plot(
            t,
            column(rows, name),
            color=colors[pedal],
            ls="--" if asked else "-",
            lw=1.0 if asked else 1.5,
            alpha=0.7 if asked else 1.0,
            label=f"{pedal} asked" if asked else pedal,
        )
    ax.set(title=title, xlabel="time (s)", ylabel="pedal (0-1)", ylim=(-0.05, 1.1))
    ax.legend(loc="upper right")


def plot_rpm(ax: Any, rows: np.ndarray, title: str) -> None:
    """Engine speed over time."""
    ax.plot(column(rows, "time"), column(rows, "rpm"), color="tab:red", label="engine speed")
    ax.set(title=title, xlabel="time (s)", ylabel="engine speed (rpm)")


def finish(
    console: Console,
    folder: Path,
    title: str,
    summary: dict[str, Any],
    lines: Iterable[tuple[str, str]],
) -> None:
    """Write ``summary.json``, print the summary table and where the run folder is."""
    (folder / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    table = Table(title=title, show_header=False)
    for key, value in lines:
        table.add_row(key, value)
    console.print(table)
    console.print("Run folder:", str(folder), soft_wrap=True)


def run_demo(
    out: Path,
    vehicle: str = "nightrider",
    *,
    manoeuvre: bool = False,
    console: Console | None = None,
) -> Path:
    """``vcosim demo``: the coupled run, or with ``manoeuvre`` the scripted one."""
    run = run_manoeuvre if manoeuvre else run_coupled
    return run(out, vehicle, console=console)


# == the coupled run ============================================================================
DURATION = 30.0  # simulated seconds
EXT_TIME = 0.005  # the controller's step (s): a message every 10 physics steps
SETTLE_BAND = 0.5  # m/s: settled once the speed stays this close to the target
SPAWN_TIMEOUT = 60.0  # s for the controller process to report its port


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

    def at(self, t: np.ndarray) -> np.ndarray:
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


def _controller_main(
    step_fn: Any, step: float, ports: Any, results: Any, stop: Any, parent: int
) -> None:
    """The controller process: a ControllerBlock until ``stop`` is set or the parent is gone.

    Ctrl-C reaches the whole process group; the parent handles it and sets ``stop``, so the
    block is not interrupted half-way. It answers each message to the address it came from,
    the simulator endpoint's bound address, and accepts messages only from loopback.
    """
    from vcosim.tight.controller import ControllerBlock

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    block = ControllerBlock(step_fn, listen_port=0, sim_host="127.0.0.1", sim_port=0, step=step)
    ports.put(block.address[1])

    def watch() -> None:
        while not stop.wait(0.5):
            if os.getppid() != parent:  # the parent died without stopping us
                break
        block.stop()

    threading.Thread(target=watch, daemon=True).start()
    results.put(block.run())


@contextlib.contextmanager
def _sigint_ignored() -> Iterator[None]:
    """Ignore SIGINT for a moment (main thread only; elsewhere leave signals alone)."""
    try:
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


class ControllerProcess:
    """A step function in a ControllerBlock in its own process (spawn), as a context manager.

    ``port()`` waits for the port the block listens on; leaving the context (normally, on an
    error or on Ctrl-C) stops the block, collects its report and joins the process.
    """

    def __init__(self, step_fn: Any, step: float = EXT_TIME) -> None:
        ctx = mp.get_context("spawn")
        self._ports = ctx.Queue()
        self._results = ctx.Queue()
        self._stop = ctx.Event()
        self._process = ctx.Process(
            target=_controller_main,
            name="vcosim-demo-controller",
            daemon=True,
            args=(step_fn, step, self._ports, self._results, self._stop, os.getpid()),
        )
        self.report: dict[str, Any] | None = None

    def __enter__(self) -> ControllerProcess:
        with _sigint_ignored():  # inherited: Ctrl-C during the child's start-up is ours
            self._process.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def port(self, timeout: float = SPAWN_TIMEOUT) -> int:
        """The controller's UDP port, once its block is listening."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                return int(self._ports.get(timeout=0.2))
            except queue.Empty:
                if not self._process.is_alive():
                    raise VcosimError(
                        "the controller process ended before it listened "
                        f"(exit code {self._process.exitcode})"
                    ) from None
                if time.monotonic() > deadline:
                    raise VcosimError(
                        f"the controller process did not start in {timeout:g} s"
                    ) from None

    def stop(self) -> dict[str, Any] | None:
        """Stop the block, keep its report, join the process (safe twice)."""
        if self._process.pid is None or self._process.exitcode is not None:
            return self.report
        self._stop.set()
        with contextlib.suppress(queue.Empty):
            self.report = self._results.get(timeout=5.0)
        self._process.join(timeout=5.0)
        if self._process.is_alive():
            self._process.kill()
            self._process.join()
        return self.report


@dataclass
class CouplingTiming:
    """The coupling's timing read back from the three debug logs."""

    message_time: np.ndarray  # simulated time each answered message was sent (s)
    latency: np.ndarray  # wall time from its send to its reply being applied (s)

    @classmethod
    def from_logs(cls, folder: Path, start_time: float, dt: float) -> CouplingTiming:
        """Each answered message's simulated send time and its reply latency (vcosim.analysis)."""
        from vcosim.analysis import load_run

        timeline = load_run(folder).timeline
        answered = timeline.matched_send >= 0
        sends = timeline.matched_send[answered]
        return cls(
            message_time=start_time + timeline.send_step[sends] * dt,
            latency=timeline.latency[answered],
        )


def settling_time(
    t: np.ndarray, speed: np.ndarray, since: float, target: float, band: float = SETTLE_BAND
) -> float | None:
    """Time after ``since`` from which the speed stays within ``band`` of ``target``.

    None if it is still outside at the end of the run.
    """
    after = t >= since
    outside = np.flatnonzero(after & (np.abs(speed - target) > band))
    if outside.size == 0:
        return 0.0
    if outside[-1] == len(t) - 1:
        return None
    return float(t[outside[-1] + 1] - since)


def plot_coupled(
    path: Path,
    rows: np.ndarray,
    profile: SpeedProfile,
    timing: CouplingTiming,
    rtf: float,
    title: str,
) -> None:
    """A 2x2 figure: speed against target, pedals, rpm and gear, coupling timing."""
    fig, axes = _figure(title)
    (ax_speed, ax_pedals), (ax_rpm, ax_timing) = axes
    t = column(rows, "time")

    ax_speed.plot(t, column(rows, "groundspeed"), color="tab:blue", label="speed")
    ax_speed.plot(t, profile.at(t), color="black", ls="--", lw=1.2, label="target")
    ax_speed.set(
        title="Speed against the controller's target", xlabel="time (s)", ylabel="speed (m/s)"
    )
    ax_speed.set_ylim(bottom=0, top=1.15 * max(s for _, s in profile.steps))
    ax_speed.legend(loc="lower right")

    plot_pedals(
        ax_pedals,
        rows,
        ("throttle_input", "brake_input", "throttle", "brake"),
        "Throttle and brake as applied (dashed: as the controller asked)",
    )

    plot_rpm(ax_rpm, rows, "Engine speed and gear (automatic)")
    ax_rpm.set_ylim(bottom=0)
    _legend(ax_rpm, plot_gear(ax_rpm, rows), loc="lower right")

    latency = timing.latency * 1e3
    ax_timing.semilogy(
        timing.message_time,
        latency,
        ".",
        ms=2.5,
        color="tab:blue",
        label="one message: sent → its reply applied",
    )
    if latency.size:
        for q, style in ((50, "-"), (99, "--")):
            value = float(np.percentile(latency, q))
            ax_timing.axhline(
                value,
                color="navy",
                lw=1,
                ls=style,
                label=f"{'median' if q == 50 else 'p99'} {value:.3f} ms",
            )
        ax_timing.set_ylim(0.5 * latency.min(), 3.0 * latency.max())
    ax_timing.set(
        title=f"Coupling timing (wall clock): {rtf:.1f}x real time",
        xlabel="simulated time (s)",
        ylabel="send → applied reply (ms, log scale)",
        xlim=ax_speed.get_xlim(),
    )
    ax_timing.legend(loc="upper left")
    _save(fig, axes, path)


def run_coupled(
    out: Path,
    vehicle: str = "nightrider",
    *,
    duration: float = DURATION,
    profile: SpeedProfile | None = None,
    console: Console | None = None,
) -> Path:
    """Couple the ``cruise`` controller (another process) to the simulator over UDP.

    Lock-step, as fast as the pair can exchange; writes the debug logs, ``signals.csv``,
    ``demo.png`` and ``summary.json`` into a new run folder under ``out``; returns it.
    """
    from vcosim.interrupts import sigterm_as_interrupt
    from vcosim.sim.pacing import Pacer
    from vcosim.sim.simulation import Simulation
    from vcosim.tight.endpoint import CouplingConfig, SimulatorEndpoint

    console = console or Console()
    profile = profile or SpeedProfile()
    begin = time.perf_counter()
    with sigterm_as_interrupt(), ControllerProcess(ProfileCruise(profile), EXT_TIME) as peer:
        with console.status(
            "Starting the controller process, preparing the vehicle "
            "(compiles the physics on the first run)…"
        ):
            car = Vehicle(vehicle, engine_running=True)  # a bad preset fails here, no folder
            car.set_inputs(automatic=1, gear=1)  # selector in D, still at time 0
            port = peer.port()
        setup = time.perf_counter() - begin
        folder = run_folder(Path(out))
        sim = Simulation(car, Pacer("lockstep", dt=car.dt))
        sim.attach(
            "coupling",
            SimulatorEndpoint(
                CouplingConfig(
                    listen_port=0, controller_port=port, ext_time=EXT_TIME, debug_log=folder
                )
            ),
        )
        recorder = sim.attach("signals", SignalRecorder(RECORD_EVERY))
        start_time = car.time

        with progress_bar(console) as progress:
            task = progress.add_task("cruise, lock-step", total=duration, rtf=0.0)
            shown = [0.0]

            def show(sim_time: float) -> None:
                now = time.perf_counter()
                if now - shown[0] > 0.05:
                    shown[0] = now
                    progress.update(
                        task,
                        completed=sim_time - start_time,
                        rtf=(sim_time - start_time) / (now - sim.wall_start),
                    )

            report = sim.run(duration, on_progress=show)
            progress.update(task, completed=report.sim_time, rtf=report.realtime_factor)
        controller = peer.stop()

    recorder.write_csv(folder / "signals.csv")
    rows = recorder.rows
    timing = CouplingTiming.from_logs(folder, start_time, car.dt)
    coupling = report.faces["coupling"]
    title = (
        f"vcosim demo: the cruise controller (its own process) and {car.params.name} "
        f"over UDP in lock-step, {report.sim_time:.0f} s simulated at "
        f"{report.realtime_factor:.1f}x real time"
    )
    plot_coupled(folder / "demo.png", rows, profile, timing, report.realtime_factor, title)
    total = time.perf_counter() - begin

    t, v = column(rows, "time"), column(rows, "groundspeed")
    ends = [*(start for start, _ in profile.steps[1:]), float(t[-1])]
    steps = [
        {
            "from_s": start,
            "until_s": round(min(end, float(t[-1])), 3),
            "target_m_s": target,
            "speed_at_until_m_s": round(float(v[t <= end][-1]), 3),
            "settling_time_s": _round(settling_time(t[t <= end], v[t <= end], start, target), 2),
        }
        for (start, target), end in zip(profile.steps, ends, strict=True)
        if start <= t[-1]
    ]
    latency_ms = timing.latency * 1e3
    summary: dict[str, Any] = {
        "vehicle": car.params.name,
        "controller": "cruise (PI on speed through throttle and brake), own process",
        "pacing": "lockstep",
        "interrupted": report.interrupted,
        "simulated_time_s": round(report.sim_time, 3),
        "wall_time_s": round(report.wall_time, 3),
        "real_time_factor": round(report.realtime_factor, 2),
        "setup_time_s": round(setup, 3),
        "total_wall_time_s": round(total, 3),
        "controller_step_s": EXT_TIME,
        "coupling": coupling,
        "reply_latency_ms": {
            "median": _round(_percentile(latency_ms, 50), 4),
            "p99": _round(_percentile(latency_ms, 99), 4),
            "max": _round(_percentile(latency_ms, 100), 4),
        },
        "controller_report": controller,
        "target_profile": steps,
        "final_speed_m_s": round(float(v[-1]), 3),
        "final_target_m_s": profile(float(t[-1])),
        "settle_band_m_s": SETTLE_BAND,
        "rows": int(rows.shape[0]),
        "files": sorted({p.name for p in folder.iterdir()} | {"summary.json"}),
    }

    lines = [
        (
            "simulated / wall time",
            f"{report.sim_time:.1f} s in {report.wall_time:.2f} s: "
            f"{report.realtime_factor:.1f}x real time ({total:.1f} s with setup and plot)",
        ),
        (
            "coupling",
            f"UDP on loopback, lock-step, a message every {EXT_TIME * 1e3:g} ms "
            f"(send_skips {coupling['send_skips']}, window {coupling['window']})",
        ),
        (
            "messages sent / applied",
            f"{coupling['sent']} / {coupling['applied']}"
            + (
                " (the last reply lands after the end)"
                if coupling["sent"] - coupling["applied"] == coupling["window"]
                else ""
            ),
        ),
        (
            "timeouts / stale / malformed",
            f"{coupling['timeouts']} / {coupling['stale']} / {coupling['malformed']}",
        ),
        (
            "send → applied reply",
            f"median {summary['reply_latency_ms']['median']} ms, "
            f"p99 {summary['reply_latency_ms']['p99']} ms",
        ),
    ]
    for step in steps:
        settle = step["settling_time_s"]
        lines.append(
            (
                f"target {step['target_m_s']:g} m/s from {step['from_s']:g} s",
                "not settled"
                if settle is None
                else f"settled (±{SETTLE_BAND:g} m/s) after {settle:.1f} s; "
                f"{step['speed_at_until_m_s']:.2f} m/s at {step['until_s']:g} s",
            )
        )
    lines.append(("final speed / target", f"{v[-1]:.2f} / {summary['final_target_m_s']:g} m/s"))
    if report.interrupted:
        lines.append(("[yellow]ended by", "[yellow]interrupt (Ctrl-C / SIGTERM)"))
    if controller is None:
        lines.append(("[yellow]controller", "[yellow]sent no report"))
    finish(console, folder, "vcosim demo: coupled run", summary, lines)
    return folder


def _percentile(values: np.ndarray, q: float) -> float | None:
    return float(np.percentile(values, q)) if values.size else None


def _round(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


# == the scripted manoeuvre =====================================================================
LIMIT_FACTOR = 3.0  # a phase waiting for a condition gives up after this times its duration

Inputs = Mapping[str, float]
Driver = Callable[[Vehicle, float], Inputs]
Condition = Callable[[Vehicle], bool]


@dataclass(frozen=True)
class Phase:
    """One step of the manoeuvre.

    Attributes:
        name: Shown in the progress bar and the plot.
        seconds: Duration; with ``until``, the expected duration (for the progress bar).
        inputs: Driver inputs: a mapping held for the phase, or ``f(vehicle, t_in_phase)``
            called every 10 ms. Inputs not named keep their previous value.
        until: Optional condition that ends the phase as soon as it holds.
    """

    name: str
    seconds: float
    inputs: Inputs | Driver
    until: Condition | None = None

    def drive(self, vehicle: Vehicle, t: float) -> Inputs:
        """The inputs for this moment of the phase."""
        return self.inputs(vehicle, t) if callable(self.inputs) else self.inputs


# -- driver building blocks -------------------------------------------------------------------
def speed(vehicle: Vehicle) -> float:
    """Ground speed (m/s)."""
    return vehicle.signal("groundspeed")


def faster_than(kmh: float) -> Condition:
    """Condition: ground speed at or above ``kmh``."""
    return lambda v: speed(v) >= kmh * KMH


def slower_than(kmh: float) -> Condition:
    """Condition: ground speed at or below ``kmh``."""
    return lambda v: speed(v) <= kmh * KMH


def heading_error(vehicle: Vehicle, degrees: float) -> float:
    """Heading wanted minus yaw, wrapped to [-pi, pi) (rad); positive means turn left."""
    error = math.radians(degrees) - vehicle.signal("yaw")
    return (error + math.pi) % (2.0 * math.pi) - math.pi


def heading_reached(degrees: float, tolerance: float = 2.0) -> Condition:
    """Condition: yaw within ``tolerance`` degrees of ``degrees``."""
    return lambda v: abs(heading_error(v, degrees)) < math.radians(tolerance)


def clutch_out(seconds: float, throttle: float | None = None) -> Driver:
    """Let the clutch out linearly over ``seconds`` (at a fixed throttle, if given)."""

    def driver(v: Vehicle, t: float) -> Inputs:
        inputs = {"clutch": max(1.0 - t / seconds, 0.0)}
        return inputs if throttle is None else {**inputs, "throttle": throttle}

    return driver


def upshift_at(rpm: float, throttle: float = 1.0) -> Driver:
    """Hold the throttle; ask for the next gear above ``rpm`` when no shift is running."""

    def driver(v: Vehicle, t: float) -> Inputs:
        gear = v.signal("gear")
        if v.signal("rpm") > rpm and gear < 5 and not v.signal("shift_in_progress"):
            gear += 1
        return {"throttle": throttle, "clutch": 0.0, "gear": gear}

    return driver


def hold_speed(
    kmh: float,
    heading_deg: float | None = None,
    max_steering: float = 0.14,
    turn_in: float = 0.5,
) -> Driver:
    """Part throttle holding ``kmh`` (P control); optionally steer towards a heading.

    The steering is proportional to the heading error and limited to ``max_steering``
    (reached over ``turn_in`` seconds from the start of the phase), so a large heading change
    is a smooth turn-in, an arc of constant radius, and a smooth straightening out.
    """

    def driver(v: Vehicle, t: float) -> Inputs:
        error = kmh * KMH - speed(v)
        inputs = {"throttle": min(max(0.25 + 0.3 * error, 0.0), 1.0), "brake": 0.0}
        if heading_deg is not None:
            limit = max_steering * min(t / turn_in, 1.0)
            inputs["steering"] = min(max(1.5 * heading_error(v, heading_deg), -limit), limit)
        return inputs

    return driver


def combine(*drivers: Driver) -> Driver:
    """Merge the inputs of several drivers (later ones win)."""
    return lambda v, t: {k: val for d in drivers for k, val in d(v, t).items()}


# -- the manoeuvre ----------------------------------------------------------------------------
BRAKE = 0.22  # firm braking; the car has no ABS and locks its wheels from about 0.25
MANOEUVRE: tuple[Phase, ...] = (
    Phase("crank", 1.0, {"ignition": 3}),
    Phase("idle", 1.5, {"ignition": 2}),
    Phase("select 1st", 1.0, {"clutch": 1.0, "gear": 1}),
    Phase("pull away", 0.5, clutch_out(0.5, throttle=1.0)),
    Phase("accelerate", 12.0, upshift_at(6000), until=faster_than(120)),
    Phase("cruise 120 km/h", 4.0, hold_speed(120)),
    Phase(
        "brake to 50 km/h",
        4.0,
        {"throttle": 0.0, "brake": BRAKE, "clutch": 1.0, "gear": 3},
        until=slower_than(50),
    ),
    Phase("engage 3rd", 2.0, combine(hold_speed(50), clutch_out(1.0))),
    Phase("cruise 50 km/h", 3.0, hold_speed(50, heading_deg=0)),
    Phase("turn left 90°", 6.0, hold_speed(50, heading_deg=90), until=heading_reached(90)),
    Phase("straight", 6.0, hold_speed(50, heading_deg=90)),
    Phase(
        "brake to stop",
        3.0,
        {"throttle": 0.0, "brake": BRAKE, "clutch": 1.0, "steering": 0.0},
        until=lambda v: speed(v) < 0.01,
    ),
    Phase("neutral", 2.0, {"brake": BRAKE, "clutch": 1.0, "gear": 0}),
    Phase("engine off", 3.0, {"ignition": 0, "brake": 0.0, "clutch": 0.0, "parkingbrake": 1.0}),
)


@dataclass
class Run:
    """What a manoeuvre produced: every recorded row and where each phase started (s)."""

    rows: np.ndarray
    phase_starts: list[tuple[str, float]]
    wall_time: float
    unfinished: list[str]
    setup_time: float = 0.0
    total_wall_time: float = 0.0


def drive(vehicle: Vehicle, phases: tuple[Phase, ...], progress: Progress | None = None) -> Run:
    """Run the phases on ``vehicle``, recording every signal every 10 ms."""
    recorder = SignalRecorder(RECORD_EVERY)
    recorder.record(vehicle.outputs)
    starts: list[tuple[str, float]] = []
    unfinished: list[str] = []
    task = None
    if progress is not None:
        task = progress.add_task("", total=sum(p.seconds for p in phases), rtf=0.0)
    chunk = RECORD_EVERY * vehicle.dt
    begin = time.perf_counter()
    for index, phase in enumerate(phases):
        t0 = vehicle.time
        starts.append((phase.name, t0))
        limit = phase.seconds * (LIMIT_FACTOR if phase.until is not None else 1.0)
        if progress is not None and task is not None:
            progress.update(task, description=phase.name)
        while True:
            t = vehicle.time - t0
            if phase.until is not None and phase.until(vehicle):
                break
            if t >= limit - 0.5 * chunk:
                if phase.until is not None:
                    unfinished.append(phase.name)
                break
            vehicle.run(RECORD_EVERY, **phase.drive(vehicle, t))
            recorder.record(vehicle.outputs)
            if progress is not None and task is not None:
                # Expected total: what is done plus what the remaining phases should take.
                remaining = max(phase.seconds - (vehicle.time - t0), 0.0)
                later = sum(p.seconds for p in phases[index + 1 :])
                progress.update(
                    task,
                    completed=vehicle.time,
                    total=vehicle.time + remaining + later,
                    rtf=vehicle.time / max(time.perf_counter() - begin, 1e-9),
                )
    if progress is not None and task is not None:
        progress.update(task, completed=vehicle.time, total=vehicle.time, description="done")
    return Run(recorder.rows.copy(), starts, time.perf_counter() - begin, unfinished)


def summarize(run: Run, vehicle_name: str) -> dict[str, object]:
    """Key figures of a manoeuvre: times, speeds, distance, 0-100 km/h."""
    rows = run.rows
    t = column(rows, "time")
    v = column(rows, "groundspeed")
    sim_time = float(t[-1] - t[0])
    zero_to_100 = None
    pressed = np.flatnonzero(column(rows, "throttle_input") > 0.0)
    fast = np.flatnonzero(v >= 100 * KMH)
    if pressed.size and fast.size and fast[0] > pressed[0]:
        i = fast[0]  # interpolate the crossing between the rows i-1 and i
        crossing = t[i - 1] + (100 * KMH - v[i - 1]) / (v[i] - v[i - 1]) * (t[i] - t[i - 1])
        zero_to_100 = round(float(crossing - t[pressed[0]]), 2)
    return {
        "vehicle": vehicle_name,
        "engine_started": bool(column(rows, "engine_running").max() > 0.5),
        "simulated_time_s": round(sim_time, 3),
        "wall_time_s": round(run.wall_time, 3),
        "real_time_factor": round(sim_time / run.wall_time, 1) if run.wall_time > 0 else None,
        "setup_time_s": round(run.setup_time, 3),
        "total_wall_time_s": round(run.total_wall_time, 3),
        "max_speed_kmh": round(float(v.max() / KMH), 1),
        "zero_to_100_kmh_s": zero_to_100,
        "distance_m": round(float(np.sum(0.5 * (v[1:] + v[:-1]) * np.diff(t))), 1),
        "final_yaw_deg": round(math.degrees(float(column(rows, "yaw")[-1])), 1),
        "final_position_m": [
            round(float(column(rows, "posX")[-1]), 1),
            round(float(column(rows, "posY")[-1]), 1),
        ],
        "rows": int(rows.shape[0]),
        "phases": [{"name": n, "start_s": round(s, 3)} for n, s in run.phase_starts],
        "phases_cut_short": run.unfinished,
    }


def plot_manoeuvre(path: Path, run: Run, title: str) -> None:
    """A 2x2 figure: speed and gear, rpm, pedals, trajectory."""
    fig, axes = _figure(title)
    (ax_speed, ax_rpm), (ax_pedals, ax_path) = axes
    rows = run.rows
    t = column(rows, "time")

    ax_speed.plot(t, column(rows, "groundspeed") / KMH, color="tab:blue", label="speed")
    ax_speed.set(title="Speed and gear", xlabel="time (s)", ylabel="speed (km/h)")
    ax_speed.set_ylim(bottom=0)
    _legend(ax_speed, plot_gear(ax_speed, rows))

    plot_rpm(ax_rpm, rows, "Engine speed (dotted lines: phases)")
    ax_rpm.set_ylim(0, 1.3 * max(column(rows, "rpm").max(), 1000.0))  # room for phase names
    plot_pedals(
        ax_pedals, rows, ("throttle", "brake", "clutch"), "Pedals as applied (clutch 1 = pressed)"
    )
    for ax in (ax_speed, ax_rpm, ax_pedals):
        for i, (name, start) in enumerate(run.phase_starts):
            ax.axvline(start, color="grey", lw=0.6, ls=":")
            if ax is ax_rpm:  # staggered over four rows so that short phases do not collide
                ax.text(
                    start,
                    0.99 - 0.055 * (i % 4),
                    f" {name}",
                    fontsize=7,
                    va="top",
                    color="dimgrey",
                    transform=ax.get_xaxis_transform(),
                )

    x, y = column(rows, "posX"), column(rows, "posY")
    ax_path.plot(x, y, color="tab:blue")
    ax_path.plot(x[0], y[0], "o", color="tab:green", label="start")
    ax_path.plot(x[-1], y[-1], "s", color="tab:red", label="end")
    ax_path.set(title="Trajectory (equal scale)", xlabel="x (m)", ylabel="y (m)", aspect="equal")
    ax_path.set_ylim(min(y.min(), 0) - 20, max(y.max(), 0) + 20)
    ax_path.legend(loc="upper left")
    _save(fig, axes, path)


def run_manoeuvre(
    out: Path, vehicle: str = "nightrider", *, console: Console | None = None
) -> Path:
    """Drive ``vehicle`` through ``MANOEUVRE``; write CSV, plot and summary; return the folder.

    Args:
        out: Parent folder; a timestamped run folder is created inside it.
        vehicle: Preset name or parameter TOML file.
        console: Where to print progress and the summary (default: a new rich console).
    """
    console = console or Console()
    begin = time.perf_counter()
    with console.status("Preparing the vehicle (compiles the physics on the first run)…"):
        car = Vehicle(vehicle)  # a bad preset or TOML fails here, before any folder exists
    setup = time.perf_counter() - begin
    folder = run_folder(Path(out))

    with progress_bar(console) as progress:
        run = drive(car, MANOEUVRE, progress)
    run.setup_time = setup

    write_csv(folder / "signals.csv", run.rows)
    plot_manoeuvre(folder / "demo.png", run, f"vcosim demo --manoeuvre: {car.params.name}")
    run.total_wall_time = time.perf_counter() - begin  # setup, driving, CSV and plot
    summary = summarize(run, car.params.name)

    zero_to_100 = summary["zero_to_100_kmh_s"]
    lines = [
        ("simulated time", f"{summary['simulated_time_s']:.1f} s"),
        (
            "wall time",
            f"{summary['wall_time_s']:.2f} s ({summary['real_time_factor']}x real "
            f"time); {run.total_wall_time:.1f} s with setup and plot",
        ),
        ("max speed", f"{summary['max_speed_kmh']:.1f} km/h"),
        ("0-100 km/h", "not reached" if zero_to_100 is None else f"{zero_to_100:.2f} s"),
        ("distance", f"{summary['distance_m']:.0f} m"),
        ("final heading", f"{summary['final_yaw_deg']:.0f}°"),
    ]
    if not summary["engine_started"]:
        lines.append(("[red]engine", "[red]did not start"))
    if run.unfinished:
        lines.append(("[yellow]phases cut short", ", ".join(run.unfinished)))
    finish(console, folder, "vcosim demo --manoeuvre", summary, lines)
    return folder
