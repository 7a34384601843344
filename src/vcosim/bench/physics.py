"""Physics steps per second: the vehicle kernel against CommonRoad's multi-body model.

Absolute rates depend on the machine, so the baseline is timed in the same process, on the
same machine, in turns: the ratios carry across machines far better than the rates do.
Every figure is the best of ``REPEATS`` runs, the figures taking turns run by run, because a
busy machine only ever makes a run slower, never faster (``vcosim.bench.rates``).
"""

from __future__ import annotations

import contextlib
import math
import os
import platform
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

import numba
import numpy as np

from vcosim.bench.progress import bench_progress
from vcosim.bench.rates import BenchReport, RatioDoc, best_in_turns, rate_of
from vcosim.errors import VcosimError
from vcosim.vehicle import Vehicle, VehicleBatch

STEPS_PER_S = 2000  # physics steps per simulated second: a rate of 2000/s is real time
REPEATS = 3
KERNEL_CHUNK = 20_000  # steps per compiled call: call overhead is negligible at this size
PYTHON_CHUNK = 1_000  # Python-level steps between clock reads (step() calls, CommonRoad)
BATCH_SIZES = (64, 1024)
DRIVE = {"throttle": 0.3, "steering": 0.05}
ONE_THREAD_BATCH = 64  # the batch also timed on one thread, for ``batch_vs_kernel``
TARGETS = {"kernel_vs_commonroad": 10, "stepwise_vs_commonroad": 5}
QUICK = {"seconds": 0.2}
"""``--quick``: the same figures in ~8 s, for ``vcosim bench all --quick`` and its guard test."""

RATIOS = {
    "kernel_vs_commonroad": RatioDoc(
        "the vehicle kernel's physics steps/s over CommonRoad's multi-body model's",
        f"`Vehicle.run({KERNEL_CHUNK})` calls against CommonRoad's model stepped by explicit "
        "Euler from Python, both at dt 0.5 ms, in turns",
    ),
    "stepwise_vs_commonroad": RatioDoc(
        "stepping one vehicle from Python, as a coupling does, over CommonRoad's model",
        "one `Vehicle.step(throttle=, steering=)` per physics step, inputs changing every "
        "call, against CommonRoad's model, in turns",
    ),
    "batch_vs_kernel": RatioDoc(
        "what stepping many cars in one call buys per car",
        f"vehicle-steps/s of a batch of {ONE_THREAD_BATCH} on one thread over the lone "
        "kernel's steps/s, in turns; one thread, because numba's threads cannot be judged "
        "on a loaded machine (the threaded batches are reported, not guarded), and 64 cars, "
        "whose state stays in the core's own cache (1024 share the last level with the rest "
        "of the machine, and halve beside a busy neighbour)",
    ),
}
"""The same-run ratios this bench reports (``ratios()``), by their stable keys."""


def _rates(
    fns: list[Callable[[], int]], budget: float, tick: Callable[[], None] = lambda: None
) -> list[float]:
    """Units per second of each of ``fns``, the best of ``REPEATS`` runs of ``budget`` s.

    Each of ``fns`` does a chunk of work and returns how many units; the figures take turns
    run by run.
    """
    return best_in_turns([partial(rate_of, fn, budget) for fn in fns], REPEATS, tick)


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """Numba's parallel loops on the calling thread alone, meanwhile."""
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(threads)


V = TypeVar("V", Vehicle, VehicleBatch)


def _start(sim: V) -> V:
    """Crank the engine, select first and pull away, so the bench times a car under load.

    The clutch is let out over 1 s: dropped at once at 0.3 throttle, it stalls the engine
    and the bench would time a parked car. This also compiles the kernel before any timing.
    A batch's cars are identical, so one car pulls away and every row takes its state.
    """
    if isinstance(sim, VehicleBatch):
        started = _start(Vehicle(sim.params, sim.terrain)).snapshot()
        sim.states[:], sim.input_rows[:] = started.state, started.inputs
        sim.output_rows[:] = started.outputs
        sim.run(1)  # compiles the batch kernel before any timing
        return sim
    sim.run(STEPS_PER_S, ignition=3)
    sim.run(STEPS_PER_S, ignition=2, gear=1, clutch=1.0)
    for i in range(1, 101):
        sim.run(STEPS_PER_S // 100, clutch=1.0 - i / 100, **DRIVE)
    if not np.all(np.asarray(sim.signal("engine_running")) > 0.5):
        raise VcosimError("the engine stalled pulling away; the bench would time a parked car")
    return sim


def _kernel_chunk(vehicle: Vehicle) -> Callable[[], int]:
    """Many steps per compiled call: the kernel's own speed, with no Python in the loop."""

    def chunk() -> int:
        vehicle.run(KERNEL_CHUNK)
        return KERNEL_CHUNK

    return chunk


def _stepwise_chunk(vehicle: Vehicle) -> Callable[[], int]:
    """One Python ``step()`` per physics step with inputs changing every call, as in coupling.

    The inputs are precomputed Python floats so that only the vehicle's cost is timed.
    """
    phases = [2 * math.pi * i / PYTHON_CHUNK for i in range(PYTHON_CHUNK)]
    inputs = [(0.3 + 0.05 * math.sin(a), 0.05 + 0.01 * math.cos(a)) for a in phases]

    def chunk() -> int:
        for throttle, steering in inputs:
            vehicle.step(throttle=throttle, steering=steering)
        return PYTHON_CHUNK

    return chunk


def _commonroad_chunk() -> Callable[[], int]:
    """CommonRoad's multi-body model (29 states, pure Python), explicit Euler at our step.

    It starts at 15 m/s; a small steering rate turns the front wheels to 0.03 rad (about the
    kernel's 0.05 steering input) and a gentle acceleration keeps it driving, not resting.
    Python lists are used because they step faster than NumPy arrays at 29 elements.
    """
    try:
        from vehiclemodels.init_mb import init_mb
        from vehiclemodels.parameters_vehicle2 import parameters_vehicle2
        from vehiclemodels.vehicle_dynamics_mb import vehicle_dynamics_mb
    except ImportError as exc:
        raise VcosimError(
            "the physics bench needs CommonRoad's vehicle models: pip install 'vcosim[bench]'"
        ) from exc
    p = parameters_vehicle2()
    x = init_mb([0.0, 0.0, 0.0, 15.0, 0.0, 0.0, 0.0], p)
    dt = Vehicle.dt

    def chunk() -> int:
        nonlocal x
        for _ in range(PYTHON_CHUNK):
            f = vehicle_dynamics_mb(x, [2.0 * (0.03 - x[2]), 0.1], p)
            x = [xi + dt * fi for xi, fi in zip(x, f, strict=True)]
        return PYTHON_CHUNK

    return chunk


def _batch_chunk(batch: VehicleBatch, budget: float, threads: bool = True) -> Callable[[], int]:
    """One ``run(n)`` of the whole batch, n sized to a quarter of the budget from a probe.

    A quarter keeps the overshoot past the budget small while thread start-up stays
    negligible. ``threads`` False: on one thread. Returns vehicle-steps.
    """
    probe = 200
    with contextlib.nullcontext() if threads else one_thread():
        start = time.perf_counter()
        batch.run(probe)
        n = max(1, round(probe * budget / 4 / (time.perf_counter() - start)))

    def chunk() -> int:
        batch.run(n)
        return n * len(batch)

    return chunk if threads else on_one_thread(chunk)


def on_one_thread(chunk: Callable[[], int]) -> Callable[[], int]:
    """``chunk`` with numba's parallel loops on the calling thread alone."""

    def alone() -> int:
        with one_thread():
            return chunk()

    return alone


def _cpu_model() -> str:
    """The CPU's name, without which the absolute rates mean little."""
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as info:
        for line in info:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def machine_info() -> dict[str, Any]:
    """The machine and the libraries a bench ran on, for its JSON report."""
    return {
        "cpu_count": os.cpu_count(),
        "numba_threads": numba.get_num_threads(),
        "python": platform.python_version(),
        "numba": numba.__version__,
        "machine": platform.machine(),
        "cpu": _cpu_model(),
    }


@dataclass
class PhysicsBench(BenchReport):
    """``vcosim bench physics``: the rates (best of ``REPEATS``), the ratios, the machine."""

    kernel_steps_per_s: float
    stepwise_steps_per_s: float
    commonroad_mb_steps_per_s: float
    batch_vehicle_steps_per_s: dict[str, float]  # by batch size
    batch_one_thread_vehicle_steps_per_s: dict[str, float]  # by batch size
    seconds: float
    machine: dict[str, Any] = field(default_factory=machine_info)

    def ratios(self) -> dict[str, float]:
        """The same-run ratios of ``RATIOS``: higher is faster."""
        cr = self.commonroad_mb_steps_per_s
        batch = self.batch_one_thread_vehicle_steps_per_s[str(ONE_THREAD_BATCH)]
        return {
            "kernel_vs_commonroad": round(self.kernel_steps_per_s / cr, 3),
            "stepwise_vs_commonroad": round(self.stepwise_steps_per_s / cr, 3),
            "batch_vs_kernel": round(batch / self.kernel_steps_per_s, 3),
        }

    def to_dict(self) -> dict[str, Any]:
        """In the layout ``vcosim bench physics --json`` prints (rates rounded)."""
        ratios = self.ratios()
        return {
            "kernel_steps_per_s": round(self.kernel_steps_per_s, 1),
            "stepwise_steps_per_s": round(self.stepwise_steps_per_s, 1),
            "realtime_factor": round(self.kernel_steps_per_s / STEPS_PER_S, 1),
            "commonroad_mb_steps_per_s": round(self.commonroad_mb_steps_per_s, 1),
            "kernel_vs_commonroad": ratios["kernel_vs_commonroad"],
            "stepwise_vs_commonroad": ratios["stepwise_vs_commonroad"],
            "batch_vehicle_steps_per_s": {
                size: round(rate) for size, rate in self.batch_vehicle_steps_per_s.items()
            },
            "batch_one_thread_vehicle_steps_per_s": {
                size: round(rate)
                for size, rate in self.batch_one_thread_vehicle_steps_per_s.items()
            },
            "dt": Vehicle.dt,
            "seconds": self.seconds,
            "repeats": REPEATS,
            **self.machine,
            "targets": dict(TARGETS),
            "meets_targets": {name: ratios[name] >= TARGETS[name] for name in TARGETS},
            "ratios": ratios,
        }


def measure_physics_bench(seconds: float = 2.0, progress: bool = True) -> PhysicsBench:
    """Time the kernel, per-step Python calls, CommonRoad's model and batches in one run.

    ``seconds`` is the wall-clock budget of each repetition of each figure; the whole bench
    takes about 18 times that plus start-up. The progress bar goes to stderr so that stdout
    stays pure JSON.
    """
    if not seconds > 0:
        raise ValueError(f"seconds must be positive, got {seconds}")
    with bench_progress(progress) as bar:
        task = bar.add_task("starting the engines", total=REPEATS * (4 + len(BATCH_SIZES)))
        vehicle = _start(Vehicle())
        figures = {
            f"kernel: run({KERNEL_CHUNK})": _kernel_chunk(vehicle),
            "stepwise: step() per step": _stepwise_chunk(vehicle),
            "CommonRoad multi-body": _commonroad_chunk(),
        }
        batches = {str(count): _start(VehicleBatch(count)) for count in BATCH_SIZES}
        for size, batch in batches.items():
            figures[f"batch of {size}"] = _batch_chunk(batch, seconds)
        alone = str(ONE_THREAD_BATCH)  # one of BATCH_SIZES
        figures[f"batch of {alone}, one thread"] = _batch_chunk(
            batches[alone], seconds, threads=False
        )
        labels = iter(list(figures) * REPEATS)
        bar.update(task, description=next(labels))

        def tick() -> None:
            bar.update(task, advance=1, description=next(labels, "done"))

        rates = dict(zip(figures, _rates(list(figures.values()), seconds, tick), strict=True))
    kernel, stepwise, commonroad, *batch_rates, one_thread_rate = rates.values()
    return PhysicsBench(
        kernel,
        stepwise,
        commonroad,
        dict(zip(batches, batch_rates, strict=True)),
        {alone: one_thread_rate},
        seconds,
    )
