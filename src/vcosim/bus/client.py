"""A module's connection to the bus router: handshake, a receive queue, send.

(Past 400 lines on purpose: handshake, pings, the receive queue and the send path share one
socket's state; the seed's ``Client`` is one class too.)

Like the seed's ``Client``, a module has one UDP socket (a ``vcosim.net`` link), to the router,
and pulls arrived datagrams into its queue when it asks (``poll``/``next_message``), so no
thread runs behind the module's back. The queue follows each message's enqueue flag: a message
with enqueue set is appended; one without replaces an unread message of the same type that was
itself not enqueued (the latest value of a state wins, queued events are never lost);
different types always queue.

Whom a module hears. The router answers a handshake from the very address the module sent it
to (the router's socket for the module shares the handshake address), so a module takes its
answer from that exact host and port only: a forged answer from any other port, even on the
router's host, is dropped and counted (``rejected``). Once answered, the socket is connected
to that address: the kernel then drops anything else before the module sees it, and a router
whose port has closed is reported at once (the ICMP refusal of a datagram sent to it).

Keeping its id. The router drops a module it has heard nothing from for a few seconds
(``vcosim.bus.membership``), so a module that has sent nothing for ``Liveness.ping_after``
seconds repeats its handshake (a ping: the router answers it again; nothing new on the wire),
and pings once as soon as it is answered, so the router knows at once that it is no ghost.
Both are noticed in ``poll`` (a module polls every cycle), by the send counter, so ``send``
costs nothing more. A module that was dropped all the same (it stopped polling for longer
than the router's timeout) rejoins with its next ping, if its id is still free.

A dead router. A module that has heard nothing from the router for ``Liveness.ping_after``
seconds pings it too; after ``lost_after`` seconds of silence it says in one line that the
router is gone and keeps pinging, so a router restarted on the same address takes it back,
with a status line every ``PEER_STATUS_EVERY`` (3 s) while it lasts and one when it is back;
after ``give_up_after`` seconds ``poll`` raises :class:`RouterLost` (the commands then exit
with code 1). Defaults: 1 s, 2 s (one blocking timeout) and 10 s. A refusal (the router's
port closed) declares it gone at once.

A client belongs to one thread.
"""

from __future__ import annotations

import logging
import socket
import time
from collections import deque
from dataclasses import dataclass
from typing import TypeVar

from vcosim.bus import codec as frames
from vcosim.bus.catalogue import Message
from vcosim.bus.codec import Codec
from vcosim.constants import BLOCKING_TIMEOUT, BUS_PORT, PEER_STATUS_EVERY
from vcosim.errors import ConfigError, CouplingTimeout, ProtocolError, VcosimError
from vcosim.net import Allowlist, DatagramLink

log = logging.getLogger("vcosim.bus")

DEFAULT_PORT = BUS_PORT
"""UDP port the router listens on for handshakes unless told otherwise."""

RECEIVE_BUFFER = 4 << 20
"""Socket receive buffer asked for (bytes): room for bursts while a module is busy."""

T = TypeVar("T")


class RouterLost(VcosimError):
    """The router has been silent for ``Liveness.give_up_after`` seconds: the module ends."""


@dataclass(frozen=True)
class Liveness:
    """How long a module waits for a silent router: ping, declare it gone, give up (seconds).

    Any datagram from the router counts as a sign of life; a ping is the module's own
    handshake, which the router answers again.
    """

    ping_after: float = 1.0
    lost_after: float = BLOCKING_TIMEOUT
    give_up_after: float = 10.0

    def __post_init__(self) -> None:
        if not 0 < self.ping_after <= self.lost_after <= self.give_up_after:
            raise ConfigError(
                [f"{self}: needs 0 < ping_after <= lost_after <= give_up_after"], "bus liveness"
            )


@dataclass(frozen=True, slots=True)
class Copy:
    """A monitor's copy of a routed message: the sender's id, the message, arrival (ns, epoch)."""

    sender: int
    message: Message
    time_ns: int


@dataclass
class ClientStats:
    """What a client sent and received."""

    sent: int = 0
    send_failures: int = 0
    received: int = 0
    replaced: int = 0
    copies: int = 0
    malformed: int = 0
    pings: int = 0  # handshakes repeated: the router was silent, or this module was
    losses: int = 0  # times the router was declared gone


def resolve(host: str, port: int) -> tuple[str, int]:
    """(IPv4 address, port) of a host name; a ConfigError if the name does not resolve."""
    try:
        return socket.gethostbyname(host), int(port)
    except OSError as exc:
        raise ConfigError([f"host {host!r} does not resolve: {exc}"], "bus address") from None


def local_address_towards(peer: tuple[str, int]) -> str:
    """The local address the kernel sends from to reach ``peer`` (loopback for a local one)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(peer)
        return str(probe.getsockname()[0])


class BusClient:
    """One module on the bus: ``connect``, then ``send`` and ``next_message``; ``close`` at the end.

    Args:
        module_id: the id this module asks for; messages addressed to it come here.
        host, port: the router's handshake address.
        monitor: also receive a ``Copy`` of every message the router passes on (loggers).
        codec: message symbols and maximum length; must match the router's.
        bind_host: local address to bind; default the one facing the router (loopback for a
            router on this machine), so the socket is not open to other networks.
        liveness: how long a silent router is waited for (see the module's docstring).
    """

    def __init__(
        self,
        module_id: int,
        host: str = "127.0.0.1",
        port: int = DEFAULT_PORT,
        *,
        monitor: bool = False,
        codec: Codec | None = None,
        bind_host: str | None = None,
        liveness: Liveness | None = None,
    ) -> None:
        self.module_id = int(module_id)
        self.monitor = monitor
        self.codec = codec if codec is not None else Codec()
        self.router_address = resolve(host, port)
        self.router_id: int | None = None
        self.router_lost = False
        self.liveness = liveness if liveness is not None else Liveness()
        self.stats = ClientStats()
        self.last_error: str | None = None
        self._queue: deque[Message] = deque()
        self._copies: deque[Copy] = deque()
        self._start = self.codec.start.encode("latin-1")
        self._closed = False
        self._heard = self._pinged = time.monotonic()
        self._told = 0.0  # when the last line said the router is gone
        self._sent_then = 0  # ``stats.sent`` when the router last heard from us, as far as known
        self._hello = frames.hello(self.module_id, monitor)
        self.link = DatagramLink(
            (bind_host or local_address_towards(self.router_address), 0),
            peer=self.router_address,
            allow=Allowlist.of(peers=[self.router_address]),  # exactly the router's address
            size=self.codec.max_length + 64,  # room for a monitor copy's tag
            receive_buffer=RECEIVE_BUFFER,
            name=f"bus module {self.module_id}",
            log=log,
        )

    @property
    def connected(self) -> bool:
        """True once the router has accepted the handshake."""
        return self.router_id is not None and not self._closed

    @property
    def address(self) -> tuple[str, int]:
        """The module's own (host, port)."""
        return self.link.address

    @property
    def rejected(self) -> int:
        """Datagrams dropped while joining because they did not come from the router's address."""
        return self.link.rejected

    @property
    def silent_for(self) -> float:
        """Seconds since the router was last heard (any datagram from it)."""
        return time.monotonic() - self._heard

    @property
    def sock(self) -> socket.socket:
        """The UDP socket (non-blocking), e.g. for an event loop's reader."""
        return self.link.sock

    # -- handshake ------------------------------------------------------------------------
    def connect(self, timeout: float = 5.0, retry_interval: float = 0.2) -> BusClient:
        """Handshake with the router (repeated until answered); returns self.

        Raises:
            ProtocolError: the router refused the id (taken, or the router is full).
            CouplingTimeout: no answer within ``timeout`` seconds.
        """
        host, port = self.router_address
        link = self.link
        deadline = time.monotonic() + timeout
        while True:
            sent = link.send(self._hello)
            failure = None if sent else link.take_error()
            retry_at = min(time.monotonic() + retry_interval, deadline)
            while (remaining := retry_at - time.monotonic()) > 0 and link.wait(remaining):
                while (got := link.receive_bytes()) is not None:  # (only the router's address)
                    result = frames.parse_answer(got[0])
                    if isinstance(result, int):  # (the allowlist let only the router's in)
                        link.connect(self.router_address)  # from now on the kernel filters
                        link.take_error()  # (a problem before the answer is no longer one)
                        self.router_id = result
                        self._ping(time.monotonic())  # (confirms: no ghost; see the docstring)
                        self._heard = self._pinged
                        return self
                    if isinstance(result, str):
                        raise ProtocolError(
                            f"the bus router at {host}:{port} refused module id "
                            f"{self.module_id}: {result}"
                        )
            if time.monotonic() >= deadline:
                why = f"; sending failed: {failure}" if failure is not None else ""
                raise CouplingTimeout(
                    f"no answer from the bus router at {host}:{port} within "
                    f"{timeout:g} s (is `vcosim bus` running there?{why})"
                )

    # -- sending ----------------------------------------------------------------------------
    def send(self, message: Message) -> bool:
        """Send a message through the router; False if the socket failed (router gone)."""
        return self.send_raw(self.codec.encode(message))

    def send_raw(self, data: bytes) -> bool:
        """Send bytes as they are (replays, tests of malformed input); False on failure."""
        if not self.connected:
            raise ProtocolError(
                f"module {self.module_id} is not connected to the bus; call connect() first"
            )
        if not self.link.send(data):
            self.stats.send_failures += 1
            self._socket_error("send", self.link.take_error())
            return False
        self.stats.sent += 1
        return True

    # -- receiving --------------------------------------------------------------------------
    def poll(self) -> int:
        """Take every datagram that has arrived into the queues, without waiting; how many.

        Also where a silent router is noticed: pinged, declared gone, and, after
        ``liveness.give_up_after`` seconds, :class:`RouterLost` is raised.
        """
        if not self.connected:
            return 0
        link, count = self.link, 0
        while (got := link.receive_bytes()) is not None:
            self._handle(got[0])
            count += 1
        now = time.monotonic()
        if count:
            self._heard = now
            if self.router_lost:
                self._back()
        else:
            self._check_router(now)
        self._socket_error("receive", link.take_error())  # (after: what came came before it)
        if now - self._pinged >= self.liveness.ping_after:  # a keep-alive, if nothing was sent
            if self.stats.sent == self._sent_then:
                self._ping(now)
            else:
                self._pinged, self._sent_then = now, self.stats.sent
        return count

    def wait(self, timeout: float) -> bool:
        """Block up to ``timeout`` s for datagrams, then take all that arrived; True if any.

        A long wait polls at least every ``liveness.ping_after``, so the module keeps its id.
        """
        if not self.connected:
            return False
        deadline = time.monotonic() + timeout
        while True:
            if (left := deadline - time.monotonic()) > 0:
                self.link.wait(min(left, self.liveness.ping_after))
            if self.poll() > 0:
                return True
            if left <= self.liveness.ping_after or not self.connected:
                return False

    # -- a silent router ------------------------------------------------------------------
    def _ping(self, now: float) -> None:
        """Repeat the handshake on the module's socket: a live router answers, a new one joins."""
        self._pinged, self._sent_then = now, self.stats.sent
        self.stats.pings += 1
        self.link.send(self._hello)
        self.link.take_error()

    def _check_router(self, now: float) -> None:
        """Nothing arrived: ping a router silent for long, say it is gone, give up at last."""
        live = self.liveness
        silent = now - self._heard
        if silent < live.ping_after:
            return
        host, port = self.router_address
        if silent >= live.give_up_after:
            raise RouterLost(
                f"bus module {self.module_id}: no sign of the bus router at {host}:{port} "
                f"for {silent:.0f} s; giving up"
            )
        if now - self._pinged >= live.ping_after:
            self._ping(now)
        if silent >= live.lost_after:
            self._lost(f"has been silent for {silent:.0f} s and does not answer pings")
        if self.router_lost and now - self._told >= PEER_STATUS_EVERY:
            self._told = now
            log.warning(
                "bus module %d: the bus router at %s:%d still gone, silent for %.0f s; "
                "giving up after %.0f s",
                self.module_id,
                host,
                port,
                silent,
                live.give_up_after,
            )

    def _lost(self, why: str) -> None:
        """Say once that the router is gone (until it is back)."""
        if self.router_lost:
            return
        self.router_lost = True
        self.stats.losses += 1
        self._told = time.monotonic()
        host, port = self.router_address
        log.warning(
            "bus module %d: the bus router at %s:%d %s: it has gone; rejoining if it comes "
            "back, giving up after %.0f s of silence",
            self.module_id,
            host,
            port,
            why,
            self.liveness.give_up_after,
        )

    def _back(self) -> None:
        self.router_lost = False
        host, port = self.router_address
        log.warning("bus module %d: the bus router at %s:%d is back", self.module_id, host, port)

    def next_message(self, timeout: float = 0.0) -> Message | None:
        """The oldest unread message (waiting up to ``timeout`` s for one), or None."""
        return self._next(self._queue, timeout)

    def next_copy(self, timeout: float = 0.0) -> Copy | None:
        """The oldest unread monitor copy (waiting up to ``timeout`` s for one), or None."""
        return self._next(self._copies, timeout)

    @property
    def pending(self) -> int:
        """Unread messages in the queue (monitor copies not counted)."""
        return len(self._queue)

    @property
    def pending_copies(self) -> int:
        """Unread monitor copies."""
        return len(self._copies)

    def _next(self, queue: deque[T], timeout: float) -> T | None:
        self.poll()  # newer values replace older ones before anything is handed out
        if not queue and timeout > 0:
            deadline = time.monotonic() + timeout
            while not queue and self.connected and (remaining := deadline - time.monotonic()) > 0:
                self.wait(remaining)
        return queue.popleft() if queue else None

    def _handle(self, data: bytes) -> None:
        if data[:1] == self._start:
            try:
                message = self.codec.decode(data)
            except ProtocolError as exc:
                self._malformed(str(exc))
                return
            self._push(message)
        elif (copy := frames.parse_copy(data)) is not None:
            try:
                message = self.codec.decode(copy[1])
            except ProtocolError as exc:
                self._malformed(f"copy: {exc}")
                return
            self.stats.copies += 1
            self._copies.append(Copy(copy[0], message, time.time_ns()))
        elif isinstance(answer := frames.parse_answer(data), int):  # a ping's answer
            self.router_id = answer  # (a router restarted on the address may have a new id)
        elif isinstance(answer, str):  # a restarted router refused this id: still lost
            self._problem("refused", f"the bus router refused module id {self.module_id}: {answer}")
        else:
            self._malformed(f"unexpected datagram {data[:40]!r}")

    def _push(self, message: Message) -> None:
        self.stats.received += 1
        queue = self._queue
        if not message.enqueue:
            kind = type(message)
            for i in range(len(queue) - 1, -1, -1):
                if type(queue[i]) is kind and not queue[i].enqueue:
                    queue[i] = message
                    self.stats.replaced += 1
                    return
        queue.append(message)

    def _socket_error(self, action: str, exc: OSError | None) -> None:
        """A failed send or receive; a refusal means the router's socket has closed."""
        if exc is None or self._closed:  # (closed by another thread: the end of a wait)
            return
        if isinstance(exc, ConnectionRefusedError):
            self.last_error = f"{action} failed: {exc}"
            self._lost("refused a datagram (its port is closed)")
        else:
            self._problem(action, f"{action} failed: {exc}")

    def _malformed(self, text: str) -> None:
        self.stats.malformed += 1
        self._problem("malformed", f"malformed datagram from the router: {text}")

    def _problem(self, kind: str, text: str) -> None:
        """Keep the latest problem; log the first of each kind (later ones are counted)."""
        self.last_error = text
        self.link.report(kind, self.router_address, text)

    # -- lifetime ---------------------------------------------------------------------------
    def close(self) -> None:
        """Leave the bus (the id becomes free) and close the socket; safe twice."""
        if self._closed:
            return
        if self.connected:
            self.link.send(frames.bye(self.module_id))
        self._closed = True
        self.link.close()

    def __enter__(self) -> BusClient:
        if not self.connected:
            try:
                self.connect()
            except BaseException:
                self.close()
                raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
