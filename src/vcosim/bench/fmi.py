"""How much the FMU costs: vehicle-FMU doSteps per second against the kernel.

``vcosim bench fmi --json``. First under FMPy, in this process, at a 1 ms communication step
(two physics steps): the native FMU (FMI 2) through FMPy's ctypes calls, the kernel as
``Vehicle.run(2)``; each once bare and once as a master uses it (set the pedals, read the
speed each step: ``set_inputs`` and ``signal`` in process). ``cost_ratio`` is how many
in-process steps one FMU step costs; the guarded ratio ``fmu_vs_in_process`` is its inverse,
so that it too reads higher is faster.

Then without Python in the way: a plain C master (``vcosim.fmi.native.hosts``, its own
process) steps the FMU at 1 ms, against the kernel in long calls here (``Vehicle.run(2000)``),
both in physics steps per second; ``native_cost_ratio`` is the kernel's rate over the C
master's (issue 42 wants at most 1.3), and the guarded ``native_vs_kernel`` its inverse.
All six take ``TURNS`` turns in alternation and each keeps its best (``vcosim.bench.rates``).
The same two are also taken per second of the stepping thread's CPU time
(``native_cpu_cost_ratio``): on a loaded machine the wall-clock ratio moves by a third from
run to run with whichever process the scheduler delayed; the CPU-time one much less.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from vcosim.bench.progress import bench_progress
from vcosim.bench.rates import BenchReport, RatioDoc, best_in_turns, rate_of
from vcosim.fmi.build import build_vehicle_fmu
from vcosim.vehicle import Vehicle

COMMUNICATION_STEP = 0.001
TURNS = 3  # turns of each figure, taken in alternation
CHUNK = 100  # doSteps between clock reads
QUICK = {"seconds": 0.6}
"""``--quick``: the same figures in ~5 s, for ``vcosim bench all --quick`` and its guard test."""

KERNEL_CALL = 2000  # physics steps per in-process call when the kernel is timed bare
SIMULATED_PER_WALL_SECOND = 400.0
"""Simulated seconds the C master runs per second of budget (about 800 k physics steps)."""

RATIOS = {
    "fmu_vs_in_process": RatioDoc(
        "the vehicle FMU's speed as a share of the same vehicle in process (1 / `cost_ratio`)",
        "doSteps/s of the native FMU under FMPy (FMI 2) against `Vehicle.run(2)`, both at a "
        "1 ms communication step in this process, in turns",
    ),
    "native_vs_kernel": RatioDoc(
        "the native FMU stepped by a C master, as a share of the kernel's own speed "
        "(1 / `native_cost_ratio`)",
        "physics steps/s of the FMI 2 FMU under a plain C master (its own process, 1 ms "
        "steps) against `Vehicle.run(2000)` in this process, in turns",
    ),
}
"""The same-run ratios this bench reports (``ratios()``), by their stable keys."""


@dataclass
class FmuCost(BenchReport):
    """doSteps per second of the vehicle FMU and the kernel's steps per second, same step."""

    communication_step: float
    fmu_steps_per_s: float
    fmu_with_io_steps_per_s: float
    in_process_steps_per_s: float
    in_process_with_io_steps_per_s: float
    cost_ratio: float
    cost_ratio_with_io: float
    c_host_physics_steps_per_s: float
    kernel_physics_steps_per_s: float
    native_cost_ratio: float
    c_host_physics_steps_per_cpu_s: float = 0.0
    kernel_physics_steps_per_cpu_s: float = 0.0
    native_cpu_cost_ratio: float = 0.0

    def ratios(self) -> dict[str, float]:
        """The same-run ratios of ``RATIOS``: higher is faster."""
        return {
            "fmu_vs_in_process": 1.0 / self.cost_ratio,
            "native_vs_kernel": 1.0 / self.native_cost_ratio,
        }

    def to_dict(self) -> dict[str, Any]:
        """In the layout ``vcosim bench fmi --json`` prints."""
        return {**super().to_dict(), "ratios": self.ratios()}


def _chunk(step: Callable[[], None]) -> Callable[[], int]:
    """``CHUNK`` calls of ``step`` (warmed up first): a chunk for ``rate_of``."""
    for _ in range(2 * CHUNK):
        step()

    def chunk() -> int:
        for _ in range(CHUNK):
            step()
        return CHUNK

    return chunk


def measure_fmu_cost(seconds: float = 3.0, progress: bool = True) -> FmuCost:
    """Measure the FMU and the kernel, bare and with I/O, ``seconds`` each (sum of turns)."""
    from fmpy import extract, instantiate_fmu, read_model_description

    from vcosim.fmi.native.hosts import build_host, run_host

    with (
        tempfile.TemporaryDirectory(prefix="vcosim-measure-") as scratch,
        bench_progress(progress) as bar,
    ):
        task = bar.add_task("building the vehicle FMU", total=6 * TURNS)
        path = build_vehicle_fmu(Path(scratch) / "vehicle.fmu")
        host = build_host(2, Path(scratch) / "host2")
        description = read_model_description(str(path))
        refs = {v.name: v.valueReference for v in description.modelVariables}
        fmu = instantiate_fmu(
            extract(str(path), unzipdir=str(Path(scratch) / "unzip")), description
        )
        fmu.setupExperiment(startTime=0.0)
        fmu.enterInitializationMode()
        fmu.exitInitializationMode()
        clock = [0.0]

        def bare() -> None:
            fmu.doStep(clock[0], COMMUNICATION_STEP)
            clock[0] += COMMUNICATION_STEP

        pedals, speed = [refs["throttle"], refs["brake"]], [refs["groundspeed"]]

        def with_io() -> None:
            fmu.setReal(pedals, [0.3, 0.0])
            fmu.doStep(clock[0], COMMUNICATION_STEP)
            fmu.getReal(speed)
            clock[0] += COMMUNICATION_STEP

        vehicle = Vehicle(engine_running=True)
        vehicle.set_inputs(automatic=1, gear=1, throttle=0.3)

        def kernel_with_io() -> None:
            vehicle.set_inputs(throttle=0.3, brake=0.0)
            vehicle.run(2)
            vehicle.signal("groundspeed")

        chunks = [_chunk(bare), _chunk(with_io), _chunk(lambda: vehicle.run(2))]
        chunks.append(_chunk(kernel_with_io))
        long_calls = Vehicle(engine_running=True)
        long_calls.set_inputs(automatic=1, gear=1, throttle=0.5)

        def kernel_bare() -> int:
            long_calls.run(KERNEL_CALL)
            return KERNEL_CALL

        bar.update(task, description="FMU and in-process, in turns")
        turn = seconds / TURNS

        cpu_rates = {"host": 0.0, "kernel": 0.0}  # the best of the turns, per CPU second

        def c_host() -> float:
            said = run_host(host, path, seconds=SIMULATED_PER_WALL_SECOND * turn)
            cpu_rates["host"] = max(cpu_rates["host"], said.physics_steps_per_cpu_s)
            return said.physics_steps_per_s

        def kernel_physics_rate() -> float:
            stepped = 0

            def counted() -> int:
                nonlocal stepped
                stepped += kernel_bare()
                return KERNEL_CALL

            cpu_start = time.thread_time()
            rate = rate_of(counted, turn)
            cpu = time.thread_time() - cpu_start
            cpu_rates["kernel"] = max(cpu_rates["kernel"], stepped / cpu if cpu > 0 else 0.0)
            return rate

        measures: list[Callable[[], float]] = [partial(rate_of, c, turn) for c in chunks]
        kernel_bare()  # warm (compiled on the first call)
        measures += [c_host, kernel_physics_rate]
        fmu_rate, io_rate, kernel_rate, kernel_io_rate, host_rate, kernel_physics = best_in_turns(
            measures, TURNS, lambda: bar.advance(task)
        )
        fmu.terminate()
        fmu.freeInstance()
    return FmuCost(
        communication_step=COMMUNICATION_STEP,
        fmu_steps_per_s=fmu_rate,
        fmu_with_io_steps_per_s=io_rate,
        in_process_steps_per_s=kernel_rate,
        in_process_with_io_steps_per_s=kernel_io_rate,
        cost_ratio=kernel_rate / fmu_rate,
        cost_ratio_with_io=kernel_io_rate / io_rate,
        c_host_physics_steps_per_s=host_rate,
        kernel_physics_steps_per_s=kernel_physics,
        native_cost_ratio=kernel_physics / host_rate,
        c_host_physics_steps_per_cpu_s=cpu_rates["host"],
        kernel_physics_steps_per_cpu_s=cpu_rates["kernel"],
        native_cpu_cost_ratio=cpu_rates["kernel"] / cpu_rates["host"],
    )
