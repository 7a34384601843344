"""No client datagram kills the simulator, and the contract server does not amplify.

Issue 15, items 3 and 11: the decoders turn every exception into a counted malformed
datagram, HELLOs are bounded by ``limits`` on both sides, refused HELLOs cost the server
almost nothing and its answers are never much larger than what it was sent. The client's
side (items 4 and 12) is in test_contract_client_hardening.py.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from typing import Any

import pytest
from contract_helpers import Background, document, fields, served, wait_until
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers.contract_peer import RawClient
from vcosim.contracts import ConnectionStatus, ContractClient, limits
from vcosim.contracts import protocol as P
from vcosim.contracts.server.admission import ERROR_INTERVAL, REFUSED_COOLDOWN
from vcosim.errors import ConfigError

S = ConnectionStatus
SPEED = {"object": "Vehicle_A", "property": "groundspeed"}


def hello_bytes(session: int, *contracts: dict[str, Any]) -> bytes:
    body = {"client": "test", "contracts": list(contracts)}
    return P.header(P.Kind.HELLO, session) + json.dumps(body).encode()


def contract(cid: int = 0, period: float = 0.01, *given: dict[str, Any]) -> dict[str, Any]:
    return {"id": cid, "direction": "to_client", "period": period, "fields": list(given)}


NESTED = P.header(P.Kind.HELLO, 5) + b'{"contracts": ' + b"[" * 5000 + b"]" * 5000 + b"}"
TINY_PERIOD = hello_bytes(6, contract(0, 5e-324, SPEED))
FAR_POINT = hello_bytes(
    7, contract(0, 0.01, {"object": "Vehicle_A", "property": "DISTANCE_3D", "params": "1e200,0,0"})
)


# -- decoders: nothing but Malformed ---------------------------------------------------------
DECODERS = [
    lambda d: P.read_header(d, len(d)),
    lambda d: P.read_data(d, len(d)),
    lambda d: P.read_ping(d, len(d)),
    lambda d: P.read_pong(d, len(d)),
    lambda d: P.decode(d, len(d), P.Hello),
    lambda d: P.decode(d, len(d), P.Welcome),
    lambda d: P.decode(d, len(d), P.ErrorBody),
]
JSONISH = st.recursive(
    st.none() | st.booleans() | st.floats() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=10,
)


def _only_malformed(datagram: bytes) -> None:
    for decode in DECODERS:
        with contextlib.suppress(P.Malformed):
            decode(datagram)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_random_bytes_raise_nothing_but_malformed(data):
    _only_malformed(data)
    _only_malformed(P.header(P.Kind.HELLO, 1) + data)


KEYS = (["client", "time", "contracts"], ["id", "direction", "period", "time_sync", "fields"])
FIELD_KEYS = ["object", "property", "params", "size"]
VALUES = JSONISH | st.sampled_from(["DISTANCE_3D", "1e200,0,0", "nan,1", "Vehicle_A", 5e-324])


@st.composite
def mutated_hellos(draw: st.DrawFn) -> bytes:
    """A valid HELLO (a read and a write contract) with a few values replaced."""
    body: dict[str, Any] = {
        "client": "x",
        "contracts": [
            contract(0, 0.01, dict(SPEED), {"object": "Vehicle_A", "property": "DISTANCE"}),
            {**contract(1, 0.01, {"object": "Vehicle_A", "property": "throttle"})},
        ],
    }
    body["contracts"][1]["direction"] = "to_server"
    contracts = body["contracts"]
    targets = [(body, KEYS[0])]
    targets += [(c, KEYS[1]) for c in contracts] + [(c["fields"][0], FIELD_KEYS) for c in contracts]
    for _ in range(draw(st.integers(1, 3))):
        target, keys = draw(st.sampled_from(targets))
        target[draw(st.sampled_from(keys))] = draw(VALUES)
    return P.header(P.Kind.HELLO, draw(st.integers(1, 2**32 - 1))) + json.dumps(body).encode()


@settings(max_examples=60, deadline=None)
@given(mutated_hellos())
def test_mutated_hellos_raise_nothing_but_malformed(datagram):
    _only_malformed(datagram)


@pytest.fixture(scope="module")
def idle_server():
    """A started contract server whose simulation does not run: the test calls its hooks."""
    sim, server = served("fast")
    server.start(sim)
    yield sim, server
    server.close()


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.one_of(mutated_hellos(), st.binary(max_size=100).map(lambda b: b"VC\x01" + b)))
def test_no_datagram_raises_past_the_servers_decoders(idle_server, datagram):
    sim, server = idle_server
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as peer:  # a new peer: no throttle
        peer.sendto(datagram, server.address)
        assert wait_until(server.endpoint.ready)
        server.before_step(sim)
        server.after_step(sim)  # serves what a session asked for (a distance, say)
        session = int.from_bytes(datagram[4:8].ljust(4, b"\0"), "little")
        peer.sendto(P.header(P.Kind.BYE, session), server.address)
        assert wait_until(server.endpoint.ready)
        server.before_step(sim)
    assert "unhandled" not in server.report().malformed
    assert not server.sessions


@pytest.mark.parametrize(
    ("datagram", "reason"),
    [
        (NESTED, "bad_json"),
        (P.header(P.Kind.HELLO, 1) + b'{"contracts": [], "time": 1' + b"0" * 5000 + b"}", None),
        (P.header(P.Kind.HELLO, 1) + b'{"contracts": [], "time": 1e999}', "bad_body"),
        (P.header(P.Kind.HELLO, 1) + b"\xff\xfe{}", "bad_json"),
        (TINY_PERIOD, "bad_body"),
    ],
    ids=["nested", "long-number", "infinite", "not-utf8", "tiny-period"],
)
def test_the_issues_bodies_are_malformed_with_a_reason(datagram, reason):
    with pytest.raises(P.Malformed) as caught:
        P.decode(datagram, len(datagram), P.Hello)
    assert caught.value.reason == (reason or caught.value.reason)
    assert caught.value.reason in ("bad_json", "bad_body")


def test_depth_is_refused_before_parsing_and_strings_do_not_count():
    assert limits.json_depth(b'{"a": "[[[[{{{", "b": [[1], {"c": "\\"]"}]}') == 3
    with pytest.raises(ValueError, match="nested 100000 deep"):
        limits.load_json("[" * 100_000 + "]" * 100_000)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300), st.integers(0, 400))
def test_an_error_reply_is_never_larger_than_its_request(message, limit):
    data = P.error(1, "bad_hello", message, limit)
    assert data is None or len(data) <= limit
    if data is not None:
        assert P.decode(data, len(data), P.ErrorBody).code == "bad_hello"


def test_hello_limits_are_the_ones_the_client_file_is_checked_by():
    too_fast = P.Hello.model_validate(
        {"contracts": [contract(k, 0.0005, {**SPEED, "size": 64}) for k in range(8)]}
    )
    assert any("MB/s" in p for p in too_fast.problems())
    outputs = [
        {"updatePeriodMs": 0.5, "ports": [[{"propertyName": "rpm", "arraySize": 64}]]}
        for _ in range(8)
    ]
    with pytest.raises(ConfigError) as caught:
        ContractClient(document(4367, outputs=outputs), None)
    assert any("MB/s" in p for p in caught.value.problems)


def test_a_welcome_over_its_budget_leaves_out_the_last_reasons():
    from contract_helpers import VEHICLE

    from vcosim.contracts.objects import Catalogue
    from vcosim.contracts.server.sessions import open_session

    strangers = [{"object": "W", "property": "q"} for _ in range(200)]
    hello = P.Hello.model_validate({"contracts": [contract(0, 0.01, *strangers)]})
    size = len(P.encode(P.Kind.HELLO, 1, hello))
    full = open_session(hello, Catalogue(VEHICLE), ("h", 1), 1, 0.0, 0.0005)
    short = open_session(hello, Catalogue(VEHICLE), ("h", 1), 1, 0.0, 0.0005, size)
    assert len(full.welcome) > size >= len(short.welcome)
    answers = P.decode(short.welcome, len(short.welcome), P.Welcome).contracts[0].fields
    assert answers[0].reason and "unknown object 'W'" in answers[0].reason  # the first kept
    assert answers[-1].reason is None and not any(a.accepted for a in answers)


# -- the server survives and keeps serving ---------------------------------------------------
def test_the_server_survives_each_of_the_issues_datagrams_and_keeps_serving():
    sim, server = served("realtime", frame_rate=500)
    running = Background(lambda: sim.run(None))
    client = ContractClient(
        document(server.address[1], outputs=[{"updatePeriodMs": 10, "ports": fields("rpm")}]),
        None,
        step=0.001,
    )
    client_run = Background(lambda: client.run(None))
    peers = [RawClient(server.address[1]) for _ in range(3)]
    try:
        assert wait_until(lambda: client.status is S.connected)
        peers[0].sock.sendto(NESTED, peers[0].server)  # dropped, counted, unanswered
        assert wait_until(lambda: server.report().malformed.get("bad_json") == 1)
        kind, answer = peers[1].ask(TINY_PERIOD)  # refused, and told why
        assert kind == P.Kind.ERROR
        error = P.decode(answer, len(answer), P.ErrorBody)
        assert error.code == "bad_hello" and "period" in (error.message or "")
        kind, answer = peers[2].ask(FAR_POINT)  # served, the field refused with its reason
        assert kind == P.Kind.WELCOME
        (field,) = P.decode(answer, len(answer), P.Welcome).contracts[0].fields
        assert not field.accepted and "within" in (field.reason or "")
        received = client.received
        assert wait_until(lambda: client.received > received + 5)  # still served
        assert client.status is S.connected and running.thread.is_alive()
    finally:
        for peer in peers:
            peer.close()
        client.stop()
        client_run.result()
        sim.stop()
        running.result()
    assert server.report().refused_hellos == 1


def test_clients_beyond_the_servers_budget_are_refused_busy():
    # (run time at 1/20 of real time: the sessions stay within the grace that keeps a full
    # server from evicting them for a newcomer, test_contract_lockout.py)
    sim, server = served("realtime", dilation=0.05, frame_rate=500, max_clients=2, max_rate=100_000)
    running = Background(lambda: sim.run(None))
    peers = [RawClient(server.address[1]) for _ in range(3)]
    try:
        kind, _ = peers[0].ask(hello_bytes(1, contract(0, 0.01, SPEED)))  # 3.2 kB/s
        assert kind == P.Kind.WELCOME
        wide = {**SPEED, "property": "wheel_speed", "size": 4}
        kind, answer = peers[1].ask(hello_bytes(2, contract(0, 0.0005, wide)))  # 112 kB/s
        error = P.decode(answer, len(answer), P.ErrorBody)
        assert (kind, error.code) == (P.Kind.ERROR, "busy") and "MB/s" in (error.message or "")
        asked = time.perf_counter()
        kind, _ = peers[1].ask(hello_bytes(3, contract(0, 0.01, SPEED)))  # less, later: served
        assert kind == P.Kind.WELCOME
        assert time.perf_counter() - asked > REFUSED_COOLDOWN / 2  # HELLOs were dropped meanwhile
        kind, answer = peers[2].ask(hello_bytes(4, contract(0, 0.01, SPEED)))
        error = P.decode(answer, len(answer), P.ErrorBody)
        assert (kind, error.code) == (P.Kind.ERROR, "busy") and "2 clients" in (error.message or "")
    finally:
        for peer in peers:
            peer.close()
        sim.stop()
        running.result()
    report = server.report()
    assert (report.sessions, report.refused_hellos) == (2, 2) and report.hellos_dropped > 0


def test_a_flood_of_refused_hellos_is_not_amplified_and_a_good_client_is_served():
    """Ten peers, 54 kB HELLOs of 600 refused 8000-wide fields every 1 ms for 2 s."""
    sim, server = served("realtime", frame_rate=500)
    running = Background(lambda: sim.run(None))
    client = ContractClient(
        document(server.address[1], outputs=[{"updatePeriodMs": 10, "ports": fields("rpm")}]),
        None,
        step=0.001,
    )
    client_run = Background(lambda: client.run(None))
    body = json.dumps(
        {
            "contracts": [
                {
                    "id": i,
                    "direction": "to_client",
                    "period": 0.001,
                    "fields": [{"property": f"no{i}", "size": 8000}],
                }
                for i in range(600)
            ]
        },
        separators=(",", ":"),
    ).encode()
    assert 50_000 < len(body) < 60_000
    attackers = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(10)]
    for sock in attackers:
        sock.bind(("127.0.0.1", 0))
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
    sent = [0]
    seconds = 2.0

    def flood() -> None:
        end, session = time.perf_counter() + seconds, 1000
        while time.perf_counter() < end:
            for sock in attackers:
                session += 1
                sock.sendto(P.header(P.Kind.HELLO, session) + body, server.address)
                sent[0] += len(body) + 8
            time.sleep(0.001)

    try:
        assert wait_until(lambda: client.status is S.connected)
        before = client.received
        attack = threading.Thread(target=flood)
        attack.start()
        attack.join()
        assert wait_until(lambda: client.received > before + 10)  # the good client is served
        time.sleep(0.2)  # (what is in flight to the attackers arrives: no condition to poll)
        answers = []
        for sock in attackers:
            sock.setblocking(False)
            while True:
                try:
                    answers.append(sock.recv(65535))
                except BlockingIOError:
                    break
    finally:
        for sock in attackers:
            sock.close()
        client.stop()
        client_run.result()
        sim.stop()
        running.result()
    report = server.report()
    per_peer = seconds / min(ERROR_INTERVAL, REFUSED_COOLDOWN) + 2
    assert 0 < len(answers) <= 10 * per_peer
    assert all(P.read_header(a, len(a))[0] == P.Kind.ERROR for a in answers)
    assert sum(len(a) for a in answers) <= len(answers) * (len(body) + 8)
    assert sum(len(a) for a in answers) < sent[0] / 1000
    assert report.errors_sent == len(answers) and report.refused_hellos <= 10 * per_peer
    assert report.sessions == 1  # the flood opened nothing
    assert report.hellos_dropped > 0
