"""A HELLO alone never holds the contract server's run (issue 45, G).

The reproduction: time-synced HELLOs from fresh ports, each never followed by data, held the
run for the sync timeout each (every 1.9 s: 0.573 of real time). Now a contract is waited for
only once its client has sent data on it; a client that does is still waited for. Over real
UDP on loopback; the tests count holds and sync timeouts, never wall time.
"""

from __future__ import annotations

from contract_helpers import Background, served, wait_until

from helpers.contract_peer import RawClient
from vcosim.contracts import protocol as P

K = P.Kind


def synced_hello(session: int) -> bytes:
    """A time-synced contract to the server: the client is the time master."""
    contract = P.ContractRequest(
        id=0,
        direction="to_server",
        period=0.01,
        time_sync=True,
        fields=[P.FieldRequest(object="Vehicle_A", property="propulsion_torque", size=4)],
    )
    return P.encode(K.HELLO, session, P.Hello(client="stray", contracts=[contract]))


def test_time_synced_hellos_from_fresh_ports_do_not_hold_the_run() -> None:
    sim, server = served("fast", sync_timeout=0.3)
    running = Background(lambda: sim.run(None))
    strays = [RawClient(server.address[1]) for _ in range(3)]
    try:
        for number, stray in enumerate(strays, 1):
            kind, _ = stray.ask(synced_hello(number))  # then never a word
            assert kind == K.WELCOME
            start = sim.time
            assert wait_until(lambda s=start: sim.time > s + 0.5, 60.0)  # half a second on
    finally:
        for stray in strays:
            stray.close()
        sim.stop()
        running.result()
    report = server.report()
    assert report.sessions == 3 and report.sync_timeouts == 0 and report.holds == 0, report


def test_a_time_synced_client_that_sends_data_is_waited_for() -> None:
    sim, server = served("fast", sync_timeout=0.3)
    running = Background(lambda: sim.run(None))
    client = RawClient(server.address[1])
    try:
        kind, _ = client.ask(synced_hello(7))
        assert kind == K.WELCOME
        message = P.DataMessage(0, 4)
        message.values[:] = 0.0
        client.sock.sendto(bytes(message.pack(7, 0.05)), client.server)  # its time: 0.05 s
        assert wait_until(lambda: server.report().sync_timeouts >= 1, 60.0)  # held, then let go
    finally:
        client.close()
        sim.stop()
        running.result()
    assert server.report().holds >= 1


def test_sessions_from_fresh_ports_cost_a_few_log_lines(caplog) -> None:
    """Issue 45, J: two lines per fresh-port HELLO (6,553 in a fuzz); now the first 20 of
    each cause, then a line now and then and at the end (``vcosim.net.Tally``)."""
    import logging

    caplog.set_level(logging.INFO, logger="vcosim")
    sim, server = served("realtime", frame_rate=100, max_clients=64)
    running = Background(lambda: sim.run(None))
    try:
        for number in range(60):
            stray = RawClient(server.address[1])
            kind, _ = stray.ask(synced_hello(number + 1))
            assert kind == K.WELCOME
            stray.close()
    finally:
        sim.stop()
        running.result()
        server.close()
    connected = [r for r in caplog.records if r.getMessage().endswith("fields refused)")]
    assert len(connected) == 20 and server.report().sessions == 60
    assert any("more 'connected' events" in r.getMessage() for r in caplog.records)


def test_a_hold_lets_go_at_the_sync_timeout_while_junk_arrives() -> None:
    """Issue 45, B at this face: 100 junk datagrams a second do not keep a hold from ending."""
    from helpers.junk import Junk

    sim, server = served("fast", sync_timeout=0.3)
    running = Background(lambda: sim.run(None))
    client = RawClient(server.address[1])
    try:
        kind, _ = client.ask(synced_hello(7))
        assert kind == K.WELCOME
        message = P.DataMessage(0, 4)
        message.values[:] = 0.0
        with Junk(server.address):
            client.sock.sendto(bytes(message.pack(7, 0.05)), client.server)  # then silence
            assert wait_until(lambda: server.report().sync_timeouts >= 1, 60.0)
            start = sim.time
            assert wait_until(lambda: sim.time > start + 0.5, 60.0)  # stepping on
    finally:
        client.close()
        sim.stop()
        running.result()
    assert server.report().malformed_total > 0
