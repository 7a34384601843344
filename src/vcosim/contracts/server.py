"""The contract server: a face on the Simulation that serves VS Connect-style contracts over UDP.

``sim.attach("contracts", ContractServer(port=4367))``, or ``vcosim sim --contracts``. Each
client (one UDP address) has a session: the contracts it proposed in its HELLO, with each
field accepted or refused (``objects.Catalogue`` decides). Then, every physics step:

- ``before_step`` receives what has arrived (data, pings, handshakes, goodbyes) and applies
  the clients' inputs to the vehicle. If a client's outgoing contract is time-synced (the
  client is the time master) and its data does not reach the end of this step, or a contract
  with an overdue timeout is overdue, it *holds*: it waits inside ``before_step``, still
  serving every client, until the data arrives. A hold gives up after ``sync_timeout``
  seconds without data from the awaited contract: the contract is released (counted in
  ``sync_timeouts``) until its next data, so a vanished client cannot hang the simulation.
- ``after_step`` sends each contract that is due: at most once per update period of
  simulation time, stamped with the simulation time after the step.

Sessions end with the client's BYE, or after ``session_timeout`` seconds of silence (clients
ping several times a second). ``close`` says BYE to every client.
"""

from __future__ import annotations

import logging
import math
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from vcosim.contracts import protocol as P
from vcosim.contracts.config import DEFAULT_PORT, MAX_CONTRACT_WIDTH, next_tick
from vcosim.contracts.objects import Catalogue, Writer
from vcosim.contracts.transport import Address, Endpoint
from vcosim.errors import ProtocolError
from vcosim.sim.simulation import Simulation

log = logging.getLogger("vcosim.contracts")
EPS = 1e-9
ERROR_INTERVAL = 0.2  # s between ERROR answers to one address (no reply storms)
HOLD_POLL = 0.05  # s: a hold re-checks timeouts at least this often


class _ToClient:
    """A contract the server sends: where its values come from, and when it is next due."""

    __slots__ = ("id", "period", "next_k", "message", "sig_pos", "sig_idx", "functions", "sent")

    def __init__(self, cid: int, period: float, now: float, width: int) -> None:
        self.id = cid
        self.period = period
        self.next_k = next_tick(now, period, after=False)
        self.message = P.DataMessage(cid, width)
        self.message.values[:] = np.nan  # refused fields stay NaN
        self.sig_pos = np.zeros(0, dtype=np.int64)
        self.sig_idx = np.zeros(0, dtype=np.int64)
        self.functions: list[tuple[int, Any]] = []
        self.sent = 0

    @property
    def due(self) -> float:
        return self.next_k * self.period


@dataclass
class _ToServer:
    """A contract the client sends: where its values go, and what the server waits for."""

    id: int
    period: float
    width: int
    time_sync: bool
    overdue: float | None
    writes: list[tuple[int, str, Writer]]  # (position in the values, property, writer)
    started: float  # server simulation time when the session began
    serial: int = 0
    latest_time: float | None = None  # the client's time in its latest data
    last_rx: float | None = None  # server simulation time when that data arrived
    released: bool = False  # a hold gave up on it; cleared by its next data
    received: int = 0
    gaps: int = 0
    stale: int = 0

    @property
    def expected(self) -> float:
        """Server time by which the next update is expected (the last one plus a period)."""
        return (self.last_rx if self.last_rx is not None else self.started) + self.period


@dataclass
class _Session:
    address: Address
    id: int
    welcome: bytes
    to_client: list[_ToClient]
    to_server: dict[int, _ToServer]
    heard: float
    started: float
    refused: int = 0


@dataclass
class ServerStats:
    """What the server did; every dropped or changed value is counted here."""

    sessions: int = 0
    ended: int = 0
    expired: int = 0
    sent: int = 0
    received: int = 0
    stale: int = 0
    gaps: int = 0
    refused_fields: int = 0
    unknown_session: int = 0
    holds: int = 0
    blocked_time: float = 0.0
    sync_timeouts: int = 0
    clamped: Counter[str] = field(default_factory=Counter)


class ContractServer:
    """VS Connect-style contract server; a face (``sim.attach("contracts", server)``).

    Args:
        host: Address to bind; loopback unless opened on purpose.
        port: UDP port (4367, VS Connect's default; 0 picks a free one).
        vehicle_name: The vehicle's object name.
        points: Extra fixed named points, name -> (X, Y) or (X, Y, Z), for ``DISTANCE``.
        allowed_hosts: Client addresses accepted; default the loopback address and ``host``.
        sync_timeout: Seconds a hold waits without data from the awaited contract before it
            releases that contract and lets the simulation step on.
        session_timeout: Seconds of silence after which a client's session ends.
        wait_for_clients: At the start of a run, wait until this many clients have connected
            (up to ``wait_timeout`` s), so a fast run does not finish before they arrive.
        goodbye: Say BYE to every client on close (False: vanish silently, as a crash would).
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = DEFAULT_PORT,
        *,
        vehicle_name: str = "Vehicle_A",
        points: Mapping[str, Sequence[float]] | None = None,
        allowed_hosts: Sequence[str] | None = None,
        sync_timeout: float = 2.0,
        session_timeout: float = 5.0,
        wait_for_clients: int = 0,
        wait_timeout: float = 30.0,
        goodbye: bool = True,
    ) -> None:
        allowed = set(allowed_hosts) if allowed_hosts else {"127.0.0.1", host}
        self.endpoint = Endpoint(
            (host, port), allowed_hosts=allowed - {"0.0.0.0", ""} or None, name="contract server"
        )
        self.vehicle_name = vehicle_name
        self.points = {k: tuple(v) for k, v in (points or {}).items()}
        self.sync_timeout = sync_timeout
        self.session_timeout = session_timeout
        self.wait_for_clients = wait_for_clients
        self.wait_timeout = wait_timeout
        self.goodbye = goodbye
        self.sessions: dict[Address, _Session] = {}
        self.stats = ServerStats()
        self.blocking = False
        self.catalogue: Catalogue | None = None
        self._inputs: np.ndarray = np.zeros(0)  # the vehicle's, from start()
        self._outputs: np.ndarray = np.zeros(0)
        self._waiters: list[_ToServer] = []
        self._next_due = math.inf
        self._sync_data = 0  # data messages applied to contracts a hold may wait for
        self._error_sent: dict[Address, float] = {}
        self._closed = False

    @property
    def address(self) -> Address:
        """Where the server listens (host, port)."""
        return self.endpoint.address

    # -- face hooks -------------------------------------------------------------------------
    def start(self, sim: Simulation) -> None:
        """Bind the catalogue to this simulation's vehicle; optionally wait for clients."""
        self._inputs = sim.vehicle.input_array
        self._outputs = sim.vehicle.outputs
        if self.catalogue is None:
            self.catalogue = Catalogue(sim.vehicle, self.vehicle_name, self.points)
            log.info(
                "contract server: listening on %s:%d; objects %s",
                *self.address,
                ", ".join(self.catalogue.objects),
            )
        if self.wait_for_clients:
            deadline = time.perf_counter() + self.wait_timeout
            while len(self.sessions) < self.wait_for_clients:
                remaining = deadline - time.perf_counter()
                if remaining <= 0:
                    log.warning(
                        "contract server: %d of %d clients after %g s; running anyway",
                        len(self.sessions),
                        self.wait_for_clients,
                        self.wait_timeout,
                    )
                    break
                if self.endpoint.wait(min(remaining, HOLD_POLL)):
                    self._receive(sim)

    def before_step(self, sim: Simulation) -> None:
        """Take what has arrived; hold while a time master or an overdue contract says so."""
        self._receive(sim)
        if self._waiters and self._must_hold(sim):
            self._hold(sim)

    def after_step(self, sim: Simulation) -> None:
        """Send every contract that is due, stamped with the simulation time after the step."""
        now = sim.time
        if now + EPS < self._next_due:
            return
        outputs, endpoint, stats = self._outputs, self.endpoint, self.stats
        next_due = math.inf
        for session in self.sessions.values():
            for c in session.to_client:
                if now + EPS >= c.due:
                    values = c.message.values
                    if len(c.sig_idx):
                        values[c.sig_pos] = outputs[c.sig_idx]
                    for pos, function in c.functions:
                        result = function()
                        values[pos : pos + len(result)] = result
                    endpoint.send(c.message.pack(session.id, now), session.address)
                    c.next_k = next_tick(now, c.period)
                    c.sent += 1
                    stats.sent += 1
                next_due = min(next_due, c.due)
        self._next_due = next_due

    def on_frame(self, sim: Simulation) -> None:
        """End the sessions of clients that went silent."""
        self._expire()

    # -- receiving --------------------------------------------------------------------------
    def _receive(self, sim: Simulation) -> None:
        """Handle every datagram waiting."""
        endpoint, buffer = self.endpoint, self.endpoint.buffer
        while True:
            got = endpoint.receive()
            if got is None:
                return
            size, sender = got
            try:
                kind, session_id = P.read_header(buffer, size)
                self._handle(sim, kind, session_id, size, sender)
            except P.Malformed as exc:
                endpoint.count_malformed(exc.reason, sender, str(exc))
                if exc.reason == "version":
                    self._error(
                        sender,
                        0,
                        "version",
                        f"this server speaks contract protocol version {P.VERSION}",
                    )

    def _handle(
        self, sim: Simulation, kind: int, session_id: int, size: int, sender: Address
    ) -> None:
        buffer = self.endpoint.buffer
        if kind == P.Kind.HELLO:
            self._hello(sim, session_id, P.decode(buffer, size, P.Hello), sender)
            return
        session = self.sessions.get(sender)
        if session is None or session.id != session_id:
            if kind not in (P.Kind.BYE, P.Kind.BYE_ACK):
                self.stats.unknown_session += 1
                self._error(sender, session_id, "unknown_session", "no session: send HELLO")
            elif kind == P.Kind.BYE:
                self.endpoint.send(P.header(P.Kind.BYE_ACK, session_id), sender)
            return
        session.heard = time.perf_counter()
        if kind == P.Kind.DATA:
            self._data(session, *P.read_data(buffer, size), sim.time)
        elif kind == P.Kind.PING:
            echoed = P.read_ping(buffer, size)
            self.endpoint.send(P.pong(session.id, echoed, time.time(), sim.time), sender)
        elif kind == P.Kind.BYE:
            self._end(session, "said goodbye")
            self.endpoint.send(P.header(P.Kind.BYE_ACK, session.id), sender)
        elif kind != P.Kind.BYE_ACK:
            raise P.Malformed("unexpected_kind", f"{P.Kind(kind).name} sent to the server")

    def _data(
        self,
        session: _Session,
        contract: int,
        serial: int,
        sent_at: float,
        values: np.ndarray,
        now: float,
    ) -> None:
        c = session.to_server.get(contract)
        if c is None:
            raise P.Malformed("unknown_contract", f"contract {contract}")
        if len(values) != c.width:
            raise P.Malformed(
                "bad_width", f"contract {contract}: {len(values)} values, expected {c.width}"
            )
        stats = self.stats
        if serial <= c.serial:
            c.stale += 1
            stats.stale += 1
            return
        if c.serial and serial > c.serial + 1:
            c.gaps += serial - c.serial - 1
            stats.gaps += serial - c.serial - 1
        c.serial, c.latest_time, c.last_rx = serial, sent_at, now
        c.received += 1
        stats.received += 1
        if c.time_sync or c.overdue is not None:
            c.released = False
            self._sync_data += 1
        inputs = self._inputs
        for pos, name, writer in c.writes:
            for k, target in enumerate(writer.targets):
                value = float(values[pos + k])
                if value != value:  # NaN: leave the input as it is
                    continue
                if writer.kind == "switch":
                    value = 1.0 if value >= 0.5 else 0.0
                else:
                    if value < writer.low or value > writer.high:
                        value = min(max(value, writer.low), writer.high)
                        stats.clamped[name] += 1
                    if writer.kind == "integer":
                        value = float(round(value))
                inputs[target] = value

    def _hello(self, sim: Simulation, session_id: int, hello: P.Hello, sender: Address) -> None:
        """Accept or refuse each field, open the session and answer WELCOME."""
        old = self.sessions.get(sender)
        if old is not None and old.id == session_id:  # a repeated HELLO: answer again
            old.heard = time.perf_counter()
            self.endpoint.send(old.welcome, sender)
            return
        ids = [c.id for c in hello.contracts]
        if len(set(ids)) != len(ids):
            self._error(sender, session_id, "bad_hello", "contract ids repeat", force=True)
            return
        if any(sum(f.size for f in c.fields) > MAX_CONTRACT_WIDTH for c in hello.contracts):
            self._error(
                sender,
                session_id,
                "bad_hello",
                f"a contract is wider than {MAX_CONTRACT_WIDTH} values",
                force=True,
            )
            return
        if old is not None:
            self._end(old, "reconnected")
        assert self.catalogue is not None, "the server serves only while attached and started"
        now, catalogue = sim.time, self.catalogue
        answers, to_client, to_server, refused = [], [], {}, 0
        for request in hello.contracts:
            width = sum(f.size for f in request.fields)
            fields = []
            if request.direction == "to_client":
                contract = _ToClient(request.id, request.period, now, width)
                sig_pos: list[int] = []
                sig_idx: list[int] = []
                pos = 0
                for f in request.fields:
                    reader = catalogue.reader(f.object, f.property, f.params, f.size)
                    if isinstance(reader, str):
                        fields.append(P.FieldAnswer(accepted=False, reason=reader))
                    else:
                        fields.append(P.FieldAnswer(accepted=True))
                        if reader.function is not None:
                            contract.functions.append((pos, reader.function))
                        else:
                            sig_pos.extend(range(pos, pos + reader.width))
                            sig_idx.extend(reader.signals)
                    pos += f.size
                contract.sig_pos = np.array(sig_pos, dtype=np.int64)
                contract.sig_idx = np.array(sig_idx, dtype=np.int64)
                to_client.append(contract)
            else:
                writes, pos = [], 0
                for f in request.fields:
                    writer = catalogue.writer(f.object, f.property, f.params, f.size)
                    if isinstance(writer, str):
                        fields.append(P.FieldAnswer(accepted=False, reason=writer))
                    else:
                        fields.append(P.FieldAnswer(accepted=True))
                        writes.append((pos, f.property, writer))
                    pos += f.size
                to_server[request.id] = _ToServer(
                    request.id,
                    request.period,
                    width,
                    request.time_sync,
                    request.overdue_timeout,
                    writes,
                    now,
                )
            refused += sum(not a.accepted for a in fields)
            answers.append(P.ContractAnswer(id=request.id, fields=fields))
        try:
            welcome = P.encode(
                P.Kind.WELCOME,
                session_id,
                P.Welcome(
                    server="vcosim",
                    time=now,
                    dt=sim.dt,
                    objects=catalogue.objects,
                    contracts=answers,
                ),
            )
        except ProtocolError as exc:  # the answers do not fit one datagram
            self._error(sender, session_id, "bad_hello", str(exc), force=True)
            return
        session = _Session(
            sender, session_id, welcome, to_client, to_server, time.perf_counter(), now, refused
        )
        self.sessions[sender] = session
        self.stats.sessions += 1
        self.stats.refused_fields += refused
        self._rebuild()
        self.endpoint.send(welcome, sender)
        log.info(
            "contract server: client %s:%d connected (%d contracts, %d fields refused)",
            sender[0],
            sender[1],
            len(hello.contracts),
            refused,
        )

    def _error(
        self, to: Address, session_id: int, code: str, message: str, force: bool = False
    ) -> None:
        now = time.perf_counter()
        if force or now - self._error_sent.get(to, -math.inf) >= ERROR_INTERVAL:
            self._error_sent[to] = now
            self.endpoint.send(
                P.encode(P.Kind.ERROR, session_id, P.ErrorBody(code=code, message=message)), to
            )

    # -- sessions ---------------------------------------------------------------------------
    def _end(self, session: _Session, why: str) -> None:
        if self.sessions.get(session.address) is session:
            del self.sessions[session.address]
            self.stats.ended += 1
            self._rebuild()
            log.info("contract server: client %s:%d %s", *session.address, why)

    def _expire(self) -> None:
        now = time.perf_counter()
        for session in list(self.sessions.values()):
            if now - session.heard > self.session_timeout:
                self.stats.expired += 1
                self._end(session, f"silent for {self.session_timeout:g} s: session ended")

    def _rebuild(self) -> None:
        """Recompute who a hold may wait for and when the next send is due."""
        self._waiters = [
            c
            for s in self.sessions.values()
            for c in s.to_server.values()
            if c.time_sync or c.overdue is not None
        ]
        self._next_due = min(
            (c.due for s in self.sessions.values() for c in s.to_client), default=math.inf
        )

    # -- holding ----------------------------------------------------------------------------
    def _blocking(self, sim: Simulation) -> list[_ToServer]:
        """The contracts that forbid the next step now."""
        now, end = sim.time, sim.time + sim.dt
        found = []
        for c in self._waiters:
            if c.released:
                continue
            behind = c.time_sync and (c.latest_time is None or end > c.latest_time + EPS)
            overdue = c.overdue is not None and now > c.expected + c.overdue + EPS
            if behind or overdue:
                found.append(c)
        return found

    def _must_hold(self, sim: Simulation) -> bool:
        return bool(self._blocking(sim))

    def _hold(self, sim: Simulation) -> None:
        """Wait (serving every client) until no contract forbids the step, or give up."""
        stats, endpoint = self.stats, self.endpoint
        start = progress = time.perf_counter()
        stats.holds += 1
        self.blocking = True
        try:
            while True:
                blocking = self._blocking(sim)
                if not blocking:
                    return
                now = time.perf_counter()
                if now - progress >= self.sync_timeout:
                    for c in blocking:
                        c.released = True
                    stats.sync_timeouts += 1
                    log.warning(
                        "contract server: no data from the awaited client for %g s at "
                        "t = %.3f s; stepping on without it until it sends again",
                        self.sync_timeout,
                        sim.time,
                    )
                    continue
                before = self._sync_data
                if endpoint.wait(min(self.sync_timeout - (now - progress), HOLD_POLL)):
                    self._receive(sim)
                if self._sync_data != before:
                    progress = time.perf_counter()
                self._expire()
        finally:
            self.blocking = False
            stats.blocked_time += time.perf_counter() - start

    # -- reporting and closing --------------------------------------------------------------
    def report(self) -> dict[str, Any]:
        """Counters of the server, JSON-friendly."""
        s, ep = self.stats, self.endpoint
        return {
            "address": f"{self.address[0]}:{self.address[1]}" if not ep.closed else None,
            "clients": len(self.sessions),
            "sessions": s.sessions,
            "ended": s.ended,
            "expired": s.expired,
            "sent": s.sent,
            "received": s.received,
            "stale": s.stale,
            "gaps": s.gaps,
            "refused_fields": s.refused_fields,
            "unknown_session": s.unknown_session,
            "malformed": dict(ep.malformed),
            "malformed_total": sum(ep.malformed.values()),
            "rejected_peers": ep.rejected,
            "clamped": dict(s.clamped),
            "holds": s.holds,
            "blocked_time": s.blocked_time,
            "sync_timeouts": s.sync_timeouts,
        }

    def close(self) -> None:
        """Say BYE to every client (unless ``goodbye`` is off) and close (safe twice)."""
        if self._closed:
            return
        self._closed = True
        if self.goodbye:
            for session in self.sessions.values():
                self.endpoint.send(P.header(P.Kind.BYE, session.id), session.address)
        self.endpoint.close()
