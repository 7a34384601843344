"""Lock-step pacing with contract clients: held at t = 0 until they join, then deterministic."""

from __future__ import annotations

import math
import socket

import numpy as np
from contract_helpers import Background, document, fields, served, wait_until

from vcosim.contracts import ConnectionStatus, ContractClient
from vcosim.contracts import protocol as P
from vcosim.contracts.server import lockstep
from vcosim.contracts.server.lockstep import LeanExchange
from vcosim.sim.face import Face
from vcosim.sim.recorder import SignalRecorder
from vcosim.vehicle import SIGNAL_NAMES
from vcosim.vehicle import layout as L

PERIOD = 0.001
DURATION = 0.3


def driver(port: int, name: str, law):
    """A client following the server (time-synced outputs) and answering every update."""
    trace: list[tuple[float, float, float]] = []

    def step(ports):
        if ports.status is not ConnectionStatus.connected:
            return None
        value = law(ports.time, ports["groundspeed"])
        trace.append((ports.time, ports["time"], value))
        return {name: value}

    client = ContractClient(
        document(
            port,
            outputs=[
                {
                    "updatePeriod": PERIOD,
                    "timeSyncMode": "absolute",
                    "ports": fields("groundspeed") + fields("time", propertyType="meta"),
                }
            ],
            inputs=[{"updatePeriod": PERIOD, "ports": fields(name)}],
        ),
        step,
        step=PERIOD,
        spin=0.0,  # client and server share this process's GIL: sleep, never spin
    )
    return client, trace


class InputRecorder(Face):
    """The vehicle's inputs each step ran with, by the simulation time after the step."""

    def __init__(self) -> None:
        self.times: list[float] = []
        self.rows: list[np.ndarray] = []

    def after_step(self, sim) -> None:
        self.times.append(sim.time)
        self.rows.append(sim.vehicle.input_array.copy())


def lockstep_run(check_hold: bool = False):
    """Two clients (throttle, steering) locked to a lock-step server from t = 0."""
    sim, server = served("lockstep", wait_for_clients=2, spin=0.0, sync_timeout=10.0)
    signals = sim.attach("signals", SignalRecorder(every=1))
    inputs = sim.attach("inputs", InputRecorder())
    port = server.address[1]
    pedal, pedal_trace = driver(port, "throttle", lambda t, v: min(max(0.4 * (8.0 - v), 0), 1))
    wheel, wheel_trace = driver(port, "steering", lambda t, v: 0.2 * math.sin(20.0 * t) + 0.01 * v)
    start = sim.time
    server_run = Background(lambda: sim.run(DURATION))
    first = Background(lambda: pedal.run(DURATION))
    if check_hold:
        assert wait_until(lambda: len(server.sessions) == 1)
        assert not wait_until(lambda: sim.time > start, timeout=0.1)  # one of two: it waits
    second = Background(lambda: wheel.run(DURATION))
    pedal_report, wheel_report = first.result(), second.result()
    report = server_run.result()
    runs = signals.rows.copy(), pedal_trace, wheel_trace, pedal_report, wheel_report, report
    return (*runs, inputs)


def test_lockstep_holds_at_zero_until_the_clients_join_then_follows_their_answers():
    rows, pedal, wheel, pedal_report, wheel_report, report, inputs = lockstep_run(True)
    steps = round(DURATION / 0.0005)
    assert len(rows) == steps + 1 and report.sim_time == DURATION
    updates = round(DURATION / PERIOD)
    for trace, client_report in ((pedal, pedal_report), (wheel, wheel_report)):
        assert len(trace) == updates  # connected from its first step to its last
        stamps = sorted({stamp for _, stamp, _ in trace})
        assert client_report.received == {1: len(stamps)} and client_report.gaps == 0
        # each step saw the first update at or after its time, never a later one
        assert all(t <= stamp < t + PERIOD for t, stamp, _ in trace[1:])
    # the server applied the answer to each update (the client's step at its time) in the
    # step right after that update, never later
    for slot, trace in ((L.U_THROTTLE, pedal), (L.U_STEERING, wheel)):
        answers = {stamp: value for _, stamp, value in trace}  # the last step seeing it
        for stamp, value in answers.items():
            step = int(np.searchsorted(inputs.times, stamp + 0.0005 - 1e-9))
            assert inputs.rows[step][slot] == value, (slot, stamp)
    served = report.faces["contracts"]
    assert served.sync_timeouts == 0  # no hold gave up: every answer came
    assert served.received == pedal_report.sent[0] + wheel_report.sent[0]


def test_two_lockstep_runs_with_contract_clients_record_identical_signals():
    first = lockstep_run()
    second = lockstep_run()
    assert first[0].shape == second[0].shape
    assert np.array_equal(first[0], second[0])  # every signal of every step, exactly
    assert first[1] == second[1] and first[2] == second[2]  # what the clients saw and sent
    assert np.ptp(first[0][:, SIGNAL_NAMES.index("steering")]) > 0.1  # the inputs did act


def one_client_run(strays: bool = False, record: bool = True, spin: float = 0.0):
    """One throttle client locked to a lock-step server: the server's lean exchange.

    ``strays``: once the client is served, a stranger sends the server garbage, a DATA of
    an unknown session and the client's own latest DATA from another address. Without
    ``record`` the server is the host's one stepping face: it runs the steps itself, fused
    with its wait and its send (``ContractServer.advance``); the rows are the last outputs.
    ``spin``: the server's, its waits inside its compiled calls (which let the GIL go).
    """
    sim, server = served("lockstep", wait_for_clients=1, spin=spin, sync_timeout=10.0)
    signals = sim.attach("signals", SignalRecorder(every=1)) if record else None
    pedal, trace = driver(server.address[1], "throttle", lambda t, v: min(0.1 + v, 1.0))
    server_run = Background(lambda: sim.run(DURATION))
    client_run = Background(lambda: pedal.run(DURATION))
    assert wait_until(lambda: isinstance(server._lean, LeanExchange))  # the lean path serves
    assert (server._lean._fused is None) == record  # (wire.exchange: stepped and sent in it)
    if strays:
        session = next(iter(server.sessions.values()))
        forged = P.DataMessage(0, 1).pack(session.id, 0.0)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as stranger:
            for datagram in (b"garbage!", P.DataMessage(0, 1).pack(session.id ^ 1, 0.0), forged):
                stranger.sendto(datagram, server.address)
    client, report = client_run.result(), server_run.result()
    rows = signals.rows.copy() if signals is not None else sim.vehicle.outputs.copy()
    return rows, trace, client, report


def test_one_lockstep_client_is_served_lean_and_alike_twice():
    rows, trace, client, report = one_client_run()
    again = one_client_run()
    assert rows.shape == (round(DURATION / 0.0005) + 1, len(SIGNAL_NAMES))
    assert np.array_equal(rows, again[0]) and trace == again[1]  # every step, exactly
    served = report.faces["contracts"]
    assert len(trace) == round(DURATION / PERIOD) and client.gaps == 0
    assert served.sync_timeouts == 0 and served.received == client.sent[0]
    assert served.stale == served.gaps == 0 and served.malformed_total == 0


def test_strays_during_a_lean_exchange_are_counted_as_before_and_the_run_goes_on():
    rows, trace, client, report = one_client_run(strays=True)
    served = report.faces["contracts"]
    assert served.malformed == {"bad_magic": 1}
    assert served.unknown_session == 2  # the wrong session, and the right one from elsewhere
    assert served.sync_timeouts == 0 and served.received == client.sent[0]
    assert len(trace) == round(DURATION / PERIOD) and client.gaps == 0
    assert np.array_equal(rows, one_client_run()[0])  # the strays changed no step


def test_a_server_stepping_alone_fuses_wait_steps_and_send_and_steps_alike(monkeypatch):
    # each wait for an answer stays inside the compiled call, the client thread answering
    # meanwhile: the call runs turn after turn (wire.exchange), strays arriving among them
    monkeypatch.setattr(lockstep, "TRIES", 1 << 24)
    turns: list[int] = []
    booked = LeanExchange._turns

    def counted(lean: LeanExchange, last: int) -> None:
        turns.append(int(lean._sent[1]))
        booked(lean, last)

    monkeypatch.setattr(LeanExchange, "_turns", counted)
    rows, trace, client, report = one_client_run(strays=True, record=False, spin=1.0)
    monkeypatch.undo()
    assert max(turns) > 1  # turns in a row in one call
    served = report.faces["contracts"]
    assert served.malformed == {"bad_magic": 1} and served.unknown_session == 2
    assert served.sync_timeouts == 0 and served.received == client.sent[0]
    assert len(trace) == round(DURATION / PERIOD) and client.gaps == 0
    recorded, recorded_trace, _, _ = one_client_run()  # stepped by the host, sent in Python
    assert np.array_equal(rows, recorded[-1]) and trace == recorded_trace
