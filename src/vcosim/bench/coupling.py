"""``vcosim bench coupling``: lock-step exchanges/s against a raw UDP ping-pong; real-time drift.

Every figure is measured in the same run on this machine: a raw Python ping-pong of the same
datagram sizes (888 bytes out, 512 back) between two processes, with blocking receives and
with busy-polling ones; then the simulator in lock-step (window 1, a message every physics
step, the vehicle stepped each time) against a minimal Python peer in another process; then a
real-time run without coupling, for the drift of simulation time against the wall clock and
the lateness of frames.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from vcosim.bench.progress import bench_progress
from vcosim.reports import Report
from vcosim.scenarios.harness import ChildLink, ChildProcess
from vcosim.tight.protocol import CONTROLLER_TO_SIM, SIM_TO_CONTROLLER

SIM_BYTES = SIM_TO_CONTROLLER * 8
REPLY_BYTES = CONTROLLER_TO_SIM * 8
WARM_UP = 0.3  # s of a lock-step run left out of the figure (first contact, caches)
TARGETS = {"exchanges_per_s": 40000, "ratio": 0.3, "realtime_drift_ms_per_10s": 1.0}
WAITING_STRATEGY = "spin 50 ms, then poll(2)"


def _peer(link: ChildLink, busy: bool) -> None:
    """A minimal controller: answer every datagram with 64 doubles, NaN but the echoed id.

    The stop request sets a thread-local flag, so the loop pays one attribute read per
    datagram for it, not a system call.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    stopped = threading.Event()
    link.on_stop(stopped.set)
    link.ready(sock.getsockname()[1])
    reply = np.full(CONTROLLER_TO_SIM, np.nan, dtype="<f8")
    buffer = bytearray(SIM_BYTES + 8)
    incoming = np.frombuffer(buffer, dtype="<f8", count=1)
    sock.setblocking(not busy)
    if not busy:
        sock.settimeout(0.2)
    while not stopped.is_set():
        try:
            _, sender = sock.recvfrom_into(buffer)
        except (BlockingIOError, TimeoutError):
            continue
        reply[0] = incoming[0]
        sock.sendto(reply, sender)  # type: ignore[call-overload]  # numpy is a buffer
    sock.close()


def peer_process(busy: bool) -> ChildProcess:
    """A ``_peer`` in its own process (its own GIL and core); ``ready()`` gives its port."""
    return ChildProcess(_peer, busy, name="UDP peer")


def raw_pingpong(seconds: float, busy: bool) -> float:
    """Exchanges/s of a bare Python ping-pong of the coupling's datagram sizes."""
    with peer_process(busy) as peer:
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.bind(("127.0.0.1", 0))
        sock.setblocking(not busy)
        message = np.zeros(SIM_TO_CONTROLLER, dtype="<f8")
        buffer = bytearray(REPLY_BYTES + 8)
        address = ("127.0.0.1", int(peer.ready()))
        count, start = 0, time.perf_counter()
        end = start + seconds
        while True:
            message[0] = count
            sock.sendto(message, address)  # type: ignore[call-overload]  # numpy is a buffer
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


@dataclass
class Exchanges(Report):
    """Lock-step exchanges per second after the warm-up, and the run's timeouts."""

    per_s: float
    timeouts: int


def lockstep_exchanges(seconds: float, spin: float | None, peer_busy: bool) -> Exchanges:
    """Exchanges/s of the simulator in lock-step (window 1, skips 0) with a Python peer.

    ``spin`` is the simulator's busy-poll time before it blocks (None: the default for
    lock-step); the peer busy-polls or blocks like the raw ping-pong it is compared with.
    """
    from vcosim.scenarios import build_simulation
    from vcosim.tight.endpoint import CouplingConfig

    with peer_process(peer_busy) as peer:
        config = CouplingConfig(
            listen_port=0, controller_port=int(peer.ready()), send_skips=0, window=1, spin=spin
        )
        sim = build_simulation(pacing="lockstep", coupling=config)
        endpoint = sim.faces["coupling"]
        marks: list[tuple[float, int]] = []

        def progress(_: float) -> None:
            marks.append((time.perf_counter(), endpoint.stats.applied))
            if marks[-1][0] - marks[0][0] >= WARM_UP + seconds:
                sim.stop()

        sim.run(None, on_progress=progress)
    end = marks[-1]
    warm = [m for m in marks[:-1] if m[0] - marks[0][0] >= WARM_UP]
    begin = warm[0] if warm else marks[0]  # a slow machine may give few frames
    elapsed = max(end[0] - begin[0], 1e-9)
    return Exchanges((end[1] - begin[1]) / elapsed, endpoint.stats.timeouts)


@dataclass
class Drift(Report):
    """Simulation time against the wall clock in real-time pacing, and the frames' lateness."""

    realtime_seconds: float
    realtime_drift_ms: float
    realtime_drift_ms_per_10s: float
    frame_lateness_p99_ms: float
    frame_jitter_ms: float
    late_frames: int
    frames: int


def realtime_drift(seconds: float) -> Drift:
    """Drift of simulation time against the wall clock in real-time pacing, and frame lateness."""
    from vcosim.scenarios import build_simulation

    report = build_simulation(pacing="realtime", automatic=False).run(seconds)
    drift = report.sim_time - report.wall_time
    frames = report.frames
    return Drift(
        realtime_seconds=report.sim_time,
        realtime_drift_ms=drift * 1e3,
        realtime_drift_ms_per_10s=drift * 1e3 * 10.0 / report.sim_time,
        frame_lateness_p99_ms=frames["frame_lateness_p99_ms"],
        frame_jitter_ms=frames["frame_jitter_ms"],
        late_frames=int(frames["late_frames"]),
        frames=int(frames["frames"]),
    )


@dataclass
class CouplingBench(Report):
    """``vcosim bench coupling``: every figure, and the ratios the targets are stated in."""

    raw_pingpong_blocking_per_s: float
    raw_pingpong_per_s: float
    lockstep: Exchanges  # the default wait (spin, then poll), against a busy-polling peer
    lockstep_blocking: Exchanges  # blocking waits on both sides
    realtime: Drift

    @property
    def ratio(self) -> float:
        """Lock-step exchanges over the busy-polling raw ping-pong's."""
        return self.lockstep.per_s / self.raw_pingpong_per_s

    @property
    def ratio_blocking(self) -> float:
        """Blocking lock-step exchanges over the blocking raw ping-pong's."""
        return self.lockstep_blocking.per_s / self.raw_pingpong_blocking_per_s

    def meets_targets(self) -> dict[str, bool]:
        """Each target, met or not."""
        return {
            "exchanges_per_s": self.lockstep.per_s >= TARGETS["exchanges_per_s"],
            "ratio": self.ratio >= TARGETS["ratio"],
            "realtime_drift_ms_per_10s": abs(self.realtime.realtime_drift_ms_per_10s)
            < TARGETS["realtime_drift_ms_per_10s"],
        }

    def to_dict(self) -> dict[str, Any]:
        """In the layout ``vcosim bench coupling --json`` prints."""
        return {
            "raw_pingpong_blocking_per_s": self.raw_pingpong_blocking_per_s,
            "raw_pingpong_per_s": self.raw_pingpong_per_s,
            "exchanges_per_s": self.lockstep.per_s,
            "timeouts": self.lockstep.timeouts,
            "exchanges_per_s_blocking": self.lockstep_blocking.per_s,
            **self.realtime.to_dict(),
            "ratio": self.ratio,
            "ratio_blocking": self.ratio_blocking,
            "waiting_strategy": WAITING_STRATEGY,
            "targets": dict(TARGETS),
            "meets_targets": self.meets_targets(),
        }


def measure_coupling_bench(
    seconds: float = 3.0, realtime_seconds: float = 10.0, progress: bool = True
) -> CouplingBench:
    """Every figure of the coupling bench (see the module's docstring)."""
    steps: list[tuple[str, Callable[[], Any]]] = [
        ("raw ping-pong, blocking", lambda: raw_pingpong(seconds, busy=False)),
        ("raw ping-pong, busy-polling", lambda: raw_pingpong(seconds, busy=True)),
        ("lock-step coupling, default wait", lambda: lockstep_exchanges(seconds, None, True)),
        ("lock-step coupling, blocking wait", lambda: lockstep_exchanges(seconds, 0.0, False)),
        ("real-time pacing", lambda: realtime_drift(realtime_seconds)),
    ]
    figures = []
    with bench_progress(progress) as bar:
        task = bar.add_task("coupling bench", total=len(steps))
        for name, measure in steps:
            bar.update(task, description=name)
            figures.append(measure())
            bar.advance(task)
    return CouplingBench(*figures)
