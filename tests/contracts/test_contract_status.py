"""Connection directive and status, and a server that disappears and comes back."""

from __future__ import annotations

import time

import pytest
from contract_helpers import Background, document, fields, served, wait_until

from vcosim.contracts import ConnectionStatus, ContractClient

S = ConnectionStatus


def statuses(client: ContractClient) -> list[ConnectionStatus]:
    return [status for _, status in client.status_history]


def test_directive_0_stays_unconnected_1_connects_0_disconnects():
    sim, server = served("realtime", frame_rate=500)

    def step(ports):
        on = 0.05 <= ports.time < 0.2
        return {"connection_directive": 1.0 if on else 0.0, "throttle": 0.0}

    client = ContractClient(
        document(server.address[1], timeDilation=1.0, inputs=[{"ports": fields("throttle")}]),
        step,
        step=0.001,
        directive=0.0,
    )
    server_run = Background(lambda: sim.run(None))
    report = client.run(0.3)
    sim.stop()
    server_run.result()
    assert statuses(client)[:5] == [
        S.unconnected,
        S.connecting,
        S.connected,
        S.disconnecting,
        S.unconnected,
    ]
    times = [t for t, _ in client.status_history]
    assert times[:2] == [0.0, pytest.approx(0.051)]  # a directive acts from the next step
    assert times[3] == pytest.approx(0.201)
    assert server.stats.sessions == 1 and server.stats.ended == 1  # the BYE reached it
    assert report.status == 1


def test_a_server_that_vanishes_and_comes_back():
    sim, server = served("realtime", frame_rate=500, goodbye=False)  # it will vanish silently
    port = server.address[1]
    client = ContractClient(
        document(port, timeDilation=1.0, outputs=[{"ports": fields("rpm", invalidValue=-1.0)}]),
        None,
        step=0.001,
        link_timeout=0.2,
        retry_period=0.05,
    )
    first = Background(lambda: sim.run(None))
    client_run = Background(lambda: client.run(None))
    assert wait_until(lambda: client.status is S.connected and client.outputs["rpm"] > 0)
    sim.stop()
    first.result()  # gone without a word
    assert wait_until(lambda: client.status is S.connecting)
    assert client.outputs["rpm"] == -1.0  # no valid data: invalidValue
    sim2, server2 = served("realtime", frame_rate=500, port=port)  # back, on the same port
    second = Background(lambda: sim2.run(None))
    assert wait_until(lambda: client.status is S.connected and client.outputs["rpm"] > 0)
    client.link_timeout = 60.0  # from now on only a BYE can end the link quickly
    sim2.stop()
    second.result()  # this one says goodbye: the client notices at once
    assert wait_until(lambda: client.status is S.connecting)
    client.stop()
    report = client_run.result()
    assert statuses(client) == [
        S.connecting,
        S.connected,
        S.connecting,
        S.connected,
        S.connecting,
        S.unconnected,
    ]
    assert report.reconnects == 2


def test_status_4_when_the_server_refuses_the_handshake_and_0_clears_it():
    # A server that refuses the handshake itself answers ERROR: status 4 for a back-off.
    import socket

    from vcosim.contracts import protocol as P

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as fake:
        fake.bind(("127.0.0.1", 0))
        fake.settimeout(5.0)
        client = ContractClient(
            document(fake.getsockname()[1], outputs=[{"ports": fields("rpm")}]), None, step=0.001
        )
        client.step_once()  # sends HELLO
        hello, sender = fake.recvfrom(65535)
        session = P.read_header(hello, len(hello))[1]
        refusal = P.ErrorBody(code="bad_hello", message="contract ids repeat")
        fake.sendto(P.encode(P.Kind.ERROR, session, refusal), sender)
        assert wait_until(lambda: (client.step_once(), client.status)[1] is S.error)
        client.directive = 0.0
        client.step_once()
        assert client.status is S.unconnected
        client.close()
    assert statuses(client) == [S.connecting, S.error, S.unconnected]


@pytest.mark.parametrize("dilation", [0.5, 2.0])
def test_time_dilation_throttles_the_local_clock(dilation):
    # directive 0: nothing to sync to, so the block runs on its own (dilated) clock
    client = ContractClient(
        document(9, timeDilation=dilation, outputs=[{"ports": fields("rpm")}]),
        None,
        step=0.001,
        directive=0.0,
    )
    start = time.perf_counter()
    client.run(0.2)
    wall = time.perf_counter() - start
    # never faster than the dilated clock (what load cannot fake); the upper bound is loose,
    # a stalled clock only (a loaded machine adds to the wall time: 0.203 s of 0.1 s was seen)
    assert 0.2 / dilation * 0.98 <= wall < 0.2 / dilation * 2.0 + 1.0
