from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

import pytest

from vcosim.bus.client import BusClient, Copy
from vcosim.bus.router import Router

IDLE_TIMEOUT = 60.0
"""The fixture router's timeout: its test modules are not polled between their steps, so they
send no keep-alive; a loaded machine must not make the router drop them (the membership tests
make their own routers, with short timeouts)."""


@pytest.fixture
def router() -> Iterator[Router]:
    """A router on an ephemeral loopback port, serving in a thread."""
    r = Router("127.0.0.1", 0, timeout=IDLE_TIMEOUT).start()
    yield r
    r.stop()


@pytest.fixture
def connect(router: Router) -> Iterator[Callable[..., BusClient]]:
    """Join modules to ``router``; every one is closed at the end."""
    clients: list[BusClient] = []

    def make(module_id: int, **options: object) -> BusClient:
        client = BusClient(module_id, port=router.address[1], **options)  # type: ignore[arg-type]
        clients.append(client)
        return client.connect(timeout=2.0)

    yield make
    for client in clients:
        client.close()


@pytest.fixture
def routed(router: Router) -> Callable[[int], None]:
    """Wait until the router has passed on ``n`` messages in all (a condition, not a sleep)."""

    def wait(n: int, timeout: float = 2.0) -> None:
        assert router.wait_until(lambda: router.stats.routed >= n, timeout), router.report()

    return wait


class Collector:
    """Drains a monitor's copies in a thread of its own (blocking, not spinning)."""

    def __init__(self, client: BusClient) -> None:
        self.client = client
        self.copies: list[Copy] = []
        self._changed = threading.Condition()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            copy = self.client.next_copy(timeout=0.1)
            if copy is not None:
                with self._changed:
                    self.copies.append(copy)
                    self._changed.notify_all()

    def wait_for(self, predicate: Callable[[list[Copy]], bool], timeout: float = 5.0) -> bool:
        with self._changed:
            return self._changed.wait_for(lambda: predicate(self.copies), timeout)

    def stop(self) -> list[Copy]:
        self._stop.set()
        self._thread.join(timeout=2)
        return self.copies


@pytest.fixture
def collect(connect: Callable[..., BusClient]) -> Iterator[Callable[[BusClient], Collector]]:
    """Start a Collector on a monitor client; stopped at the end."""
    collectors: list[Collector] = []

    def make(client: BusClient) -> Collector:
        collectors.append(Collector(client))
        return collectors[-1]

    yield make
    for c in collectors:
        c.stop()
