from __future__ import annotations

import socket
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from helpers.forks import vcosim_command
from vcosim.sim.pacing import Pacer
from vcosim.sim.simulation import Simulation
from vcosim.tight.endpoint import CouplingConfig, SimulatorEndpoint
from vcosim.tight.protocol import CONTROLLER_TO_SIM
from vcosim.vehicle import Vehicle

Reply = Callable[[np.ndarray], np.ndarray | None]


def nan_reply(message: np.ndarray) -> np.ndarray:
    """Everything NaN ("leave as it is") but the id: what the seed's test model sends."""
    out = np.full(CONTROLLER_TO_SIM, np.nan)
    out[0] = message[0]
    return out


class RawPeer:
    """A controller written with plain sockets: answers each message with ``reply(message)``."""

    def __init__(
        self, reply: Reply = nan_reply, host: str = "127.0.0.1", compute_time: float = 0.0
    ) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind((host, 0))
        self.sock.settimeout(0.05)
        self.reply = reply
        self.compute_time = compute_time
        self.received: list[np.ndarray] = []
        self.raw: list[bytes] = []
        self.target: tuple[str, int] | None = None
        self._arrivals = threading.Condition()
        self.answering = threading.Event()
        self.answering.set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    @property
    def port(self) -> int:
        return self.sock.getsockname()[1]

    def start(self, target: tuple[str, int] | None = None) -> RawPeer:
        """Answer ``target``, or (None) whoever sent the message being answered."""
        self.target = target
        self._thread.start()
        return self

    def send(self, values: np.ndarray | bytes) -> None:
        data = values if isinstance(values, bytes) else np.asarray(values, "<f8").tobytes()
        self.sock.sendto(data, self.target)

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                data, sender = self.sock.recvfrom(4096)
            except TimeoutError:
                continue
            except OSError:
                return
            message = np.frombuffer(data, "<f8").copy()
            with self._arrivals:
                self.raw.append(data)
                self.received.append(message)
                self._arrivals.notify_all()
            if not self.answering.is_set():
                continue
            if self.compute_time:
                end = time.perf_counter() + self.compute_time
                while time.perf_counter() < end:
                    pass
            out = self.reply(message)
            if out is not None:
                self.sock.sendto(np.asarray(out, "<f8").tobytes(), self.target or sender)

    def wait_for(self, count: int, timeout: float = 10.0) -> bool:
        """Wait until ``count`` messages have arrived (the thread may lag the simulator)."""
        with self._arrivals:
            return self._arrivals.wait_for(lambda: len(self.received) >= count, timeout)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self.sock.close()


def coupled(
    peer: RawPeer,
    pacing: str = "fast",
    vehicle: Vehicle | None = None,
    frame_rate: float = 60.0,
    **config: object,
) -> tuple[Simulation, SimulatorEndpoint]:
    """A simulation on an ephemeral port coupled to ``peer`` (started here)."""
    cfg = CouplingConfig(listen_port=0, controller_port=peer.port, **config)
    car = vehicle if vehicle is not None else Vehicle(engine_running=True)
    sim = Simulation(car, Pacer(pacing, dt=car.dt, frame_rate=frame_rate))
    endpoint = sim.attach("coupling", SimulatorEndpoint(cfg))
    peer.start(endpoint.address)
    return sim, endpoint


def read_log(path: Path) -> np.ndarray:
    """One of the three debug CSVs as a 2-D array (header row skipped)."""
    return np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)


def start_simulator(peer_port: int, log_dir: Path, *args: str) -> subprocess.Popen:
    """``vcosim sim`` in its own process (its own GIL), coupled to a peer on ``peer_port``."""
    command = [
        *vcosim_command(),
        "sim",
        "--listen-port",
        "0",
        "--controller-port",
        str(peer_port),
        "--debug-log",
        str(log_dir),
        *args,
    ]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
