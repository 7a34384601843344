"""The manoeuvre demo: the vehicle alone through a table of phases (``MANOEUVRE``).

Start the engine, accelerate through the gears, brake, turn, stop; every signal recorded every
10 ms. The run folder gets ``signals.csv``, ``demo.png`` (speed and gear, rpm, pedals,
trajectory) and ``summary.json`` (times, speeds, distance, 0-100 km/h).
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from pathlib import Path

from vcosim.reports import Report
from vcosim.scenarios.manoeuvres import (
    OnProgress,
    Phase,
    Run,
    clutch_out,
    combine,
    drive,
    faster_than,
    heading_reached,
    hold_speed,
    slower_than,
    speed,
    upshift_at,
)
from vcosim.scenarios.metrics import KMH, column, distance, rounded, time_to_speed
from vcosim.scenarios.plots import plot_manoeuvre
from vcosim.sim.recorder import write_csv
from vcosim.vehicle import Vehicle

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


@dataclass(frozen=True)
class PhaseStart:
    """Where a phase of the manoeuvre began."""

    name: str
    start_s: float


@dataclass
class ManoeuvreSummary(Report):
    """``summary.json`` of the manoeuvre: times, speeds, distance, 0-100 km/h."""

    vehicle: str
    engine_started: bool
    simulated_time_s: float
    wall_time_s: float
    real_time_factor: float | None
    setup_time_s: float
    total_wall_time_s: float
    max_speed_kmh: float
    zero_to_100_kmh_s: float | None  # None: 100 km/h not reached
    distance_m: float
    final_yaw_deg: float
    final_position_m: list[float]
    rows: int
    phases: list[PhaseStart]
    phases_cut_short: list[str]

    def save(self, folder: Path) -> None:
        """Write ``folder/summary.json``."""
        (folder / "summary.json").write_text(json.dumps(self.to_dict(), indent=2) + "\n")


def summarize(
    run: Run, vehicle: str, setup_time: float, total_wall_time: float
) -> ManoeuvreSummary:
    """Key figures of a manoeuvre."""
    rows = run.rows
    t, v = column(rows, "time"), column(rows, "groundspeed")
    sim_time = float(t[-1] - t[0])
    pressed = column(rows, "throttle_input") > 0.0
    return ManoeuvreSummary(
        vehicle=vehicle,
        engine_started=bool(column(rows, "engine_running").max() > 0.5),
        simulated_time_s=round(sim_time, 3),
        wall_time_s=round(run.wall_time, 3),
        real_time_factor=round(sim_time / run.wall_time, 1) if run.wall_time > 0 else None,
        setup_time_s=round(setup_time, 3),
        total_wall_time_s=round(total_wall_time, 3),
        max_speed_kmh=round(float(v.max() / KMH), 1),
        zero_to_100_kmh_s=rounded(time_to_speed(t, v, pressed, 100 * KMH), 2),
        distance_m=round(distance(t, v), 1),
        final_yaw_deg=round(math.degrees(float(column(rows, "yaw")[-1])), 1),
        final_position_m=[
            round(float(column(rows, "posX")[-1]), 1),
            round(float(column(rows, "posY")[-1]), 1),
        ],
        rows=int(rows.shape[0]),
        phases=[PhaseStart(n, round(s, 3)) for n, s in run.phase_starts],
        phases_cut_short=run.unfinished,
    )


class ManoeuvreDemo:
    """The vehicle alone through a table of phases (``MANOEUVRE``)."""

    title = "vcosim demo --manoeuvre"
    preparing = "Preparing the vehicle (compiles the physics on the first run)…"

    def __init__(self, vehicle: str = "nightrider", phases: tuple[Phase, ...] = MANOEUVRE):
        self.vehicle = vehicle
        self.phases = phases
        self.car: Vehicle | None = None
        self.result: Run | None = None
        self.setup_time = self.total_wall_time = 0.0
        self._begin = 0.0
        self._folder = Path()

    def __enter__(self) -> ManoeuvreDemo:
        self._begin = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def prepare(self) -> None:
        """Build (and on the first run compile) the vehicle."""
        self.car = Vehicle(self.vehicle)
        self.setup_time = time.perf_counter() - self._begin

    def run(self, folder: Path, on_progress: OnProgress | None = None) -> None:
        """Drive the phases, recording every signal every 10 ms."""
        if self.car is None:
            raise RuntimeError("prepare() comes before run()")
        self._folder = folder
        self.result = drive(self.car, self.phases, on_progress)

    def write(self) -> ManoeuvreSummary:
        """``signals.csv``, ``demo.png`` and ``summary.json`` into the run folder."""
        run, car, folder = self.result, self.car, self._folder
        if run is None or car is None:
            raise RuntimeError("run() comes before write()")
        write_csv(folder / "signals.csv", run.rows)
        plot_manoeuvre(folder / "demo.png", run, f"vcosim demo --manoeuvre: {car.params.name}")
        self.total_wall_time = time.perf_counter() - self._begin  # setup, drive, CSV and plot
        summary = summarize(run, car.params.name, self.setup_time, self.total_wall_time)
        summary.save(folder)
        return summary
