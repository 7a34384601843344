"""The bus router (the seed's KM server): handshakes, routing by module id, monitor copies.

(Past 400 lines on purpose: the router is one thread whose handshakes, routing, pings and
eviction share one table of modules under one lock; split, each part would reach into the
others' state.)

Sockets. The router listens for handshakes on one UDP socket (``vcosim bus --listen``). For
each module it accepts it opens a socket of its own, bound to the *same* address (shared with
SO_REUSEPORT) and connected to that module's address, and answers the handshake from it. The
kernel hands a connected socket exactly its module's datagrams and everything else to the
handshake socket; so the router knows a message's *sender* by the socket it arrives on, no
other address can speak in a module's name, and a module hears the router only from the one
address it sent its handshake to (a forger on another port is not believed).

Who may join. Handshakes are taken only from allowed peers (``allow``: hosts, or exact
host:port pairs; by default loopback and the router's own listening address); datagrams from
anyone else are dropped, counted (``not_allowed``) and reported once per host, never answered.

Pings. A module repeats its handshake on its own socket when it has heard nothing for a
while, and when it has sent nothing else for a while (a keep-alive); the router answers it
again. That is the whole liveness protocol, and it is the seed's own handshake frame.

Membership (``vcosim.bus.membership``). A confirmed module silent for ``timeout`` seconds is
dropped and its id freed; a module not heard from since its handshake (the seed's protocol:
handshake, then only listen) keeps its id as long as its socket exists, which a probe on its
connected socket tells (a refusal: the socket has gone; see ``_there``). Silence is measured
without touching the routing path: a sweep, ``SWEEPS`` times per timeout (from a metronome
thread, through the wake-up socket), compares each module's ``received`` counter with the one
it saw last, and probes the unconfirmed. With ``state``, the table is kept in a file and taken
back when a router starts on the same address again.

Routing. A valid message goes to the module whose id is its destination, unchanged. Monitors
(handshake ``ID <n>,MONITOR,END``, e.g. the logger) first get a ``COPY <sender>,<message>`` of
every valid message, including ones to unknown ids, so a recording misses nothing. A Shutdown
addressed to the router's id is passed to every module (each gets ``Shutdown`` to its own id)
and then ends the router. Messages to unknown ids and malformed messages are counted and
reported once per kind and sender (with its address and id), never crash the router and are
never passed on. A module leaves with ``BYE <n>,END``; one whose port has closed (an ICMP "port
unreachable" on loopback or a LAN) is dropped too, so its id can be taken again.

Speed. Most messages are spelt the way ``encode`` writes them, with values in range at a
glance; for those (``codec.plain_pattern``) one regex match stands in for the decoder. Such a
message to a joined module is read into one shared buffer and sent on from it, the same
bytes, without a message object or a copy. Everything else (control frames, other spellings,
unknown ids, failed sends) takes the careful path through the decoder, so what is passed on,
counted and reported is the same either way; only the cost differs.

One module of some 720 lines on purpose: handshakes, membership, routing and the module
table share one selector loop and its state. The handshake socket is a ``vcosim.net`` link; each
module's is a :class:`~vcosim.bus.sockets.ModuleSocket`.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import select
import selectors
import socket
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from vcosim.bus import codec as frames
from vcosim.bus.catalogue import Message, ModuleId, Shutdown
from vcosim.bus.client import DEFAULT_PORT, RECEIVE_BUFFER
from vcosim.bus.codec import Codec, Malformed
from vcosim.bus.membership import (
    MAX_UNCONFIRMED,
    MODULE_TIMEOUT,
    PROBE_EVERY,
    PROBE_WAIT,
    Member,
    StateFile,
)
from vcosim.bus.sockets import MAX_DATAGRAM, ModuleSocket, allowlist
from vcosim.errors import ConfigError
from vcosim.net import Allowlist, DatagramLink, Reports, Tally

log = logging.getLogger("vcosim.bus")


def _where(address: tuple[str, int]) -> str:
    return f"{address[0]}:{address[1]}"


_DEFAULT_IDS = frozenset(int(m) for m in ModuleId)  # vehicle, input, sound, ...: expected

MAX_LISTED_SENDERS = 64
"""Senders of malformed datagrams counted by name; the rest as "others" (a flood of ports)."""
BURST = 64
"""Datagrams a module's socket may hand the router in a row before the others get a turn."""

SWEEPS = 4
"""Silence sweeps per ``timeout``: a silent module is dropped within 1.25 timeouts."""


@dataclass(eq=False)
class Module:
    """A module the router has accepted: its id, address and own socket, and its traffic."""

    id: int
    address: tuple[str, int]
    link: ModuleSocket
    monitor: bool = False
    received: int = 0  # datagrams from the module (messages, pings, ...)
    sent: int = 0  # messages and copies to the module
    joined: float = 0.0  # when the router accepted it (monotonic s)
    heard: float = 0.0  # the sweep that last saw ``received`` grow (or ``joined``)
    seen: int = 0  # ``received`` at that sweep
    restored: bool = False  # taken back from the state file after a restart
    leaving: bool = False  # its port has closed: what it left queued is being routed
    probed: float = -math.inf  # when a probe last waited for its refusal (monotonic s)

    @property
    def label(self) -> str:
        """How reports name the module: id and address."""
        return f"module {self.id} at {_where(self.address)}"

    @property
    def confirmed(self) -> bool:
        """Heard from since its handshake (a ghost never is), or a member before a restart."""
        return self.received > 0 or self.restored

    def silent_for(self, now: float) -> float:
        """Seconds without a datagram from it, as far as the sweeps know (never too many)."""
        return 0.0 if self.received != self.seen else now - self.heard


@dataclass
class RouterStats:
    """Counters of a router's life; ``problems`` has the first report of each kind and sender."""

    routed: int = 0
    copies: int = 0
    shutdowns: int = 0
    refused: int = 0
    pings: int = 0
    malformed: int = 0
    unknown_destination: int = 0
    gone: int = 0
    expired: int = 0  # silent for the timeout
    unheard: int = 0  # gave way, unheard since their handshake
    restored: int = 0  # taken back from the state file
    not_joined: int = 0  # messages at the handshake port from addresses not on the bus
    send_failures: int = 0
    expired_modules: deque[str] = field(default_factory=lambda: deque(maxlen=100))
    malformed_by_sender: Counter[str] = field(default_factory=Counter)
    malformed_by_reason: Counter[str] = field(default_factory=Counter)
    unknown_by_id: Counter[int] = field(default_factory=Counter)
    problems: deque[str] = field(default_factory=lambda: deque(maxlen=100))


class Router:
    """Routes bus messages between modules by id; run it with ``serve_forever`` or ``start``.

    Args:
        host, port: handshake address; loopback unless you open it on purpose (port 0: any).
        router_id: the router's own id (messages to it: Shutdown for everyone).
        max_modules: modules accepted at most (the seed had 10).
        codec: message symbols and maximum length; every module must use the same.
        stop_on_shutdown: end the router after passing a Shutdown to every module.
        allow: who may join (see :func:`allowlist`); default loopback and ``host`` itself.
        timeout: seconds of silence after which a module is dropped (``math.inf``: never).
        max_unconfirmed: modules per host kept while unheard since their handshake (the seed's
            protocol); past it, that host's handshakes are refused while all are there.
        state: a file to keep the table in, taken back by a router restarted with it.
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = DEFAULT_PORT,
        *,
        router_id: int = ModuleId.ROUTER,
        max_modules: int = 32,
        codec: Codec | None = None,
        stop_on_shutdown: bool = True,
        allow: Allowlist | None = None,
        timeout: float = MODULE_TIMEOUT,
        max_unconfirmed: int = MAX_UNCONFIRMED,
        state: Path | None = None,
    ) -> None:
        problems = []
        if not timeout > 0:
            problems.append(f"timeout must be positive (seconds), not {timeout}")
        if max_unconfirmed < 1:
            problems.append(f"max_unconfirmed must be 1 or more, not {max_unconfirmed}")
        if problems:
            raise ConfigError(problems, "bus router")
        self.router_id = int(router_id)
        self.max_modules = max_modules
        self.timeout = timeout
        self.max_unconfirmed = max_unconfirmed
        self.state = StateFile(state) if state is not None else None
        self.codec = codec if codec is not None else Codec()
        self.stop_on_shutdown = stop_on_shutdown
        self.modules: dict[int, Module] = {}
        self.stats = RouterStats()
        self._by_address: dict[tuple[str, int], Module] = {}
        self._monitors: list[Module] = []
        self._routes: dict[bytes, Module] = {}  # modules by their id as a message spells it
        self._plain = frames.plain_pattern(self.codec).fullmatch
        self._buffer = bytearray(MAX_DATAGRAM)  # every module's datagrams are read into it
        self._view = memoryview(self._buffer)
        self._reports = Reports(log, "bus")
        self._tally = Tally(log, "bus")  # joins and leaves: a flood of them is counted
        self._requests: deque[Callable[[], None]] = deque()
        self._changed = threading.Condition()
        self._stopping = False
        self._serving = False
        self._closed = False
        self._thread: threading.Thread | None = None
        self.stopped = threading.Event()
        self.allow = allow if allow is not None else allowlist((), host)
        try:
            self.listen = DatagramLink(
                (host, port),
                allow=self.allow,
                size=MAX_DATAGRAM,
                receive_buffer=RECEIVE_BUFFER,
                name="bus",
                log=log,
            )
        except OSError as exc:
            raise ConfigError(
                [f"cannot listen on {host}:{port}: {exc.strerror or exc}"], "bus router"
            ) from None
        # Bound without the option, so a second router cannot share the port; set after, so
        # the modules' sockets can (see ModuleSocket).
        self.listen.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        self._address = self.listen.address
        self._selector = selectors.DefaultSelector()
        self._wake_in, self._wake_out = socket.socketpair()
        self._wake_in.setblocking(False)
        self._selector.register(self.listen.sock, selectors.EVENT_READ, self._on_handshake)
        self._selector.register(self._wake_in, selectors.EVENT_READ, self._on_wake)
        if self.state is not None:
            self._restore(self.state.load())

    @property
    def address(self) -> tuple[str, int]:
        """The handshake (host, port); useful with port 0."""
        return self._address

    # -- running ----------------------------------------------------------------------------
    def serve_forever(self) -> None:
        """Route until ``stop()`` or a Shutdown to the router; then close every socket."""
        self._serving = True
        if math.isfinite(self.timeout):
            threading.Thread(target=self._metronome, name="bus-router-sweeps", daemon=True).start()
        try:
            while not self._stopping:
                ready = self._selector.select()
                with self._changed:  # (so wait_until never sees half a datagram's effects)
                    for key, _ in ready:
                        key.data()
                        if self._stopping:
                            break
                    self._changed.notify_all()
        finally:
            self._close_sockets()
            self.stopped.set()
            with self._changed:
                self._changed.notify_all()

    def start(self) -> Router:
        """Serve in a background thread; returns self."""
        self._thread = threading.Thread(target=self.serve_forever, name="bus-router", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """End serving (from any thread) and close the sockets; safe twice."""
        self._stopping = True
        self._wake()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
        if not self._serving:
            self._close_sockets()
            self.stopped.set()

    close = stop

    def shutdown_all(self) -> None:
        """Send Shutdown to every module (from any thread), as if a module had asked for it.

        Monitors get a copy from the router's own id first, so a recording shows the end.
        """
        self._requests.append(self._shutdown_from_router)
        self._wake()

    def _shutdown_from_router(self) -> None:
        self._copy(self.router_id, self.codec.encode(Shutdown(to=self.router_id)))
        self._broadcast_shutdown("the router's owner")

    def wait_until(self, predicate: Callable[[], bool], timeout: float) -> bool:
        """Block until ``predicate()`` holds (checked between batches of traffic) or timeout."""
        with self._changed:
            return (
                self._changed.wait_for(lambda: predicate() or self.stopped.is_set(), timeout)
                and predicate()
            )

    def __enter__(self) -> Router:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- handshakes -------------------------------------------------------------------------
    def _on_handshake(self) -> None:
        got = self.listen.receive_bytes()  # (refusals of answers to vanished peers: skipped)
        if got is None:
            return
        data, address = got
        hello = frames.parse_hello(data)
        if hello is None:
            self._not_a_handshake(data, address)
        else:
            self._handshake(*hello, address)

    def _handshake(self, module_id: int, monitor: bool, address: tuple[str, int]) -> None:
        """Accept, answer again, or refuse (with the reason) a handshake from ``address``."""
        now = time.monotonic()
        existing = self.modules.get(module_id)
        if existing is not None and existing.address == address:  # queued before its socket
            self._send(existing, frames.answer(self.router_id), control=True)
            return
        if existing is not None and module_id != self.router_id:
            if not existing.confirmed:  # what it sent may still be queued: read that first
                self._on_module(existing)
                existing = self.modules.get(module_id)
            if existing is not None and not existing.confirmed:  # kept while its socket is
                if not self._there(existing, f"its id was asked for from {_where(address)}"):
                    existing = None
            elif existing is not None and existing.silent_for(now) >= self.timeout:
                self._expire(existing, now)
                existing = None
        other = self._by_address.get(address)
        if module_id == self.router_id:
            reason = f"id {module_id} is the router's own"
        elif existing is not None:
            reason = f"id {module_id} is already taken by the module at {_where(existing.address)}"
        elif other is not None:
            reason = f"this address is already module {other.id} (one socket, one module)"
        elif (no_room := self._make_room(address[0], now)) is not None:
            reason = no_room
        else:
            self._accept(module_id, address, monitor, now)
            return
        self.stats.refused += 1
        self._report(
            "refused",
            (address, module_id),
            f"refused id {module_id} to {_where(address)}: {reason}",
        )
        self.listen.send(frames.refused(module_id, reason), address)

    def _not_a_handshake(self, data: bytes, address: tuple[str, int]) -> None:
        """A datagram at the handshake port that is not a handshake.

        From a module's address it was queued before the module's socket existed: routed as
        the module's. A message from an address not on the bus (a module dropped for its
        silence, or joined to this router's predecessor) is counted apart: such a module
        rejoins by itself with its next ping.
        """
        module = self._by_address.get(address)
        if module is not None:
            module.received += 1
            self._route(module, data)
        elif data[:4] == b"BYE " and frames.parse_bye(data) is not None:
            self.stats.not_joined += 1  # (the goodbye of a module dropped before it left)
        elif data.startswith(self.codec.start.encode("latin-1")):
            self.stats.not_joined += 1
            self._report(
                "not joined",
                address,
                f"a message from {_where(address)}, which is not on the bus (dropped for "
                "its silence, or joined before a restart): not passed on; it must handshake",
            )
        else:
            self._malformed(
                _where(address),
                "handshake",
                f"not a handshake (expected 'ID <n>,END'): {data[:40]!r}",
            )

    def _make_room(self, host: str, now: float) -> str | None:
        """Room for one more module from ``host``: None if there is (or now is), else why not.

        Once the host has ``max_unconfirmed`` modules unheard since their handshake, each is
        probed and those whose socket has gone give way; a full router first drops the
        confirmed modules silent for the timeout, and the unconfirmed whose socket has gone.
        """
        unheard = [m for m in self.modules.values() if m.address[0] == host and not m.confirmed]
        if len(unheard) >= self.max_unconfirmed:
            why = f"{host} has {len(unheard)} modules unheard since joining"
            if sum(self._there(m, why) for m in unheard) >= self.max_unconfirmed:
                return (
                    f"{host} has {self.max_unconfirmed} modules that have not spoken since their "
                    "handshake, all still there (vcosim bus --max-unconfirmed)"
                )
        if len(self.modules) >= self.max_modules:
            for module in list(self.modules.values()):
                if not module.confirmed:
                    self._there(module, "the router is full")
                elif module.silent_for(now) >= self.timeout:
                    self._expire(module, now)
        if len(self.modules) >= self.max_modules:
            return f"the router is full ({self.max_modules} modules)"
        return None

    def _there(self, module: Module, why: str) -> bool:
        """Probe a module unheard since its handshake: False (it gave way) if its socket has gone.

        The probe is the handshake's answer again, a frame of the seed's protocol, sent on the
        module's connected socket; a refusal of it (ICMP "port unreachable", or "host
        unreachable") is the socket's pending error. On loopback it is there when the send
        returns; from another host it is awaited ``PROBE_WAIT``, at most once per
        ``PROBE_EVERY`` (a flood of handshakes for its id cannot stall the router; a refusal
        that comes later is read from the socket like any other, ``_gone``).
        """
        now = time.monotonic()
        sock = module.link.sock
        try:
            sock.send(frames.answer(self.router_id))
            error = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            remote = not module.address[0].startswith("127.")
            if not error and remote and now - module.probed >= PROBE_EVERY:
                module.probed = now
                select.select([sock], [], [], PROBE_WAIT)
                error = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        except OSError as exc:
            error = exc.errno or 0
        if not error:
            return True
        self._drop_unheard(module, f"{why}; its socket has gone: {os.strerror(error)}")
        return False

    def _accept(
        self,
        module_id: int,
        address: tuple[str, int],
        monitor: bool,
        now: float,
        restored: bool = False,
    ) -> Module | None:
        try:
            link = ModuleSocket(self._address, address)
        except OSError as exc:
            self._report(
                "accept",
                address,
                f"cannot open a socket for module {module_id} at {_where(address)}: {exc}",
            )
            return None
        module = Module(module_id, address, link, monitor, joined=now, heard=now, restored=restored)
        self.modules[module_id] = module
        self._by_address[address] = module
        self._routes[b"%d" % module_id] = module
        if monitor:
            self._monitors.append(module)
        self._selector.register(link.sock, selectors.EVENT_READ, partial(self._on_module, module))
        self._save()  # (before the answer: a router killed the moment after still knows it)
        self._send(module, frames.answer(self.router_id), control=True)
        how = " as a monitor" if monitor else ""
        if restored:
            self._tally(
                "back",
                "bus: %s is back%s (on the bus before the router restarted)",
                module.label,
                how,
            )
        else:
            self._tally("joined", "bus: %s joined%s", module.label, how)
        return module

    def _remove(
        self, module: Module, why: str, *, quiet: bool = False, cause: str = "left"
    ) -> None:
        """Drop a module from the table and close its socket; ``quiet``: no log line.

        The line is counted by ``cause`` (``Tally``): a flood of them costs a line now and then.
        """
        if self.modules.get(module.id) is not module:
            return
        del self.modules[module.id]
        del self._by_address[module.address]
        del self._routes[b"%d" % module.id]
        if module.monitor:
            self._monitors.remove(module)
        self._selector.unregister(module.link.sock)
        module.link.close()
        if not quiet:
            self._tally(cause, "bus: %s %s; its id is free again", module.label, why)
        self._save()

    # -- membership ---------------------------------------------------------------------------
    def _metronome(self) -> None:
        """Ask the router's own thread for a sweep ``SWEEPS`` times per timeout, until it ends."""
        while not self.stopped.wait(self.timeout / SWEEPS):
            self._requests.append(self._sweep)
            self._wake()

    def _sweep(self) -> None:
        """Note who was heard since the last sweep; drop those silent for the timeout.

        A module unheard since its handshake is not expired but probed: the refusal of the
        probe, when its socket has gone, comes back to its socket (``_gone``).
        """
        now = time.monotonic()
        for module in list(self.modules.values()):
            if module.received != module.seen:
                module.seen, module.heard = module.received, now
            elif not module.confirmed:
                with contextlib.suppress(OSError):  # (a refusal pending already: read next)
                    module.link.sock.send(frames.answer(self.router_id))
            elif now - module.heard >= self.timeout:
                self._expire(module, now)

    def _expire(self, module: Module, now: float) -> None:
        silent = now - module.heard
        self.stats.expired += 1
        self.stats.expired_modules.append(f"{module.label}: silent for {silent:.1f} s")
        self._remove(module, f"was silent for {silent:.1f} s: dropped", cause="expired")

    def _drop_unheard(self, module: Module, why: str) -> None:
        """Drop a module not heard from since its handshake, to make way for a newer one."""
        self.stats.unheard += 1
        self.stats.expired_modules.append(f"{module.label}: unheard since joining")
        self._report(
            "unheard",
            module.address[0],
            f"{module.label} gave way, unheard since its handshake ({why})",
        )
        self._remove(module, "gave way", quiet=True)  # (a flood of ghosts: one line a host)

    def _restore(self, members: list[Member]) -> None:
        """Take back the modules of the state file; each hears the router's answer at once.

        A module whose port has closed refuses that answer and is dropped as gone; one that
        is silent is dropped after the timeout, like any other.
        """
        now = time.monotonic()
        for m in members:
            if m.id == self.router_id or m.id in self.modules or m.address in self._by_address:
                continue
            if len(self.modules) >= self.max_modules or not self.allow.admits(m.address):
                continue
            if self._accept(m.id, m.address, m.monitor, now, restored=True) is not None:
                self.stats.restored += 1

    def _save(self) -> None:
        if self.state is not None and not self._closed:
            self.state.save([Member(m.id, m.address, m.monitor) for m in self.modules.values()])

    # -- routing ----------------------------------------------------------------------------
    def _on_module(self, module: Module) -> bool:
        """Route a burst of the module's datagrams, then let the other sockets have a turn.

        The common case stays in this loop: a plain message (``codec.plain_pattern``) to a
        joined module and no monitor is read into the shared buffer, matched and sent on from
        there, the same bytes, with no message built. Everything else goes to ``_route``.

        Returns whether more may be queued (the burst was used up).
        """
        receive = module.link.sock.recv_into
        buffer, view, plain, routes = self._buffer, self._view, self._plain, self._routes
        for _ in range(BURST):
            if self.modules.get(module.id) is not module or self._stopping:
                return False
            try:
                size = receive(buffer)
            except BlockingIOError:
                return False
            except OSError as exc:
                self._gone(module, exc)
                return False
            module.received += 1
            match = plain(buffer, 0, size)
            # (each type's branch captures one group, the destination: the last one matched)
            target = None if match is None else routes.get(match[match.lastindex or 0])
            if target is None:
                self._route(module, bytes(view[:size]))
            elif self._monitors:
                self._pass_on(module, bytes(view[:size]), target.id)
            else:
                try:
                    target.link.sock.send(view[:size])
                except OSError as exc:
                    self._send_again(target, bytes(view[:size]), exc, control=False)
                else:
                    target.sent += 1
                self.stats.routed += 1
        return True

    def _route(self, sender: Module, data: bytes) -> None:
        """The careful path: control frames, and messages checked by the decoder."""
        if data[:4] == b"BYE " and frames.parse_bye(data) == sender.id:
            self._remove(sender, "left")
            return
        if data[:3] == b"ID " and (hello := frames.parse_hello(data)) is not None:
            if hello[0] == sender.id:  # a ping: the module has not heard from us for a while
                self.stats.pings += 1
                self._send(sender, frames.answer(self.router_id), control=True)
            elif sender.restored and sender.received == 1:  # its first word: not the module
                self._remove(
                    sender, f"is not there: a new module at its address asks for id {hello[0]}"
                )
                self._handshake(*hello, sender.address)  # (the file's was gone, its port reused)
            else:
                self._malformed(sender.label, "handshake", f"a handshake for id {hello[0]}")
            return
        try:
            message = self.codec.decode(data)
        except Malformed as exc:
            self._malformed(sender.label, exc.reason, str(exc))
            return
        except Exception as exc:  # noqa: BLE001 (the decoder's promise, kept here too)
            self._malformed(sender.label, "decoder", f"{type(exc).__name__}: {exc}")
            return
        self._pass_on(sender, data, message.to, message)

    def _pass_on(
        self, sender: Module, data: bytes, to: int, message: Message | None = None
    ) -> None:
        """Copies to the monitors, then the valid message ``data`` to ``to`` (decoded: ``message``).

        Without ``message`` (a plain one) the decoder runs only if the message must be named.
        """
        if self._monitors:
            self._copy(sender.id, data)
        target = self.modules.get(to)
        if target is not None:
            self._send(target, data)
            self.stats.routed += 1
            return
        if message is None:
            message = self.codec.decode(data)
        if to == self.router_id and isinstance(message, Shutdown):
            self._broadcast_shutdown(sender.label)
            return
        self.stats.unknown_destination += 1
        self.stats.unknown_by_id[to] += 1
        if to in _DEFAULT_IDS and to != self.router_id:
            return  # a standard module not (yet) on the bus: counted, not a problem
        why = (
            "the router handles only Shutdown" if to == self.router_id else "no module has that id"
        )
        self._report(
            "unknown",
            (sender.id, to),
            f"{type(message).__name__} from {sender.label} to unknown module {to}: "
            f"{why}; not passed on",
        )

    def _copy(self, sender: int, data: bytes) -> None:
        """A copy of a message from ``sender`` to every monitor."""
        copy = frames.copy_frame(sender, data)
        for monitor in tuple(self._monitors):  # (a monitor whose send fails leaves the list)
            if self.modules.get(monitor.id) is monitor:
                self._send(monitor, copy)
                self.stats.copies += 1

    def _broadcast_shutdown(self, origin: str) -> None:
        self.stats.shutdowns += 1
        for module in list(self.modules.values()):
            self._send(module, self.codec.encode(Shutdown(to=module.id)))
        log.info("bus: Shutdown from %s passed to %d module(s)", origin, len(self.modules))
        if self.stop_on_shutdown:
            self._stopping = True
            if self.state is not None:  # every module was told to end: none will be back
                self.state.remove()

    def _send(self, module: Module, data: bytes, control: bool = False) -> None:
        """Send to a module; a full send buffer is waited out, never a reason to drop.

        ``sent`` counts messages (and copies), not control frames such as handshake answers.
        """
        try:
            module.link.sock.send(data)
        except OSError as exc:
            self._send_again(module, data, exc, control)
        else:
            module.sent += 0 if control else 1

    def _send_again(self, module: Module, data: bytes, error: OSError, control: bool) -> None:
        """After a failed send: wait for room (twice at most); a closed port drops the module."""
        sock = module.link.sock
        for retry in (True, False):
            if not isinstance(error, BlockingIOError):
                self._gone(module, error)
                return
            select.select([], [sock], [], 1.0)
            if retry:
                try:
                    sock.send(data)
                except OSError as exc:
                    error = exc
                else:
                    module.sent += 0 if control else 1
                    return
        self.stats.send_failures += 1
        self._report("send", module.id, f"could not send to {module.label}: buffer full")

    def _gone(self, module: Module, error: OSError | None) -> None:
        """Drop a module whose socket failed (its port has closed: an ICMP refusal).

        The refusal is told (on a send or a receive) before what the module sent while it was
        there, which is still queued: that is routed first (its goodbye, often).
        """
        if module.leaving:
            return
        module.leaving = True
        while self._on_module(module):
            pass
        if self.modules.get(module.id) is not module:
            return  # its goodbye removed it
        why = "its socket failed" if error is None else error.strerror or str(error)
        if not module.confirmed:  # a ghost, found by a probe's refusal: one line a host
            self._drop_unheard(module, f"its socket has gone: {why}")
            return
        self.stats.gone += 1
        self._remove(module, f"is gone ({why})", cause="gone")

    # -- reports ----------------------------------------------------------------------------
    def _malformed(self, sender: str, reason: str, text: str) -> None:
        """Count a datagram that is not a message, by sender and reason; report each once."""
        self.stats.malformed += 1
        by_sender = self.stats.malformed_by_sender  # bounded: senders may be any port
        listed = sender in by_sender or len(by_sender) < MAX_LISTED_SENDERS
        by_sender[sender if listed else "others"] += 1
        self.stats.malformed_by_reason[reason] += 1
        self._report(f"malformed {reason}", sender, f"malformed message from {sender}: {text}")

    def _report(self, kind: str, peer: Hashable, text: str) -> None:
        """Keep and log the first problem of each kind and sender; the counters keep totals."""
        if self._reports(kind, peer, text):
            self.stats.problems.append(text)

    def report(self) -> dict[str, Any]:
        """Modules and counters, JSON-friendly."""
        s = self.stats
        return {
            "address": _where(self.address),
            "running": self._serving and not self._closed,
            "modules": {
                m.id: {
                    "address": _where(m.address),
                    "monitor": m.monitor,
                    "received": m.received,
                    "sent": m.sent,
                }
                for m in self.modules.values()
            },
            "routed": s.routed,
            "copies": s.copies,
            "shutdowns": s.shutdowns,
            "refused": s.refused,
            "not_allowed": self.listen.rejected,
            "pings": s.pings,
            "malformed": s.malformed,
            "malformed_by_sender": dict(s.malformed_by_sender),
            "malformed_by_reason": dict(s.malformed_by_reason),
            "unknown_destination": s.unknown_destination,
            "unknown_by_id": dict(s.unknown_by_id),
            "gone": s.gone,
            "timeout": self.timeout,
            "expired": s.expired,
            "unheard": s.unheard,
            "expired_modules": list(s.expired_modules),
            "restored": s.restored,
            "not_joined": s.not_joined,
            "send_failures": s.send_failures,
            "problems": list(s.problems),
            "log_lines_counted": self._tally.unlogged,  # events past each cause's first lines
        }

    # -- internals --------------------------------------------------------------------------
    def _wake(self) -> None:
        with contextlib.suppress(OSError):
            self._wake_out.send(b"!")

    def _on_wake(self) -> None:
        try:
            while self._wake_in.recv(4096):
                pass
        except (BlockingIOError, InterruptedError):
            pass
        while self._requests:
            self._requests.popleft()()

    def _close_sockets(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._tally.flush()
        for module in self.modules.values():
            module.link.close()
        self.listen.close()
        for sock in (self._wake_in, self._wake_out):
            sock.close()
        self._selector.close()
