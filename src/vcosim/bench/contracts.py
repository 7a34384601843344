"""``vcosim bench contracts``: lock-step contract updates/s against the tight coupling's exchanges.

(Just past 400 lines: the bench's server process, its two measurements taken in alternation and the
report that judges their ratio are one measurement; split, the ratio would be judged apart from how
it was taken.)

Measured in one run on this machine, the server (``Simulation`` + ``ContractServer``) in a
process of its own, the client (``ContractClient``) in this one:

- **updates/s in lock-step**: one contract of 20 fields every 1 ms from the server, time-synced
  (the client follows the server), and one input answered every 1 ms; the server in lock-step
  pacing waits for each answer before it steps on. One update is one exchange: the server
  sends, the client steps and answers, the server steps 1 ms (two physics steps). Divided by
  1000 it is the real-time factor of a 1 ms co-simulation.
- **the tight coupling's lock-step exchanges/s** (``vcosim.bench.coupling.lockstep_run``: a
  message every physics step, window 1), and the ratio of the two. The two take ``TURNS``
  turns each in alternation, and each rate is that of its best 0.1 s window
  (``vcosim.bench.rates``): both are ping-pongs between two processes, at full speed only
  while both hold a core.
- **latency**: the server in real time (1000 frames/s), the client time-synced to it; from
  the moment the server's step ends (just before it sends) to the moment the update is on
  the client's output port (inside the step function). Both ends read the same monotonic
  clock (``time.perf_counter``), so this needs one machine.
- **baselines**: a bare Python UDP stream of the same datagram size between two processes
  (datagrams/s one process can receive), and its one-way latency at one datagram per ms.
"""

from __future__ import annotations

import socket
import struct
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from vcosim.bench.coupling import MARK_EVERY, Exchanges, lockstep_run, peer_process
from vcosim.bench.progress import bench_progress
from vcosim.bench.rates import BenchReport, Marks, Quiet, RatioDoc, best_window, unjudged_if_busy
from vcosim.reports import Report
from vcosim.scenarios.harness import ChildLink, ChildProcess
from vcosim.sim.face import Face

FIELDS = 20
PERIOD = 0.001
SIGNALS = (
    "posX",
    "posY",
    "posZ",
    "velX",
    "velY",
    "velZ",
    "groundspeed",
    "accX",
    "accY",
    "accZ",
    "roll",
    "pitch",
    "yaw",
    "rpm",
    "gear",
    "throttle",
    "brake",
    "steering",
    "wheelFL_wheelSpeed",
    "wheelFR_wheelSpeed",
)
DATAGRAM = 24 + 8 * FIELDS  # the DATA message of that contract
CLIENT_SPIN = 0.05  # s: the client busy-polls like the tight coupling's bench peer
TURNS = 2  # turns of contracts and coupling each, in alternation (a server process a turn)
TARGET_RATIO = 0.8  # contract updates/s over the tight coupling's exchanges/s
WAITING_STRATEGY = "both sides spin 50 ms, then sleep"
QUICK = {"seconds": 0.9, "only_ratio": True}
"""``--quick``: the guarded ratio's two rates in ~5 s, for ``vcosim bench all --quick`` and its
guard test (the blocking pair, latency and raw UDP figures are left out: null)."""

RATIOS = {
    "contracts_vs_coupling": RatioDoc(
        "lock-step contract updates/s as a share of the tight coupling's lock-step exchanges/s",
        "a 20-field contract every 1 ms, answered every 1 ms, client here and server in its "
        "own process, against the simulator in lock-step with a busy-polling peer process; "
        "both spin, then sleep; in turns, best 0.1 s window of each",
    ),
}
"""The same-run ratios this bench reports (``ratios()``), by their stable keys."""


# -- the server process ------------------------------------------------------------------------
def _serve(link: ChildLink, pacing: str, spin: float | None = None) -> None:
    """A simulation serving contracts until its one client leaves; hands back step times."""
    from vcosim.contracts.server import ContractServer
    from vcosim.scenarios.build import build_simulation
    from vcosim.scenarios.spec import PacingSpec, RunSpec
    from vcosim.sim.pacing import PacingMode
    from vcosim.sim.simulation import Simulation

    # real time: a frame per update; lock-step: the host's default frames, as the coupling's
    frames = {"frame_rate": 1000.0} if pacing == "realtime" else {}
    sim = build_simulation(RunSpec(pacing=PacingSpec(mode=PacingMode(pacing), **frames)))
    steps: list[tuple[float, float]] = []

    class StepClock(Face):  # attached before the server: it reads the clock before the send
        def after_step(self, s: Simulation) -> None:
            steps.append((s.time, time.perf_counter()))

    class LeaveWithClient(Face):
        def on_frame(self, s: Simulation) -> None:
            if server.stats.sessions and not server.sessions:
                s.stop()

    if pacing == "realtime":
        sim.attach("clock", StepClock())
    server = sim.attach(
        "contracts", ContractServer(port=0, wait_for_clients=1, wait_timeout=60, spin=spin)
    )
    sim.attach("leave", LeaveWithClient())
    link.on_stop(sim.stop)
    link.ready(server.address[1])
    sim.run(None)
    link.result(steps)


def _config(port: int, *, answer: bool, signals: Sequence[str] = SIGNALS) -> dict[str, Any]:
    """The client's file: ``signals`` every 1 ms, time-synced; ``answer``: a 1 ms input too."""
    doc: dict[str, Any] = {
        "version": 2,
        "remotePort": port,
        "remoteObject": "Vehicle_A",
        "timeDilation": 0.0,
        "outputs": [
            {
                "updatePeriod": PERIOD,
                "timeSyncMode": "absolute",
                "ports": [
                    [{"propertyName": name} for name in signals],
                    [{"propertyName": "time", "propertyType": "meta"}],
                    [{"propertyName": "serial_number", "propertyType": "meta"}],
                ],
            }
        ],
    }
    if answer:
        doc["inputs"] = [{"updatePeriod": PERIOD, "ports": [[{"propertyName": "throttle"}]]}]
    return doc


# -- the measurements ------------------------------------------------------------------------
@dataclass
class Updates(Report):
    """Contract updates per second (best window), and the updates lost on the way."""

    per_s: float
    gaps: int


@dataclass
class Delays(Report):
    """One-way delays (ms): median, 99th percentile, maximum, and how many were measured."""

    median: float | None
    p99: float | None
    max: float | None
    samples: int

    @classmethod
    def of(cls, ms: np.ndarray) -> Delays:
        """The figures of ``ms``, without its first tenth (connection and warm-up)."""
        ms = ms[len(ms) // 10 :]
        if not ms.size:
            return cls(None, None, None, 0)
        return cls(
            float(np.median(ms)), float(np.percentile(ms, 99)), float(ms.max()), int(ms.size)
        )


def lockstep_updates(
    seconds: float, blocking: bool = False, signals: Sequence[str] = SIGNALS
) -> tuple[Marks, int]:
    """The client locked to a lock-step server, each update answered, for ``seconds``.

    The server waits as in any lock-step run (spin, then sleep) and the client spins like the
    tight coupling's bench peer; ``blocking``: both sleep at once instead. Returns (time,
    updates received) marks, one every ``MARK_EVERY`` client steps from the first connected
    one (as the coupling marks its frames, not every exchange), and the gaps. ``signals``
    are the contract's fields (``vcosim bench growth`` varies them).
    """
    from vcosim.contracts.client import ConnectionStatus, ContractClient

    spin = 0.0 if blocking else None
    with ChildProcess(_serve, "lockstep", spin, name="contract server") as server:
        marks: Marks = []
        client: ContractClient
        steps = 0

        def step(ports: Any) -> None:  # a mark every MARK_EVERY updates, as the coupling's
            nonlocal steps
            if ports.status is not ConnectionStatus.connected:
                return
            steps += 1
            if steps % MARK_EVERY != 1:
                return
            marks.append((time.perf_counter(), client.received))
            if marks[-1][0] - marks[0][0] >= seconds:
                client.stop()

        client = ContractClient(
            _config(server.port(), answer=True, signals=signals),
            step,
            step=PERIOD,
            spin=0.0 if blocking else CLIENT_SPIN,
        )
        report = client.run(None)
    return marks, report.gaps


def in_turns(
    seconds: float, blocking: bool, tick: Callable[[], None] = lambda: None
) -> tuple[Updates, Exchanges, float | None]:
    """Contract updates/s and the tight coupling's exchanges/s in lock-step, in turns.

    Each gets ``TURNS`` turns of ``seconds / TURNS``, alternating, and its best window over
    them; both sides of both spin and then sleep, or (``blocking``) sleep at once. Also
    returns the cores other processes used meanwhile (``Quiet``).
    """
    turn = seconds / TURNS
    updates, exchanges, gaps, timeouts = 0.0, 0.0, 0, 0
    with peer_process(not blocking) as peer:
        port = peer.port()
        quiet = Quiet()
        for _ in range(TURNS):
            marks, lost = lockstep_updates(turn, blocking)
            updates, gaps = max(updates, best_window(marks)), gaps + lost
            tick()
            marks, late = lockstep_run(port, turn, 0.0 if blocking else None)
            exchanges, timeouts = max(exchanges, best_window(marks)), timeouts + late
            tick()
        others = quiet.others()
    return Updates(updates, gaps), Exchanges(exchanges, timeouts), others


def latency(seconds: float) -> Delays:
    """The server in real time, the client synced to it: server step end to client port."""
    from vcosim.contracts.client import ConnectionStatus, ContractClient

    seen: dict[float, float] = {}
    with ChildProcess(_serve, "realtime", name="contract server") as server:
        last = [0.0]

        def step(ports: Any) -> None:
            serial = ports["serial_number"]
            if serial != last[0] and ports.status is ConnectionStatus.connected:
                last[0] = serial
                seen[round(ports["time"], 6)] = time.perf_counter()

        client = ContractClient(_config(server.port(), answer=False), step, step=PERIOD)
        client.run(seconds)
        got = server.result(timeout=60)
        steps = got if isinstance(got, list) else []
    sent = {round(t, 6): wall for t, wall in steps}
    return Delays.of(np.array([wall - sent[t] for t, wall in seen.items() if t in sent]) * 1e3)


def _raw_sender(link: ChildLink, port: int, seconds: float, paced: bool) -> None:
    """Send stamped datagrams of the contract's size: as fast as possible, or one per ms."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    payload = bytearray(DATAGRAM)
    end = time.perf_counter() + seconds
    next_send = time.perf_counter()
    while (now := time.perf_counter()) < end and not link.stopping:
        if paced and now < next_send:
            time.sleep(max(next_send - now - 0.0002, 0.0))
            continue
        struct.pack_into("<d", payload, 0, time.perf_counter())
        sock.sendto(payload, ("127.0.0.1", port))
        next_send += PERIOD
    for _ in range(20):  # the end marker, repeated in case the receiver's buffer was full
        sock.sendto(b"end", ("127.0.0.1", port))
    sock.close()


def raw_udp(seconds: float, paced: bool) -> tuple[np.ndarray, np.ndarray]:
    """Receive a ``_raw_sender`` stream: arrival times and one-way delays (s) of each datagram."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 21)
    sock.bind(("127.0.0.1", 0))
    buffer = bytearray(DATAGRAM)
    arrivals: list[float] = []
    delays: list[float] = []
    sock.settimeout(60.0)  # the sender process starts up first
    with ChildProcess(_raw_sender, sock.getsockname()[1], seconds, paced, name="UDP sender"), sock:
        while True:
            try:
                size = sock.recv_into(buffer)
            except TimeoutError:  # every end marker was dropped: the stream is over anyway
                break
            now = time.perf_counter()
            if size != DATAGRAM:
                break
            if not arrivals:
                sock.settimeout(2.0)
            arrivals.append(now)
            delays.append(now - struct.unpack_from("<d", buffer)[0])
    return np.asarray(arrivals), np.asarray(delays)


def raw_stream_per_second(seconds: float) -> float:
    """Datagrams/s one Python process receives from a flooding one (same size as an update)."""
    arrivals, _ = raw_udp(seconds, paced=False)
    if len(arrivals) < 2:
        return 0.0
    return float((len(arrivals) - 1) / (arrivals[-1] - arrivals[0]))


@dataclass
class ContractsBench(BenchReport):
    """``vcosim bench contracts``: every figure, and the ratio the target is stated in."""

    lockstep: Updates  # both sides spin before they sleep
    coupling: Exchanges  # the tight coupling's lock-step, right after, waiting alike
    lockstep_blocking: Updates | None  # both sides sleep at once (None: not measured)
    coupling_blocking: Exchanges | None
    latency: Delays | None
    raw_udp_stream_per_s: float | None
    raw_udp_latency: Delays | None
    cores_used_by_others: dict[str, float | None] = field(default_factory=dict)  # by wait

    @property
    def ratio(self) -> float:
        """Contract updates/s over the tight coupling's lock-step exchanges/s."""
        return self.lockstep.per_s / self.coupling.per_s if self.coupling.per_s else 0.0

    @property
    def ratio_blocking(self) -> float | None:
        """The same with blocking waits on both sides."""
        if self.lockstep_blocking is None or self.coupling_blocking is None:
            return None
        tight = self.coupling_blocking.per_s
        return self.lockstep_blocking.per_s / tight if tight else 0.0

    def ratios(self) -> dict[str, float]:
        """The same-run ratios of ``RATIOS``: higher is faster."""
        return {"contracts_vs_coupling": self.ratio}

    def unjudged(self) -> dict[str, str]:
        """The ratios measured while other processes took the cores, and why (``Quiet``)."""
        return unjudged_if_busy(self.cores_used_by_others.get("spin"), ["contracts_vs_coupling"])

    def to_dict(self) -> dict[str, Any]:
        """In the layout ``vcosim bench contracts --json`` prints."""
        return {
            "fields": FIELDS,
            "period_ms": PERIOD * 1e3,
            "datagram_bytes": DATAGRAM,
            "updates_per_s": self.lockstep.per_s,
            "realtime_factor_at_1ms": self.lockstep.per_s * PERIOD,
            "gaps": self.lockstep.gaps,
            "coupling_exchanges_per_s": self.coupling.per_s,
            "ratio": self.ratio,
            "updates_per_s_blocking": self.lockstep_blocking and self.lockstep_blocking.per_s,
            "coupling_exchanges_per_s_blocking": self.coupling_blocking
            and self.coupling_blocking.per_s,
            "ratio_blocking": self.ratio_blocking,
            "target_ratio": TARGET_RATIO,
            "meets_target": self.ratio >= TARGET_RATIO,
            "waiting_strategy": WAITING_STRATEGY,
            "latency_ms": self.latency and self.latency.to_dict(),
            "raw_udp_stream_per_s": self.raw_udp_stream_per_s,
            "raw_udp_latency_ms": self.raw_udp_latency and self.raw_udp_latency.to_dict(),
            "ratios": self.ratios(),
            "cores_used_by_others": self.cores_used_by_others,
            "unjudged": self.unjudged(),
        }


def measure_contracts_bench(
    seconds: float = 2.0, progress: bool = True, only_ratio: bool = False
) -> ContractsBench:
    """Every figure of the contract bench (see the module's docstring).

    ``seconds`` is each figure's share of wall time (for the lock-step ones, the sum of
    their turns); ``only_ratio`` measures the guarded ratio's two rates and nothing else.
    """
    with bench_progress(progress) as bar:
        task = bar.add_task("contract and coupling lock-step", total=2 * TURNS)

        def tick() -> None:
            bar.advance(task)

        lockstep, coupling, others_spin = in_turns(seconds, blocking=False, tick=tick)
        if only_ratio:
            return ContractsBench(
                lockstep, coupling, None, None, None, None, None, {"spin": others_spin}
            )
        bar.update(task, total=4 * TURNS + 3, description="the same, blocking waits")
        lockstep_blocking, coupling_blocking, others_blocking = in_turns(seconds, True, tick)
        bar.update(task, description="latency, server step to client port")
        delays = latency(seconds)
        tick()
        bar.update(task, description=f"raw UDP stream, {DATAGRAM}-byte datagrams")
        stream = raw_stream_per_second(seconds)
        tick()
        bar.update(task, description="raw UDP one-way latency at 1/ms")
        raw_delays = Delays.of(raw_udp(seconds, True)[1] * 1e3)
        tick()
    others = {"spin": others_spin, "blocking": others_blocking}
    return ContractsBench(
        lockstep, coupling, lockstep_blocking, coupling_blocking, delays, stream, raw_delays, others
    )
