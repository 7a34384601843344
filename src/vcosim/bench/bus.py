"""``vcosim bench bus``: the router's throughput and the latency it adds over direct UDP.

Measured in one run on this machine, with the router in a process of its own and an echo
module in another (each its own interpreter and lock), both echoes doing the same work:

- direct: a ping-pong of a real IMFM datagram between this process and a bare UDP echo;
- through the router: the same ping-pong between module 1 (here) and module 2 (the echo), so
  each round trip is two routed messages.

With one message in flight the round trips give the latency; the router's added latency per
message is half the difference of the median round trips. With ``WINDOW`` messages in flight
the messages per second give the throughput (routed messages/s: both directions counted):
direct and routed take ``TURNS`` turns each in alternation, and each rate is that of its
best 0.1 s window (``vcosim.bench.rates``), so that load elsewhere on the machine slows both
alike and the figure is the code's speed while it held the cores it needs.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import os
import selectors
import socket
import statistics
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vcosim.bench.progress import bench_progress
from vcosim.bench.rates import BenchReport, Marks, Quiet, RatioDoc, best_window, unjudged_if_busy
from vcosim.bus.catalogue import IMFM
from vcosim.reports import Report
from vcosim.scenarios.harness import ChildLink, ChildProcess

WINDOW = 32
"""Messages in flight in the throughput measurement."""

MAIN_ID, ECHO_ID = 1, 2
TURNS = 3  # throughput turns of direct and routed each, taken in alternation
MARK_EVERY = 64  # round trips between marks of a throughput turn
QUICK = {"seconds": 0.6}
"""``--quick``: the same figures in ~5 s, for ``vcosim bench all --quick`` and its guard test."""

RATIOS = {
    "router_vs_direct": RatioDoc(
        "the router's message throughput as a share of direct UDP's",
        f"an IMFM ping-pong with {WINDOW} messages in flight between this process and an echo "
        "process, through the router (its own process) and direct, in turns, best 0.1 s "
        "window of each",
    ),
}
"""The same-run ratios this bench reports (``ratios()``), by their stable keys."""


def _payloads(to: int = ECHO_ID) -> tuple[bytes, bytes]:
    """The IMFM to module ``to``, and the one back to module 1."""
    from vcosim.bus.codec import Codec

    codec = Codec()
    message = IMFM(100, 150, 156, 0, enqueue=True)
    return (
        codec.encode(IMFM(*message.values, to=to, enqueue=True)),
        codec.encode(IMFM(*message.values, to=MAIN_ID, enqueue=True)),
    )


def _echo_loop(
    link: ChildLink, sock: socket.socket, reply: bytes, to: tuple[str, int] | None
) -> None:
    """Answer each datagram with ``reply`` until asked to stop."""
    stopped = threading.Event()  # a flag the loop reads without a system call
    link.on_stop(stopped.set)
    sock.settimeout(0.2)
    while not stopped.is_set():
        try:
            _, sender = sock.recvfrom(512)
        except (TimeoutError, ConnectionRefusedError):
            continue
        sock.sendto(reply, to or sender)


def _direct_echo(link: ChildLink) -> None:
    """A bare UDP echo: answer each datagram with the reply payload."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    link.ready(sock.getsockname()[1])
    _echo_loop(link, sock, _payloads()[1], None)
    sock.close()


def _router(link: ChildLink) -> None:
    """The router in a process of its own; its counters go back when told to stop."""
    from vcosim.bus.router import Router

    # The modules here are bare sockets that keep no id alive while the other half measures.
    router = Router("127.0.0.1", 0, timeout=math.inf).start()
    link.ready(router.address[1])
    link.wait()
    router.stop()
    report = router.report()
    link.result({k: report[k] for k in ("routed", "malformed", "unknown_destination")})


def _bus_echo(link: ChildLink, port: int) -> None:
    """Module 2: answer each message to module 1, through the router."""
    from vcosim.bus.client import BusClient

    client = BusClient(ECHO_ID, port=port).connect()
    client.wait(2.0)  # the answer to its first ping, taken before the bare socket echoes
    link.ready()
    _echo_loop(link, client.sock, _payloads()[1], client.sock.getpeername())
    client.close()


@dataclass
class PingPong(Report):
    """One ping-pong: round trips (µs) with one message in flight, throughput with a window."""

    rtt_us_median: float
    rtt_us_p99: float
    round_trips_per_s: float  # with ``WINDOW`` messages in flight
    lost: int


def _exchange(
    sock: socket.socket, payloads: Sequence[bytes], seconds: float, window: int
) -> tuple[Marks, list[float], int]:
    """Round trips with ``window`` messages in flight for ``seconds``, ``payloads`` in turn.

    Returns (time, round trips) marks, the round-trip times (s) and the messages lost.
    """
    payload = itertools.cycle(payloads).__next__
    sock.settimeout(0.5)
    sent: deque[float] = deque()
    rtts: list[float] = []
    lost = 0
    for _ in range(window):
        sent.append(time.perf_counter())
        sock.send(payload())
    start = time.perf_counter()
    marks: Marks = [(start, 0)]
    end = start + seconds
    now = start
    while now < end:
        try:
            sock.recv(512)
        except TimeoutError:
            lost += 1
            sent.popleft()
        else:
            now = time.perf_counter()
            rtts.append(now - sent.popleft())
            if len(rtts) % MARK_EVERY == 0:
                marks.append((now, len(rtts)))
        sent.append(time.perf_counter())
        sock.send(payload())
        now = time.perf_counter()
    marks.append((now, len(rtts)))
    sock.settimeout(0.2)
    try:  # drain what is still in flight, so the next measurement starts clean
        while sent:
            sock.recv(512)
            sent.popleft()
    except TimeoutError:
        pass
    return marks, rtts, lost


def latency(sock: socket.socket, payload: bytes, seconds: float) -> tuple[float, float, int]:
    """Median and 99th-percentile round trip (µs) with one message in flight; messages lost."""
    _, rtts, lost = _exchange(sock, (payload,), seconds, 1)
    ordered = sorted(rtts)
    return (
        statistics.median(ordered) * 1e6,
        ordered[int(0.99 * (len(ordered) - 1))] * 1e6,
        lost,
    )


@dataclass
class BusBench(BenchReport):
    """``vcosim bench bus``: direct UDP against the router, and the router's own counters."""

    message: str
    window: int
    seconds: float
    direct: PingPong
    routed: PingPong
    router: dict[str, Any]  # the router's counters: routed, malformed, unknown_destination
    cores_used_by_others: float | None = None  # during the throughput turns (``Quiet``)

    def to_dict(self) -> dict[str, Any]:
        """In the layout ``vcosim bench bus --json`` prints (messages/s count both ways)."""
        d, r = self.direct, self.routed
        return {
            "message": self.message,
            "window": self.window,
            "seconds": self.seconds,
            "direct_rtt_us_median": d.rtt_us_median,
            "direct_rtt_us_p99": d.rtt_us_p99,
            "router_rtt_us_median": r.rtt_us_median,
            "router_rtt_us_p99": r.rtt_us_p99,
            "added_latency_us": (r.rtt_us_median - d.rtt_us_median) / 2.0,
            "direct_messages_per_s": 2.0 * d.round_trips_per_s,
            "router_messages_per_s": 2.0 * r.round_trips_per_s,
            "throughput_ratio": r.round_trips_per_s / d.round_trips_per_s,
            "lost": d.lost + r.lost,
            "router": self.router,
            "ratios": self.ratios(),
            "cores_used_by_others": self.cores_used_by_others,
            "unjudged": self.unjudged(),
        }

    def ratios(self) -> dict[str, float]:
        """The same-run ratios of ``RATIOS``: higher is faster."""
        return {"router_vs_direct": self.routed.round_trips_per_s / self.direct.round_trips_per_s}

    def unjudged(self) -> dict[str, str]:
        """The ratios measured while other processes took the cores, and why (``Quiet``)."""
        return unjudged_if_busy(self.cores_used_by_others, ["router_vs_direct"])


def measure_bus_bench(seconds: float = 2.0, progress: bool = True) -> BusBench:
    """Every figure of the bus bench (see the module's docstring).

    ``seconds`` is each figure's share of wall time (for the throughputs, the sum of their
    turns).
    """
    from vcosim.bus.client import BusClient

    to_echo = _payloads()[0]
    with bench_progress(progress) as bar, contextlib.ExitStack() as stack:
        task = bar.add_task("starting the echo and the router", total=3 + 2 * TURNS)

        def tick() -> None:
            bar.advance(task)

        direct_echo = stack.enter_context(ChildProcess(_direct_echo, name="UDP echo"))
        router = stack.enter_context(ChildProcess(_router, name="router"))
        router_port = router.port()
        bus_echo = stack.enter_context(ChildProcess(_bus_echo, router_port, name="echo module"))
        direct = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_DGRAM))
        direct.bind(("127.0.0.1", 0))
        direct.connect(("127.0.0.1", direct_echo.port()))
        bus_echo.ready()
        routed = BusClient(MAIN_ID, port=router_port).connect()
        routed.wait(2.0)  # (the answer to its first ping: not one of the measured messages)
        stack.callback(routed.close)
        tick()
        bar.update(task, description="latency: direct, router")
        direct_latency = latency(direct, to_echo, seconds)
        routed_latency = latency(routed.sock, to_echo, seconds)
        tick()
        bar.update(task, description=f"throughput, {WINDOW} in flight")
        best, lost = [0.0, 0.0], [direct_latency[2], routed_latency[2]]
        quiet = Quiet()
        for _ in range(TURNS):
            for i, sock in enumerate((direct, routed.sock)):
                marks, _, missing = _exchange(sock, (to_echo,), seconds / TURNS, WINDOW)
                best[i], lost[i] = max(best[i], best_window(marks)), lost[i] + missing
                tick()
        others = quiet.others()
        routed.close()
        bus_echo.stop()
        stopped = router.stop()
        counters = stopped if isinstance(stopped, dict) else {}
        tick()
    return BusBench(
        f"IMFM, {len(to_echo)} bytes",
        WINDOW,
        seconds,
        PingPong(*direct_latency[:2], best[0], lost[0]),
        PingPong(*routed_latency[:2], best[1], lost[1]),
        counters,
        others,
    )


# -- the router's cost against the number of modules (``vcosim bench growth``) ---------------
def _bus_echoes(link: ChildLink, port: int, ids: list[int]) -> None:
    """Modules ``ids`` in one process: each answers every message to module 1, via the router."""
    from vcosim.bus.client import BusClient

    clients = [BusClient(module, port=port).connect() for module in ids]
    for client in clients:
        client.wait(2.0)  # the answer to its first ping
    stopped = threading.Event()
    link.on_stop(stopped.set)
    reply = _payloads()[1]
    with selectors.DefaultSelector() as selector:
        for client in clients:
            selector.register(client.sock, selectors.EVENT_READ)
        link.ready()
        while not stopped.is_set():
            for key, _ in selector.select(0.2):
                sock: socket.socket = key.fileobj  # type: ignore[assignment]
                try:
                    sock.recv(512)
                except (BlockingIOError, ConnectionRefusedError):
                    continue
                sock.send(reply)
    for client in clients:
        client.close()


def _cpu_seconds(pid: int | None) -> float | None:
    """CPU seconds process ``pid`` has used so far (``/proc``); None where it cannot tell."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


@dataclass
class RouterCost(Report):
    """The router with ``modules`` echo modules answering module 1, ``WINDOW`` in flight."""

    modules: int
    messages_per_s: float  # routed messages (both directions), best 0.1 s window of its turns
    router_cpu_us_per_message: float | None  # the router process's CPU over the messages routed
    lost: int


def measure_router_cost(
    modules: int, seconds: float, tick: Callable[[], None] = lambda: None
) -> RouterCost:
    """Module 1 (here) sends to ``modules`` echo modules in turn, through a router of its own.

    ``seconds`` is the sum of ``TURNS`` throughput turns. The router's CPU time is read from
    ``/proc`` around them, so its cost per message does not depend on who else held the
    cores (unlike the messages/s, which need all three processes running).
    """
    from vcosim.bus.client import BusClient

    ids = [ECHO_ID + k for k in range(modules)]
    payloads = [_payloads(module)[0] for module in ids]
    with contextlib.ExitStack() as stack:
        router = stack.enter_context(ChildProcess(_router, name="router"))
        port = router.port()
        echoes = stack.enter_context(ChildProcess(_bus_echoes, port, ids, name="echo modules"))
        echoes.ready()
        main = BusClient(MAIN_ID, port=port).connect()
        stack.callback(main.close)
        main.wait(2.0)
        best, lost, round_trips = 0.0, 0, 0
        cpu_before = _cpu_seconds(router.pid)
        for _ in range(TURNS):
            marks, _, missing = _exchange(main.sock, payloads, seconds / TURNS, WINDOW)
            best, lost, round_trips = (
                max(best, best_window(marks)),
                lost + missing,
                round_trips + int(marks[-1][1]),
            )
            tick()
        cpu_after = _cpu_seconds(router.pid)
    cpu = None
    if cpu_before is not None and cpu_after is not None and round_trips:
        cpu = (cpu_after - cpu_before) / (2 * round_trips) * 1e6
    return RouterCost(modules, 2.0 * best, cpu, lost)
