"""An FMU speaking BeamNG's tight coupling itself (as BeamNG-FMI2/3.fmu) drives vcosim's simulator.

The FMUs (tests/helpers/coupling_fmu.py) sit in an FMI master (fmpy, here) and talk UDP to the
simulator on their own, as BeamNG's do: the simulator must couple to them unchanged. Real UDP
on 127.0.0.1; the FMU's port is picked free, the simulator's is ephemeral.
"""

from __future__ import annotations

import shutil
import socket
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fmpy import extract, read_model_description
from fmpy.fmi2 import FMU2Slave
from fmpy.fmi3 import FMU3Slave

from helpers.coupling_fmu import INPUTS, MESSAGE, OUTPUTS, REPLY, build_fmu
from helpers.loop import free_port
from helpers.peers import read_log
from vcosim.sim.pacing import Pacer
from vcosim.sim.simulation import Simulation
from vcosim.tight.endpoint import CouplingConfig, SimulatorEndpoint
from vcosim.tight.protocol import SIM_SLOT_NAMES
from vcosim.vehicle import Vehicle

STEP = 0.005  # the master's communication step = the simulator's ext_time
STEPS = 8000  # 40 s simulated
TARGET = 20.0  # m/s
SPEED = "body_state.groundspeed"


@pytest.fixture(scope="module", params=[2, 3], ids=["fmi2", "fmi3"])
def fmu_path(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_fmu(tmp_path_factory.mktemp(f"fmi{request.param}"), request.param)


class Master:
    """fmpy as the FMI master: one co-simulation instance, variables by name, FMI 2 or 3.

    fmpy names its accessors after the variable types of either version (``setReal``,
    ``setFloat64``, ``getInt32`` ...), so the type in the model description picks them.
    """

    def __init__(self, path: Path) -> None:
        description = read_model_description(str(path))
        self.version = int(description.fmiVersion[0])
        self.variables = {v.name: v for v in description.modelVariables}
        self._unzipped = extract(str(path))
        slave = FMU2Slave if self.version == 2 else FMU3Slave
        self.fmu = slave(
            guid=description.guid,
            unzipDirectory=self._unzipped,
            modelIdentifier=description.coSimulation.modelIdentifier,
            instanceName="beamng",
        )
        self.time = 0.0
        self._instantiated = False

    def start(self, **parameters: object) -> None:
        """Instantiate, set the parameters in initialization mode and leave it.

        Leaving initialization binds the FMU's socket and waits (2 s at most) for the first
        message, so the simulator must start once the port is bound (see ``wait_bound``).
        """
        self.fmu.instantiate()
        self._instantiated = True
        if self.version == 2:
            self.fmu.setupExperiment(startTime=0.0)
        self.fmu.enterInitializationMode()
        self.set(**parameters)
        self.fmu.exitInitializationMode()

    def set(self, **values: object) -> None:
        for name, value in values.items():
            variable = self.variables[name]
            getattr(self.fmu, f"set{variable.type}")([variable.valueReference], [value])

    def get(self, name: str) -> Any:
        variable = self.variables[name]
        return getattr(self.fmu, f"get{variable.type}")([variable.valueReference])[0]

    def step(self) -> None:
        """One communication step of STEP: one exchange with the simulator."""
        self.fmu.doStep(self.time, STEP)
        self.time += STEP

    def close(self) -> None:
        """Terminate (the FMU releases its port) and free the instance."""
        if self._instantiated:
            self.fmu.terminate()
            self.fmu.freeInstance()
        shutil.rmtree(self._unzipped, ignore_errors=True)


def udp_bound(port: int) -> bool:
    """True once something holds UDP ``port`` on 127.0.0.1.

    Read from /proc/net/udp where there is one: a probe bind could take the port for a moment
    just as the FMU binds it.
    """
    table = Path("/proc/net/udp")
    if table.exists():
        wanted = f"0100007F:{port:04X}"
        return any(line.split()[1] == wanted for line in table.read_text().splitlines()[1:])
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


def wait_bound(port: int, starting: Future, timeout: float = 20.0) -> None:
    """Wait until the FMU has bound its port (it is leaving initialization in ``starting``)."""
    deadline = time.monotonic() + timeout
    while not udp_bound(port):
        if starting.done():
            starting.result()  # raises what went wrong
            raise AssertionError("the FMU left initialization without binding its port")
        assert time.monotonic() < deadline, f"the FMU did not bind port {port}"
        time.sleep(0.001)  # polling a condition, not a timing assumption


@dataclass
class SpeedPi:
    """A discrete PI cruise control at the master's step: throttle above, brake below."""

    target: float = TARGET
    kp: float = 0.25
    ki: float = 0.08
    integral: float = 0.0

    def __call__(self, speed: float) -> tuple[float, float]:
        error = self.target - speed
        self.integral = min(max(self.integral + error * STEP, -5.0), 12.0)  # anti-windup
        effort = self.kp * error + self.ki * self.integral
        return min(max(effort, 0.0), 1.0), min(max(-effort, 0.0), 1.0)


def message(message_id: float, marker: float = 0.0) -> bytes:
    """A simulator message: slot i holds i, the ground speed slot (17) holds ``marker``."""
    values = [message_id, *map(float, range(1, 111))]
    values[17] = marker
    return MESSAGE.pack(*values)


def test_output_names_follow_the_simulators_slots():
    def key(name: str) -> str:
        for group in ("driver_controls.", "body_state.", "vehicle_status."):
            name = name.removeprefix(group)
        return name.replace(".", "").replace("_", "").lower()

    assert [key(name) for name, _ in OUTPUTS] == [key(n) for n in SIM_SLOT_NAMES[1:61]]
    assert [name for name, kind in OUTPUTS if kind != "real"] == [
        "vehicle_status.gear",
        "vehicle_status.highbeam",
        "vehicle_status.lowbeam",
        "vehicle_status.reverse",
        "vehicle_status.signal_L",
        "vehicle_status.signal_R",
    ]


def test_the_fmu_speaks_beamngs_protocol(fmu_path):
    """The FMU against a bare socket: outputs, reply layout, its own counter, the id filter."""
    simulator = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    simulator.bind(("127.0.0.1", 0))
    simulator.settimeout(10.0)
    port = free_port()
    master = Master(fmu_path)

    def exchange(*messages: bytes) -> tuple[float, ...]:
        """Queue ``messages`` for the FMU, run one doStep and return the reply it sent."""
        for data in messages:
            simulator.sendto(data, ("127.0.0.1", port))
        master.step()
        data = simulator.recv(4096)
        assert len(data) == REPLY.size
        return REPLY.unpack(data)

    try:
        with ThreadPoolExecutor(1) as pool:
            starting = pool.submit(
                master.start, socket_inPort=port, socket_outPort=simulator.getsockname()[1]
            )
            wait_bound(port, starting)
            simulator.sendto(message(0, marker=17.0), ("127.0.0.1", port))
            starting.result(timeout=10)
        for slot, (name, kind) in enumerate(OUTPUTS, start=1):
            expected = {"real": float(slot), "integer": slot, "boolean": True}[kind]
            assert master.get(name) == expected, name

        inputs = dict(
            zip(
                [name for name, _ in INPUTS],
                [0.25, 0.5, -0.75, 2, 11.0, 12.0, 13.0, 14.0, 21.0, 22.0, 23.0, 24.0, True],
                strict=True,
            )
        )
        master.set(**inputs)
        reply = exchange()  # the first message was taken while leaving initialization
        # Docs' wire layout: 5-8 braking FL, FR, RL, RR; 9-12 propulsion (BeamNG's FMU
        # interleaves them per wheel).
        assert reply[:14] == (
            1.0,
            0.25,
            0.5,
            -0.75,
            2.0,
            11.0,
            12.0,
            13.0,
            14.0,
            21.0,
            22.0,
            23.0,
            24.0,
            1.0,
        )
        assert reply[14:] == (0.0,) * 50

        # Accepted: an id above the largest seen, or equal to it once. Replies count on.
        assert exchange(message(0, 100.0), message(5, 101.0))[0] == 2.0  # 0 was taken once
        assert master.get(SPEED) == 101.0
        assert exchange(message(5, 102.0))[0] == 3.0  # equal to the largest: once
        assert master.get(SPEED) == 102.0
        assert exchange(message(5, 103.0), message(4, 104.0), message(6, 105.0))[0] == 4.0
        assert master.get(SPEED) == 105.0
    finally:
        master.close()
        simulator.close()


def cruise(master: Master, port: int, simulator_port: int, stop: threading.Event) -> dict[str, Any]:
    """The master's loop: a PI on the FMU's ground speed output, one doStep per 5 ms."""
    pi = SpeedPi()
    try:
        master.start(socket_inPort=port, socket_outPort=simulator_port)
        for _ in range(STEPS):
            if stop.is_set():
                break
            throttle, brake = pi(master.get(SPEED))
            master.set(input_throttleInput=throttle, input_brakeInput=brake)  # gear left at 0
            master.step()
        return {name: master.get(name) for name, _ in OUTPUTS}
    finally:
        master.close()


def run_coupled(
    fmu_path: Path, logs: Path, window: int
) -> tuple[Simulation, dict[str, Any], dict[str, Any], float]:
    """The FMU's master in a thread, the lock-step simulation here; returns the figures."""
    car = Vehicle(engine_running=True)
    car.set_inputs(automatic=1, gear=1)
    sim = Simulation(car, Pacer("lockstep", dt=car.dt))
    port = free_port()
    # spin=0: both sides share this process's GIL, so the simulator blocks instead of polling.
    endpoint = sim.attach(
        "coupling",
        SimulatorEndpoint(
            CouplingConfig(
                listen_port=0,
                controller_port=port,
                ext_time=STEP,
                window=window,
                spin=0.0,
                debug_log=logs,
            )
        ),
    )
    master, stop = Master(fmu_path), threading.Event()
    started = time.perf_counter()
    try:
        with ThreadPoolExecutor(1) as pool:
            running = pool.submit(cruise, master, port, endpoint.address[1], stop)
            try:
                wait_bound(port, running)
                report = sim.run(STEPS * STEP)
                outputs = running.result(timeout=60)
            finally:
                stop.set()
    finally:
        endpoint.close()
    return sim, report.faces["coupling"], outputs, time.perf_counter() - started


@pytest.mark.parametrize("window", [1, 2])
def test_the_fmu_cruises_a_vcosim_vehicle_in_lockstep(
    fmu_path: Path, window: int, tmp_path: Path, record_property: Callable[[str, object], None]
):
    sim, coupling, outputs, wall = run_coupled(fmu_path, tmp_path, window)
    speed = outputs[SPEED]
    figures = {
        "steps": STEPS,
        "final_speed": speed,
        "wall_time_s": round(wall, 2),
        **{
            k: coupling[k]
            for k in ("sent", "applied", "timeouts", "stale", "duplicate", "startup_unapplied")
        },
    }
    for name, value in figures.items():
        record_property(name, value)
    print(fmu_path.stem, f"window {window}", figures)

    assert coupling["timeouts"] == 0
    assert coupling["applied"] >= STEPS - 10
    assert speed == pytest.approx(TARGET, abs=0.5)
    assert sim.vehicle.signal("groundspeed") == pytest.approx(TARGET, abs=0.5)
    assert sim.vehicle.inputs["gear"] == 1.0  # the FMU's gear 0 (slot 4) is ignored
    # Its own counter: the first reply already carries id 1, so nothing is dropped at start-up
    # and every reply applies in turn (the replies to the last `window` messages are unread).
    assert coupling["startup_unapplied"] == 0
    assert coupling["stale"] == 0 and coupling["duplicate"] == 0
    assert coupling["sent"] - coupling["applied"] == window
    receives = read_log(tmp_path / "simulinkReceiveLog.csv")  # time, then the 64 values
    np.testing.assert_array_equal(receives[:, 1], np.arange(1, coupling["applied"] + 1))
    assert np.all(receives[:, 5] == 0.0)  # slot 4: the FMU's Integer gear, left at 0
    # The FMU's outputs are slots 1..60 of the last message the simulator sent.
    last = read_log(tmp_path / "simulinkSendLog.csv")[-1]  # time, id, then slots 1..110
    assert last[1] == STEPS - 1
    for slot, (name, kind) in enumerate(OUTPUTS, start=1):
        expected = {"real": float, "integer": round, "boolean": bool}[kind](last[slot + 1])
        assert outputs[name] == expected, name
