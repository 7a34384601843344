"""A router process killed with SIGKILL: modules notice, say so, rejoin a new one or give up."""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from helpers.forks import vcosim_command
from helpers.loop import free_port
from vcosim.bus.catalogue import IMFM
from vcosim.bus.client import BusClient, Liveness, RouterLost

# Pings often; a dead router is noticed at once (its port refuses the ping), while a live but
# busy one (a loaded machine) has seconds to answer before it is taken for gone.
QUICK = Liveness(ping_after=0.2, lost_after=3.0, give_up_after=30.0)


class RouterProcess:
    """``vcosim bus`` on a given loopback port, in a process of its own."""

    def __init__(self, port: int, state: Path) -> None:
        self.port = port
        listen = f"127.0.0.1:{port}"
        self.process = subprocess.Popen(
            [*vcosim_command(), "bus", "--listen", listen, "--state", str(state)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        probe = BusClient(99, port=port)  # handshakes repeat until the router is up
        try:
            probe.connect(timeout=30.0)
        finally:
            probe.close()

    def kill(self) -> float:
        """SIGKILL, reaped; the moment it was sent (monotonic)."""
        killed = time.monotonic()
        self.process.kill()
        self.process.wait(10.0)
        return killed


@pytest.fixture
def routers(tmp_path: Path) -> Iterator[Callable[[int], RouterProcess]]:
    started: list[RouterProcess] = []

    def start(port: int) -> RouterProcess:
        started.append(RouterProcess(port, tmp_path / f"bus-{port}.json"))
        return started[-1]

    yield start
    for router in started:
        router.process.kill()
        router.process.wait(10.0)


def poll_until(client: BusClient, condition: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline:
        client.wait(0.05)
    return condition()


def test_a_silent_module_notices_a_killed_router_and_rejoins_its_successor(
    routers, caplog: pytest.LogCaptureFixture
):
    port = free_port()
    first = routers(port)
    client = BusClient(16, port=port, liveness=QUICK).connect(timeout=5.0)
    try:
        killed = first.kill()
        assert poll_until(client, lambda: client.router_lost, 10.0)
        noticed = time.monotonic() - killed
        gone = [r.getMessage() for r in caplog.records if "it has gone" in r.getMessage()]
        assert len(gone) == 1 and f"127.0.0.1:{port}" in gone[0]
        assert noticed < 10.0  # (about ping_after: the ping is refused at once on loopback)

        routers(port)  # a new router on the same address: the module's pings join it
        assert poll_until(client, lambda: not client.router_lost, 20.0)
        assert any("is back" in r.getMessage() for r in caplog.records)
        with BusClient(17, port=port) as driver:
            driver.send(IMFM(1, 2, 3, 0, to=16))
            assert poll_until(client, lambda: client.pending > 0, 5.0)
            assert client.next_message() == IMFM(1, 2, 3, 0, to=16)
        assert client.stats.losses == 1 and client.stats.pings >= 1
    finally:
        client.close()


def test_a_module_gives_up_on_a_router_that_stays_dead(routers):
    port = free_port()
    router = routers(port)
    live = Liveness(ping_after=0.2, lost_after=1.0, give_up_after=1.5)
    client = BusClient(16, port=port, liveness=live).connect(timeout=5.0)
    heard = time.monotonic()  # (the answer: the last sign of the router)
    try:
        router.kill()
        with pytest.raises(RouterLost, match=f"no sign of the bus router at 127.0.0.1:{port}"):
            poll_until(client, lambda: False, 20.0)
        assert time.monotonic() - heard >= 1.5  # not before give_up_after of silence
    finally:
        client.close()


def test_a_live_but_quiet_router_answers_pings_and_is_never_lost(routers):
    port = free_port()
    routers(port)
    client = BusClient(16, port=port, liveness=QUICK).connect(timeout=5.0)
    try:
        assert poll_until(client, lambda: client.stats.pings >= 5, 10.0)
        assert not client.router_lost and client.stats.losses == 0
    finally:
        client.close()


def test_the_logger_says_it_records_nothing_and_leaves_a_complete_file(
    routers, tmp_path: Path, caplog: pytest.LogCaptureFixture
):
    pytest.importorskip("mcap")
    from vcosim.modules.logger import Logger, read_recording

    port = free_port()
    router = routers(port)
    logger = Logger(tmp_path / "bus.mcap", port=port)
    logger.client.liveness = Liveness(ping_after=0.2, lost_after=3.0, give_up_after=4.0)
    logger.connect()
    with BusClient(17, port=port) as driver:
        driver.send(IMFM(1, 2, 3, 0, to=16))
    ended: list[BaseException] = []

    def run() -> None:
        try:
            logger.run()
        except BaseException as exc:  # noqa: BLE001 (handed to the test)
            ended.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10.0
    while not (logger.recorder and logger.recorder.count) and time.monotonic() < deadline:
        time.sleep(0.02)  # (polling a condition)
    router.kill()
    thread.join(20.0)
    assert not thread.is_alive() and len(ended) == 1 and isinstance(ended[0], RouterLost)
    said = [r.getMessage() for r in caplog.records if r.name == "vcosim.modules"]
    nothing = [line for line in said if line.startswith("logger: recorded nothing for the last")]
    assert len(nothing) == 2, said  # when it fell silent, and when the logger gave up
    assert "the bus router is silent" in nothing[0] and "is gone" in nothing[1]
    records = list(read_recording(tmp_path / "bus.mcap"))  # finished: reads to its end
    assert [type(r.message).__name__ for r in records] == ["IMFM"]


def test_the_viewer_gives_up_on_a_router_that_stays_dead(routers):
    pytest.importorskip("uvicorn")  # the viewer's server (extra "viewer")
    from vcosim.modules.viewer import Viewer

    port = free_port()
    router = routers(port)
    viewer = Viewer("127.0.0.1", port, port=0)
    viewer.client.liveness = Liveness(ping_after=0.2, lost_after=1.0, give_up_after=1.5)
    viewer.connect()
    ended: list[BaseException | None] = []

    def serve() -> None:
        try:
            viewer.loop(None)
            ended.append(None)
        except BaseException as exc:  # noqa: BLE001 (handed to the test)
            ended.append(exc)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        router.kill()
        thread.join(20.0)
        assert ended and isinstance(ended[0], RouterLost), ended
    finally:
        viewer.stopped.set()
        thread.join(5.0)
        viewer.close()
