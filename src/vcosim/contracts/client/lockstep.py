"""The client's lock-step fast path: the time master's update taken with no objects made.

A client whose one incoming contract is time-synced waits for the server's update at every
step. ``LeanUpdate`` takes it with what it prepared when the session was welcomed: a receive
into the endpoint's buffer, one unpack of the header checked against the bytes and numbers it
expects, one slice copy into the block's outputs, the meta values by their slots.

Anything else (another kind, a gap or a repeat in the serial numbers, a malformed datagram)
goes to the session's general path as it came, which counts and handles it as it always
does, and the wait goes on there.
"""

from __future__ import annotations

import os
import struct
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from vcosim.contracts import protocol as P
from vcosim.contracts import wire
from vcosim.contracts.client.streams import Incoming

if TYPE_CHECKING:
    from vcosim.contracts.client.session import ClientSession

EPS = 1e-9
TRIES = 64  # polls per compiled receive before Python looks at its clock again
EAGER = 50e-6  # s: a wait spins this long before it yields the core after each empty poll
_DATA_HEAD = struct.Struct("<8sHHId")  # the DATA header: its first 8 bytes whole, then the rest
_META = {"time": 0, "receive_time_offset": 1, "serial_number": 2}


class LeanUpdate:
    """The steady update of a time-synced client: one incoming contract, taken lean.

    ``of`` says whether a connected session is that case; the session makes it when it is
    welcomed and drops it when its status changes.
    """

    __slots__ = (
        "session",
        "incoming",
        "prefix",
        "size",
        "values",
        "target",
        "meta",
        "raw",
        "sender",
        "fd",
        "_receive",
        "_unpack",
    )

    def __init__(self, session: ClientSession, incoming: Incoming) -> None:
        endpoint = session.endpoint
        assert incoming.run is not None, "of() checks that the values are one run"
        self.session = session
        self.incoming = incoming
        self.prefix = P.HEADER.pack(P.MAGIC, P.VERSION, P.Kind.DATA, session.session_id)
        self.size = P.DATA_HEADER.size + 8 * incoming.width
        self.values = np.frombuffer(
            endpoint.buffer, P.WIRE_DTYPE, incoming.width, P.DATA_HEADER.size
        )
        self.target = session.out[incoming.run]  # a view of the block's outputs
        self.meta = [(pos, _META[meta]) for meta, pos, _ in incoming.meta]
        self.raw = np.frombuffer(endpoint.buffer, np.uint8)
        self.sender = np.zeros(wire.SOCKADDR, dtype=np.uint8)
        self.fd = endpoint.sock.fileno()
        self._receive = wire.entry_point(wire.receive, (self.fd, self.raw, self.sender, TRIES))
        self._unpack = _DATA_HEAD.unpack_from

    @classmethod
    def of(cls, session: ClientSession) -> LeanUpdate | None:
        """The lean update of a connected session, or None if it is not that case.

        One incoming contract, time-synced, no overdue timeout, every value accepted and in
        one run of the outputs, the socket connected to the server (the kernel hears no one
        else).
        """
        if len(session.incoming) != 1 or session.endpoint.peer is None:
            return None
        incoming = session.incoming[0]
        if not incoming.time_sync or incoming.overdue is not None or incoming.run is None:
            return None
        return cls(session, incoming)

    def holds(self, t: float) -> bool:
        """True while the server's latest update is older than local time ``t``."""
        remote = self.incoming.remote_time
        return remote is None or remote < t - EPS

    def take(self, t: float, spin_end: float, stopping: Callable[[], bool]) -> bool:
        """Busy-poll until the update for local time ``t`` is in (True) or ``spin_end``.

        False when the spin is over, ``stopping()`` says so or another datagram came (handed
        to the session's general path, after which the block waits on as it would have).
        """
        session, incoming = self.session, self.incoming
        endpoint = session.endpoint
        buffer, raw, sender, fd = endpoint.buffer, self.raw, self.sender, self.fd
        receive, unpack = self._receive, self._unpack
        prefix, size_expected = self.prefix, self.size
        clock, idle = time.perf_counter, os.sched_yield
        polite = clock() + EAGER  # then yield after each empty poll
        while True:
            size = receive(fd, raw, sender, TRIES)
            if size < 0:
                if size != wire.NOTHING:
                    if endpoint.receive_failed(wire.error_of(size)):
                        continue
                    return False
                now = clock()
                if now < polite:
                    continue
                if now >= spin_end or stopping():
                    return False
                idle()  # let the server have the core, should it be waiting for one
                continue
            if size == size_expected:
                head, contract, count, serial, sent_at = unpack(buffer)
                if (
                    head == prefix
                    and contract == incoming.id
                    and count == incoming.width
                    and serial == incoming.serial + 1
                    and sent_at - sent_at == 0.0  # finite (NaN and inf give NaN)
                ):
                    self._apply(serial, sent_at, t)
                    if sent_at >= t - EPS:
                        return True
                    continue
            session.take(size, wire.address_of(sender))
            return False

    def _apply(self, serial: int, sent_at: float, t: float) -> None:
        """The update's bookkeeping as ``ClientSession`` does it, and its values."""
        incoming, session = self.incoming, self.session
        session.heard = time.perf_counter()
        incoming.serial, incoming.remote_time, incoming.rx_local = serial, sent_at, t
        incoming.received += 1
        self.target[:] = self.values
        if self.meta:
            out = session.out
            for pos, what in self.meta:
                out[pos] = sent_at if what == 0 else t - sent_at if what == 1 else float(serial)
