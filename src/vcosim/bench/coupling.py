"""``vcosim bench coupling``: lock-step exchanges/s against a raw UDP ping-pong; real-time drift.

Every figure is measured in the same run on this machine: a raw Python ping-pong of the same
datagram sizes (888 bytes out, 512 back) between two processes, with blocking receives and
with busy-polling ones; then the simulator in lock-step (window 1, a message every physics
step, the vehicle stepped each time) against a minimal Python peer in another process; then a
real-time run without coupling, for the drift of simulation time against the wall clock and
the lateness of frames.
"""

from __future__ import annotations

import multiprocessing as mp
import socket
import time
from typing import Any

import numpy as np

from vcosim.tight.protocol import CONTROLLER_TO_SIM, SIM_TO_CONTROLLER

SIM_BYTES = SIM_TO_CONTROLLER * 8
REPLY_BYTES = CONTROLLER_TO_SIM * 8
WARM_UP = 0.3  # s of a lock-step run left out of the figure (first contact, caches)


def _peer(port_out: Any, stop: Any, busy: bool) -> None:
    """A minimal controller: answer every datagram with 64 doubles, NaN but the echoed id."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    port_out.put(sock.getsockname()[1])
    reply = np.full(CONTROLLER_TO_SIM, np.nan, dtype="<f8")
    buffer = bytearray(SIM_BYTES + 8)
    incoming = np.frombuffer(buffer, dtype="<f8", count=1)
    sock.setblocking(not busy)
    if not busy:
        sock.settimeout(0.2)
    while not stop.is_set():
        try:
            _, sender = sock.recvfrom_into(buffer)
        except (BlockingIOError, TimeoutError):
            continue
        reply[0] = incoming[0]
        sock.sendto(reply, sender)  # type: ignore[call-overload]  # numpy is a buffer
    sock.close()


class PeerProcess:
    """A ``_peer`` in its own process (its own GIL and core), as a context manager."""

    def __init__(self, busy: bool) -> None:
        ctx = mp.get_context("spawn")
        self._ports = ctx.Queue()
        self._stop = ctx.Event()
        self._process = ctx.Process(target=_peer, args=(self._ports, self._stop, busy), daemon=True)

    def __enter__(self) -> int:
        self._process.start()
        return int(self._ports.get(timeout=30))

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._process.join(timeout=5)
        if self._process.is_alive():
            self._process.kill()


def raw_pingpong(seconds: float, busy: bool) -> float:
    """Exchanges/s of a bare Python ping-pong of the coupling's datagram sizes."""
    with PeerProcess(busy) as port:
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.bind(("127.0.0.1", 0))
        sock.setblocking(not busy)
        message = np.zeros(SIM_TO_CONTROLLER, dtype="<f8")
        buffer = bytearray(REPLY_BYTES + 8)
        peer = ("127.0.0.1", port)
        count, start = 0, time.perf_counter()
        end = start + seconds
        while True:
            message[0] = count
            sock.sendto(message, peer)  # type: ignore[call-overload]  # numpy is a buffer
            while True:
                try:
                    sock.recv_into(buffer)
                    break
                except BlockingIOError:
                    continue
            count += 1
            if count % 256 == 0 and time.perf_counter() >= end:
                break
        elapsed = time.perf_counter() - start
        sock.close()
    return count / elapsed


def lockstep_exchanges(seconds: float, spin: float | None, peer_busy: bool) -> dict[str, float]:
    """Exchanges/s of the simulator in lock-step (window 1, skips 0) with a Python peer.

    ``spin`` is the simulator's busy-poll time before it blocks (None: the default for
    lock-step); the peer busy-polls or blocks like the raw ping-pong it is compared with.
    """
    from vcosim.sim.pacing import Pacer
    from vcosim.sim.simulation import Simulation
    from vcosim.tight.endpoint import CouplingConfig, SimulatorEndpoint
    from vcosim.vehicle import Vehicle

    car = Vehicle(engine_running=True)
    car.step(automatic=1, gear=1)
    with PeerProcess(busy=peer_busy) as port:
        sim = Simulation(car, Pacer("lockstep", dt=car.dt))
        config = CouplingConfig(
            listen_port=0, controller_port=port, send_skips=0, window=1, spin=spin
        )
        endpoint = sim.attach("coupling", SimulatorEndpoint(config))
        marks: list[tuple[float, int]] = []

        def progress(_: float) -> None:
            marks.append((time.perf_counter(), endpoint.stats.applied))
            if marks[-1][0] - marks[0][0] >= WARM_UP + seconds:
                sim.stop()

        sim.run(None, on_progress=progress)
    begin = next(m for m in marks if m[0] - marks[0][0] >= WARM_UP)
    end = marks[-1]
    return {
        "exchanges_per_s": (end[1] - begin[1]) / (end[0] - begin[0]),
        "timeouts": endpoint.stats.timeouts,
    }


def realtime_drift(seconds: float) -> dict[str, float]:
    """Drift of simulation time against the wall clock in real-time pacing, and frame lateness."""
    from vcosim.sim.pacing import Pacer
    from vcosim.sim.simulation import Simulation
    from vcosim.vehicle import Vehicle

    car = Vehicle(engine_running=True)
    sim = Simulation(car, Pacer("realtime", dt=car.dt))
    report = sim.run(seconds)
    drift = report.sim_time - report.wall_time
    return {
        "realtime_seconds": report.sim_time,
        "realtime_drift_ms": drift * 1e3,
        "realtime_drift_ms_per_10s": drift * 1e3 * 10.0 / report.sim_time,
        "frame_lateness_p99_ms": report.frames["frame_lateness_p99_ms"],
        "frame_jitter_ms": report.frames["frame_jitter_ms"],
        "late_frames": report.frames["late_frames"],
        "frames": report.frames["frames"],
    }


def run_coupling_bench(
    seconds: float = 3.0, realtime_seconds: float = 10.0, progress: bool = True
) -> dict[str, Any]:
    """Every figure of the coupling bench, with the ratios the targets are stated in."""
    from rich.progress import Progress

    steps = [
        (
            "raw ping-pong, blocking",
            lambda: {"raw_pingpong_blocking_per_s": raw_pingpong(seconds, busy=False)},
        ),
        (
            "raw ping-pong, busy-polling",
            lambda: {"raw_pingpong_per_s": raw_pingpong(seconds, busy=True)},
        ),
        ("lock-step coupling, default wait", lambda: lockstep_exchanges(seconds, None, True)),
        (
            "lock-step coupling, blocking wait",
            lambda: {
                "exchanges_per_s_blocking": lockstep_exchanges(seconds, 0.0, False)[
                    "exchanges_per_s"
                ]
            },
        ),
        ("real-time pacing", lambda: realtime_drift(realtime_seconds)),
    ]
    result: dict[str, Any] = {}
    with Progress(transient=True, disable=not progress) as bar:
        task = bar.add_task("coupling bench", total=len(steps))
        for name, measure in steps:
            bar.update(task, description=name)
            result.update(measure())
            bar.advance(task)
    result["ratio"] = result["exchanges_per_s"] / result["raw_pingpong_per_s"]
    result["ratio_blocking"] = (
        result["exchanges_per_s_blocking"] / result["raw_pingpong_blocking_per_s"]
    )
    result["waiting_strategy"] = "spin 50 ms, then poll(2)"
    result["targets"] = {"exchanges_per_s": 40000, "ratio": 0.3, "realtime_drift_ms_per_10s": 1.0}
    result["meets_targets"] = {
        "exchanges_per_s": result["exchanges_per_s"] >= 40000,
        "ratio": result["ratio"] >= 0.3,
        "realtime_drift_ms_per_10s": abs(result["realtime_drift_ms_per_10s"]) < 1.0,
    }
    return result
