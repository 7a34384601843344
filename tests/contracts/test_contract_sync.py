"""Time synchronisation both ways, and overdue-data blocking both ways, over UDP on loopback."""

from __future__ import annotations

import socket
import threading

from contract_helpers import Background, document, fields, served, wait_until

from vcosim.contracts import ConnectionStatus, ContractClient
from vcosim.contracts import protocol as P
from vcosim.sim.face import Face


def test_incoming_time_sync_holds_the_client_at_the_servers_latest_data():
    # The server runs in real time; the client would run as fast as it can (timeDilation 0)
    # but its time-synced output contract holds it at the server's data.
    sim, server = served("realtime", frame_rate=500, wait_for_clients=1)
    ahead: list[tuple[float, float]] = []
    seen: list[float] = []

    def step(ports):
        if ports.status is ConnectionStatus.connected:
            seen.append(ports.time)
            if ports.time > ports["time"] + 1e-12:
                ahead.append((ports.time, ports["time"]))
        return None

    client = ContractClient(
        document(
            server.address[1],
            outputs=[
                {
                    "updatePeriodMs": 5,
                    "timeSyncMode": "absolute",
                    "ports": fields("groundspeed") + fields("time", propertyType="meta"),
                }
            ],
        ),
        step,
        step=0.001,
        retry_period=0.01,
    )
    client_run = Background(lambda: client.run(0.4))
    assert wait_until(lambda: client.status is ConnectionStatus.connecting)
    assert not wait_until(lambda: client.time > 0, timeout=0.05)  # no master yet: it waits
    server_run = Background(lambda: sim.run(None))
    report = client_run.result()
    sim.stop()
    server_run.result()
    assert ahead == []
    assert len(seen) == 400  # connected from the first step on
    # it really waited for the server, again and again (about 80 times on an idle machine;
    # a late server catches up in bursts, so fewer on a loaded one)
    assert report.blocks > 5
    assert sim.time >= 0.399  # and the server's time was ahead of it all along


def test_outgoing_time_sync_holds_the_server_at_the_clients_data():
    # The server would run as fast as it can; the client (real time) is the time master.
    sim, server = served("fast", wait_for_clients=1, sync_timeout=5.0)
    client = ContractClient(
        document(
            server.address[1],
            timeDilation=1.0,
            inputs=[{"updatePeriodMs": 5, "timeSyncMode": "absolute", "ports": fields("throttle")}],
        ),
        None,
        step=0.001,
    )
    ahead: list[tuple[float, float]] = []
    steps = [0]

    class Watch(Face):
        def after_step(self, s):
            if server.sessions:  # while the client is connected and the master
                steps[0] += 1
                # From its first data on, as the server has it (before it a HELLO alone must not
                # hold the run, issue 45, G): a step is never taken beyond the client's time.
                for session in list(server.sessions.values()):
                    for contract in session.to_server.values():
                        latest = contract.latest_time
                        if contract.received and latest is not None and s.time > latest + 1e-12:
                            ahead.append((s.time, latest))

    sim.attach("watch", Watch())
    server_run = Background(lambda: sim.run(None))
    client.run(0.3)
    assert wait_until(lambda: not server.sessions)  # the client said goodbye
    sim.stop()
    server_run.result()
    assert ahead == []
    assert steps[0] >= 0.29 / sim.dt  # it followed the client to the end
    # it held (once it ran ahead of the client's first data, until the client caught up;
    # then at each step the client's data had not reached)
    assert server.stats.holds >= 1 and server.stats.sync_timeouts == 0


def _stranger_ping(port: int) -> str:
    """A PING from a socket without a session; a live server answers ERROR even while holding."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.settimeout(5.0)
        sock.sendto(P.ping(12345, 1, 0.0, 0.0, 0.0), ("127.0.0.1", port))
        data = sock.recv(65535)
    assert P.read_header(data, len(data))[0] == P.Kind.ERROR
    return P.decode(data, len(data), P.ErrorBody).code


def test_overdue_client_data_blocks_the_server_until_it_returns():
    sim, server = served("fast", wait_for_clients=1, sync_timeout=10.0)
    paused, resume = threading.Event(), threading.Event()

    def step(ports):
        # the server waits for a contract once it has had data on it (outside lock-step):
        # the client stalls after its data has arrived, however late a busy machine brings it
        if ports.time >= 0.1 and server.stats.received > 0 and not resume.is_set():
            paused.set()
            resume.wait(10.0)  # the client stalls: its data stops
        return {"throttle": 0.1}

    client = ContractClient(
        document(
            server.address[1],
            timeDilation=1.0,
            inputs=[
                {"updatePeriodMs": 10, "overdueDataTimeoutMs": 50, "ports": fields("throttle")}
            ],
        ),
        step,
        step=0.001,
    )
    client_run = Background(lambda: client.run(1.0))
    server_run = Background(lambda: sim.run(None))
    assert paused.wait(10.0)
    assert wait_until(lambda: server.blocking)
    held_at = sim.time
    assert _stranger_ping(server.address[1]) == "unknown_session"  # serving while it holds...
    assert server.blocking and sim.time == held_at  # ...and still not stepping
    resume.set()
    assert wait_until(lambda: sim.time > held_at + 0.1)  # data returned: it runs again
    client_run.result()
    sim.stop()
    server_run.result()
    assert server.stats.sync_timeouts == 0
    assert server.stats.blocked_time > 0


def test_overdue_server_data_blocks_the_client_until_it_returns():
    sim, server = served("realtime", frame_rate=500, wait_for_clients=1)
    freeze, thaw = threading.Event(), threading.Event()

    class Freezer(Face):
        def before_step(self, s):
            if s.time >= 0.1 and not thaw.is_set():
                freeze.set()
                thaw.wait(10.0)

    sim.attach("freezer", Freezer())
    client = ContractClient(
        document(
            server.address[1],
            timeDilation=1.0,
            outputs=[{"updatePeriodMs": 10, "overdueDataTimeoutMs": 40, "ports": fields("rpm")}],
        ),
        None,
        step=0.001,
    )
    server_run = Background(lambda: sim.run(None))
    client_run = Background(lambda: client.run(0.4))
    assert freeze.wait(10.0)
    assert wait_until(lambda: client.blocking)
    held_at = client.time
    assert not wait_until(lambda: client.time != held_at, timeout=0.1)  # it stays held
    assert client.blocking and client.status is ConnectionStatus.connected
    thaw.set()
    assert wait_until(lambda: client.time > held_at + 0.05)
    report = client_run.result()
    sim.stop()
    server_run.result()
    assert report.blocked_time > 0 and report.time >= 0.399
