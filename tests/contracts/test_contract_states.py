"""Every cell of the two state tables of docs/contracts.md ("Every status, every message").

The client is driven one service at a time against a fake server on loopback, from each of
its six statuses; the server runs in a simulation and meets a fresh client socket per cell.
What can be seen without waiting for time to pass is asserted: the status, what was sent
(waited for), the counters. No cell ends in a state that nothing leads out of.
"""

from __future__ import annotations

import contextlib
import logging
import socket
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest
from contract_helpers import Background, document, fields, served, wait_until
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers.contract_peer import RawClient
from vcosim.contracts import ConnectionStatus, ContractClient, ContractServer
from vcosim.contracts import protocol as P
from vcosim.contracts.client.session import MAX_BACKOFF

S = ConnectionStatus
U, N, C, K, E, D = S.unknown, S.unconnected, S.connecting, S.connected, S.error, S.disconnecting
STATES = [U, N, C, K, E, D]
K_ = P.Kind

LONG = {"retry_period": 60.0, "bye_timeout": 60.0, "link_timeout": 60.0}  # nothing falls due
SHORT = {"retry_period": 0.005, "bye_timeout": 0.005, "link_timeout": 0.005}  # all soon due


# -- the client ---------------------------------------------------------------------------------
class FakeServer:
    """The server's socket, played by the test."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]

    def next(self, timeout: float = 5.0) -> tuple[int, int]:
        """(kind, session) of the client's next datagram."""
        self.sock.settimeout(timeout)
        data = self.sock.recv(65535)
        return P.read_header(data, len(data))

    def send(self, data: bytes, to: tuple[str, int]) -> None:
        self.sock.sendto(data, to)


def welcome(session: int) -> bytes:
    answers = [
        P.ContractAnswer(id=i, fields=[P.FieldAnswer(accepted=True)]) for i in range(2)
    ]  # 0: throttle (to the server), 1: rpm (to the client)
    return P.encode(K_.WELCOME, session, P.Welcome(contracts=answers))


def error(session: int, code: str, message: str = "") -> bytes:
    return P.encode(K_.ERROR, session, P.ErrorBody(code=code, message=message or None))


def take(client: ContractClient) -> None:
    """Let the client handle what has arrived (waiting for it to arrive)."""
    assert client.session.endpoint.wait(5.0)
    client.session.drain()


@dataclass
class Cell:
    """What a client in a status does with an event: its status after, what it sends."""

    status: ConnectionStatus
    sends: tuple[int, ...] = ()  # the kinds of datagram it sends, in order (PINGs aside)
    new_session: bool = False  # a HELLO among them opens a new session


def check_sent(fake: FakeServer, cell: Cell, first: int) -> None:
    """The client sent ``cell.sends`` (waited for); a HELLO in a new session or not."""
    for expected in cell.sends:
        kind, session = fake.next()
        while kind == K_.PING and expected != K_.PING:  # (pings go on while connected)
            kind, session = fake.next()
        assert kind == expected
        if kind == K_.HELLO:
            assert (session != first) == cell.new_session


@pytest.fixture
def fake() -> Iterator[FakeServer]:
    server = FakeServer()
    yield server
    server.sock.close()


def client_in(
    state: ConnectionStatus, fake: FakeServer, timers: dict[str, object]
) -> tuple[ContractClient, tuple[str, int]]:
    """A client brought into ``state`` against ``fake``; (client, its address)."""
    doc = document(
        fake.port,
        inputs=[{"ports": fields("throttle")}],
        outputs=[{"ports": fields("rpm", invalidValue=-1.0)}],
    )
    client = ContractClient(doc, None, step=0.001, directive=float(state not in (U, N)), **timers)
    session = client.session
    if state is U:
        return client, client.address
    session.service()
    if state is N:
        return client, client.address
    assert fake.next() == (K_.HELLO, session.session_id)
    if state is E:
        fake.send(error(session.session_id, "bad_hello", "contract ids repeat"), client.address)
        take(client)
    elif state in (K, D):
        fake.send(welcome(session.session_id), client.address)
        take(client)
        if state is D:
            client.directive = 0.0
            session.service()
            assert fake.next() == (K_.BYE, session.session_id)
    assert client.status is state
    return client, client.address


def data_message(session: int) -> bytes:
    message = P.DataMessage(1, 1)
    message.values[:] = 1234.0
    return bytes(message.pack(session, 0.5))


Datagram = Callable[[int], bytes]
SAME = {s: Cell(s) for s in STATES}
MESSAGES: dict[str, tuple[Datagram, dict[ConnectionStatus, Cell]]] = {
    "WELCOME": (welcome, {**SAME, C: Cell(K)}),
    "DATA": (data_message, SAME),  # taken only while connected
    "PONG (no ping outstanding)": (lambda s: P.pong(s, (7, 0.0, 0.0, 0.0), 0.0, 0.0), SAME),
    "BYE": (
        lambda s: P.header(K_.BYE, s),
        {
            **{s: Cell(s, (K_.BYE_ACK,)) for s in STATES},
            C: Cell(C, (K_.BYE_ACK, K_.HELLO), new_session=True),  # lost: asks again
            K: Cell(C, (K_.BYE_ACK, K_.HELLO), new_session=True),
        },
    ),
    "BYE_ACK": (lambda s: P.header(K_.BYE_ACK, s), {**SAME, D: Cell(N)}),
    "ERROR unknown_session": (
        lambda s: error(s, "unknown_session"),
        {**SAME, K: Cell(C, (K_.HELLO,), new_session=True)},
    ),
    "ERROR evicted": (  # a full server gave the place away: as a lost session
        lambda s: error(s, "evicted", "full"),
        {**SAME, K: Cell(C, (K_.HELLO,), new_session=True)},
    ),
    "ERROR busy": (lambda s: error(s, "busy", "full"), SAME),  # connecting: asks on
    "ERROR bad_hello": (
        lambda s: error(s, "bad_hello", "contract ids repeat"),
        {**SAME, C: Cell(E), K: Cell(E)},
    ),
    "ERROR of an unknown code": (
        lambda s: error(s, "no_such_code", "?"),
        {**SAME, C: Cell(E), K: Cell(E)},
    ),
    "another session's datagram": (lambda s: error(s ^ 1, "bad_hello"), SAME),
    "malformed (HELLO to a client)": (
        lambda s: P.encode(K_.HELLO, s, P.Hello(contracts=[])),
        SAME,
    ),
}


@pytest.mark.parametrize("state", STATES, ids=[s.name for s in STATES])
@pytest.mark.parametrize("event", list(MESSAGES))
def test_each_message_in_each_status(fake: FakeServer, event: str, state: ConnectionStatus):
    build, cells = MESSAGES[event]
    cell = cells[state]
    client, address = client_in(state, fake, LONG)
    session = client.session
    first, malformed, stale = session.session_id, session.malformed_total, session.stale_session
    received, errors = session.received, sum(session.errors.values())
    try:
        fake.send(build(first), address)
        take(client)
        assert client.status is cell.status
        check_sent(fake, cell, first)
        counted = (session.malformed_total - malformed, session.stale_session - stale)
        if event.startswith(("malformed", "PONG")):
            assert counted == (1, 0)
        elif event.startswith("another"):
            assert counted == (0, 1)
        else:
            assert counted == (0, 0)
        if event == "DATA":
            assert session.received - received == (state is K)
            assert client.outputs["rpm"] == (1234.0 if state is K else before_rpm(state))
        assert sum(session.errors.values()) - errors == event.startswith("ERROR")
    finally:
        client.close()


def before_rpm(state: ConnectionStatus) -> float:
    """What rpm reads in a status: its initial value until the first connection ends."""
    return -1.0 if state in (E, D) else 0.0


SERVICE: dict[str, dict[ConnectionStatus, Cell]] = {
    "directive 1": {
        U: Cell(C, (K_.HELLO,), new_session=True),
        N: Cell(C, (K_.HELLO,), new_session=True),
        C: Cell(C),
        K: Cell(K, (K_.PING,)),  # pings start at once
        E: Cell(E),
        D: Cell(D),
    },
    "directive 1, its time up": {  # retry period, link timeout, back-off, bye timeout
        U: Cell(C, (K_.HELLO,), new_session=True),
        N: Cell(C, (K_.HELLO,), new_session=True),
        C: Cell(C, (K_.HELLO,)),  # the same session, asked again
        K: Cell(C, (K_.HELLO,), new_session=True),  # silent for the link timeout: lost
        E: Cell(C, (K_.HELLO,), new_session=True),  # the back-off is over
        D: Cell(N),
    },
    "directive 0": {
        U: Cell(N),
        N: Cell(N),
        C: Cell(N, (K_.BYE,)),  # (the HELLO may have opened a session)
        K: Cell(D, (K_.BYE,)),
        E: Cell(N),
        D: Cell(D),
    },
}


@pytest.mark.parametrize("state", STATES, ids=[s.name for s in STATES])
@pytest.mark.parametrize("event", list(SERVICE))
def test_each_service_in_each_status(fake: FakeServer, event: str, state: ConnectionStatus):
    cell = SERVICE[event][state]
    timed = event.endswith("time up")
    client, _ = client_in(state, fake, SHORT if timed else LONG)
    session = client.session
    first = session.session_id
    client.directive = 0.0 if event == "directive 0" else 1.0
    try:
        if timed:  # serve until the time is up and it shows
            fake.sock.setblocking(False)
            sent = []

            def done() -> bool:
                session.service()
                with contextlib.suppress(BlockingIOError):
                    sent.append(fake.sock.recv(65535))
                kinds = [P.read_header(d, len(d))[0] for d in sent]
                return client.status is cell.status and all(k in kinds for k in cell.sends)

            assert wait_until(done)
            hellos = [P.read_header(d, len(d)) for d in sent if d[3] == K_.HELLO]
            assert all((session_id != first) == cell.new_session for _, session_id in hellos)
        else:
            session.service()
            assert client.status is cell.status
            check_sent(fake, cell, first)
    finally:
        client.close()


def test_a_server_that_says_goodbye_ends_a_client_that_ends_with_it(fake: FakeServer):
    for state in (C, K):
        client, address = client_in(state, fake, {**LONG, "end_with_server": True})
        try:
            fake.send(P.header(K_.BYE, client.session.session_id), address)
            take(client)
            assert client.status is N and client.session.server_ended
            assert fake.next()[0] == K_.BYE_ACK
            client.session.service()
            assert client.status is N  # and it does not ask again: the run ends
        finally:
            client.close()


def test_refusals_in_a_row_wait_twice_as_long_up_to_the_cap(fake: FakeServer, caplog):
    client, address = client_in(C, fake, {**LONG, "retry_period": 0.002})
    session = client.session
    waits = []
    try:
        for _ in range(4):
            fake.send(error(session.session_id, "no_such_code", "x" * 5000), address)
            take(client)
            assert client.status is E
            waits.append(session.backoff)
            assert wait_until(lambda: (session.service(), client.status is C)[1])
            assert fake.next()[0] == K_.HELLO  # asked again, after the wait
        fake.send(welcome(session.session_id), address)
        take(client)
        assert client.status is K and session.refusals == 0  # a WELCOME starts afresh
        session.refusals = 20  # (as after many refusals)
        fake.send(error(session.session_id, "bad_hello"), address)
        take(client)
        assert session.backoff == MAX_BACKOFF == 30.0
    finally:
        client.close()
    assert waits == [0.004, 0.008, 0.016, 0.032]
    assert session.errors == {"no_such_code": 4, "bad_hello": 1}
    unknown = [r for r in caplog.records if "a code this client does not know" in r.getMessage()]
    assert len(unknown) == 1  # said once, then counted
    refused = [r.getMessage() for r in caplog.records if "refused the session" in r.getMessage()]
    assert len(refused) == 2 and len(refused[0]) < 600  # one per reason; the message cut short


def test_error_codes_from_a_hostile_server_are_bounded(fake: FakeServer):
    client, address = client_in(K, fake, LONG)
    try:
        for i in range(40):
            fake.send(error(client.session.session_id, f"code{i}" + "z" * 100), address)
            take(client)
    finally:
        client.close()
    errors = client.session.errors
    assert len(errors) == 17 and errors["(other)"] == 24  # 16 by name, the rest together
    assert all(len(code) <= 40 for code in errors)
    assert "server errors" not in client.report().to_dict()  # (the table's row, not the JSON)
    assert client.report().errors == dict(errors)


# -- the acceptance reproduction: a real server's address, the session's id ---------------------
def test_an_unknown_error_code_leaves_a_keep_connecting_client_in_control(caplog):
    caplog.set_level(logging.INFO, "vcosim.contracts")
    sim, server = served("realtime", frame_rate=500)
    client = ContractClient(
        document(server.address[1], timeDilation=1.0, outputs=[{"ports": fields("rpm")}]),
        None,
        step=0.001,
        retry_period=0.05,
        end_with_server=False,  # vcosim connect --keep-connecting
    )
    server_run = Background(lambda: sim.run(None))
    client_run = Background(lambda: client.run(None))
    try:
        assert wait_until(lambda: client.status is K and client.received > 0)
        first = client.session.session_id
        forged = error(first, "no_such_code", "what is this?")
        server.endpoint.send(forged, client.address)  # from the server's own socket
        assert wait_until(lambda: E in [s for _, s in client.status_history])
        assert wait_until(lambda: client.status is K and client.session.session_id != first)
        received = client.received
        assert wait_until(lambda: client.received > received)  # data flows again
    finally:
        client.stop()
        report = client_run.result()
        sim.stop()
        server_run.result()
    seen = [s for _, s in client.status_history]
    assert seen[:5] == [C, K, E, C, K]  # refused for a moment, then asked again and served
    assert report.errors == {"no_such_code": 1} and server.stats.sessions == 2
    said = [r.getMessage() for r in caplog.records if "no_such_code" in r.getMessage()]
    assert len(said) == 2  # the unknown code, and the refusal with its back-off


# -- the server ---------------------------------------------------------------------------------
def hello(session: int, *, repeat_ids: bool = False) -> bytes:
    """Two contracts to the server (none to the client: the server sends nothing unasked)."""
    contracts = [
        P.ContractRequest(
            id=i if not repeat_ids else 0,
            direction="to_server",
            period=0.01,
            fields=[P.FieldRequest(object="Vehicle_A", property=name, size=size)],
        )
        for i, (name, size) in enumerate((("propulsion_torque", 4), ("brake", 1)))
    ]
    return P.encode(K_.HELLO, session, P.Hello(client="test", contracts=contracts))


def to_server(session: int) -> bytes:
    """Wheel torques (four values: a DATA long enough for an ERROR to answer it)."""
    message = P.DataMessage(0, 4)
    message.values[:] = 0.0
    return bytes(message.pack(session, 0.0))


def other_version(kind: int) -> bytes:
    """A datagram of version 2, long enough for the server's ERROR to answer it."""
    return P.HEADER.pack(P.MAGIC, P.VERSION + 1, kind, 5) + b"{" + b" " * 120 + b"}"


@dataclass
class ServerCell:
    """What the server answers (a kind, or None) and whether the peer has a session after."""

    answer: int | None
    session: bool
    code: str | None = None  # the ERROR's code


SERVER: dict[str, tuple[Callable[[int], bytes], ServerCell, ServerCell]] = {
    # event: (datagram from the session's id, cell without a session, cell with one)
    "HELLO": (lambda s: hello(s + 1), ServerCell(K_.WELCOME, True), ServerCell(K_.WELCOME, True)),
    "HELLO of the session again": (
        hello,
        ServerCell(K_.WELCOME, True),  # (no session: it is a new one)
        ServerCell(K_.WELCOME, True),
    ),
    "HELLO refused": (
        lambda s: hello(s + 1, repeat_ids=True),
        ServerCell(K_.ERROR, False, "bad_hello"),
        ServerCell(K_.ERROR, True, "bad_hello"),  # the session it has stays
    ),
    "DATA": (to_server, ServerCell(K_.ERROR, False, "unknown_session"), ServerCell(None, True)),
    "PING": (
        lambda s: P.ping(s, 1, 0.0, 0.0, 0.0),
        ServerCell(K_.ERROR, False, "unknown_session"),
        ServerCell(K_.PONG, True),
    ),
    "BYE": (
        lambda s: P.header(K_.BYE, s),
        ServerCell(K_.BYE_ACK, False),
        ServerCell(K_.BYE_ACK, False),
    ),
    "BYE_ACK": (lambda s: P.header(K_.BYE_ACK, s), ServerCell(None, False), ServerCell(None, True)),
    "WELCOME (a server's message)": (welcome, ServerCell(None, False), ServerCell(None, True)),
    "PONG (a server's message)": (
        lambda s: P.pong(s, (1, 0.0, 0.0, 0.0), 0.0, 0.0),
        ServerCell(None, False),
        ServerCell(None, True),
    ),
    "ERROR (a server's message)": (
        lambda s: error(s, "unknown_session"),
        ServerCell(None, False),
        ServerCell(None, True),
    ),
    "HELLO of another version": (
        lambda s: other_version(K_.HELLO),
        ServerCell(K_.ERROR, False, "version"),
        ServerCell(K_.ERROR, True, "version"),
    ),
    "ERROR of another version": (
        lambda s: other_version(K_.ERROR),
        ServerCell(None, False),
        ServerCell(None, True),
    ),
    "garbage": (lambda s: b"garbage!", ServerCell(None, False), ServerCell(None, True)),
}


@pytest.fixture(scope="module")
def live_server() -> Iterator[ContractServer]:
    sim, server = served("realtime", frame_rate=1000)
    run = Background(lambda: sim.run(None))
    yield server
    sim.stop()
    run.result()


def answer_to(peer: RawClient, data: bytes) -> tuple[int, bytes] | None:
    """The server's answer to ``data``, or None: a BYE of no session is always answered, so
    when its BYE_ACK comes first, ``data`` had none (the server reads in order)."""
    probe = P.header(K_.BYE, 0xFFFF_FFFF)
    peer.sock.settimeout(5.0)
    peer.sock.sendto(data, peer.server)
    peer.sock.sendto(probe, peer.server)
    got = peer.sock.recv(65535)
    if got == P.header(K_.BYE_ACK, 0xFFFF_FFFF):
        return None
    assert peer.sock.recv(65535) == P.header(K_.BYE_ACK, 0xFFFF_FFFF)
    return P.read_header(got, len(got))[0], got


@pytest.mark.parametrize("with_session", [False, True], ids=["no session", "session"])
@pytest.mark.parametrize("event", list(SERVER))
def test_each_datagram_in_each_server_state(live_server, event: str, with_session: bool):
    build, without, within = SERVER[event]
    cell = within if with_session else without
    peer = RawClient(live_server.address[1])
    try:
        session = 1000
        if with_session:
            assert peer.ask(hello(session))[0] == K_.WELCOME
        if event in ("HELLO", "HELLO of the session again", "HELLO refused"):
            answer = peer.ask(build(session))  # (a peer's HELLOs are read at most every 0.1 s)
        else:
            answer = answer_to(peer, build(session))
        assert (answer and answer[0]) == cell.answer
        if cell.code is not None:
            assert answer is not None
            body = P.decode(answer[1], len(answer[1]), P.ErrorBody)
            assert body.code == cell.code
        has = peer.sock.getsockname() in live_server.sessions
        assert has == cell.session
    finally:
        mine = live_server.sessions.get(peer.sock.getsockname())
        if mine is not None:  # a later case's peer may get this port again: leave no session
            peer.sock.sendto(P.header(K_.BYE, mine.id), peer.server)
            assert wait_until(lambda: peer.sock.getsockname() not in live_server.sessions)
        peer.close()


def test_a_silent_session_ends_after_the_session_timeout():
    sim, server = served("realtime", frame_rate=1000, session_timeout=0.2)
    run = Background(lambda: sim.run(None))
    peer = RawClient(server.address[1])
    try:
        assert peer.ask(hello(7))[0] == K_.WELCOME
        assert wait_until(lambda: server.stats.expired == 1)
        assert peer.sock.getsockname() not in server.sessions
        assert answer_to(peer, P.ping(7, 1, 0.0, 0.0, 0.0))[0] == K_.ERROR  # unknown_session
    finally:
        peer.close()
        sim.stop()
        run.result()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(code=st.text(max_size=80), message=st.none() | st.text(max_size=300))
def test_no_error_a_server_sends_leaves_the_client_in_a_state_it_never_leaves(code, message):
    fake = FakeServer()
    client, address = client_in(K, fake, {**LONG, "retry_period": 0.001})
    session = client.session
    try:
        body = P.ErrorBody(code=code, message=message)
        fake.send(P.encode(K_.ERROR, session.session_id, body), address)
        take(client)
        assert client.status in (K, C, E)
        assert wait_until(lambda: (session.service(), client.status is not E)[1])
        if client.status is C:  # asking again: a WELCOME connects it
            kind, asked_in = fake.next()
            while kind != K_.HELLO:
                kind, asked_in = fake.next()
            fake.send(welcome(asked_in), address)
            take(client)
        assert client.status is K
    finally:
        client.close()
        fake.sock.close()
