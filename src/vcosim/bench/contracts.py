"""``vcosim bench contracts``: updates/s of one 20-field contract at 1 ms, and its latency.

Measured in one run on this machine, the server (``Simulation`` + ``ContractServer``) in its
own process, the client (``ContractClient``) in this one:

- **updates/s**: the client is the time master (a time-synced 1 ms input contract) and runs
  as fast as it can; the server, paced fast, follows it and sends the 20-field output
  contract every 1 ms of simulation time. Every update is delivered (no flooding), so the
  figure is what the coupled pair sustains; divided by 1000 it is the real-time factor of a
  1 ms co-simulation.
- **latency**: the server in real time (1000 frames/s), the client time-synced to it; from
  the moment the server's step ends (just before it sends) to the moment the update is on
  the client's output port (inside the step function). Both ends read the same monotonic
  clock (``time.perf_counter``), so this needs one machine.
- **baselines**: a bare Python UDP stream of the same datagram size between two processes
  (datagrams/s one process can receive), and its one-way latency at one datagram per ms.
"""

from __future__ import annotations

import multiprocessing as mp
import socket
import struct
import time
from typing import Any

import numpy as np

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


# -- the server process ------------------------------------------------------------------------
def _serve(pacing: str, ports: Any, results: Any, limit: float) -> None:
    """A simulation serving contracts until its one client leaves; sends back step times."""
    from vcosim.contracts.server import ContractServer
    from vcosim.sim.pacing import Pacer
    from vcosim.sim.simulation import Simulation
    from vcosim.vehicle import Vehicle

    car = Vehicle(engine_running=True)
    car.step(automatic=1, gear=1)
    sim = Simulation(car, Pacer(pacing, dt=car.dt, frame_rate=1000.0))
    steps: list[tuple[float, float]] = []

    class StepClock:  # attached before the server: it reads the clock before the send
        def after_step(self, s: Simulation) -> None:
            steps.append((s.time, time.perf_counter()))

    class LeaveWithClient:
        def on_frame(self, s: Simulation) -> None:
            if server.stats.sessions and not server.sessions:
                s.stop()

    if pacing == "realtime":
        sim.attach("clock", StepClock())
    server = sim.attach("contracts", ContractServer(port=0, wait_for_clients=1, wait_timeout=30.0))
    sim.attach("leave", LeaveWithClient())
    ports.put(server.address[1])
    report = sim.run(limit)
    results.put({"steps": steps, "report": report.faces["contracts"]})


class ServerProcess:
    """``_serve`` in its own process (own GIL and core), as a context manager."""

    def __init__(self, pacing: str, limit: float) -> None:
        ctx = mp.get_context("spawn")
        self._ports, self.results = ctx.Queue(), ctx.Queue()
        self._process = ctx.Process(
            target=_serve, args=(pacing, self._ports, self.results, limit), daemon=True
        )

    def __enter__(self) -> ServerProcess:
        self._process.start()
        self.port = int(self._ports.get(timeout=60))
        return self

    def result(self) -> dict[str, Any]:
        """What the server sent back when its client left."""
        return self.results.get(timeout=60)

    def __exit__(self, *exc: object) -> None:
        self._process.join(timeout=10)
        if self._process.is_alive():
            self._process.kill()


def _config(port: int, *, client_master: bool) -> dict[str, Any]:
    outputs = {
        "updatePeriod": PERIOD,
        "ports": [
            [{"propertyName": name} for name in SIGNALS],
            [{"propertyName": "time", "propertyType": "meta"}],
            [{"propertyName": "serial_number", "propertyType": "meta"}],
        ],
    }
    doc: dict[str, Any] = {
        "version": 2,
        "remotePort": port,
        "remoteObject": "Vehicle_A",
        "timeDilation": 0.0,
        "outputs": [outputs],
    }
    if client_master:
        doc["inputs"] = [
            {
                "updatePeriod": PERIOD,
                "timeSyncMode": "absolute",
                "ports": [[{"propertyName": "throttle"}]],
            }
        ]
    else:
        outputs["timeSyncMode"] = "absolute"
    return doc


# -- the measurements ------------------------------------------------------------------------
def updates_per_second(seconds: float) -> dict[str, float]:
    """The client as time master, both sides as fast as they can: updates/s and gaps."""
    from vcosim.contracts.client import ContractClient

    with ServerProcess("fast", limit=seconds * 1000 + 60) as server:
        marks: list[tuple[float, int]] = []
        client: ContractClient

        def step(ports: Any) -> None:
            if ports.status == 3 and len(marks) < 2:
                if not marks:
                    marks.append((time.perf_counter(), client.received))
                elif time.perf_counter() - marks[0][0] >= seconds:
                    marks.append((time.perf_counter(), client.received))
                    client.stop()

        client = ContractClient(_config(server.port, client_master=True), step, step=PERIOD)
        report = client.run(None)
        server.result()
    (t0, n0), (t1, n1) = marks
    return {"updates_per_s": (n1 - n0) / (t1 - t0), "gaps": float(report.gaps)}


def latency(seconds: float) -> dict[str, Any]:
    """The server in real time, the client synced to it: server step end to client port."""
    from vcosim.contracts.client import ContractClient

    seen: dict[float, float] = {}
    with ServerProcess("realtime", limit=seconds + 60) as server:
        last = [0.0]

        def step(ports: Any) -> None:
            serial = ports["serial_number"]
            if serial != last[0] and ports.status == 3:
                last[0] = serial
                seen[round(ports["time"], 6)] = time.perf_counter()

        client = ContractClient(_config(server.port, client_master=False), step, step=PERIOD)
        client.run(seconds)
        result = server.result()
    sent = {round(t, 6): wall for t, wall in result["steps"]}
    delays = np.array([wall - sent[t] for t, wall in seen.items() if t in sent]) * 1e3
    delays = delays[len(delays) // 10 :]  # the first tenth: connection and warm-up
    return _stats(delays)


def _stats(ms: np.ndarray) -> dict[str, Any]:
    if not ms.size:
        return {"median": None, "p99": None, "max": None, "samples": 0}
    return {
        "median": float(np.median(ms)),
        "p99": float(np.percentile(ms, 99)),
        "max": float(ms.max()),
        "samples": int(ms.size),
    }


def _raw_sender(port: int, seconds: float, paced: bool) -> None:
    """Send stamped datagrams of the contract's size: as fast as possible, or one per ms."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    payload = bytearray(DATAGRAM)
    end = time.perf_counter() + seconds
    next_send = time.perf_counter()
    while (now := time.perf_counter()) < end:
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
    sock.settimeout(2.0)
    ctx = mp.get_context("spawn")
    sender = ctx.Process(
        target=_raw_sender, args=(sock.getsockname()[1], seconds, paced), daemon=True
    )
    sender.start()
    buffer = bytearray(DATAGRAM)
    arrivals: list[float] = []
    delays: list[float] = []
    first_timeout = 60.0  # the sender process starts up first
    sock.settimeout(first_timeout)
    try:
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
    finally:
        sock.close()
        sender.join(timeout=10)
    return np.asarray(arrivals), np.asarray(delays)


def raw_stream_per_second(seconds: float) -> float:
    """Datagrams/s one Python process receives from a flooding one (same size as an update)."""
    arrivals, _ = raw_udp(seconds, paced=False)
    if len(arrivals) < 2:
        return 0.0
    return float((len(arrivals) - 1) / (arrivals[-1] - arrivals[0]))


def run_contracts_bench(seconds: float = 2.0, progress: bool = True) -> dict[str, Any]:
    """Every figure of the contract bench, as one JSON-friendly dict."""

    def say(text: str) -> None:
        if progress:
            from rich.console import Console

            Console(stderr=True).log(text)

    say(f"raw UDP stream of {DATAGRAM}-byte datagrams ({seconds:g} s)")
    raw_rate = raw_stream_per_second(seconds)
    say("raw UDP one-way latency at 1 datagram/ms")
    raw_delay = raw_udp(seconds, paced=True)[1] * 1e3
    say(f"contract updates/s: {FIELDS} fields every {PERIOD * 1e3:g} ms, client as time master")
    throughput = updates_per_second(seconds)
    say("latency from the server's step to the client's port, server in real time")
    delay = latency(seconds)
    return {
        "fields": FIELDS,
        "period_ms": PERIOD * 1e3,
        "datagram_bytes": DATAGRAM,
        "updates_per_s": throughput["updates_per_s"],
        "realtime_factor_at_1ms": throughput["updates_per_s"] * PERIOD,
        "gaps": throughput["gaps"],
        "latency_ms": delay,
        "raw_udp_stream_per_s": raw_rate,
        "raw_udp_latency_ms": _stats(raw_delay[len(raw_delay) // 10 :]),
    }
