"""No program holds the contract server's sessions to lock real clients out (issue 45, G).

The reproduction: one program holding all 16 sessions from fresh ports (a HELLO, then a PING
every 0.5 s) left every later client "busy" with 0 updates for as long as it went on. Now a
HELLO that finds the server full evicts the session longest without data from its client
(those that agreed nothing first, none heard from within ``EVICT_GRACE`` of run time), and
tells it so (ERROR ``evicted``). Over real UDP on loopback; no wall-clock assertions.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from contract_helpers import Background, document, fields, served, wait_until

from helpers.contract_peer import RawClient
from vcosim.contracts import ConnectionStatus, ContractClient
from vcosim.contracts import protocol as P

K = P.Kind
SESSIONS = 16  # the server's max_clients by default


def holder_hello(session: int, agreed: bool) -> bytes:
    """A HELLO that agrees a slow update of the speed (a monitor's), or asks only nonsense."""
    name = "groundspeed" if agreed else "no_such_property"
    contract = P.ContractRequest(
        id=0,
        direction="to_client",
        period=1.0,
        fields=[P.FieldRequest(object="Vehicle_A", property=name)],
    )
    return P.encode(K.HELLO, session, P.Hello(client="holder", contracts=[contract]))


class Holders:
    """``count`` sessions from fresh ports, each kept alive by a PING every 0.5 s."""

    def __init__(self, port: int, count: int, *, agreed: bool) -> None:
        self.peers = [RawClient(port) for _ in range(count)]
        self.errors: dict[int, list[str]] = {}  # session -> ERROR codes it was sent
        self._stop = threading.Event()
        for number, peer in enumerate(self.peers, 1):
            hello = holder_hello(number, agreed)
            # (busy while every session is within its grace: asked again, as a client does)
            assert wait_until(lambda p=peer, h=hello: p.ask(h)[0] == K.WELCOME, 30.0), number
        self._thread = threading.Thread(target=self._ping, daemon=True)
        self._thread.start()

    def _ping(self) -> None:
        sequence = 0
        while not self._stop.wait(0.5):
            sequence += 1
            for number, peer in enumerate(self.peers, 1):
                now = time.time()
                peer.sock.sendto(P.ping(number, sequence, now, now, 0.0), peer.server)
                self._drain(number, peer)

    def _drain(self, number: int, peer: RawClient) -> None:
        peer.sock.setblocking(False)
        while True:
            try:
                answer = peer.sock.recv(65535)
            except (BlockingIOError, OSError):
                return
            kind, _ = P.read_header(answer, len(answer))
            if kind == K.ERROR:
                error = P.decode(answer, len(answer), P.ErrorBody)
                self.errors.setdefault(number, []).append(error.code)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5.0)
        for peer in self.peers:
            peer.close()


def monitor(port: int) -> ContractClient:
    """A real client that reads the engine speed every 10 ms."""
    config: Any = document(port, outputs=[{"updatePeriodMs": 10, "ports": fields("rpm")}])
    return ContractClient(config, None, step=0.001)


@pytest.mark.parametrize("agreed", [False, True], ids=["agreed-nothing", "slow-monitors"])
def test_a_client_is_served_while_a_program_holds_every_session(agreed: bool) -> None:
    sim, server = served("realtime", frame_rate=200)
    running = Background(lambda: sim.run(None))
    holders = Holders(server.address[1], SESSIONS, agreed=agreed)
    client = monitor(server.address[1])
    client_run = Background(lambda: client.run(None))
    try:
        assert wait_until(lambda: client.received > 0, 30.0), client.status
        assert client.status is ConnectionStatus.connected
        assert wait_until(lambda: sum(len(e) for e in holders.errors.values()) >= 1, 10.0)
    finally:
        client.stop()
        client_run.result()
        holders.close()
        sim.stop()
        running.result()
    report = server.report()
    assert report.evicted == 1, report
    assert [codes[0] for codes in holders.errors.values()] == ["evicted"]  # one, told so


def test_a_client_that_sends_data_is_evicted_after_the_idle_ones() -> None:
    """With one slot left, a newcomer takes an idle holder's, never the busy client's."""
    sim, server = served("realtime", frame_rate=200)
    running = Background(lambda: sim.run(None))
    config: Any = document(
        server.address[1],
        inputs=[{"updatePeriodMs": 10, "ports": fields("throttle")}],
        outputs=[{"updatePeriodMs": 10, "ports": fields("rpm")}],
    )
    busy = ContractClient(config, None, step=0.001)
    busy_run = Background(lambda: busy.run(None))
    holders: Holders | None = None
    newcomer = monitor(server.address[1])
    newcomer_run: Background | None = None
    try:
        assert wait_until(lambda: busy.received > 0, 30.0)
        holders = Holders(server.address[1], SESSIONS - 1, agreed=True)
        newcomer_run = Background(lambda: newcomer.run(None))
        assert wait_until(lambda: newcomer.received > 0, 30.0)
        assert busy.status is ConnectionStatus.connected and busy.session.reconnects == 0
    finally:
        newcomer.stop()
        if newcomer_run is not None:
            newcomer_run.result()
        busy.stop()
        busy_run.result()
        if holders is not None:
            holders.close()
        sim.stop()
        running.result()
    assert server.report().evicted == 1


def test_an_evicted_vcosim_client_is_told_and_connects_again(caplog: Any) -> None:
    """A full server (one place) gives an idle monitor's place to a newcomer: the monitor
    hears ERROR evicted, connects again and (once the newcomer is idle in its turn) is
    served again."""
    import logging

    caplog.set_level(logging.WARNING, logger="vcosim")
    sim, server = served("realtime", frame_rate=200, max_clients=1)
    running = Background(lambda: sim.run(None))
    client = monitor(server.address[1])
    client_run = Background(lambda: client.run(None))
    newcomer: Holders | None = None
    try:
        assert wait_until(lambda: client.received > 0, 30.0)
        newcomer = Holders(server.address[1], 1, agreed=True)  # takes the monitor's place
        assert wait_until(lambda: client.session.errors["evicted"] >= 1, 30.0)
        assert wait_until(lambda: client.session.reconnects >= 1, 30.0)
        received = client.received
        assert wait_until(lambda: client.received > received, 30.0)  # served again
        assert wait_until(lambda: "evicted" in holders_codes(newcomer), 30.0)
    finally:
        client.stop()
        client_run.result()
        if newcomer is not None:
            newcomer.close()
        sim.stop()
        running.result()
    assert server.report().evicted >= 2
    said = [r.getMessage() for r in caplog.records]
    assert any("evicted (the server was full" in m for m in said), said
    assert any("gave this idle session's place away" in m for m in said), said


def holders_codes(holders: Holders) -> list[str]:
    return [code for codes in holders.errors.values() for code in codes]
