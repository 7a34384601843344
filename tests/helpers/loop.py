"""Helpers shared by the test packages: a closed loop over real UDP, free ports."""

from __future__ import annotations

import socket
import subprocess
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from vcosim.sim.face import Face
from vcosim.sim.pacing import Pacer
from vcosim.sim.simulation import Simulation
from vcosim.tight import ControllerBlock
from vcosim.tight.endpoint import CouplingConfig, SimulatorEndpoint
from vcosim.vehicle import Vehicle

TRACED = ("time", "groundspeed", "yaw", "gear", "throttle", "brake", "steering")


def free_port() -> int:
    """A UDP port that was free a moment ago (for processes that need a port up front)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def closed_loop(
    step_fn: Callable[..., Any],
    seconds: float,
    *,
    ext_time: float = 0.005,
    ping_time: float = 0.00001,
    memory: bool = False,
    on_frame: Callable[[Simulation], None] | None = None,
    interface: Any = None,
) -> tuple[dict[str, np.ndarray], dict[str, Any], dict[str, Any]]:
    """Couple ``step_fn`` (through a ControllerBlock) to a simulator over UDP on loopback.

    Lock-step pacing with the simulator's default scheduling for ``ext_time``/``ping_time``;
    the controller runs in a thread. Both sides block rather than spin, since they share a
    GIL. Returns the vehicle trace sampled each frame, the simulator's and the block's report.
    """
    block = ControllerBlock(
        step_fn,
        listen_port=0,
        sim_port=0,
        spin=0.0,
        step=ext_time,
        memory=memory,
        interface=interface,
    )
    car = Vehicle(engine_running=True)
    car.step(automatic=1, gear=1)
    sim = Simulation(car, Pacer("lockstep", dt=car.dt))
    sim.attach(
        "coupling",
        SimulatorEndpoint(
            CouplingConfig(
                listen_port=0,
                controller_port=block.address[1],
                ext_time=ext_time,
                ping_time=ping_time,
                spin=0.0,
                interface=interface,
            )
        ),
    )
    rows: list[list[float]] = []

    class Trace(Face):
        def on_frame(self, s: Simulation) -> None:
            if on_frame is not None:
                on_frame(s)
            rows.append([s.vehicle.signal(name) for name in TRACED])

    sim.attach("trace", Trace())
    reports: dict[str, Any] = {}
    thread = threading.Thread(target=lambda: reports.update(block.run()), daemon=True)
    thread.start()
    report = sim.run(seconds)
    block.stop()
    thread.join(timeout=5)
    table = np.array(rows)
    return ({name: table[:, i] for i, name in enumerate(TRACED)}, report.to_dict(), reports)


def wait_until_bound(port: int, process: subprocess.Popen, timeout: float = 30.0) -> bool:
    """True once another process holds ``port`` (our own bind fails), False if it died."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                return True
        time.sleep(0.02)
    return False


def lockstep_simulation(
    controller_port: int, timeout: float = 30.0
) -> tuple[Simulation, SimulatorEndpoint]:
    """A lock-step simulation, engine idling in D, coupled to a controller on that port."""
    car = Vehicle(engine_running=True)
    car.step(automatic=1, gear=1)
    sim = Simulation(car, Pacer("lockstep", dt=car.dt))
    endpoint = sim.attach(
        "coupling",
        SimulatorEndpoint(
            CouplingConfig(listen_port=0, controller_port=controller_port, timeout=timeout)
        ),
    )
    return sim, endpoint
