"""The client's lock-step fast path: the time master's update taken, the answer sent, lean.

A client whose one incoming contract is time-synced waits for the server's update at every
step. ``LeanUpdate`` takes it with what it prepared when the session was welcomed, in one
compiled call (``vcosim.contracts.wire``): the receive loop, which checks the update's header
and time against what it expects and copies its values into the block's outputs. The answer
(one input contract) goes out the same way: its values, its stamps and the send in one call.
Python keeps the counters, the meta values and the decisions; no object is made per update.

Anything else (another kind, a gap or a repeat in the serial numbers, a malformed datagram)
goes to the session's general path as it came, which counts and handles it as it always
does, and the wait goes on there.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from vcosim.contracts import wire
from vcosim.contracts.client.streams import Incoming, Outgoing
from vcosim.contracts.layout import next_tick

if TYPE_CHECKING:
    from vcosim.contracts.client.session import ClientSession

EPS = 1e-9
TRIES = 64  # polls per compiled receive before Python looks at its clock again
EAGER = 50e-6  # s: a wait spins this long before it yields the core after each empty poll
META = ("time", "receive_time_offset", "serial_number")  # each at most once


class LeanUpdate:
    """The steady update of a time-synced client: one incoming contract, taken lean.

    ``of`` says whether a connected session is that case; the session makes it when it is
    welcomed and drops it when its status changes.
    """

    __slots__ = (
        "session",
        "incoming",
        "outgoing",
        "fd",
        "meta",
        "pending",
        "_expected",
        "_receive",
        "_receive_args",
        "_send",
        "_send_args",
    )

    def __init__(self, session: ClientSession, incoming: Incoming) -> None:
        endpoint = session.endpoint
        assert incoming.run is not None, "of() checks that the values are one run"
        self.session = session
        self.incoming = incoming
        self.fd = fd = endpoint.sock.fileno()
        slots = {meta: pos for meta, pos, _ in incoming.meta}  # (slot 0 is the status)
        self.meta = tuple(slots.get(meta, 0) for meta in META)
        self.pending = False  # an update taken, not booked yet (``settle``)
        expected = self._expected = wire.Expected(
            endpoint.buffer, session.session_id, int(incoming.id or 0), incoming.width
        )
        self._receive_args = (
            np.frombuffer(endpoint.buffer, np.uint8),
            np.zeros(wire.SENDER, dtype=np.uint8),
            TRIES,
            expected.words,
            expected.want,
            expected.stamp,
            expected.values,
            session.out[incoming.run],  # a view of the block's outputs
            session.out,
            np.array(self.meta, dtype=np.int64),
        )
        self._receive = wire.entry_point(wire.receive_update, (fd, *self._receive_args, 0.0, 0.0))
        self.outgoing: Outgoing | None = None
        self._send: Callable[..., int] | None = None
        self._send_args: tuple[object, ...] = ()
        if len(session.outgoing) == 1:
            out = self.outgoing = session.outgoing[0]
            stamps = wire.Stamps(out.message, session.session_id)
            self._send_args = (fd, out.source, stamps.raw)
            self._send = wire.entry_point(wire.send_values, (*self._send_args, 0, 0.0))

    @classmethod
    def of(cls, session: ClientSession) -> LeanUpdate | None:
        """The lean update of a connected session, or None if it is not that case.

        One incoming contract, time-synced, no overdue timeout, every value accepted and in
        one run of the outputs, its meta fields each at most once, the socket connected to
        the server (the kernel hears no one else).
        """
        if len(session.incoming) != 1 or session.endpoint.peer is None:
            return None
        incoming = session.incoming[0]
        if not incoming.time_sync or incoming.overdue is not None or incoming.run is None:
            return None
        metas = [meta for meta, _, _ in incoming.meta]
        if len(set(metas)) < len(metas) or not set(metas) <= set(META):
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
        session, incoming, expected = self.session, self.incoming, self._expected
        endpoint = session.endpoint
        if not expected.expect(incoming.serial + 1):
            return False
        receive, fd, want = self._receive, self.fd, expected.want
        args = (*self._receive_args, t, t - EPS)
        clock, idle = time.perf_counter, os.sched_yield
        polite = clock() + EAGER  # from then on, yield after each empty poll
        while True:
            size = receive(fd, *args)
            if size == wire.UPDATED:  # the update for ``t``: the rest once the answer is out
                incoming.received += 1
                self.pending = True
                return True
            if size < 0:
                if size != wire.NOTHING:
                    if endpoint.receive_failed(wire.error_of(size)):
                        continue
                    return False
                now = clock()
                if now >= spin_end or stopping():
                    return False
                if now >= polite:
                    idle()  # let the server have the core, should it be waiting for one
                continue
            if want[2]:  # an earlier update, its values and meta values in the outputs
                incoming.received += 1
                self._taken(t)
                if not expected.expect(incoming.serial + 1):
                    return False
                continue
            assert endpoint.peer is not None  # (of() checked)
            session.take(size, endpoint.peer)
            return False

    def _taken(self, t: float) -> None:
        """The update's bookkeeping as ``ClientSession._update`` does it, but its count.

        The kernel wrote the values and meta values and ``take`` counted it: what the step
        function may read. The rest waits for the answer to be out (``settle``); nothing
        receives meanwhile, so the update's header is still in the buffer.
        """
        incoming = self.incoming
        self._expected.taken()
        self.session.heard = time.perf_counter()
        incoming.serial += 1
        incoming.remote_time, incoming.rx_local = float(self._expected.stamp[0]), t

    def settle(self, t: float) -> None:
        """The bookkeeping of the update taken for local time ``t``, if not done yet."""
        if self.pending:
            self.pending = False
            self._taken(t)

    def send_due(self, t: float) -> None:
        """Send the input contract if due at local time ``t``, as ``ClientSession.send_due``."""
        out, session, send = self.outgoing, self.session, self._send
        if out is None or send is None:
            self.settle(t)
            session.send_due(t)
            return
        if t + EPS < out.next_k * out.period:
            self.settle(t)
            return
        message = out.message
        message.serial += 1
        sent = send(*self._send_args, message.serial, t)
        session.sent_time = t
        if sent < 0:
            session.endpoint.send_failed(wire.error_of(sent))
        self.settle(t)  # (the update's bookkeeping, now that its answer is out)
        out.next_k = next_tick(t, out.period)
        out.sent += 1
