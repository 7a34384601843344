"""``vcosim bench coupling``: lock-step exchanges/s against a raw UDP ping-pong; real-time drift.

Every figure is measured in the same run on this machine: a raw Python ping-pong of the same
datagram sizes (888 bytes out, 512 back) between two processes, and the simulator in
lock-step (window 1, a message every physics step, the vehicle stepped each time) against the
same minimal Python peer in another process, taking ``TURNS`` turns each with busy-polling
receives, then ``BLOCKING_TURNS`` shorter ones each with blocking ones (the peer on one CPU,
both measured ends on another). Each rate is that of the best 0.1 s window of its turns
(``vcosim.bench.rates``): a ping-pong runs at full speed only while both processes hold a
core, which a busy machine grants in stretches. Then the real-time section: a run in
real-time pacing without coupling, for the drift of simulation time against the wall clock
and the frames' lateness (p50, p99, p99.9 and the worst).
"""

from __future__ import annotations

import os
import select
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from vcosim.bench.progress import bench_progress
from vcosim.bench.rates import BenchReport, Marks, Quiet, RatioDoc, best_window, unjudged_if_busy
from vcosim.reports import Report
from vcosim.scenarios.harness import ChildLink, ChildProcess
from vcosim.tight.protocol import CONTROLLER_TO_SIM, SIM_TO_CONTROLLER

SIM_BYTES = SIM_TO_CONTROLLER * 8
REPLY_BYTES = CONTROLLER_TO_SIM * 8
TURNS = 3  # turns of the raw ping-pong and the lock-step each, taken in alternation
BLOCKING_TURNS = 6  # the same with blocking receives: more, shorter turns (see in_turns)
MARK_EVERY = 64  # raw exchanges between clock reads
PEER_SPIN = 0.05  # s a busy peer spins without a datagram before it sleeps until one comes
TARGETS = {"exchanges_per_s": 40000, "ratio": 0.3, "realtime_drift_ms_per_10s": 1.0}
WAITING_STRATEGY = "spin 50 ms, then poll(2)"
QUICK = {"seconds": 0.9, "realtime_seconds": 0.5}
"""``--quick``: the same figures in ~7 s, for ``vcosim bench all --quick`` and its guard test."""

RATIOS = {
    "lockstep_vs_raw": RatioDoc(
        "the lock-step coupling's exchanges/s as a share of what the wire allows",
        "the simulator in lock-step (window 1, a message every physics step, the vehicle "
        "stepped each time) against a raw Python ping-pong of the same datagrams, both "
        "against one busy-polling peer process, in turns, best 0.1 s window of each",
    ),
    "blocking_vs_raw_blocking": RatioDoc(
        "the same with blocking receives on both sides (no core spent spinning)",
        "as `lockstep_vs_raw`, the simulator's spin 0 and a blocking peer, the peer on one "
        "CPU and both measured ends on the other: left to the scheduler, the raw pair (which "
        "sleeps the moment it sends) shared a CPU far more often than the simulator (which "
        "steps the vehicle after sending), and the ratio read 0.41-0.86 on a quiet machine, "
        "as the two happened to be placed. Not judged where the process has one CPU",
    ),
}
"""The same-run ratios this bench reports (``ratios()``), by their stable keys."""


def _peer(link: ChildLink, busy: bool, core: int | None = None) -> None:
    """A minimal controller: answer every datagram with 64 doubles, NaN but the echoed id.

    The stop request sets a thread-local flag, so the loop pays one attribute read per
    datagram for it, not a system call. A busy peer spins while datagrams come, and sleeps
    until the next one after ``PEER_SPIN`` without: between its turns it leaves the cores
    to whatever runs then (a contract turn, a start-up). With ``core`` it runs on that CPU.
    """
    if core is not None:
        os.sched_setaffinity(0, {core})
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
    waiting_since = None
    while not stopped.is_set():
        try:
            _, sender = sock.recvfrom_into(buffer)
        except BlockingIOError:
            now = time.perf_counter()
            if waiting_since is None:
                waiting_since = now
            elif now - waiting_since > PEER_SPIN:
                select.select([sock], [], [], 0.2)
            continue
        except TimeoutError:
            continue
        waiting_since = None
        reply[0] = incoming[0]
        sock.sendto(reply, sender)  # type: ignore[call-overload]  # numpy is a buffer
    sock.close()


def peer_process(busy: bool, core: int | None = None) -> ChildProcess:
    """A ``_peer`` in its own process (its own GIL and core); ``ready()`` gives its port."""
    return ChildProcess(_peer, busy, core, name="UDP peer")


def two_cores() -> tuple[int, int] | None:
    """Two CPUs this process may use, for a blocking pair's two ends; None if it has one.

    A blocking ping-pong on one CPU costs the two ends' work and two context switches; on
    two, the waking of an idle CPU, which on a virtual machine takes far longer. Left to
    the scheduler, a pair whose ends sleep at once after sending (the raw one) shares a
    CPU far more often than one that works on after sending (the simulator, which steps
    the vehicle while the peer answers): each would be measured in another regime.
    """
    if not hasattr(os, "sched_getaffinity"):
        return None
    cores = sorted(os.sched_getaffinity(0))
    return (cores[0], cores[1]) if len(cores) > 1 else None


@contextmanager
def on_core(core: int | None) -> Iterator[None]:
    """Run the calling thread on ``core`` (None: wherever it may) for the block."""
    if core is None:
        yield
        return
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {core})
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)


def raw_pingpong(port: int, seconds: float, busy: bool) -> Marks:
    """A bare Python ping-pong of the coupling's datagram sizes with the peer on ``port``.

    Busy-polling or blocking like the peer; (time, exchanges) marks over ``seconds``.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    sock.setblocking(not busy)
    message = np.zeros(SIM_TO_CONTROLLER, dtype="<f8")
    buffer = bytearray(REPLY_BYTES + 8)
    address = ("127.0.0.1", port)
    count, start = 0, time.perf_counter()
    marks: Marks = [(start, 0)]
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
        if count % MARK_EVERY == 0:
            marks.append((now := time.perf_counter(), count))
            if now >= end:
                break
    sock.close()
    return marks


@dataclass
class Exchanges(Report):
    """Lock-step exchanges per second (best window), and the run's timeouts."""

    per_s: float
    timeouts: int


def lockstep_run(port: int, seconds: float, spin: float | None) -> tuple[Marks, int]:
    """The simulator in lock-step (window 1, skips 0) with the peer on ``port``, ``seconds``.

    ``spin`` is the simulator's busy-poll time before it blocks (None: the default for
    lock-step). Returns (time, replies applied) marks, one a frame, and the timeouts.
    """
    from vcosim.scenarios.build import build_simulation, endpoints
    from vcosim.scenarios.spec import CouplingFaceSpec, PacingSpec, RunSpec

    coupling = CouplingFaceSpec(
        listen_port=0, controller_port=port, send_skips=0, window=1, spin=spin
    )
    sim = build_simulation(RunSpec(pacing=PacingSpec(mode="lockstep"), faces=[coupling]))
    endpoint = endpoints(sim)[None]
    marks: Marks = []

    def progress(_: float) -> None:
        marks.append((time.perf_counter(), endpoint.stats.applied))
        if marks[-1][0] - marks[0][0] >= seconds:
            sim.stop()

    sim.run(None, on_progress=progress)
    return marks, endpoint.stats.timeouts


def lockstep_exchanges(seconds: float, spin: float | None, peer_busy: bool) -> Exchanges:
    """Lock-step exchanges/s (best window of ``seconds``) with a peer process of its own.

    The peer busy-polls or blocks like the raw ping-pong the simulator is compared with.
    """
    with peer_process(peer_busy) as peer:
        marks, timeouts = lockstep_run(peer.port(), seconds, spin)
    return Exchanges(best_window(marks), timeouts)


def in_turns(
    seconds: float, busy: bool, tick: Callable[[], None] = lambda: None
) -> tuple[float, Exchanges, float | None]:
    """The raw ping-pong's and the lock-step's exchanges/s against one peer, in turns.

    Each gets ``TURNS`` turns of ``seconds / TURNS``, alternating, and its best window over
    them; the simulator spins (default) with a busy peer, or blocks with a blocking one,
    the peer then on one CPU and both measured ends on another (``two_cores``), in
    ``BLOCKING_TURNS`` turns: how fast a halted CPU wakes wanders over seconds, and more,
    shorter turns let both sides meet the same stretches (with three, the ratio read
    0.88-1.09 in seven quiet runs; with six, 0.95-1.13 in six). Also returns the cores other
    processes used meanwhile (``Quiet``).
    """
    turns = TURNS if busy else BLOCKING_TURNS
    turn, spin = seconds / turns, (None if busy else 0.0)
    raw, lockstep, timeouts = 0.0, 0.0, 0
    cores = None if busy else two_cores()  # blocking: the peer on one CPU, this end on the other
    peer_core, own_core = cores if cores is not None else (None, None)
    with peer_process(busy, peer_core) as peer, on_core(own_core):
        port = peer.port()
        quiet = Quiet()
        for _ in range(turns):
            raw = max(raw, best_window(raw_pingpong(port, turn, busy)))
            tick()
            marks, late = lockstep_run(port, turn, spin)
            lockstep, timeouts = max(lockstep, best_window(marks)), timeouts + late
            tick()
        others = quiet.others()
    return raw, Exchanges(lockstep, timeouts), others


@dataclass
class Drift(Report):
    """Simulation time against the wall clock in real-time pacing, and the frames' lateness.

    Lateness is how long after its due time a frame's successor could start (0 when the
    frame ended in time and the pacer slept): its percentiles, from p50 to the worst.
    """

    realtime_seconds: float
    realtime_drift_ms: float
    realtime_drift_ms_per_10s: float
    frame_lateness_p50_ms: float
    frame_lateness_p99_ms: float
    frame_lateness_p999_ms: float
    frame_lateness_max_ms: float
    frame_jitter_ms: float
    late_frames: int
    frames: int


def realtime_drift(seconds: float) -> Drift:
    """Drift of simulation time against the wall clock in real-time pacing, and frame lateness."""
    from vcosim.scenarios.build import build_simulation
    from vcosim.scenarios.spec import PacingSpec, RunSpec

    spec = RunSpec(gearbox="manual", pacing=PacingSpec(mode="realtime"))
    report = build_simulation(spec).run(seconds)
    drift = report.sim_time - report.wall_time
    frames = report.frames
    return Drift(
        realtime_seconds=report.sim_time,
        realtime_drift_ms=drift * 1e3,
        realtime_drift_ms_per_10s=drift * 1e3 * 10.0 / report.sim_time,
        frame_lateness_p50_ms=frames["frame_lateness_p50_ms"],
        frame_lateness_p99_ms=frames["frame_lateness_p99_ms"],
        frame_lateness_p999_ms=frames["frame_lateness_p999_ms"],
        frame_lateness_max_ms=frames["frame_lateness_max_ms"],
        frame_jitter_ms=frames["frame_jitter_ms"],
        late_frames=int(frames["late_frames"]),
        frames=int(frames["frames"]),
    )


_ONE_CPU = "measured on one CPU: which regime each blocking pair ran in was the scheduler's"


@dataclass
class CouplingBench(BenchReport):
    """``vcosim bench coupling``: every figure, and the ratios the targets are stated in."""

    raw_pingpong_blocking_per_s: float
    raw_pingpong_per_s: float
    lockstep: Exchanges  # the default wait (spin, then poll), against a busy-polling peer
    lockstep_blocking: Exchanges  # blocking waits on both sides
    realtime: Drift
    cores_used_by_others: dict[str, float | None] = field(default_factory=dict)  # by wait
    blocking_on_one_cpu: bool = False  # the blocking pair could not be given a CPU each

    @property
    def ratio(self) -> float:
        """Lock-step exchanges over the busy-polling raw ping-pong's."""
        return self.lockstep.per_s / self.raw_pingpong_per_s

    @property
    def ratio_blocking(self) -> float:
        """Blocking lock-step exchanges over the blocking raw ping-pong's."""
        return self.lockstep_blocking.per_s / self.raw_pingpong_blocking_per_s

    def ratios(self) -> dict[str, float]:
        """The same-run ratios of ``RATIOS``: higher is faster."""
        return {"lockstep_vs_raw": self.ratio, "blocking_vs_raw_blocking": self.ratio_blocking}

    def unjudged(self) -> dict[str, str]:
        """The ratios measured while other processes took the cores, and why (``Quiet``)."""
        others = self.cores_used_by_others
        one_cpu = {"blocking_vs_raw_blocking": _ONE_CPU} if self.blocking_on_one_cpu else {}
        return {
            **unjudged_if_busy(others.get("busy"), ["lockstep_vs_raw"]),
            **one_cpu,
            **unjudged_if_busy(others.get("blocking"), ["blocking_vs_raw_blocking"]),
        }

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
            **self.realtime.to_dict(),  # (flat, as before the real-time section)
            "realtime": self.realtime.to_dict(),
            "ratio": self.ratio,
            "ratio_blocking": self.ratio_blocking,
            "waiting_strategy": WAITING_STRATEGY,
            "targets": dict(TARGETS),
            "meets_targets": self.meets_targets(),
            "ratios": self.ratios(),
            "cores_used_by_others": self.cores_used_by_others,
            "blocking_on_one_cpu": self.blocking_on_one_cpu,
            "unjudged": self.unjudged(),
        }


def measure_coupling_bench(
    seconds: float = 3.0, realtime_seconds: float = 10.0, progress: bool = True
) -> CouplingBench:
    """Every figure of the coupling bench (see the module's docstring).

    ``seconds`` is each exchange figure's share of wall time (the sum of its turns).
    """
    with bench_progress(progress) as bar:
        task = bar.add_task("blocking: raw and lock-step", total=2 * (TURNS + BLOCKING_TURNS) + 1)

        def tick() -> None:
            bar.advance(task)

        raw_blocking, lockstep_blocking, others_blocking = in_turns(seconds, False, tick)
        bar.update(task, description="busy-polling: raw and lock-step")
        raw, lockstep, others_busy = in_turns(seconds, True, tick)
        bar.update(task, description="real-time pacing")
        drift = realtime_drift(realtime_seconds)
        tick()
    others = {"busy": others_busy, "blocking": others_blocking}
    return CouplingBench(
        raw_blocking, raw, lockstep, lockstep_blocking, drift, others, two_cores() is None
    )
