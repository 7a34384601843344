"""Shared pieces of the contract tests: a served simulation, threads, waiting on conditions."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from vcosim.contracts import ContractServer
from vcosim.sim.pacing import Pacer
from vcosim.sim.simulation import Simulation
from vcosim.vehicle import Vehicle

VEHICLE = Vehicle(engine_running=True)  # settled once; each test gets a restored copy
VEHICLE.step(automatic=1, gear=1)
START = VEHICLE.snapshot()


def served(
    pacing: str = "fast",
    *,
    dilation: float = 1.0,
    frame_rate: float = 60.0,
    port: int = 0,
    **options: Any,
) -> tuple[Simulation, ContractServer]:
    """A simulation (engine idling, automatic in D) with a contract server on a free port."""
    car = Vehicle(engine_running=False)
    car.restore(START)
    sim = Simulation(car, Pacer(pacing, dt=car.dt, time_dilation=dilation, frame_rate=frame_rate))
    server = sim.attach("contracts", ContractServer(port=port, **options))
    return sim, server


def document(
    port: int, *, outputs: list | None = None, inputs: list | None = None, **top: Any
) -> dict[str, Any]:
    """A version-2 configuration for a server on ``port`` (default object Vehicle_A)."""
    doc: dict[str, Any] = {
        "version": 2.0,
        "remotePort": port,
        "remoteObject": "Vehicle_A",
        "timeDilation": 0.0,
        **top,
    }
    if outputs is not None:
        doc["outputs"] = outputs
    if inputs is not None:
        doc["inputs"] = inputs
    return doc


def fields(*names: str, **options: Any) -> list[list[dict[str, Any]]]:
    """One width-1 port per property name."""
    return [[{"propertyName": name, **options}] for name in names]


class Background:
    """Run a callable in a daemon thread; ``result`` joins it and re-raises its exception."""

    def __init__(self, target: Callable[[], Any]) -> None:
        self.value: Any = None
        self.error: BaseException | None = None

        def run() -> None:
            try:
                self.value = target()
            except BaseException as exc:  # handed to the test thread by result()
                self.error = exc

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()

    def result(self, timeout: float = 20.0) -> Any:
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "background run did not finish"
        if self.error is not None:
            raise self.error
        return self.value


def wait_until(predicate: Callable[[], bool], timeout: float = 10.0) -> bool:
    """Wait for a condition another thread makes true, up to a deadline (checks every 2 ms)."""
    deadline = time.perf_counter() + timeout
    while not predicate():
        if time.perf_counter() > deadline:
            return False
        time.sleep(0.002)
    return True
