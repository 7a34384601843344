"""``vcosim bench bus``: the router's throughput and the latency it adds over direct UDP.

Measured in one run on this machine, with the router in a process of its own and an echo
module in another (each its own interpreter and lock), both echoes doing the same work:

- direct: a ping-pong of a real IMFM datagram between this process and a bare UDP echo;
- through the router: the same ping-pong between module 1 (here) and module 2 (the echo), so
  each round trip is two routed messages.

With one message in flight the round trips give the latency; the router's added latency per
message is half the difference of the median round trips. With ``WINDOW`` messages in flight
the messages per second give the throughput (routed messages/s: both directions counted).
"""

from __future__ import annotations

import multiprocessing as mp
import socket
import statistics
import time
from collections import deque
from typing import Any

from vcosim.bus.catalogue import IMFM

WINDOW = 32
"""Messages in flight in the throughput measurement."""

MAIN_ID, ECHO_ID = 1, 2


def _payloads() -> tuple[bytes, bytes]:
    from vcosim.bus.codec import Codec

    codec = Codec()
    message = IMFM(100, 150, 156, 0, enqueue=True)
    return (
        codec.encode(IMFM(*message.values, to=ECHO_ID, enqueue=True)),
        codec.encode(IMFM(*message.values, to=MAIN_ID, enqueue=True)),
    )


def _echo_loop(sock: socket.socket, reply: bytes, stop: Any, to: tuple[str, int] | None) -> None:
    sock.settimeout(0.2)
    while not stop.is_set():
        try:
            _, sender = sock.recvfrom(512)
        except TimeoutError:
            continue
        except ConnectionRefusedError:
            continue
        sock.sendto(reply, to or sender)


def _direct_echo(ports: Any, stop: Any) -> None:
    """A bare UDP echo: answer each datagram with the reply payload."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    ports.put(sock.getsockname()[1])
    _echo_loop(sock, _payloads()[1], stop, None)
    sock.close()


def _router(ports: Any, stop: Any, reports: Any) -> None:
    """The router in a process of its own; its report goes back when told to stop."""
    from vcosim.bus.router import Router

    router = Router("127.0.0.1", 0).start()
    ports.put(router.address[1])
    stop.wait()
    router.stop()
    reports.put({k: router.report()[k] for k in ("routed", "malformed", "unknown_destination")})


def _bus_echo(port: int, ready: Any, stop: Any) -> None:
    """Module 2: answer each message to module 1, through the router."""
    from vcosim.bus.client import BusClient

    client = BusClient(ECHO_ID, port=port).connect()
    ready.put(True)
    _echo_loop(client.sock, _payloads()[1], stop, client.sock.getpeername())
    client.close()


def _pingpong(
    sock: socket.socket, payload: bytes, seconds: float, window: int
) -> tuple[float, list[float], int]:
    """Round trips per second and round-trip times (s) with ``window`` messages in flight."""
    sock.settimeout(0.5)
    sent: deque[float] = deque()
    rtts: list[float] = []
    lost = 0
    for _ in range(window):
        sent.append(time.perf_counter())
        sock.send(payload)
    start = time.perf_counter()
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
        sent.append(time.perf_counter())
        sock.send(payload)
        now = time.perf_counter()
    elapsed = now - start
    sock.settimeout(0.2)
    try:  # drain what is still in flight, so the next measurement starts clean
        while sent:
            sock.recv(512)
            sent.popleft()
    except TimeoutError:
        pass
    return len(rtts) / elapsed, rtts, lost


def _latency(rtts: list[float]) -> tuple[float, float]:
    """Median and 99th percentile of round trips, in microseconds."""
    ordered = sorted(rtts)
    return (statistics.median(ordered) * 1e6, ordered[int(0.99 * (len(ordered) - 1))] * 1e6)


def _spawn(ctx: Any, target: Any, *args: Any) -> Any:
    process = ctx.Process(target=target, args=args, daemon=True)
    process.start()
    return process


def run_bus_bench(seconds: float = 2.0, progress: bool = True) -> dict[str, Any]:
    """Every figure of the bus bench (see the module's docstring)."""
    from rich.progress import Progress

    from vcosim.bus.client import BusClient

    ctx = mp.get_context("spawn")
    stop = ctx.Event()
    ports, reports = ctx.Queue(), ctx.Queue()
    to_echo = _payloads()[0]
    result: dict[str, Any] = {
        "message": f"IMFM, {len(to_echo)} bytes",
        "window": WINDOW,
        "seconds": seconds,
    }
    processes = []
    with Progress(transient=True, disable=not progress) as bar:
        task = bar.add_task("bus bench", total=5)
        try:
            bar.update(task, description="starting the echo and the router")
            processes.append(_spawn(ctx, _direct_echo, ports, stop))
            direct_port = int(ports.get(timeout=30))
            processes.append(_spawn(ctx, _router, ports, stop, reports))
            router_port = int(ports.get(timeout=30))
            processes.append(_spawn(ctx, _bus_echo, router_port, ports, stop))
            ports.get(timeout=30)
            bar.advance(task)

            direct = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            direct.bind(("127.0.0.1", 0))
            direct.connect(("127.0.0.1", direct_port))
            client = BusClient(MAIN_ID, port=router_port).connect()
            figures = {}
            for name, sock in (("direct", direct), ("router", client.sock)):
                bar.update(task, description=f"{name}: latency")
                _, rtts, lost_1 = _pingpong(sock, to_echo, seconds, 1)
                bar.advance(task)
                bar.update(task, description=f"{name}: throughput")
                per_s, _, lost_w = _pingpong(sock, to_echo, seconds, WINDOW)
                bar.advance(task)
                figures[name] = (_latency(rtts), per_s, lost_1 + lost_w)
            direct.close()
            client.close()
        finally:
            stop.set()
            router_report = reports.get(timeout=10) if processes[1:] else {}
            for process in processes:
                process.join(timeout=5)
                if process.is_alive():
                    process.kill()
    (d_median, d_p99), d_per_s, d_lost = figures["direct"]
    (r_median, r_p99), r_per_s, r_lost = figures["router"]
    result.update(
        {
            "direct_rtt_us_median": d_median,
            "direct_rtt_us_p99": d_p99,
            "router_rtt_us_median": r_median,
            "router_rtt_us_p99": r_p99,
            "added_latency_us": (r_median - d_median) / 2.0,
            "direct_messages_per_s": 2.0 * d_per_s,
            "router_messages_per_s": 2.0 * r_per_s,
            "throughput_ratio": r_per_s / d_per_s,
            "lost": d_lost + r_lost,
            "router": router_report,
        }
    )
    return result
