"""How much the FMU costs: vehicle-FMU doSteps per second under fmpy against the kernel.

``vcosim bench fmi --json``. Both run in this process, one after the other, at a 1 ms
communication step (two physics steps): the FMU through fmpy's FMI 2 calls into pythonfmu's
runtime (this interpreter, embedded), the kernel as ``Vehicle.run(2)``; each once bare and
once as a master uses it (set the pedals, read the speed each step: ``set_inputs`` and
``signal`` in process). ``cost_ratio`` is how many in-process steps one FMU step costs.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from vcosim.fmi.build import build_vehicle_fmu
from vcosim.reports import Report
from vcosim.vehicle import Vehicle

COMMUNICATION_STEP = 0.001


@dataclass
class FmuCost(Report):
    """doSteps per second of the vehicle FMU and the kernel's steps per second, same step."""

    communication_step: float
    fmu_steps_per_s: float
    fmu_with_io_steps_per_s: float
    in_process_steps_per_s: float
    in_process_with_io_steps_per_s: float
    cost_ratio: float
    cost_ratio_with_io: float


def _rate(step: Callable[[], None], seconds: float) -> float:
    """Calls per second of ``step`` over about ``seconds`` of wall time (after a warm-up)."""
    for _ in range(200):
        step()
    count, start = 0, time.perf_counter()
    end = start + seconds
    while time.perf_counter() < end:
        for _ in range(100):
            step()
        count += 100
    return count / (time.perf_counter() - start)


def measure_fmu_cost(seconds: float = 3.0) -> FmuCost:
    """Measure the FMU and the kernel for ``seconds`` each (the FMU twice)."""
    from fmpy import extract, instantiate_fmu, read_model_description

    with tempfile.TemporaryDirectory(prefix="vcosim-measure-") as scratch:
        path = build_vehicle_fmu(Path(scratch) / "vehicle.fmu")
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

        fmu_rate = _rate(bare, seconds)
        io_rate = _rate(with_io, seconds)
        fmu.terminate()
        fmu.freeInstance()

    vehicle = Vehicle(engine_running=True)
    vehicle.set_inputs(automatic=1, gear=1, throttle=0.3)
    kernel_rate = _rate(lambda: vehicle.run(2), seconds)

    def kernel_with_io() -> None:
        vehicle.set_inputs(throttle=0.3, brake=0.0)
        vehicle.run(2)
        vehicle.signal("groundspeed")

    kernel_io_rate = _rate(kernel_with_io, seconds)
    return FmuCost(
        communication_step=COMMUNICATION_STEP,
        fmu_steps_per_s=fmu_rate,
        fmu_with_io_steps_per_s=io_rate,
        in_process_steps_per_s=kernel_rate,
        in_process_with_io_steps_per_s=kernel_io_rate,
        cost_ratio=kernel_rate / fmu_rate,
        cost_ratio_with_io=kernel_io_rate / io_rate,
    )
