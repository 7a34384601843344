"""No server datagram kills ``vcosim connect``; no contracts file ends it with a traceback.

Issue 15, items 4 and 12 (the contracts file): a hostile server's WELCOME, ERROR, garbage or
wrong version byte is counted as malformed and changes no status; a busy server is asked
again; a bad file is one error line and exit 2.
"""

from __future__ import annotations

import contextlib
import json
import socket
import time
from typing import Any

import pytest
from contract_helpers import document, fields, wait_until
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from vcosim.app import app
from vcosim.contracts import ConnectionStatus, ContractClient, parse_config
from vcosim.contracts import protocol as P
from vcosim.errors import ConfigError

S = ConnectionStatus
JSONISH = st.recursive(
    st.none() | st.booleans() | st.floats() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=10,
)


# -- the client survives a hostile server -----------------------------------------------------
class FakeServer:
    """A socket the client talks to, written with the protocol module."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(5.0)
        self.port = self.sock.getsockname()[1]

    def hello(self, client: ContractClient) -> tuple[int, tuple[str, int]]:
        """The session and address of the client's next HELLO (stepping it meanwhile)."""
        self.sock.settimeout(0.01)
        deadline = time.perf_counter() + 5.0
        while time.perf_counter() < deadline:
            client.step_once()
            try:
                data, sender = self.sock.recvfrom(65535)
            except TimeoutError:
                continue
            kind, session = P.read_header(data, len(data))
            if kind == P.Kind.HELLO:
                return session, sender
        raise TimeoutError("no HELLO in 5 s")

    def welcome(self, session: int) -> bytes:
        answer = P.ContractAnswer(id=0, fields=[P.FieldAnswer(accepted=True)])
        return P.encode(P.Kind.WELCOME, session, P.Welcome(contracts=[answer]))

    def close(self) -> None:
        self.sock.close()


def _stepped(client: ContractClient, predicate: Any, timeout: float = 5.0) -> bool:
    return wait_until(lambda: (client.step_once(), predicate())[1], timeout)


def test_no_server_datagram_kills_the_client_and_a_wrong_version_is_no_dead_end():
    fake = FakeServer()
    client = ContractClient(
        document(fake.port, outputs=[{"ports": fields("rpm")}]), None, step=0.001, retry_period=0.05
    )
    try:
        session, sender = fake.hello(client)
        hostile = [
            P.header(P.Kind.WELCOME, session) + b'{"contracts": ' + b"[" * 5000 + b"]" * 5000,
            P.header(P.Kind.ERROR, session) + b'{"code": ' + b"[" * 30_000 + b"]" * 30_000,
            P.header(P.Kind.ERROR, session) + b'{"code": 1' + b"0" * 5000 + b"}",
            P.header(P.Kind.WELCOME, session) + b'{"contracts": [], "time": 1e999}',
            P.HEADER.pack(P.MAGIC, P.VERSION + 1, P.Kind.ERROR, session) + b"{}",
            P.HEADER.pack(P.MAGIC, P.VERSION + 1, P.Kind.WELCOME, session) + b"{}",
            b"garbage",
            P.pong(session, (99, 0.0, 0.0, 0.0), 0.0, 0.0),  # answers no ping
        ]
        for datagram in hostile:
            fake.sock.sendto(datagram, sender)
        assert _stepped(client, lambda: client.session.malformed_total == len(hostile))
        assert client.status is S.connecting  # still asking, not in error for good
        assert "version 2" in client.session.error_text
        fake.sock.sendto(fake.welcome(fake.hello(client)[0]), sender)  # the current session's HELLO
        assert _stepped(client, lambda: client.status is S.connected)
        fake.sock.sendto(P.HEADER.pack(P.MAGIC, P.VERSION + 1, P.Kind.BYE, 0), sender)
        fake.sock.sendto(b"VC\x01\x03" + bytes(4) + b"{}", sender)
        malformed = client.session.malformed_total
        assert _stepped(client, lambda: client.session.malformed_total == malformed + 1)
        assert client.status is S.connected  # one bad datagram changes no status
    finally:
        client.close()
        fake.close()
    counted = client.report().malformed
    assert counted["bad_json"] == 3 and counted["version"] == 3
    assert counted["bad_body"] == 1 and counted["unexpected_pong"] == 1


def test_a_busy_server_is_asked_again_until_it_has_room():
    fake = FakeServer()
    client = ContractClient(
        document(fake.port, outputs=[{"ports": fields("rpm")}]), None, step=0.001, retry_period=0.05
    )
    try:
        session, sender = fake.hello(client)
        busy = P.ErrorBody(code="busy", message="the server serves at most 1 clients")
        fake.sock.sendto(P.encode(P.Kind.ERROR, session, busy), sender)
        assert _stepped(client, lambda: "busy" in client.session.error_text)
        assert client.status is S.connecting
        session, sender = fake.hello(client)  # it asks again
        fake.sock.sendto(fake.welcome(session), sender)
        assert _stepped(client, lambda: client.status is S.connected)
    finally:
        client.close()
        fake.close()


# -- bad contract files ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('{"version": 2, "outputs": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested"),
        ('{"version": 1' + "0" * 5000 + "}", "digits"),
        (
            json.dumps(
                {
                    "version": 2,
                    "remoteObject": "Vehicle_A",
                    "outputs": [
                        {
                            "updatePeriod": 5e-324,
                            "ports": [[{"propertyName": "DISTANCE_3D", "params": "1e200,0,0"}]],
                        }
                    ],
                }
            ),
            "updatePeriod",
        ),
        (b"\xff\xfe\x00{", "UTF-8"),
    ],
    ids=["nested", "long-number", "tiny-period-far-point", "not-utf8"],
)
def test_a_bad_contracts_file_is_one_error_line_and_exit_2(tmp_path, text, says):
    path = tmp_path / "bad.json"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    result = CliRunner().invoke(app, ["connect", str(path), "--duration", "1"])
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "bad.json" in result.output and says in result.output
    assert "Traceback" not in result.output


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(JSONISH)
@example({"0²": None})  # a key with a superscript digit, once found: sorting its problem raised
def test_any_document_is_a_config_or_a_config_error(document_):

    with contextlib.suppress(ConfigError):
        parse_config(document_)
