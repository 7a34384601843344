"""A module that keeps to the seed's protocol keeps its id while its socket exists (issue 45, L).

The seed's protocol has no keep-alive: a module handshakes, then only listens. Since
membership expired, such a module gave its id to the next handshake for it and was dropped
after the router's timeout of silence. Now it keeps its id as long as its socket exists; the
router learns that a socket has gone from the refusal of a probe on its connected per-module
socket. Over real UDP on loopback; waits are on conditions (a 30 s guard against a hang),
and the one wait on time is the behaviour under test: silence longer than the timeout.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import pytest

from bus.test_bus_membership import BRISK, confirmed, pump
from vcosim.bus.catalogue import IMFM
from vcosim.bus.client import BusClient
from vcosim.bus.codec import Codec
from vcosim.bus.membership import MAX_UNCONFIRMED
from vcosim.bus.router import Router
from vcosim.errors import ProtocolError

TIMEOUT = 0.5  # s of silence after which a confirmed module is dropped (short, on purpose)


class SeedModule:
    """A raw client written from the wire facts: handshake, then listen (never a word more)."""

    def __init__(self, router: Router, module_id: int) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(5.0)
        self.sock.sendto(b"ID %d,END" % module_id, router.address)
        self.answer = self.sock.recv(200)
        self.sock.setblocking(False)
        self.received: list[bytes] = []

    @property
    def address(self) -> tuple[str, int]:
        return self.sock.getsockname()

    def drain(self) -> int:
        """Read what has arrived (as a listening module does); how many messages so far."""
        while True:
            try:
                data = self.sock.recv(2048)
            except BlockingIOError:
                return len(self.received)
            if not data.startswith(b"ID "):  # (the router's probes: the handshake's answer)
                self.received.append(data)

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def router() -> Iterator[Router]:
    r = Router("127.0.0.1", 0, timeout=TIMEOUT).start()
    yield r
    r.stop()


def test_a_listening_seed_module_keeps_its_id_past_the_timeout(router: Router) -> None:
    with BusClient(17, port=router.address[1], liveness=BRISK) as driver:
        assert router.wait_until(lambda: confirmed(router, 17), 5.0)
        seed = SeedModule(router, 18)
        try:
            assert seed.answer == b"ID 0,END"
            joined = time.monotonic()
            drive = lambda: driver.send(IMFM(1, 2, 3, 0, to=18))  # noqa: E731
            # Three timeouts of silence from it (the behaviour under test), messages flowing.
            assert pump([driver], router, lambda: time.monotonic() - joined > 3 * TIMEOUT, drive)
            assert router.modules[18].address == seed.address  # still its id
            before = seed.drain()
            assert pump([driver], router, lambda: seed.drain() > before + 3, drive)
            assert router.report()["expired"] == 0 and router.stats.unheard == 0
        finally:
            seed.close()


def test_a_second_client_asking_for_a_seed_modules_id_is_refused(router: Router) -> None:
    seed = SeedModule(router, 18)
    try:
        with pytest.raises(ProtocolError, match="already taken by the module at"):
            BusClient(18, port=router.address[1]).connect(timeout=5.0)
        assert router.modules[18].address == seed.address
        with BusClient(17, port=router.address[1]) as driver:  # it still hears its messages
            driver.send(IMFM(1, 2, 3, 0, to=18))
            assert pump([driver], router, lambda: seed.drain() >= 1)
        assert seed.received[0] == Codec().encode(IMFM(1, 2, 3, 0, to=18))  # as sent
    finally:
        seed.close()


def test_a_closed_seed_module_gives_its_id_at_once_to_the_next(router: Router) -> None:
    seed = SeedModule(router, 18)
    address = seed.address
    seed.close()  # a ghost: handshook, then gone
    with BusClient(18, port=router.address[1]) as newcomer:  # the probe finds it gone
        assert router.modules[18].address == newcomer.address != address
    assert router.stats.unheard == 1


def test_a_ghost_is_found_by_the_sweeps_probe_without_anyone_asking(router: Router) -> None:
    seed = SeedModule(router, 18)
    seed.close()
    assert router.wait_until(lambda: 18 not in router.modules, 30.0)
    assert router.stats.unheard == 1 and router.stats.expired == 0


def test_a_host_keeps_its_budget_of_listening_modules_and_ghosts_make_room(
    router: Router,
) -> None:
    seeds = [SeedModule(router, 100 + i) for i in range(MAX_UNCONFIRMED)]
    try:
        assert all(seed.answer == b"ID 0,END" for seed in seeds)
        late = SeedModule(router, 200)  # one too many, all the others still there
        assert late.answer.startswith(b"REFUSED 200,127.0.0.1 has 16 modules"), late.answer
        late.close()
        assert all(router.modules[100 + i].address == s.address for i, s in enumerate(seeds))
        seeds[0].close()  # one goes: the next handshake finds room
        again = SeedModule(router, 200)
        assert again.answer == b"ID 0,END" and 100 not in router.modules
        assert router.modules[200].address == again.address
        again.close()
    finally:
        for seed in seeds:
            seed.close()


def test_a_silent_module_expires_on_time_while_junk_arrives(router: Router) -> None:
    """Issue 45, B at this face: a vcosim module that stops (it spoke, then fell silent) is
    dropped after the timeout though 100 junk datagrams a second reach the router."""
    from helpers.junk import Junk

    client = BusClient(18, port=router.address[1], liveness=BRISK).connect(timeout=5.0)
    assert router.wait_until(lambda: confirmed(router, 18), 5.0)
    with Junk(router.address):
        assert router.wait_until(lambda: 18 not in router.modules, 30.0)  # it never polls
    client.close()
    report = router.report()
    assert report["expired"] == 1 and report["malformed"] > 0, report
