"""The wire protocol: message layouts, a raw peer's handshake, serial numbers, refusals."""

from __future__ import annotations

import numpy as np
import pytest
from contract_helpers import Background, served, wait_until

from helpers.contract_peer import RawClient
from vcosim.contracts import protocol as P
from vcosim.errors import ProtocolError


def test_data_messages_round_trip_and_bad_ones_say_why():
    message = P.DataMessage(7, 3)
    message.values[:] = (1.0, 2.5, np.nan)
    datagram = bytes(message.pack(session=42, time=1.25))
    assert len(datagram) == 24 + 3 * 8
    assert P.read_header(datagram, len(datagram)) == (P.Kind.DATA, 42)
    contract, serial, stamp, values = P.read_data(datagram, len(datagram))
    assert (contract, serial, stamp) == (7, 1, 1.25)
    np.testing.assert_array_equal(values, [1.0, 2.5, np.nan])
    assert P.read_data(bytes(message.pack(42, 1.5)), len(datagram))[1] == 2
    for bad, reason in (
        (b"VC\x01", "short"),
        (b"XY\x01\x03" + bytes(4), "bad_magic"),
        (b"VC\x02\x03" + bytes(4), "version"),
        (b"VC\x01\x09" + bytes(4), "unknown_kind"),
    ):
        with pytest.raises(P.Malformed) as caught:
            P.read_header(bad, len(bad))
        assert caught.value.reason == reason
    with pytest.raises(P.Malformed) as caught:
        P.read_data(datagram[:-8], len(datagram) - 8)
    assert str(caught.value) == "bad_length: DATA says 3 values in 40 bytes"


def hello(*contracts: dict) -> P.Hello:
    return P.Hello(contracts=[P.ContractRequest(**c) for c in contracts])


def test_a_raw_client_handshakes_and_the_server_counts_gaps_and_stale_updates():
    sim, server = served("realtime", frame_rate=500)
    running = Background(lambda: sim.run(None))
    raw = RawClient(server.address[1])
    try:
        kind, answer = raw.ask(
            P.encode(
                P.Kind.HELLO,
                9,
                hello(
                    {
                        "id": 3,
                        "direction": "to_server",
                        "period": 0.01,
                        "fields": [
                            {"object": "Vehicle_A", "property": "steering"},
                            {"object": "Vehicle_A", "property": "wings"},
                        ],
                    }
                ),
            )
        )
        assert kind == P.Kind.WELCOME
        welcome = P.decode(answer, len(answer), P.Welcome)
        assert welcome.objects == ["Vehicle_A", "World", "Origin"] and welcome.dt == 0.0005
        assert [f.accepted for f in welcome.contracts[0].fields] == [True, False]
        message = P.DataMessage(3, 2)
        for serial, steering in ((1, 0.1), (2, 0.2), (5, 0.5), (3, 0.3)):  # 3, 4 lost; 3 late
            message.serial = serial - 1
            message.values[:] = (steering, 1.0)
            raw.sock.sendto(message.pack(9, serial * 0.01), raw.server)
        assert wait_until(lambda: server.stats.received + server.stats.stale == 4)
        assert (server.stats.received, server.stats.gaps, server.stats.stale) == (3, 2, 1)
        assert sim.vehicle.inputs["steering"] == 0.5  # the late update did not apply
        kind, answer = raw.ask(P.header(P.Kind.BYE, 9))
        assert kind == P.Kind.BYE_ACK and not server.sessions
        kind, answer = raw.ask(P.ping(9, 1, 0.0, 0.0, 0.0))  # the session is gone
        assert P.decode(answer, len(answer), P.ErrorBody).code == "unknown_session"
        kind, answer = raw.ask(
            P.encode(
                P.Kind.HELLO,
                10,
                hello(
                    {"id": 1, "direction": "to_client", "period": 0.01, "fields": []},
                    {"id": 1, "direction": "to_server", "period": 0.01, "fields": []},
                ),
            )
        )
        assert P.decode(answer, len(answer), P.ErrorBody).code == "bad_hello"
    finally:
        raw.close()
        sim.stop()
        running.result()


def test_a_hello_too_large_for_a_datagram_is_refused_before_sending():
    fields = [{"object": "Vehicle_A", "property": f"signal_number_{i}"} for i in range(250)]
    contracts = [
        {"id": k, "direction": "to_client", "period": 0.01, "fields": fields} for k in range(8)
    ]
    with pytest.raises(ProtocolError, match="does not fit one datagram"):
        P.encode(P.Kind.HELLO, 1, hello(*contracts))
