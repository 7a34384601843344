"""Real-time factor of a world against its number of vehicles, and its cost per vehicle-step.

Each size is a ring road of IDM cars 25 m apart (every car has one ahead, so sensors, drivers
and the collision horizon all work), run under the host in fast pacing. The baseline is the
batch kernel (``VehicleBatch.run``) stepping as many cars pulling away, timed in the same run:
the world's price for drivers, sensors and collision checks is its cost per vehicle-step over
the batch kernel's. The world's kernel alone, in long calls on one thread (the world's own
arrays, no drivers, sensors or collision checks), is timed too: the faster of it and the
batch kernel (numba's threads) is the ceiling of any world of that size on this machine
(``kernel_ceiling``): a target above it cannot be met by the world's code, only by a faster
kernel or more cores. Then 1, 2 and 4 externally coupled vehicles, each with its
own endpoint and controller process, in lock-step (``world_coupled``). Every figure is the
best of ``REPEATS``, the world, its kernel and the batch taking turns (a busy machine only
slows, and a burst of load then slows all three).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from vcosim.bench.physics import (
    REPEATS,
    STEPS_PER_S,
    _batch_chunk,
    _rates,
    _start,
    machine_info,
    on_one_thread,
    one_thread,
)
from vcosim.bench.progress import bench_progress
from vcosim.bench.rates import BenchReport, RatioDoc
from vcosim.bench.world_coupled import COUPLED_COUNTS, CoupledRow, controller_peers, measure_coupled
from vcosim.sim import Pacer, Simulation
from vcosim.vehicle import VehicleBatch
from vcosim.world import World, WorldFile
from vcosim.world.stepper import Stepper

COUNTS = (1, 10, 100, 1000)
SPACING = 25.0  # m between cars on the ring
# issue 25: 100 vehicles >= 12x and 1000 >= 1.2x real time on 2 cores
TARGETS = {"realtime_factor_100": 12.0, "realtime_factor_1000": 1.2, "cost_vs_batch_max": 2.0}
RATE_TARGETS = {"realtime_factor_100": "100", "realtime_factor_1000": "1000"}  # key: size
RATIO_SIZE = "100"  # the world whose cost against the batch kernel is the bench's ratio
QUICK: dict[str, Any] = {"seconds": 0.2, "counts": (100,), "coupled": (1,)}
"""``--quick``: 100 cars (the guarded ratio's size) and one coupled car, 0.2 s a figure (~4 s)."""

RATIOS = {
    "world_vs_batch": RatioDoc(
        "a world's speed per car against the bare batch kernel: the price of its drivers, "
        "sensors and collision checks",
        f"vehicle-steps/s of a ring of {RATIO_SIZE} IDM cars run by the host in fast pacing "
        "over the batch kernel stepping the same cars' arrays in long calls, both on one "
        "thread, in turns (numba's threads cannot be judged on a loaded machine: the "
        "threaded world and batch and their `cost_vs_batch` are reported, not guarded)",
    ),
}
"""The same-run ratios this bench reports (``ratios()``), by their stable keys."""


def ring_world(count: int) -> WorldFile:
    """``count`` IDM cars on a ring road, ``SPACING`` apart, rolling at 15 m/s."""
    radius = max(count * SPACING / (2 * math.pi), 200.0)  # 20 m/s at 2 m/s2 sideways
    return WorldFile.from_dict(
        {
            "paths": {"ring": {"circle": [0.0, 0.0, radius]}},
            "traffic": [
                {
                    "name": "car",
                    "count": count,
                    "spacing": 2 * math.pi * radius / count,
                    "speed": 15.0,
                    "driver": {"kind": "idm", "path": "ring", "speed": 20.0},
                }
            ],
        }
    )


def _world_chunk(sim: Simulation, budget: float) -> Callable[[], int]:
    """One ``sim.run`` of a quarter of the budget's worth of simulated time (from a probe).

    Returns vehicle-steps.
    """
    vehicles = len(sim.vehicles)
    start = time.perf_counter()
    sim.run(0.1)
    rate = 0.1 / max(time.perf_counter() - start, 1e-9)  # simulated s per wall s
    duration = max(round(rate * budget / 4 * STEPS_PER_S), 20) / STEPS_PER_S

    def chunk() -> int:
        return sim.run(duration).steps * vehicles

    return chunk


def _serial_chunk(world: World, budget: float) -> Callable[[], int]:
    """The world's kernel on one thread over copies of its arrays, in calls of many steps.

    Returns vehicle-steps; the call is sized from a probe as ``_batch_chunk`` sizes its own.
    """
    rows = (world.states.copy(), world.inputs.copy(), world.params, world.outputs.copy())
    terrain = world.terrain
    arrays = (*rows, terrain.height, terrain.friction, terrain.grid)
    serial = Stepper(arrays).entries[0]
    vehicles, probe = len(world), 20
    start = time.perf_counter()
    serial(*arrays, probe)
    n = max(1, round(probe * budget / 4 / (time.perf_counter() - start)))

    def chunk() -> int:
        serial(*arrays, n)
        return n * vehicles

    return chunk


@dataclass
class WorldBench(BenchReport):
    """``vcosim bench world``: per size, the world's and the batch kernel's vehicle-steps/s."""

    world_vehicle_steps_per_s: dict[str, float]  # by vehicle count
    batch_vehicle_steps_per_s: dict[str, float]
    collisions: dict[str, int]  # in the timed runs (none expected: IDM keeps its gap)
    seconds: float
    serial_vehicle_steps_per_s: dict[str, float]  # the world's kernel, one thread, long calls
    coupled: dict[str, CoupledRow] = field(default_factory=dict)  # by coupled vehicle count
    world_one_thread_vehicle_steps_per_s: dict[str, float] = field(default_factory=dict)
    machine: dict[str, Any] = field(default_factory=machine_info)

    def table(self) -> dict[str, dict[str, float]]:
        """Per size: real-time factor, the kernel's ceiling of it, costs per vehicle-step (us).

        ``kernel_ceiling`` is the real-time factor the kernel alone reaches at that size, on
        one thread or numba's, whichever is faster: no world of that size runs faster here.
        """
        out = {}
        for size, world in self.world_vehicle_steps_per_s.items():
            batch = self.batch_vehicle_steps_per_s[size]
            serial = self.serial_vehicle_steps_per_s[size]
            out[size] = {
                "realtime_factor": round(world / int(size) / STEPS_PER_S, 2),
                "kernel_ceiling": round(max(batch, serial) / int(size) / STEPS_PER_S, 2),
                "world_us_per_vehicle_step": round(1e6 / world, 3),
                "batch_us_per_vehicle_step": round(1e6 / batch, 3),
                "serial_us_per_vehicle_step": round(1e6 / serial, 3),
                "cost_vs_batch": round(batch / world, 2),
            }
        return out

    def verdicts(self, table: dict[str, dict[str, float]]) -> dict[str, str]:
        """Per real-time target, one line: met or not, and whether the kernel allows it here."""
        out = {}
        for key, size in RATE_TARGETS.items():
            if size not in table:
                continue
            row, target = table[size], TARGETS[key]
            said = (
                f"{size} vehicles: {row['realtime_factor']:g}x real time against a target of "
                f"{target:g}x; the kernel alone reaches {row['kernel_ceiling']:g}x here"
            )
            if row["realtime_factor"] >= target:
                out[key] = said + ": met"
            elif row["kernel_ceiling"] < target:
                out[key] = (
                    said + f": out of reach on this machine ({self.machine['cpu_count']} cores) "
                    f"without a kernel {target / row['kernel_ceiling']:.1f}x faster"
                )
            else:
                out[key] = said + ": the kernel allows it; the world's overhead is the gap"
        return out

    def ratios(self) -> dict[str, float]:
        """The same-run ratios of ``RATIOS`` (none without a world of ``RATIO_SIZE`` cars)."""
        if RATIO_SIZE not in self.world_one_thread_vehicle_steps_per_s:
            return {}
        world = self.world_one_thread_vehicle_steps_per_s[RATIO_SIZE]
        return {"world_vs_batch": round(world / self.serial_vehicle_steps_per_s[RATIO_SIZE], 3)}

    def to_dict(self) -> dict[str, Any]:
        """In the layout ``vcosim bench world --json`` prints."""
        table = self.table()
        checks = {
            "realtime_factor_100": table.get("100", {}).get("realtime_factor", 0.0),
            "realtime_factor_1000": table.get("1000", {}).get("realtime_factor", 0.0),
            "cost_vs_batch_max": max((row["cost_vs_batch"] for row in table.values()), default=0),
        }
        return {
            "sizes": table,
            "world_one_thread_vehicle_steps_per_s": {
                size: round(rate)
                for size, rate in self.world_one_thread_vehicle_steps_per_s.items()
            },
            "coupled": {size: row.to_dict() for size, row in self.coupled.items()},
            "collisions": self.collisions,
            "dt": 1.0 / STEPS_PER_S,
            "seconds": self.seconds,
            "repeats": REPEATS,
            **self.machine,
            "targets": dict(TARGETS),
            "kernel_ceiling": {
                key: table[size]["kernel_ceiling"]
                for key, size in RATE_TARGETS.items()
                if size in table
            },
            "verdicts": self.verdicts(table),
            "meets_targets": {
                "realtime_factor_100": checks["realtime_factor_100"]
                >= TARGETS["realtime_factor_100"],
                "realtime_factor_1000": checks["realtime_factor_1000"]
                >= TARGETS["realtime_factor_1000"],
                "cost_vs_batch_max": checks["cost_vs_batch_max"] <= TARGETS["cost_vs_batch_max"],
            },
            "ratios": self.ratios(),
        }


def measure_world_bench(
    seconds: float = 1.0,
    counts: tuple[int, ...] = COUNTS,
    progress: bool = True,
    coupled: tuple[int, ...] = COUPLED_COUNTS,
) -> WorldBench:
    """Time worlds of each size, the batch kernel at each size and the coupled worlds, in one run.

    ``seconds`` is the wall-clock budget of each repetition of each figure; the progress
    bar goes to stderr so that stdout stays pure JSON.
    """
    if not seconds > 0:
        raise ValueError(f"seconds must be positive, got {seconds}")
    bar = bench_progress(progress)
    worlds: dict[str, float] = {}
    batches: dict[str, float] = {}
    collisions: dict[str, int] = {}
    serials: dict[str, float] = {}
    alone: dict[str, float] = {}  # the world on one thread, at RATIO_SIZE
    turns = 3 * len(counts) + (RATIO_SIZE in map(str, counts)) + len(coupled)
    with bar:
        task = bar.add_task("starting", total=REPEATS * turns)
        for count in counts:
            size = str(count)
            bar.update(task, description=f"building {count} cars")
            world = World(ring_world(count))
            sim = Simulation(world, Pacer("fast"))
            chunks = [
                _world_chunk(sim, seconds),
                _serial_chunk(world, seconds),
                _batch_chunk(_start(VehicleBatch(count)), seconds),
            ]
            if size == RATIO_SIZE:  # a world of its own, whose stepper never tries threads
                with one_thread():
                    alone_sim = Simulation(World(ring_world(count)), Pacer("fast"))
                    chunks.append(on_one_thread(_world_chunk(alone_sim, seconds)))
            bar.update(task, description=f"{count} cars: world, kernel, batch")
            worlds[size], serials[size], batches[size], *rest = _rates(
                chunks, seconds, lambda: bar.advance(task)
            )
            if rest:
                alone[size] = rest[0]
            collisions[size] = len(world.collisions)
        rows = {}
        if coupled:
            bar.update(task, description=f"starting {sum(coupled)} controller processes")
            with controller_peers(sum(coupled)) as ports:
                for count in coupled:
                    bar.update(task, description=f"{count} coupled, lock-step")
                    mine, ports = ports[:count], ports[count:]
                    rows[str(count)] = measure_coupled(mine, seconds, lambda: bar.advance(task))
    return WorldBench(worlds, batches, collisions, seconds, serials, rows, alone)
