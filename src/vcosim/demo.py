"""``vcosim demo``: drive the vehicle headless through a scripted manoeuvre and plot it.

The manoeuvre is a table of phases (``MANOEUVRE``). Each phase has a name, a duration, the
driver's inputs (fixed values, or a function of the vehicle and the time into the phase,
evaluated every 10 ms) and optionally a condition that ends it early; a phase with a condition
treats its duration as the expected one and gives up after ``LIMIT_FACTOR`` times as long.
The vehicle runs as fast as it can (far faster than real time); every signal is recorded every
10 ms. The run folder gets ``signals.csv``, ``demo.png`` and ``summary.json``.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from vcosim.vehicle import SIGNAL_NAMES, Vehicle

KMH = 1 / 3.6
RECORD_EVERY = 20  # physics steps (10 ms) between recorded rows and driver decisions
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
    kmh: float, heading_deg: float | None = None, max_steering: float = 0.14,
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
    Phase("brake to 50 km/h", 4.0,
          {"throttle": 0.0, "brake": BRAKE, "clutch": 1.0, "gear": 3}, until=slower_than(50)),
    Phase("engage 3rd", 2.0, combine(hold_speed(50), clutch_out(1.0))),
    Phase("cruise 50 km/h", 3.0, hold_speed(50, heading_deg=0)),
    Phase("turn left 90°", 6.0, hold_speed(50, heading_deg=90), until=heading_reached(90)),
    Phase("straight", 6.0, hold_speed(50, heading_deg=90)),
    Phase("brake to stop", 3.0,
          {"throttle": 0.0, "brake": BRAKE, "clutch": 1.0, "steering": 0.0},
          until=lambda v: speed(v) < 0.01),
    Phase("neutral", 2.0, {"brake": BRAKE, "clutch": 1.0, "gear": 0}),
    Phase("engine off", 3.0,
          {"ignition": 0, "brake": 0.0, "clutch": 0.0, "parkingbrake": 1.0}),
)


# -- running ----------------------------------------------------------------------------------
@dataclass
class Run:
    """What a run produced: every recorded row and where each phase started (s)."""

    rows: np.ndarray
    phase_starts: list[tuple[str, float]]
    wall_time: float
    unfinished: list[str]
    setup_time: float = 0.0
    total_wall_time: float = 0.0


def drive(vehicle: Vehicle, phases: tuple[Phase, ...], progress: Progress | None = None) -> Run:
    """Run the phases on ``vehicle``, recording every signal every 10 ms."""
    rows: list[np.ndarray] = [vehicle.outputs.copy()]
    starts: list[tuple[str, float]] = []
    unfinished: list[str] = []
    task = None
    if progress is not None:
        task = progress.add_task("", total=sum(p.seconds for p in phases))
    chunk = RECORD_EVERY * vehicle.dt
    begin = time.perf_counter()
    for index, phase in enumerate(phases):
        t0 = vehicle.time
        starts.append((phase.name, t0))
        limit = phase.seconds * (LIMIT_FACTOR if phase.until is not None else 1.0)
        if task is not None:
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
            rows.append(vehicle.outputs.copy())
            if task is not None:
                # Expected total: what is done plus what the remaining phases should take.
                remaining = max(phase.seconds - (vehicle.time - t0), 0.0)
                later = sum(p.seconds for p in phases[index + 1:])
                progress.update(task, completed=vehicle.time,
                                total=vehicle.time + remaining + later)
    if task is not None:
        progress.update(task, completed=vehicle.time, total=vehicle.time, description="done")
    return Run(np.array(rows), starts, time.perf_counter() - begin, unfinished)


def column(rows: np.ndarray, name: str) -> np.ndarray:
    """One signal of the recorded rows."""
    return rows[:, SIGNAL_NAMES.index(name)]


def summarize(run: Run, vehicle_name: str) -> dict[str, object]:
    """Key figures of a run: times, speeds, distance, 0-100 km/h."""
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
        "final_position_m": [round(float(column(rows, "posX")[-1]), 1),
                             round(float(column(rows, "posY")[-1]), 1)],
        "rows": int(rows.shape[0]),
        "phases": [{"name": n, "start_s": round(s, 3)} for n, s in run.phase_starts],
        "phases_cut_short": run.unfinished,
    }


# -- writing ----------------------------------------------------------------------------------
def csv_header() -> list[str]:
    """``time`` first, then every other signal in ``SIGNAL_NAMES`` order."""
    return ["time", *(n for n in SIGNAL_NAMES if n != "time")]


def write_csv(path: Path, rows: np.ndarray) -> None:
    """All signals, one row per 10 ms, time first."""
    order = [SIGNAL_NAMES.index(n) for n in csv_header()]
    np.savetxt(path, rows[:, order], delimiter=",", header=",".join(csv_header()),
               comments="", fmt="%.9g")


def plot(path: Path, run: Run, title: str) -> None:
    """A 2x2 figure: speed and gear, rpm, pedals, trajectory."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = run.rows
    t = column(rows, "time")
    fig, axes = plt.subplots(2, 2, figsize=(13, 8.5), constrained_layout=True)
    (ax_speed, ax_rpm), (ax_pedals, ax_path) = axes
    fig.suptitle(title)

    ax_speed.plot(t, column(rows, "groundspeed") / KMH, color="tab:blue", label="speed")
    ax_speed.set(title="Speed and gear", xlabel="time (s)", ylabel="speed (km/h)")
    ax_speed.set_ylim(bottom=0)
    ax_gear = ax_speed.twinx()
    ax_gear.step(t, column(rows, "gear"), where="post", color="tab:orange", label="gear")
    ax_gear.set(ylabel="gear", ylim=(-1.5, 6.5), yticks=range(-1, 6))
    lines = ax_speed.get_lines() + ax_gear.get_lines()
    ax_speed.legend(lines, [ln.get_label() for ln in lines], loc="upper right")

    ax_rpm.plot(t, column(rows, "rpm"), color="tab:red")
    ax_rpm.set(title="Engine speed (dotted lines: phases)", xlabel="time (s)",
               ylabel="engine speed (rpm)")

    for name, color in (("throttle", "tab:green"), ("brake", "tab:red"),
                        ("clutch", "tab:purple")):
        ax_pedals.plot(t, column(rows, name), color=color, label=name)
    ax_pedals.set(title="Pedals as applied (clutch 1 = pressed)", xlabel="time (s)",
                  ylabel="pedal (0-1)", ylim=(-0.05, 1.1))
    ax_pedals.legend(loc="upper right")

    ax_rpm.set_ylim(0, 1.3 * max(column(rows, "rpm").max(), 1000.0))  # room for phase names
    for ax in (ax_speed, ax_rpm, ax_pedals):
        ax.grid(alpha=0.3)
        for i, (name, start) in enumerate(run.phase_starts):
            ax.axvline(start, color="grey", lw=0.6, ls=":")
            if ax is ax_rpm:  # staggered over four rows so that short phases do not collide
                ax.text(start, 0.99 - 0.055 * (i % 4), f" {name}", fontsize=7, va="top",
                        color="dimgrey", transform=ax.get_xaxis_transform())

    x, y = column(rows, "posX"), column(rows, "posY")
    ax_path.plot(x, y, color="tab:blue")
    ax_path.plot(x[0], y[0], "o", color="tab:green", label="start")
    ax_path.plot(x[-1], y[-1], "s", color="tab:red", label="end")
    ax_path.set(title="Trajectory (equal scale)", xlabel="x (m)", ylabel="y (m)", aspect="equal")
    ax_path.set_ylim(min(y.min(), 0) - 20, max(y.max(), 0) + 20)
    ax_path.grid(alpha=0.3)
    ax_path.legend(loc="upper left")

    fig.savefig(path, dpi=110)
    plt.close(fig)


def run_folder(out: Path) -> Path:
    """A new ``out/<YYYYmmdd-HHMMSS>`` folder (suffixed if that second is taken)."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    folder, n = out / stamp, 1
    while folder.exists():
        n += 1
        folder = out / f"{stamp}-{n}"
    folder.mkdir(parents=True)
    return folder


def run_demo(out: Path, vehicle: str = "nightrider", console: Console | None = None) -> Path:
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

    columns = (
        TextColumn("[bold]{task.description:<18}"),
        BarColumn(),
        TextColumn("{task.completed:5.1f} / {task.total:4.1f} s simulated"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console) as progress:
        run = drive(car, MANOEUVRE, progress)
    run.setup_time = setup

    write_csv(folder / "signals.csv", run.rows)
    plot(folder / "demo.png", run, f"vcosim demo: {car.params.name}")
    run.total_wall_time = time.perf_counter() - begin  # setup, driving, CSV and plot
    summary = summarize(run, car.params.name)
    (folder / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")

    table = Table(title="vcosim demo", show_header=False)
    table.add_row("simulated time", f"{summary['simulated_time_s']:.1f} s")
    table.add_row("wall time", f"{summary['wall_time_s']:.2f} s "
                  f"({summary['real_time_factor']}x real time); "
                  f"{run.total_wall_time:.1f} s with setup and plot")
    table.add_row("max speed", f"{summary['max_speed_kmh']:.1f} km/h")
    zero_to_100 = summary["zero_to_100_kmh_s"]
    table.add_row("0-100 km/h", "not reached" if zero_to_100 is None else f"{zero_to_100:.2f} s")
    table.add_row("distance", f"{summary['distance_m']:.0f} m")
    table.add_row("final heading", f"{summary['final_yaw_deg']:.0f}°")
    if not summary["engine_started"]:
        table.add_row("[red]engine", "[red]did not start")
    if run.unfinished:
        table.add_row("[yellow]phases cut short", ", ".join(run.unfinished))
    console.print(table)
    console.print("Run folder:", str(folder), soft_wrap=True)
    return folder
