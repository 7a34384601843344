"""The client's side of the contract protocol: connection status, handshake, data, link upkeep.

(Past 400 lines on purpose: one state machine, every status and message of docs/contracts.md's
table beside its transitions, so the table can be checked against the code in one place.)

``ClientSession`` is the state machine of docs/contracts.md ("Connection directive and
status", and its table of every status and message): HELLO every retry period until
WELCOME, pings while connected, BYE when the directive goes to 0, reconnection when the link
drops (BYE, ``unknown_session``, silence), status 4 for a while when the server refuses the
session (``bad_hello``, or an ERROR code this client does not know), then HELLO again, each
time after twice as long (up to ``MAX_BACKOFF``): no message leaves it in a state it never
leaves. It takes the server's data into the block's flat output
array (with the meta values) and sends the input contracts from the flat input array when
due; it knows, for the block's clock, whether an incoming contract forbids a step.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable

import numpy as np

from vcosim.contracts import protocol as P
from vcosim.contracts import wire
from vcosim.contracts.client.lockstep import LeanUpdate
from vcosim.contracts.client.ports import ConnectionStatus, Refusal
from vcosim.contracts.client.streams import Incoming, Outgoing
from vcosim.contracts.config import PING_META
from vcosim.contracts.layout import BlockLayout, next_tick
from vcosim.contracts.options import ClientOptions
from vcosim.contracts.transport import Address, Endpoint

log = logging.getLogger("vcosim.contracts")
EPS = 1e-9
DEFAULT_PING_PERIOD = 0.25  # s: keep-alive when no commData group asks for more
MAX_BACKOFF = 30.0  # s: the longest status-4 wait after a refusal before the next HELLO
KNOWN_ERRORS = ("unknown_session", "busy", "bad_hello", "evicted")  # what a v1 server sends
MAX_ERROR_CODES = 16  # codes counted by name; any further one counts as OTHER_CODE
OTHER_CODE = "(other)"
CODE_CHARS, MESSAGE_CHARS = 40, 200  # a server's code and message as far as they are shown
S = ConnectionStatus
_DATA = int(P.Kind.DATA)


class ClientSession:
    """The link to the server, over ``endpoint``, for a block laid out as ``layout``.

    ``out`` and ``inputs`` are the block's flat arrays (slot 0: status, directive); the
    session writes received values into ``out`` and sends from ``inputs``. ``time`` is the
    block's local time, set by the block before each service.
    """

    def __init__(
        self,
        layout: BlockLayout,
        endpoint: Endpoint,
        out: np.ndarray,
        inputs: np.ndarray,
        options: ClientOptions,
    ) -> None:
        self.layout = layout
        self.endpoint = endpoint
        self.ready = endpoint.ready
        self._data = P.DataReader(endpoint.buffer)
        host, port = endpoint.peer or ("", 0)
        self.server = f"{host}:{port}"
        self.out = out
        self.inputs = inputs
        self.link_timeout = options.link_timeout
        self.retry_period = options.retry_period
        self.bye_timeout = options.bye_timeout
        self.end_with_server = options.end_with_server
        self.server_ended = False  # the server said goodbye (and end_with_server holds)
        self.incoming = [Incoming(c) for c in layout.contracts if c.direction == "to_client"]
        self._by_id = {c.id: c for c in self.incoming}
        self.outgoing = [
            Outgoing(c, inputs) for c in layout.contracts if c.direction == "to_server" and c.fields
        ]
        self.ping_fields = [
            (1 + f.flat, f.width, f.config.invalidValue)
            for c in layout.comm
            for f in c.fields
            if f.meta in PING_META
        ]
        self.ping_period = min([DEFAULT_PING_PERIOD, *(c.group.period for c in layout.comm)])
        self.synced_in = any(c.time_sync for c in self.incoming)
        self._hello = self._hello_body()
        self.status = S.unknown
        self.status_history: list[tuple[float, ConnectionStatus]] = []
        self.on_status: Callable[[ConnectionStatus], None] | None = None
        self.refused: list[Refusal] = []
        self.time = 0.0
        self.sent_time = -np.inf  # the time stamped on the latest data sent
        self.reconnects = 0
        self.round_trips: list[float] = []
        self.malformed_total = 0
        self.stale_session = 0
        self.error_text = ""
        self.errors: Counter[str] = Counter()  # the server's ERRORs to this client, by code
        self.refusals = 0  # refused sessions in a row (the back-off's exponent)
        self.backoff = 0.0  # s: the latest refusal's wait before the next HELLO
        self._retry_at = 0.0
        self._session = 0
        self.heard = 0.0  # perf_counter time of the latest datagram from the server
        self.lean: LeanUpdate | None = None  # the lock-step fast path, while connected
        self._next_hello = 0.0
        self._next_ping = 0.0
        self._ping_seq = 0
        self._ping_answered = True  # (no ping sent yet)
        self._bye_deadline = 0.0
        if self.synced_in:  # the lean update's kernels now, not while the server waits
            wire.warm_up(server=False)

    @property
    def received(self) -> int:
        """Data updates taken from the server, over every incoming contract."""
        return sum(c.received for c in self.incoming)

    @property
    def session_id(self) -> int:
        """The id of the current (or latest) connection attempt; 0 before the first."""
        return self._session

    # -- the directive and the timers -------------------------------------------------------
    def service(self) -> None:
        """Take every waiting datagram, then act on the directive, timers and pings."""
        if self.ready():
            self.drain()
        now = time.perf_counter()
        status = self.status
        if self.inputs[0] == 0:
            if status == S.connected:
                self.endpoint.send(P.header(P.Kind.BYE, self._session))
                self.invalidate()
                self._bye_deadline = now + self.bye_timeout
                self.set_status(S.disconnecting)
            elif status == S.disconnecting:
                if now >= self._bye_deadline:
                    self.set_status(S.unconnected)
            elif status != S.unconnected:
                if status == S.connecting:  # a HELLO may have opened a session
                    self.endpoint.send(P.header(P.Kind.BYE, self._session))
                self.set_status(S.unconnected)
            return
        if status in (S.unknown, S.unconnected):
            if not self.server_ended:  # after the server's goodbye the run ends instead
                self._connect(now)
        elif status == S.disconnecting:
            if now >= self._bye_deadline:
                self.set_status(S.unconnected)
        elif status == S.connecting:
            if now >= self._next_hello:
                self._send_hello(now)
        elif status == S.error:
            if now >= self._retry_at:  # the back-off is over: ask again, in a new session
                self._connect(now)
        elif status == S.connected:
            if now - self.heard > self.link_timeout:
                self._lose(f"no message from the server for {self.link_timeout:g} s")
            elif now >= self._next_ping:
                self._ping_seq += 1
                self._ping_answered = False
                self.endpoint.send(
                    P.ping(self._session, self._ping_seq, now, time.time(), self.time)
                )
                self._next_ping = now + self.ping_period

    def quiet(self) -> bool:
        """True when ``service`` has nothing to do now but take datagrams.

        Connected, the directive on, no ping due, the link not timed out: a block that waits
        for its update takes the datagrams meanwhile.
        """
        now = time.perf_counter()
        return (
            self.status == S.connected
            and self.inputs[0] != 0
            and now < self._next_ping
            and now - self.heard <= self.link_timeout
        )

    def set_status(self, status: ConnectionStatus) -> None:
        """Change the status (slot 0 of the outputs), noted with the local time."""
        if status != self.status:
            self.status = status
            self.out[0] = float(status)
            self.status_history.append((self.time, status))
            self.lean = LeanUpdate.of(self) if status == S.connected else None
            if self.on_status is not None:
                self.on_status(status)

    def _connect(self, now: float) -> None:
        self._session = P.new_session_id()
        self.set_status(S.connecting)
        self._send_hello(now)

    def _send_hello(self, now: float) -> None:
        body = self._hello.model_copy(update={"time": self.time})
        self.endpoint.send(P.encode(P.Kind.HELLO, self._session, body))
        self._next_hello = now + self.retry_period

    def _lose(self, why: str) -> None:
        """The link is gone: invalid outputs, and connect again (the directive is non-zero)."""
        log.warning("contract client: link to %s lost (%s); reconnecting", self.server, why)
        self.invalidate()
        self.reconnects += 1
        self._connect(time.perf_counter())

    def _refused(self, code: str, message: str | None) -> None:
        """Status 4, not trying, for a back-off; then HELLO again (``service``).

        The wait doubles with each refusal in a row, from twice the retry period up to
        ``MAX_BACKOFF``: a server that refuses for good is asked seldom, one that was
        reconfigured or replaced is found again. A WELCOME resets it.
        """
        self.refusals += 1
        self.backoff = wait = min(self.retry_period * 2.0**self.refusals, MAX_BACKOFF)
        self._retry_at = time.perf_counter() + wait
        why = f"{code}: {_short(message or 'no reason given', MESSAGE_CHARS)}"
        if why != self.error_text:  # (the same refusal again is only counted)
            log.error(
                "contract client: the server at %s refused the session (%s); asking again in "
                "%.3g s, then each time after twice as long (at most %g s)",
                self.server,
                why,
                wait,
                MAX_BACKOFF,
            )
        self.error_text = why
        self.invalidate()
        self.set_status(S.error)

    def _count_error(self, code: str) -> str:
        """Count an ERROR by its code (shortened); say once that a code is unknown."""
        code = _short(code, CODE_CHARS)
        key = code if code in self.errors or len(self.errors) < MAX_ERROR_CODES else OTHER_CODE
        if key not in self.errors and code not in KNOWN_ERRORS:
            log.warning(
                "contract client: the server at %s answered ERROR %r, a code this client does "
                "not know; taken as a refusal of the session (further ones are only counted)",
                self.server,
                key,
            )
        self.errors[key] += 1
        return code

    # -- receiving --------------------------------------------------------------------------
    def drain(self, one: bool = False) -> int:
        """Handle every datagram waiting (``one``: the first only); how many there were.

        A waiting block takes one at a time: the update it waits for ends its wait without
        another look at the socket.
        """
        endpoint, ready = self.endpoint, self.ready
        handled = 0
        while ready():
            if one and handled:
                break
            got = endpoint.receive()
            if got is None:
                break
            handled += 1
            self.take(*got)
        return handled

    def take(self, size: int, sender: Address) -> None:
        """Handle the datagram of ``size`` bytes from ``sender`` in the endpoint's buffer."""
        endpoint = self.endpoint
        try:
            kind, session = P.read_header(endpoint.buffer, size)
            if session != self._session:
                self.stale_session += 1  # in flight from an earlier connection
                return
            self._handle(kind, size)
        except P.Malformed as exc:
            self.malformed_total += 1
            endpoint.count_malformed(exc.reason, sender, str(exc))
            if exc.reason == "version" and self.status == S.connecting:
                self.error_text = f"the server at {self.server} answers in {exc.detail}"
        except Exception as exc:  # a bug must not let one datagram end the run
            log.debug("contract client: datagram from %s:%d", *sender, exc_info=True)
            self.malformed_total += 1
            endpoint.count_malformed("unhandled", sender, f"{type(exc).__name__}: {exc}")

    def _handle(self, kind: int, size: int) -> None:
        self.heard = time.perf_counter()
        if kind == _DATA:  # the hot path
            if self.status == S.connected:
                self._update(*self._data.read(size))
            return
        buffer, status = self.endpoint.buffer, self.status
        if kind == P.Kind.WELCOME:
            if status == S.connecting:
                self._welcome(P.decode(buffer, size, P.Welcome))
        elif kind == P.Kind.PONG:
            self._pong(P.read_pong(buffer, size))
        elif kind == P.Kind.BYE:
            self.endpoint.send(P.header(P.Kind.BYE_ACK, self._session))
            if status in (S.connected, S.connecting) and self.end_with_server:
                log.info("contract client: the server at %s said goodbye; ending", self.server)
                self.invalidate()
                self.server_ended = True
                self.set_status(S.unconnected)
            elif status in (S.connected, S.connecting):
                self._lose("the server said goodbye")
        elif kind == P.Kind.BYE_ACK:
            if status == S.disconnecting:
                self.set_status(S.unconnected)
        elif kind == P.Kind.ERROR:
            error = P.decode(buffer, size, P.ErrorBody)
            code = self._count_error(error.code)
            if code == "unknown_session":
                if status == S.connected:
                    self._lose("the server does not know this session (it restarted?)")
            elif code == "evicted":  # a full server gave our place to a newcomer: ask again
                if status == S.connected:
                    self._lose("the server was full and gave this idle session's place away")
            elif code == "busy":  # full for now: keep asking (HELLO every retry period)
                message = _short(error.message or "no reason given", MESSAGE_CHARS)
                text = f"the server is busy: {message}"
                if status == S.connecting and self.error_text != text:
                    log.warning("contract client: %s; asking again", text)
                    self.error_text = text
            elif status in (S.connected, S.connecting):  # bad_hello, or a code not known
                self._refused(code, error.message)
        else:
            raise P.Malformed("unexpected_kind", f"{P.Kind(kind).name} sent to the client")

    def _welcome(self, welcome: P.Welcome) -> None:
        """Connected: note each refused field (it reads invalidValue); start the schedules."""
        answers = {a.id: a.fields for a in welcome.contracts}
        refused: list[Refusal] = []
        for c in self.layout.contracts:
            fields = c.wire_fields
            got = answers.get(c.id, []) if c.id is not None else []
            accepted = [i < len(got) and got[i].accepted for i in range(len(fields))]
            ports = self.layout.outputs if c.direction == "to_client" else self.layout.inputs
            for i, f in enumerate(fields):
                if not accepted[i]:
                    reason = (
                        (got[i].reason or "no reason given (left out of a long answer)")
                        if i < len(got)
                        else "no answer"
                    )
                    refused.append(
                        Refusal(
                            ports[f.port].name,
                            f.object,
                            f.config.propertyName,
                            f.config.params,
                            reason,
                        )
                    )
            if c.direction == "to_client":
                inc = self._by_id[c.id]
                per_value = np.repeat(accepted, [f.width for f in fields]).astype(bool)
                inc.serve(per_value)
                self.out[inc.all_dest[~per_value]] = inc.invalid[~per_value]
                inc.serial, inc.remote_time, inc.rx_local = 0, None, self.time
        known = {str(r) for r in self.refused}
        for r in refused:
            if str(r) not in known:
                log.warning("contract client: refused by the server: %s", r)
        self.refused = refused
        for out in self.outgoing:
            out.next_k = next_tick(self.time, out.period, after=False)
            out.message.serial = 0  # serial numbers count from 1 in every connection
        self._next_ping = time.perf_counter()
        self.error_text = ""  # (a busy server or another version, while connecting)
        self.refusals = 0
        self.set_status(S.connected)

    def _update(self, contract: int, serial: int, sent_at: float, values: np.ndarray) -> None:
        inc = self._by_id.get(contract)
        if inc is None:
            raise P.Malformed("unknown_contract", f"contract {contract}")
        if len(values) != inc.width:
            raise P.Malformed(
                "bad_width", f"contract {contract}: {len(values)} values, expected {inc.width}"
            )
        if serial <= inc.serial:
            inc.stale += 1
            return
        if inc.serial and serial > inc.serial + 1:
            inc.gaps += serial - inc.serial - 1
        inc.serial, inc.remote_time, inc.rx_local = serial, sent_at, self.time
        inc.received += 1
        out = self.out
        if inc.run is not None:
            out[inc.run] = values
        elif len(inc.dest):
            out[inc.dest] = values[inc.src]
        for meta, pos, _ in inc.meta:
            out[pos] = (
                sent_at
                if meta == "time"
                else self.time - sent_at
                if meta == "receive_time_offset"
                else float(serial)
            )

    def _pong(self, result: tuple[int, float, float, float, float, float]) -> None:
        sequence, mono, wall, sim_sent, server_wall, server_sim = result
        if sequence != self._ping_seq or self._ping_answered:  # late, repeated or forged
            raise P.Malformed("unexpected_pong", f"PONG {sequence}; ping {self._ping_seq}")
        self._ping_answered = True
        round_trip = time.perf_counter() - mono
        self.round_trips.append(round_trip)
        values = (round_trip, server_wall - (wall + round_trip / 2), server_sim - sim_sent)
        for pos, width, invalid in self.ping_fields:
            for k in range(width):
                self.out[pos + k] = values[k] if k < len(values) else invalid

    # -- sending and time -------------------------------------------------------------------
    def send_due(self, t: float) -> None:
        """Send each input contract whose grid time has come, stamped with the step's time."""
        for out in self.outgoing:
            if t + EPS >= out.next_k * out.period:
                out.message.values[:] = out.source
                self.sent_time = t
                self.endpoint.send(out.message.pack(self._session, t))
                out.next_k = next_tick(t, out.period)
                out.sent += 1

    def holds(self, t: float) -> bool:
        """True while an incoming contract forbids a step to local time ``t``.

        Time sync forbids passing the server's latest data, overdue data forbids going on
        without it; a time-synced client also waits while it connects: its time master is not
        there yet (or has gone), and its clock must not run off without it.
        """
        if self.status != S.connected:
            return self.synced_in and self.status == S.connecting
        for c in self.incoming:
            if c.time_sync and (c.remote_time is None or c.remote_time < t - EPS):
                return True
            if c.overdue is not None and t > c.expected() + c.overdue + EPS:
                return True
        return False

    def invalidate(self) -> None:
        """No valid data: every output field (data and meta) reads its invalidValue."""
        out = self.out
        for c in self.incoming:
            out[c.all_dest] = c.invalid
            for _, pos, invalid in c.meta:
                out[pos] = invalid
        for pos, width, invalid in self.ping_fields:
            out[pos : pos + width] = invalid

    def close(self) -> None:
        """Say goodbye if connected, then close the socket (safe twice)."""
        if self.endpoint.closed:
            return
        if self.status == S.connected:
            self.endpoint.send(P.header(P.Kind.BYE, self._session))
        self.endpoint.close()
        self.invalidate()
        self.set_status(S.unconnected)

    def _hello_body(self) -> P.Hello:
        contracts = [
            P.ContractRequest(
                id=int(c.id or 0),
                direction=c.direction,
                period=c.group.period,
                time_sync=c.group.time_sync,
                overdue_timeout=c.group.overdue_timeout,
                fields=[
                    P.FieldRequest(
                        object=f.object,
                        property=f.config.propertyName,
                        params=f.config.params,
                        size=f.width,
                    )
                    for f in c.wire_fields
                ],
            )
            for c in self.layout.contracts
        ]
        body = P.Hello(client="vcosim", contracts=contracts)
        P.encode(P.Kind.HELLO, 0, body)  # too large for a datagram: say so before connecting
        return body


def _short(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters (what a server says is shown, not all of it)."""
    return text if len(text) <= limit else text[: limit - 3] + "..."
