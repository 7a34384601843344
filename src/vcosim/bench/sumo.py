"""``vcosim bench sumo``: a vcosim car in SUMO's city traffic, how fast, and what a SUMO car costs.

Each size is a grid of signalled junctions (``netgenerate``) about 140 m of lane per car, with
that many cars on random trips of three blocks or more (``randomTrips.py``), all on their way
at time 0. One vcosim car (an IDM driver on its range sensor, SUMO's cars in sight) drives
eastward along a row of the grid and is in SUMO on that row's edges, lock-stepped at SUMO's
step. After a warm-up in which SUMO inserts its cars, the run is timed: the real-time factor,
the mean count of SUMO's cars in SUMO and in the world, and the wall-clock cost per SUMO car
per SUMO step, split into SUMO's own step (with the subscriptions it fills), reading SUMO's
cars and lights back, and the world (moving the boxes, sensors, collision checks and its one
full-model car). Each size runs with every SUMO car in the world (what a recording of them all
needs), and with only those within ``NEAR`` metres of the vcosim car (``[sumo] radius``: all
its sensor and collision checks need).

Each size and SUMO setting also runs SUMO *alone* (the same network, demand, step and
options through libsumo, nothing read back, no vcosim): the floor no coupling can beat. The
ratio that judges the coupling is of CPU time (``time.process_time``: SUMO runs in this
process through libsumo), measured in the same run: ``cpu_ratio``, SUMO alone's CPU time per
SUMO car and step over vcosim+SUMO's (1: the coupling costs nothing; 0.5: it doubles the
cost). CPU time, unlike wall time, does not count the time other programs take the cores.

The settings: a 10 ms step with SUMO's drivers deciding every step (SUMO's default), the same
step with them deciding every 100 ms (``--default.action-step-length 0.1``: cars still move
every 10 ms, and the world sees them at every physics step), and a 100 ms step.

``vcosim bench all`` runs the issue's setting alone (``measure_sumo_ratio``: 1000 cars, a
10 ms step, SUMO's drivers deciding every step, every car in the world; 100 cars and 1 s with
``--quick``) and its guard holds ``cpu_ratio`` as ``every_car_vs_sumo_alone``.
"""

from __future__ import annotations

import math
import os
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vcosim.bench.physics import machine_info
from vcosim.bench.progress import bench_progress
from vcosim.bench.rates import BenchReport, RatioDoc
from vcosim.reports import Report

SIZES = (1000, 5000)
TARGETS = {1000: 1.0, 5000: 0.5}
"""Real-time factors issue 28 asks for, on 2 cores, by count of SUMO cars."""
LANE_PER_CAR = 140.0  # m of lane per SUMO car: a busy town, queues at red lights
BLOCK = 200.0  # m between junctions
NEAR = 250.0
"""m: the radius of the second run of each size (the range sensor's 150 m, and a margin)."""
SETTINGS: tuple[tuple[float, float | None], ...] = ((0.01, None), (0.01, 0.1), (0.1, None))
"""(SUMO's step, its drivers' action step; None: every step) of each run."""
QUICK: dict[str, Any] = {
    "sizes": (100,), "seconds": 1.0, "warmup": 0.5, "radii": (None,), "settings": ((0.01, None),),
    "repeats": 3,
}  # fmt: skip
RATIOS = {
    "every_car_vs_sumo_alone": RatioDoc(
        "SUMO alone's CPU time per SUMO car and step over vcosim+SUMO's (1: the coupling costs "
        "nothing): what reading every SUMO car into the world, moving ours in SUMO and the "
        "world's sensors and collision checks add to SUMO's own step",
        "CPU time of this process (SUMO runs in it through libsumo) over the timed run, a 10 ms "
        "step with SUMO's drivers deciding every step and every SUMO car in the world, SUMO "
        "alone and coupled taking turns, the turn of least CPU time of each",
    ),
}
"""The same-run ratio ``vcosim bench all`` guards (``SumoBench.ratios``)."""
GUARDED: dict[str, Any] = {"sizes": (1000,), "radii": (None,), "settings": ((0.01, None),)}
"""What ``vcosim bench all`` measures: the setting of ``RATIOS``, at 1000 cars."""


@dataclass
class SumoRow(Report):
    """One size: the count asked for and what the run gave."""

    vehicles: int  # SUMO cars the trips hold
    step_length: float  # s: SUMO's step
    action_step: float | None  # s: how often SUMO's drivers decide (None: every step)
    radius: float | None  # m: only SUMO's cars this near the vcosim car are in the world
    junctions: int  # per side of the grid
    in_sumo: float  # mean SUMO cars in SUMO over the timed run
    present: float  # mean SUMO cars of those in the world
    sim_seconds: float
    wall_seconds: float
    realtime_factor: float
    us_per_vehicle_step: float  # wall-clock per SUMO car (in SUMO) per SUMO step (us)
    sumo_us_per_vehicle_step: float  # of which in SUMO's own step
    read_us_per_vehicle_step: float  # of which reading SUMO's cars and lights back
    world_us_per_vehicle_step: float  # of which the rest: the world and the coupling to SUMO
    alone_realtime_factor: float  # SUMO alone, the same network, demand and setting
    alone_us_per_vehicle_step: float
    collisions: int  # of the vcosim car (it runs red lights: its IDM sees cars, not lights)
    target: float | None = None  # the real-time factor asked for
    meets_target: bool | None = None
    cpu_us_per_vehicle_step: float = math.nan  # CPU time (this process) per SUMO car-step
    alone_cpu_us_per_vehicle_step: float = math.nan  # SUMO alone's
    cpu_ratio: float = math.nan  # SUMO alone's CPU time over vcosim+SUMO's (1: free)


@dataclass
class SumoBench(BenchReport):
    """``vcosim bench sumo``: a row per size, the step, the machine and its load."""

    sizes: list[SumoRow] = field(default_factory=list)
    load_average: tuple[float, float, float] = (0.0, 0.0, 0.0)
    machine: dict[str, Any] = field(default_factory=dict)

    def ratios(self) -> dict[str, float]:
        """``RATIOS`` from the smallest size's run of their setting (none without one)."""
        rows = [
            row for row in self.sizes
            if row.radius is None and row.step_length == 0.01 and row.action_step is None
        ]  # fmt: skip
        if not rows:
            return {}
        row = min(rows, key=lambda row: row.vehicles)
        return {"every_car_vs_sumo_alone": round(row.cpu_ratio, 3)}

    def to_dict(self) -> dict[str, Any]:
        """Every figure, and the guarded ratio, as ``vcosim bench sumo --json`` prints them."""
        return {**super().to_dict(), "ratios": self.ratios()}


def measure_sumo_ratio(progress: bool = False, **options: Any) -> SumoBench:
    """``vcosim bench all``'s part: only the guarded setting (``GUARDED``), then ``options``."""
    return measure_sumo_bench(progress, **{**GUARDED, **options})


def measure_sumo_bench(
    progress: bool = False,
    sizes: tuple[int, ...] = SIZES,
    seconds: float = 3.0,
    warmup: float = 2.0,
    radii: tuple[float | None, ...] = (None, NEAR),
    settings: tuple[tuple[float, float | None], ...] = SETTINGS,
    repeats: int = 2,
) -> SumoBench:
    """Time a vcosim car in ``sizes`` SUMO cars for ``seconds`` simulated seconds each.

    Args:
        progress: Show a bar on stderr.
        sizes: Counts of SUMO cars.
        seconds: Simulated seconds timed per size (after ``warmup`` untimed ones).
        warmup: Simulated seconds for SUMO to insert its cars.
        radii: A run per size for each: only SUMO's cars this near the vcosim car enter the
            world (None: all).
        settings: A run per size for each (SUMO's step, its action step; s).
        repeats: Runs of each, SUMO alone and coupled taking turns; the one of least CPU
            time counts (what other programs take from a shared machine only adds).
    """
    rows = []
    with bench_progress(progress) as bar, tempfile.TemporaryDirectory() as scratch:
        total = len(sizes) * (len(radii) + 1) * len(settings) * repeats
        task = bar.add_task("sumo", total=total)
        for count in sizes:
            folder = Path(scratch) / str(count)
            for step_length, action in settings:
                alones: list[tuple[float, float, float]] = []
                best: dict[float | None, SumoRow] = {}
                for _ in range(repeats):
                    bar.update(task, description=f"sumo alone: {count} cars, {step_length} s")
                    alones.append(_alone(count, step_length, action, seconds, warmup, folder))
                    bar.advance(task)
                    for radius in radii:
                        bar.update(
                            task, description=f"sumo: {count} cars, {step_length} s, {radius}"
                        )
                        row = _measure(count, step_length, action, seconds, warmup, radius, folder)
                        kept = best.get(radius)
                        if (
                            kept is None
                            or row.cpu_us_per_vehicle_step < kept.cpu_us_per_vehicle_step
                        ):
                            best[radius] = row
                        bar.advance(task)
                alone = min(alones, key=lambda run: run[2])
                for radius in radii:
                    row = best[radius]
                    row.alone_realtime_factor, row.alone_us_per_vehicle_step = alone[:2]
                    row.alone_cpu_us_per_vehicle_step = alone[2]
                    row.cpu_ratio = alone[2] / row.cpu_us_per_vehicle_step
                    rows.append(row)
    return SumoBench(sizes=rows, load_average=os.getloadavg(), machine=machine_info())


def _scenario(count: int, folder: Path) -> tuple[Path, int]:
    """The grid's .sumocfg for ``count`` cars (made once per folder) and its junctions a side."""
    from vcosim.traffic.network import grid_scenario

    # a grid of n x n junctions has 4 n (n - 1) one-way edges of two lanes
    junctions = max(3, round(math.sqrt(count * LANE_PER_CAR / (8 * BLOCK)) + 0.5))
    config = folder / "grid.sumocfg"
    if not config.exists():
        grid_scenario(folder, junctions, count, BLOCK)
    return config, junctions


def _options(action: float | None) -> list[str]:
    return [] if action is None else ["--default.action-step-length", f"{action}"]


def _alone(
    count: int,
    step_length: float,
    action: float | None,
    seconds: float,
    warmup: float,
    folder: Path,
) -> tuple[float, float, float]:
    """SUMO alone on the size's scenario: (real-time factor, us per car per step, CPU us)."""
    from vcosim.traffic.sumo import QUIET, _libsumo, sumo_tool

    config, _ = _scenario(count, folder)
    api = _libsumo()
    api.start(
        [sumo_tool("sumo"), "-c", str(config), "--step-length", f"{step_length}", "--seed", "0",
         *QUIET, *_options(action)]
    )  # fmt: skip
    try:
        for _ in range(round(warmup / step_length)):
            api.simulationStep()
        steps, cars = round(seconds / step_length), 0
        start, cpu_start = time.perf_counter(), time.process_time()
        for _ in range(steps):
            api.simulationStep()
            cars += api.vehicle.getIDCount()
        wall = time.perf_counter() - start
        cpu = time.process_time() - cpu_start
    finally:
        api.close()
    return steps * step_length / wall, 1e6 * wall / max(cars, 1), 1e6 * cpu / max(cars, 1)


def _measure(
    count: int,
    step_length: float,
    action: float | None,
    seconds: float,
    warmup: float,
    radius: float | None,
    folder: Path,
) -> SumoRow:
    from vcosim.traffic.network import LANE_WIDTH, row_route
    from vcosim.traffic.sumo import attach_sumo
    from vcosim.world import World, WorldFile
    from vcosim.world.sumo_spec import SumoSpec

    config, junctions = _scenario(count, folder)
    row = junctions // 2
    y = row * BLOCK - LANE_WIDTH / 2  # the left of the two eastbound lanes
    world = World(
        WorldFile.from_dict(
            {
                "paths": {"row": {"points": [[0.0, y], [BLOCK * (junctions - 1), y]]}},
                "vehicles": [
                    {
                        "name": "ego",
                        "start": {"x": 30.0, "y": y, "speed": 10.0},
                        "driver": {"kind": "idm", "path": "row", "speed": 12.0},
                    }
                ],
            }
        )
    )
    route = {"ego": row_route(row, junctions)}
    spec = SumoSpec(
        config=str(config), step_length=step_length, radius=radius, routes=route,
        options=_options(action),
    )  # fmt: skip
    traffic = attach_sumo(world, spec)
    try:
        world.run(round(warmup / world.dt))
        steps, present, in_sumo = 0, 0, 0
        sumo_before, read_before = traffic.sumo_seconds, traffic.read_seconds
        start, cpu_start = time.perf_counter(), time.process_time()
        chunk = traffic.period_steps
        for _ in range(round(seconds / (chunk * world.dt))):
            world.run(chunk)
            steps += 1
            present += traffic.vehicle_count
            in_sumo += traffic.api.vehicle.getIDCount()
        wall = time.perf_counter() - start
        cpu = time.process_time() - cpu_start
        sumo = traffic.sumo_seconds - sumo_before
        read = traffic.read_seconds - read_before
    finally:
        traffic.close()
    per = 1e6 / max(in_sumo, 1)
    sim = steps * chunk * world.dt
    rtf = sim / wall
    target = TARGETS.get(count)
    return SumoRow(
        vehicles=count,
        step_length=step_length,
        action_step=action,
        radius=radius,
        junctions=junctions,
        in_sumo=in_sumo / max(steps, 1),
        present=present / max(steps, 1),
        sim_seconds=sim,
        wall_seconds=wall,
        realtime_factor=rtf,
        us_per_vehicle_step=wall * per,
        sumo_us_per_vehicle_step=sumo * per,
        read_us_per_vehicle_step=read * per,
        world_us_per_vehicle_step=(wall - sumo - read) * per,
        alone_realtime_factor=math.nan,  # measured apart, filled in by the caller
        alone_us_per_vehicle_step=math.nan,
        collisions=len(world.collisions),
        target=target,
        meets_target=None if target is None else rtf >= target,
        cpu_us_per_vehicle_step=cpu * per,
    )
