"""One client's session on the server: its contracts, as negotiated from its HELLO.

``open_session`` answers a HELLO field by field (``objects.Catalogue`` decides what can be
read and written) and builds the session with its WELCOME: for each contract to the client,
where its values come from and when it is next due; for each contract from the client, where
its values go and what the server may wait for (time sync, overdue data, the lock-step
answer).
``ToServer.apply`` writes a client's data into the vehicle's inputs, limited as the property
says.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from vcosim.contracts import protocol as P
from vcosim.contracts.layout import next_tick
from vcosim.contracts.objects import Catalogue, Writer
from vcosim.contracts.transport import Address
from vcosim.vehicle.writes import InputWrites

EPS = 1e-9
MAX_HINTS = 4  # unknown names per HELLO answered with a "did you mean" (each costs ~1 ms)


class ToClient:
    """A contract the server sends: where its values come from, and when it is next due."""

    __slots__ = (
        "id",
        "period",
        "next_k",
        "due",
        "message",
        "sig_pos",
        "sig_idx",
        "functions",
        "gather",
    )

    def __init__(self, cid: int, period: float, now: float, width: int) -> None:
        self.id = cid
        self.period = period
        self.next_k = next_tick(now, period, after=False)
        self.due = self.next_k * period
        self.message = P.DataMessage(cid, width)
        self.message.values[:] = np.nan  # refused fields stay NaN
        self.sig_pos = np.zeros(0, dtype=np.int64)
        self.sig_idx = np.zeros(0, dtype=np.int64)
        self.functions: list[tuple[int, Callable[[], tuple[float, ...]]]] = []
        self.gather = False  # every value a signal, in order: one take into the message

    def read_from(self, sig_pos: list[int], sig_idx: list[int]) -> None:
        """Values at ``sig_pos`` are the vehicle's output signals ``sig_idx``."""
        self.sig_pos = np.array(sig_pos, dtype=np.int64)
        self.sig_idx = np.array(sig_idx, dtype=np.int64)
        self.gather = sig_pos == list(range(len(self.message.values)))

    def fill(self, outputs: np.ndarray) -> np.ndarray:
        """The values to send now, read from the vehicle's outputs and the functions."""
        values = self.message.values
        if self.gather:
            np.take(outputs, self.sig_idx, out=values)
        elif len(self.sig_idx):
            values[self.sig_pos] = outputs[self.sig_idx]
        for pos, function in self.functions:
            result = function()
            values[pos : pos + len(result)] = result
        return values

    def sent_at(self, now: float) -> None:
        """Sent at simulation time ``now``: the next update is due at the next grid time."""
        self.next_k = next_tick(now, self.period)
        self.due = self.next_k * self.period


@dataclass
class ToServer:
    """A contract the client sends: where its values go, and what the server waits for.

    ``lock``: in lock-step pacing the server may not step past its latest update to this
    client before the client answered it: before its data for the latest grid time of this
    contract at or before that update (``ack_due``) has arrived.
    """

    id: int
    period: float
    width: int
    time_sync: bool
    overdue: float | None
    writes: list[tuple[int, str, Writer]]  # (position in the values, property, writer)
    started: float  # server simulation time when the session began
    lock: bool = False
    ack_due: float = -math.inf
    serial: int = 0
    latest_time: float | None = None  # the client's time in its latest data
    last_rx: float | None = None  # server simulation time when that data arrived
    released: bool = False  # a hold gave up on it; cleared by its next data
    received: int = 0
    gaps: int = 0
    stale: int = 0

    @property
    def waited_for(self) -> bool:
        """True if a hold may wait for this contract's data."""
        return self.time_sync or self.overdue is not None or self.lock

    @property
    def expected(self) -> float:
        """Server time by which the next update is expected (the last one plus a period)."""
        return (self.last_rx if self.last_rx is not None else self.started) + self.period

    def forbids(self, now: float, end: float) -> bool:
        """True if the step from ``now`` to ``end`` must wait for this contract's data.

        Outside lock-step, a contract is waited for only once its client has sent data on it:
        a HELLO alone (from ever new ports, say) never holds the run (issue 45, G: time-synced
        HELLOs every 1.9 s held it to 0.573 of real time, each for the sync timeout).
        """
        if self.released or (self.received == 0 and not self.lock):
            return False
        latest = -math.inf if self.latest_time is None else self.latest_time
        if self.time_sync and end > latest + EPS:
            return True
        if self.lock and latest < self.ack_due - EPS:
            return True
        return self.overdue is not None and now > self.expected + self.overdue + EPS

    def answered(self, update_time: float) -> None:
        """An update stamped ``update_time`` went to the client: its answer is due."""
        self.ack_due = (next_tick(update_time, self.period) - 1) * self.period

    def __post_init__(self) -> None:
        self._table = InputWrites(
            [
                (pos + k, target, writer.input, name)
                for pos, name, writer in self.writes
                for k, target in enumerate(writer.targets)
            ]
        )

    @property
    def table(self) -> InputWrites:
        """Where the values go and how each is limited (the compiled writer's table)."""
        return self._table

    def apply(self, values: np.ndarray, inputs: np.ndarray, clamped: Counter[str]) -> None:
        """Write the values into the vehicle's inputs as every face does (``InputWrites``).

        Each is clamped to its input's range (counted by property); a NaN leaves it as it is.
        """
        if self._table.write(values, inputs):
            clamped.update(self._table.take_clamps())


@dataclass
class ServerSession:
    """A client (one address) and its contracts; ``welcome`` is the answer to its HELLO."""

    address: Address
    id: int
    welcome: bytes
    to_client: list[ToClient]
    to_server: dict[int, ToServer]
    heard: float
    started: float
    refused: int = 0
    locked: bool = False  # lock-step: the server waits for the answer to each update
    told_silent: float = 0.0  # wall time of the last line saying it is silent (0: it is not)
    agreed: bool = True  # some field of its contracts was accepted (it reads or writes)

    @property
    def last_data(self) -> float:
        """Server time of the latest data from the client, or of its HELLO if none came.

        What keeps a session when the server is full (``ContractServer._idlest``): a PING
        says the client is there, not that it uses the session.
        """
        latest = self.started
        for c in self.to_server.values():
            if c.last_rx is not None and c.last_rx > latest:
                latest = c.last_rx
        return latest

    def lock(self) -> None:
        """Lock-step: the server waits for this client's answer to each update it sends."""
        if self.to_client and self.to_server:
            self.locked = True
            for c in self.to_server.values():
                c.lock = True


@dataclass
class Negotiation:
    """The answers to a HELLO, and the contracts they open."""

    answers: list[P.ContractAnswer] = field(default_factory=list)
    to_client: list[ToClient] = field(default_factory=list)
    to_server: dict[int, ToServer] = field(default_factory=dict)
    refused: int = 0


def negotiate(hello: P.Hello, catalogue: Catalogue, now: float) -> Negotiation:
    """Accept or refuse each field of each proposed contract, at server time ``now``."""
    result = Negotiation()
    catalogue.hints = MAX_HINTS
    for request in hello.contracts:
        width = sum(f.size for f in request.fields)
        fields = []
        if request.direction == "to_client":
            contract = ToClient(request.id, request.period, now, width)
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
            contract.read_from(sig_pos, sig_idx)
            result.to_client.append(contract)
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
            result.to_server[request.id] = ToServer(
                request.id,
                request.period,
                width,
                request.time_sync,
                request.overdue_timeout,
                writes,
                now,
            )
        result.refused += sum(not a.accepted for a in fields)
        result.answers.append(P.ContractAnswer(id=request.id, fields=fields))
    return result


def open_session(
    hello: P.Hello,
    catalogue: Catalogue,
    sender: Address,
    session_id: int,
    now: float,
    dt: float,
    budget: int = P.MAX_DATAGRAM,
) -> ServerSession:
    """The session a HELLO opens at server time ``now``, with its WELCOME encoded.

    The WELCOME keeps within ``budget`` bytes by leaving out the reasons of the last refused
    fields (the answer to a HELLO must not amplify it); it raises ``ProtocolError`` when it
    does not fit one datagram.
    """
    deal = negotiate(hello, catalogue, now)
    body = P.Welcome(
        server="vcosim", time=now, dt=dt, objects=catalogue.objects, contracts=deal.answers
    )
    welcome = P.encode(P.Kind.WELCOME, session_id, body)
    if len(welcome) > budget:
        _cut_reasons(deal.answers, len(welcome) - budget)
        welcome = P.encode(P.Kind.WELCOME, session_id, body)
    return ServerSession(
        sender,
        session_id,
        welcome,
        deal.to_client,
        deal.to_server,
        time.perf_counter(),
        now,
        deal.refused,
        agreed=any(len(c.sig_idx) or c.functions for c in deal.to_client)
        or any(c.writes for c in deal.to_server.values()),
    )


def _cut_reasons(answers: list[P.ContractAnswer], excess: int) -> None:
    """Leave out refusal reasons, the last first, until ``excess`` bytes are saved."""
    for answer in reversed([a for c in answers for a in c.fields if a.reason]):
        if excess <= 0:
            return
        excess -= len(answer.model_dump_json()) - len('{"accepted":false}')
        answer.reason = None
