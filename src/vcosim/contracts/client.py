"""The contract client: the Python counterpart of CarSim's VS Connect S-function.

``ContractClient("cruise.json", step_fn, step=0.001).run(30.0)`` connects to the server the
file names, proposes the file's contracts and steps a local clock: each step it hands
``step_fn`` the output ports (received data, by name) and sends the input ports it returns.

Behaviour (docs/contracts.md): connection directive and status 0-5; reconnection while the
directive is non-zero; per-contract update periods in local simulation time; time sync both
ways (an incoming time-synced contract holds the local clock at the server's latest data; an
outgoing one makes the server hold at the client's); overdue-data blocking; meta fields;
initial and invalid values; time dilation.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path
from typing import Any

import numpy as np

from vcosim.contracts import protocol as P
from vcosim.contracts.config import (
    PING_META,
    BlockLayout,
    ContractConfig,
    ContractLayout,
    PortLayout,
    load_config,
    next_tick,
    parse_config,
)
from vcosim.contracts.transport import Endpoint
from vcosim.errors import ConfigError, UnknownNameError

log = logging.getLogger("vcosim.contracts")
EPS = 1e-9
STATUS_PORT = "connection_status"
DIRECTIVE_PORT = "connection_directive"
DEFAULT_PING_PERIOD = 0.25  # s: keep-alive when no commData group asks for more
WAIT_POLL = 0.05  # s: a waiting client re-checks link and stop at least this often
MAX_LAG = 0.1  # s behind the dilated wall clock: stop owing time (slow motion, no burst)


class ConnectionStatus(IntEnum):
    """The block's first output, as the seed numbers it."""

    unknown = 0
    unconnected = 1  # not trying to connect
    connecting = 2  # attempting to connect, or negotiating
    connected = 3
    error = 4  # not connected, not trying (until the directive goes to 0 and back)
    disconnecting = 5


class Ports(Mapping[str, Any]):
    """Ports by name (or position; 0 is ``connection_status``) over the block's flat array.

    A width-1 port reads as a float, a wider one as a numpy array (a copy). The view reads
    the block's current values, so keep ``as_dict()`` rather than the view itself.

    Attributes:
        time: The block's local simulation time (s) of this step.
        dt: The block's step (s).
    """

    __slots__ = ("_names", "_index", "_spans", "_flat", "time", "dt")

    def __init__(self, spans: Sequence[tuple[str, int, int]], flat: np.ndarray, dt: float) -> None:
        self._names = [name for name, _, _ in spans]
        self._index = {name: i for i, name in enumerate(self._names)}
        self._spans = [(start, width) for _, start, width in spans]
        self._flat = flat
        self.time = 0.0
        self.dt = dt

    def __getitem__(self, key: str | int) -> Any:
        index = key if isinstance(key, int) else self._index.get(key)
        if index is None:
            raise UnknownNameError("port", str(key), self._names)
        start, width = self._spans[index]
        if width == 1:
            return float(self._flat[start])
        return self._flat[start : start + width].copy()

    def __getattr__(self, name: str) -> Any:
        index = self._index.get(name)
        if index is None:
            raise AttributeError(name)
        return self[index]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    @property
    def status(self) -> ConnectionStatus:
        """The connection status (port 0)."""
        return ConnectionStatus(int(self._flat[0]))

    def as_dict(self) -> dict[str, Any]:
        """A snapshot of every port."""
        return {name: self[i] for i, name in enumerate(self._names)}


StepFunction = Callable[[Ports], Mapping[str, Any] | None]


@dataclass
class Refusal:
    """A field the server refused: it reads invalidValue (an output) or is ignored (an input)."""

    port: str
    object: str | None
    property: str
    params: str | None
    reason: str

    def __str__(self) -> str:
        params = f"({self.params})" if self.params is not None else ""
        return f"{self.object}.{self.property}{params} (port {self.port}): {self.reason}"


class _Incoming:
    """State of a contract the client receives (an output group)."""

    def __init__(self, layout: ContractLayout, flat_offset: int) -> None:
        group = layout.group
        self.layout = layout
        self.id = layout.id
        self.period = group.period
        self.time_sync = group.time_sync
        self.overdue = group.overdue_timeout
        self.width = layout.wire_width
        wire = layout.wire_fields
        self.all_dest = np.array(
            [f.flat + flat_offset + k for f in wire for k in range(f.width)], dtype=np.int64
        )
        self.invalid = np.array([f.config.invalidValue for f in wire for _ in range(f.width)])
        self.meta = [
            (f.meta, f.flat + flat_offset, f.config.invalidValue)
            for f in layout.fields
            if f.meta is not None
        ]
        self.dest = self.all_dest
        self.src = np.arange(self.width, dtype=np.int64)
        self.serial = 0
        self.remote_time: float | None = None
        self.rx_local = 0.0
        self.received = 0
        self.gaps = 0
        self.stale = 0

    def expected(self) -> float:
        """Local time by which the next update is expected."""
        return self.rx_local + self.period


class _Outgoing:
    """State of a contract the client sends (an input group)."""

    def __init__(self, layout: ContractLayout, flat_offset: int) -> None:
        self.id = layout.id
        self.period = layout.group.period
        fields = layout.fields
        self.start = fields[0].flat + flat_offset
        self.stop = fields[-1].flat + fields[-1].width + flat_offset
        self.message = P.DataMessage(int(layout.id or 0), self.stop - self.start)
        self.next_k = 0
        self.sent = 0


def as_config(source: ContractConfig | str | Path | Mapping[str, Any]) -> ContractConfig:
    """A validated configuration from a file path, a decoded document or a model."""
    if isinstance(source, ContractConfig):
        return parse_config(source.model_dump(exclude_unset=True), "contract configuration")
    if isinstance(source, Mapping):
        return parse_config(dict(source))
    return load_config(source)


class ContractClient:
    """A step-based contract client block; ``run`` steps it, ``stop`` ends it.

    Args:
        config: The VS Connect JSON file (path), its decoded document, or a ContractConfig.
        step_fn: Called each step with the output ``Ports``; returns a mapping of input port
            names to values (a width-N port takes N values), optionally with
            ``"connection_directive"``. Inputs not returned keep their value (initially the
            field's initialValue). None: a monitor that sends its initial values.
        step: The block's fixed step (s) of local simulation time.
        directive: The initial connection directive (1 connects; 0 stays unconnected).
        link_timeout: Seconds without any message from the server before the link counts as
            lost (the block then reconnects).
        retry_period: Seconds between HELLOs while connecting.
        local_host, local_port: Where to bind (default: loopback for a loopback server, any
            interface otherwise; an ephemeral port).
    """

    def __init__(
        self,
        config: ContractConfig | str | Path | Mapping[str, Any],
        step_fn: StepFunction | None = None,
        *,
        step: float = 0.001,
        directive: float = 1.0,
        link_timeout: float = 2.0,
        retry_period: float = 0.2,
        bye_timeout: float = 0.5,
        local_host: str | None = None,
        local_port: int = 0,
    ) -> None:
        if step <= 0:
            raise ConfigError([f"step: must be positive, not {step:g}"], "contract client")
        self.config = as_config(config)
        self.layout = BlockLayout.of(self.config)
        self.step_fn = step_fn
        self.step = step
        self.directive = float(directive)
        self.link_timeout = link_timeout
        self.retry_period = retry_period
        self.bye_timeout = bye_timeout
        cfg, layout = self.config, self.layout
        self.server = (cfg.remoteIP, cfg.remotePort)
        loopback = cfg.remoteIP in ("127.0.0.1", "localhost") or cfg.remoteIP.startswith("127.")
        bind_host = local_host or ("127.0.0.1" if loopback else "0.0.0.0")
        try:
            self.endpoint = Endpoint(
                (bind_host, local_port), peer=self.server, name="contract client"
            )
        except OSError as exc:
            raise ConfigError(
                [
                    f"$.remoteIP/remotePort: cannot reach {cfg.remoteIP}:"
                    f"{cfg.remotePort}: {exc.strerror or exc}"
                ],
                "contract configuration",
            ) from None
        # flat arrays: slot 0 is the status (outputs) / the directive (inputs)
        self._out = np.zeros(1 + layout.n_outputs)
        self._in = np.zeros(1 + layout.n_inputs)
        self.outputs = Ports(
            [(STATUS_PORT, 0, 1)] + [(p.name, 1 + p.start, p.width) for p in layout.outputs],
            self._out,
            step,
        )
        self._in_ports: dict[str, PortLayout] = {p.name: p for p in layout.inputs}
        self._incoming = [_Incoming(c, 1) for c in layout.contracts if c.direction == "to_client"]
        self._by_id = {c.id: c for c in self._incoming}
        self._outgoing = [
            _Outgoing(c, 1) for c in layout.contracts if c.direction == "to_server" and c.fields
        ]
        self._ping_fields = [
            (f.flat + 1, f.width, f.config.invalidValue)
            for c in layout.comm
            for f in c.fields
            if f.meta in PING_META
        ]
        comm_periods = [c.group.period for c in layout.comm]
        self.ping_period = min([DEFAULT_PING_PERIOD, *comm_periods])
        self._synced_in = any(c.time_sync for c in self._incoming)
        self._reset_values()
        self._hello = self._hello_body()
        self.status = ConnectionStatus.unknown
        self.status_history: list[tuple[float, ConnectionStatus]] = []
        self.on_status: Callable[[ConnectionStatus], None] | None = None
        self.refused: list[Refusal] = []
        self.time = 0.0
        self.sent_time = -np.inf  # the time stamped on the latest data sent
        self.blocking = False
        self.blocks = 0
        self.blocked_time = 0.0
        self.reconnects = 0
        self.round_trips: list[float] = []
        self.malformed_total = 0
        self.stale_session = 0
        self._k = 0
        self._session = 0
        self._heard = 0.0
        self._next_hello = 0.0
        self._next_ping = 0.0
        self._ping_seq = 0
        self._bye_deadline = 0.0
        self._error_text = ""
        self._stopping = False
        self._closed = False
        self._anchor = (0.0, 0.0)

    # -- public -----------------------------------------------------------------------------
    @property
    def address(self) -> tuple[str, int]:
        """Where the client's socket is bound."""
        return self.endpoint.address

    @property
    def received(self) -> int:
        """Data updates taken from the server, over every incoming contract."""
        return sum(c.received for c in self._incoming)

    def stop(self) -> None:
        """End ``run`` after the current step (from the step function or another thread)."""
        self._stopping = True

    def run(self, duration: float | None = None) -> dict[str, Any]:
        """Step for ``duration`` seconds of local time (None: until ``stop`` or Ctrl-C).

        Says goodbye to the server and closes the socket at the end; returns the report.
        """
        limit = None if duration is None else self._k + round(duration / self.step)
        self._stopping = False
        self._anchor = (time.perf_counter(), self._k * self.step)
        try:
            while not self._stopping and (limit is None or self._k < limit):
                self.step_once()
        except KeyboardInterrupt:
            pass
        finally:
            self.close()
        return self.report()

    def step_once(self) -> None:
        """One step: serve the link, wait if a contract says so, call step_fn, send, pace."""
        t = self._k * self.step
        self.time = t
        self._service()
        if self._must_wait():
            self._wait()
        self.outputs.time = t
        self._out[0] = float(self.status)
        if self.step_fn is not None:
            self._take(self.step_fn(self.outputs))
        if self.status == ConnectionStatus.connected:
            self._send_due(t)
        self._k += 1
        self._pace()

    # -- inputs and outputs -----------------------------------------------------------------
    def _reset_values(self) -> None:
        """Every output and input at its field's initialValue."""
        for c in (*self.layout.contracts, *self.layout.comm):
            target = self._out if c.direction == "to_client" else self._in
            for f in c.fields:
                target[1 + f.flat : 1 + f.flat + f.width] = f.config.initialValue
        self._in[0] = self.directive

    def _invalidate(self) -> None:
        """No valid data: every output field (data and meta) reads its invalidValue."""
        for c in self._incoming:
            self._out[c.all_dest] = c.invalid
            for _, pos, invalid in c.meta:
                self._out[pos] = invalid
        for pos, width, invalid in self._ping_fields:
            self._out[pos : pos + width] = invalid

    def _take(self, result: Mapping[str, Any] | None) -> None:
        """Hold the input values a step function returned."""
        if result is None:
            return
        if not isinstance(result, Mapping):
            raise ConfigError(
                [
                    f"the step function returned {type(result).__name__}; return a "
                    f"mapping of input port names to values"
                ],
                "contract client",
            )
        for name, value in result.items():
            if name == DIRECTIVE_PORT:
                self.directive = float(value)
                self._in[0] = self.directive
                continue
            port = self._in_ports.get(name)
            if port is None:
                raise UnknownNameError("input port", name, [DIRECTIVE_PORT, *self._in_ports])
            values = np.asarray(value, dtype=float).reshape(-1)
            if values.size != port.width:
                raise ConfigError(
                    [f"input port {name!r} takes {port.width} value(s), got {values.size}"],
                    "contract client",
                )
            self._in[1 + port.start : 1 + port.start + port.width] = values

    def _send_due(self, t: float) -> None:
        for out in self._outgoing:
            if t + EPS >= out.next_k * out.period:
                out.message.values[:] = self._in[out.start : out.stop]
                self.sent_time = t
                self.endpoint.send(out.message.pack(self._session, t))
                out.next_k = next_tick(t, out.period)
                out.sent += 1

    # -- the link ---------------------------------------------------------------------------
    def _set_status(self, status: ConnectionStatus) -> None:
        if status != self.status:
            self.status = status
            self._out[0] = float(status)
            self.status_history.append((self.time, status))
            if self.on_status is not None:
                self.on_status(status)

    def _service(self) -> None:
        """Take every waiting datagram, then act on the directive, timers and pings."""
        self._drain()
        now = time.perf_counter()
        status, directive = self.status, self.directive
        if directive == 0:
            if status == ConnectionStatus.connected:
                self.endpoint.send(P.header(P.Kind.BYE, self._session))
                self._invalidate()
                self._bye_deadline = now + self.bye_timeout
                self._set_status(ConnectionStatus.disconnecting)
            elif status == ConnectionStatus.disconnecting:
                if now >= self._bye_deadline:
                    self._set_status(ConnectionStatus.unconnected)
            elif status != ConnectionStatus.unconnected:
                if status == ConnectionStatus.connecting:  # a HELLO may have opened a session
                    self.endpoint.send(P.header(P.Kind.BYE, self._session))
                self._set_status(ConnectionStatus.unconnected)
            return
        if status in (ConnectionStatus.unknown, ConnectionStatus.unconnected):
            self._connect(now)
        elif status == ConnectionStatus.disconnecting:
            if now >= self._bye_deadline:
                self._set_status(ConnectionStatus.unconnected)
        elif status == ConnectionStatus.connecting:
            if now >= self._next_hello:
                self._send_hello(now)
        elif status == ConnectionStatus.connected:
            if now - self._heard > self.link_timeout:
                self._lose(f"no message from the server for {self.link_timeout:g} s")
            elif now >= self._next_ping:
                self._ping_seq += 1
                self.endpoint.send(
                    P.ping(self._session, self._ping_seq, now, time.time(), self.time)
                )
                self._next_ping = now + self.ping_period

    def _connect(self, now: float) -> None:
        self._session = P.new_session_id()
        self._set_status(ConnectionStatus.connecting)
        self._send_hello(now)

    def _send_hello(self, now: float) -> None:
        body = self._hello.model_copy(update={"time": self.time})
        self.endpoint.send(P.encode(P.Kind.HELLO, self._session, body))
        self._next_hello = now + self.retry_period

    def _lose(self, why: str) -> None:
        """The link is gone: invalid outputs, and connect again (the directive is non-zero)."""
        log.warning("contract client: link to %s:%d lost (%s); reconnecting", *self.server, why)
        self._invalidate()
        self.reconnects += 1
        self._connect(time.perf_counter())

    def _drain(self) -> None:
        endpoint, buffer = self.endpoint, self.endpoint.buffer
        while True:
            got = endpoint.receive()
            if got is None:
                return
            size, sender = got
            try:
                kind, session = P.read_header(buffer, size)
                if session != self._session:
                    self.stale_session += 1  # in flight from an earlier connection
                    continue
                self._handle(kind, size)
            except P.Malformed as exc:
                self.malformed_total += 1
                endpoint.count_malformed(exc.reason, sender, str(exc))
                if exc.reason == "version":
                    self._fail(str(exc))

    def _handle(self, kind: int, size: int) -> None:
        buffer, status = self.endpoint.buffer, self.status
        self._heard = time.perf_counter()
        if kind == P.Kind.DATA:
            if status == ConnectionStatus.connected:
                self._update(*P.read_data(buffer, size))
        elif kind == P.Kind.WELCOME:
            if status == ConnectionStatus.connecting:
                self._welcome(P.decode(buffer, size, P.Welcome))
        elif kind == P.Kind.PONG:
            self._pong(P.read_pong(buffer, size))
        elif kind == P.Kind.BYE:
            self.endpoint.send(P.header(P.Kind.BYE_ACK, self._session))
            if status in (ConnectionStatus.connected, ConnectionStatus.connecting):
                self._lose("the server said goodbye")
        elif kind == P.Kind.BYE_ACK:
            if status == ConnectionStatus.disconnecting:
                self._set_status(ConnectionStatus.unconnected)
        elif kind == P.Kind.ERROR:
            error = P.decode(buffer, size, P.ErrorBody)
            if error.code == "unknown_session":
                if status == ConnectionStatus.connected:
                    self._lose("the server does not know this session (it restarted?)")
            elif status in (ConnectionStatus.connected, ConnectionStatus.connecting):
                self._fail(f"{error.code}: {error.message}")
        else:
            raise P.Malformed("unexpected_kind", f"{P.Kind(kind).name} sent to the client")

    def _fail(self, why: str) -> None:
        """Status 4: not connected, not trying again until the directive goes to 0."""
        if self.status != ConnectionStatus.error:
            log.error(
                "contract client: %s; not trying again (set the directive to 0 and back)", why
            )
            self._error_text = why
            self._invalidate()
            self._set_status(ConnectionStatus.error)

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
                    reason = (got[i].reason if i < len(got) else None) or "no answer"
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
                inc.src = np.array(
                    [
                        k
                        for i, f in enumerate(fields)
                        if accepted[i]
                        for k in range(f.wire or 0, (f.wire or 0) + f.width)
                    ],
                    dtype=np.int64,
                )
                inc.dest = inc.all_dest[inc.src]
                unserved = ~np.isin(np.arange(inc.width), inc.src)
                self._out[inc.all_dest[unserved]] = inc.invalid[unserved]
                inc.serial, inc.remote_time, inc.rx_local = 0, None, self.time
        known = {str(r) for r in self.refused}
        for r in refused:
            if str(r) not in known:
                log.warning("contract client: refused by the server: %s", r)
        self.refused = refused
        for out in self._outgoing:
            out.next_k = next_tick(self.time, out.period, after=False)
            out.message.serial = 0  # serial numbers count from 1 in every connection
        self._next_ping = time.perf_counter()
        self._set_status(ConnectionStatus.connected)

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
        out = self._out
        if len(inc.dest):
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
        _, mono, wall, sim_sent, server_wall, server_sim = result
        round_trip = time.perf_counter() - mono
        self.round_trips.append(round_trip)
        values = (round_trip, server_wall - (wall + round_trip / 2), server_sim - sim_sent)
        for pos, width, invalid in self._ping_fields:
            for k in range(width):
                self._out[pos + k] = values[k] if k < len(values) else invalid

    def _hello_body(self) -> P.Hello:
        contracts = []
        for c in self.layout.contracts:
            group = c.group
            contracts.append(
                P.ContractRequest(
                    id=int(c.id or 0),
                    direction=c.direction,
                    period=group.period,
                    time_sync=group.time_sync,
                    overdue_timeout=group.overdue_timeout,
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
            )
        body = P.Hello(client="vcosim", contracts=contracts)
        P.encode(P.Kind.HELLO, 0, body)  # too large for a datagram: say so before connecting
        return body

    # -- time -------------------------------------------------------------------------------
    def _must_wait(self) -> bool:
        """True while an incoming contract forbids this step (time sync or overdue data).

        A time-synced client also waits while it connects: its time master is not there yet
        (or has gone), and its clock must not run off without it.
        """
        if self.status != ConnectionStatus.connected:
            return self._synced_in and self.status == ConnectionStatus.connecting
        t = self.time
        for c in self._incoming:
            if c.time_sync and (c.remote_time is None or c.remote_time < t - EPS):
                return True
            if c.overdue is not None and t > c.expected() + c.overdue + EPS:
                return True
        return False

    def _wait(self) -> None:
        """Block (serving the link) until the contracts allow the step, or the link is lost."""
        start = time.perf_counter()
        self.blocks += 1
        self.blocking = True
        try:
            while not self._stopping and self._must_wait():
                if self.endpoint.wait(WAIT_POLL):
                    self._drain()
                self._service()
        finally:
            self.blocking = False
            self.blocked_time += time.perf_counter() - start
            self._anchor = (time.perf_counter(), self.time)

    def _pace(self) -> None:
        """Hold the local clock to the (dilated) wall clock unless a time master paces it."""
        t = self._k * self.step
        now = time.perf_counter()
        dilation = self.config.timeDilation
        synced = self._synced_in and self.status == ConnectionStatus.connected
        if dilation <= 0 or synced:
            self._anchor = (now, t)
            if not self._closed and self.endpoint.wait(0.0):
                self._drain()
            return
        wall0, t0 = self._anchor
        deadline = wall0 + (t - t0) / dilation
        if now - deadline > MAX_LAG:  # far behind: slow motion instead of a burst
            self._anchor = (now, t)
            return
        while now < deadline and not self._stopping:
            if self.endpoint.wait(deadline - now):
                self._drain()
            now = time.perf_counter()

    # -- reporting and closing --------------------------------------------------------------
    def report(self) -> dict[str, Any]:
        """Status, counters and timing, JSON-friendly."""
        trips = np.asarray(self.round_trips) * 1e3
        return {
            "status": int(self.status),
            "status_name": self.status.name,
            "time": self.time,
            "steps": self._k,
            "reconnects": self.reconnects,
            "sent": {c.id: c.sent for c in self._outgoing},
            "received": {c.id: c.received for c in self._incoming},
            "gaps": sum(c.gaps for c in self._incoming),
            "stale": sum(c.stale for c in self._incoming),
            "stale_session": self.stale_session,
            "malformed": dict(self.endpoint.malformed),
            "refused": [str(r) for r in self.refused],
            "blocks": self.blocks,
            "blocked_time": self.blocked_time,
            "round_trip_ms": {
                "min": float(trips.min()) if trips.size else None,
                "median": float(np.median(trips)) if trips.size else None,
            },
            "error": self._error_text or None,
        }

    def close(self) -> None:
        """Say goodbye if connected, then close the socket (safe twice)."""
        if self._closed:
            return
        if self.status == ConnectionStatus.connected:
            self.endpoint.send(P.header(P.Kind.BYE, self._session))
        self._closed = True
        self.endpoint.close()
        self._invalidate()
        self._set_status(ConnectionStatus.unconnected)

    def __enter__(self) -> ContractClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
