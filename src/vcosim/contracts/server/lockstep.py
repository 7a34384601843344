"""The server's lock-step fast path: one client's answer taken and its update sent, lean.

In lock-step pacing with one client, every update is the same exchange: the server sends the
contract, waits for the client's answer, applies it and runs the update period's physics
steps in one call (``Face.quiet_steps``). ``LeanExchange`` does the wait and the send with
what it prepared once per session, each in one compiled call (``vcosim.contracts.wire``): the
receive loop, which checks the answer's header, sender and time against what it expects and
writes its inputs through the session's table; the gather of the update's values, its stamps
and the send. Python keeps the counters, the clock and the decisions; no object is made per
update.

Anything else (another sender, another kind, a gap or a repeat in the serial numbers, a
malformed datagram) goes to the server's general path as it came, which counts and answers
it as it always does, and the wait goes on there.
"""

from __future__ import annotations

import math
import os
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from vcosim.contracts import wire
from vcosim.contracts.server.sessions import ServerSession, ToClient, ToServer

if TYPE_CHECKING:
    from vcosim.contracts.server.face import ContractServer
    from vcosim.sim.simulation import Simulation

EPS = 1e-9
TRIES = 64  # polls per compiled receive before Python looks at its clock again
EAGER = 50e-6  # s: a wait spins this long before it yields the core after each empty poll


class LeanExchange:
    """The steady lock-step exchange with one session: one contract out, one answer in.

    ``of`` says whether a server's sessions are that case; the server rebuilds it whenever
    its sessions change.
    """

    __slots__ = (
        "server",
        "session",
        "update",
        "answer",
        "fd",
        "now",
        "pending",
        "presend",
        "steps",
        "_dt",
        "_expected",
        "_fused",
        "_fused_args",
        "_sent",
        "_receive",
        "_receive_args",
        "_send",
        "_send_args",
        "_to",
    )

    def __init__(
        self,
        server: ContractServer,
        session: ServerSession,
        inputs: np.ndarray,
        outputs: np.ndarray,
        dt: float,
        vehicle: tuple[object, ...] | None = None,
    ) -> None:
        endpoint = server.endpoint
        self.server = server
        self.session = session
        (self.update,) = session.to_client
        (self.answer,) = session.to_server.values()
        self.fd = fd = endpoint.sock.fileno()
        self.now = session.started  # the time of the latest update sent
        self.steps = 1  # physics steps from the latest update to the next (quiet_steps)
        self.pending: float | None = None  # the time on an answer taken, not booked yet
        self.presend = False  # the next update went out with the steps (``take_answer``)
        self._dt = dt
        self._to = wire.sockaddr(session.address)
        expected = self._expected = wire.Expected(
            endpoint.buffer, session.id, self.answer.id, self.answer.width
        )
        table = self.answer.table
        self._receive_args = (
            np.frombuffer(endpoint.buffer, np.uint8),
            np.zeros(wire.SENDER, dtype=np.uint8),
            TRIES,
            self._to,
            expected.words,
            expected.want,
            expected.stamp,
            expected.values,
            inputs,
            table.rows,
            table.limits,
            table.clamps,
        )
        self._receive = wire.entry_point(wire.receive_answer, (fd, *self._receive_args))
        message = self.update.message
        stamps = wire.Stamps(message, session.id)
        self._send_args: tuple[object, ...] = (fd, outputs, self.update.sig_idx, message.values)
        self._send_args += (stamps.serial, stamps.time, stamps.raw, self._to)
        self._send = wire.entry_point(wire.send_gathered, (*self._send_args, 0, 0.0))
        self._sent = np.zeros(2, dtype=np.int64)  # the fused call's send result, and if it ran
        self._fused: Any = None
        self._fused_args: tuple[object, ...] = ()
        if vehicle is not None:
            raw, sender, tries, to, _, want, *_ = self._receive_args
            writes = (inputs, table.rows, table.limits, table.clamps)
            self._fused_args = (raw, sender, tries, to, want, self.answer.width, *writes, *vehicle)
            self._fused_args += (self.update.sig_idx, stamps.raw, self._sent)
            self._fused = wire.entry_point(
                wire.exchange, (fd, *self._fused_args, 0.0, 1, False, 0, 0.0)
            )

    @classmethod
    def of(
        cls,
        server: ContractServer,
        inputs: Any,
        outputs: Any,
        dt: float,
        vehicle: tuple[object, ...] | None = None,
    ) -> LeanExchange | None:
        """The lean exchange for the server's one locked session, or None if it is not that.

        Lock-step, one session, one contract each way, the update read by one ``take`` of
        the vehicle's signals, the answer awaited only for the lock (no time sync, no
        overdue timeout). ``vehicle``: the vehicle's kernel arguments, when the server runs
        the steps itself (``ContractServer.advance``): ``take_answer`` then steps and sends.
        """
        if not server.lockstep or len(server.sessions) != 1:
            return None
        (session,) = server.sessions.values()
        if not session.locked or len(session.to_client) != 1 or len(session.to_server) != 1:
            return None
        update: ToClient = session.to_client[0]
        answer: ToServer = next(iter(session.to_server.values()))
        if not update.gather or update.functions or answer.time_sync or answer.overdue is not None:
            return None
        return cls(server, session, inputs, outputs, dt, vehicle)

    def due(self) -> bool:
        """True while the latest update's answer is not in (the lock forbids the next step)."""
        answer = self.answer
        latest = answer.latest_time
        return not answer.released and (latest is None or latest < answer.ack_due - EPS)

    def take_answer(self, sim: Simulation, spin_end: float, steps: int = 0) -> bool:
        """Busy-poll for the answer until ``spin_end``; True once it is in and applied.

        False when the spin is over, the run stops or another datagram came (handed to the
        server's general path, which then holds on as it would have). ``steps``: with the
        vehicle's arguments, the answer is followed in the same compiled call by that many
        physics steps and, if then due, the next update (``wire.exchange``; ``presend``).
        """
        server, answer, expected = self.server, self.answer, self._expected
        endpoint = server.endpoint
        if not expected.expect(answer.serial + 1):
            return False
        receive, fd, want = self._receive, self.fd, expected.want
        args: tuple[object, ...] = self._receive_args
        fused = steps > 0 and self._fused is not None
        if fused:  # (the update's time and whether it is due, as ``after_step`` will see them)
            now = (sim.body.step_index + steps) * self._dt
            send = now + EPS >= server._next_due
            serial = self.update.message.serial + 1
            receive = self._fused
            args = (*self._fused_args, answer.ack_due - EPS, steps, send, serial, now)
            self._sent[:] = 0
        clock, idle = time.perf_counter, os.sched_yield
        polite = clock() + EAGER  # from then on, yield after each empty poll
        while True:
            size = receive(fd, *args)
            if size < 0:
                if size != wire.NOTHING:
                    if endpoint.receive_failed(wire.error_of(size)):
                        continue
                    return False
                now = clock()
                if now >= spin_end or sim.stopping:
                    return False
                if now >= polite:
                    idle()  # let the client have the core, should it be waiting for one
                continue
            if want[2]:  # the answer, its inputs written: the rest of ``_data``'s work
                expected.taken()
                sent_at = float(expected.stamp[0])
                if sent_at >= answer.ack_due - EPS:
                    self.pending = sent_at  # its bookkeeping once the update is out (``settle``)
                    self.presend = fused and send
                    return True
                self._taken(sent_at)
                if not expected.expect(answer.serial + 1):
                    return False
                continue  # an answer to an earlier update: wait on
            sender = wire.address_of(self._receive_args[1])
            allow = endpoint.allow
            if allow is not None and not allow.admits(sender):
                endpoint.reject(sender)
                continue
            server._take(sim, size, sender)
            return False

    def settle(self) -> None:
        """The bookkeeping of the answer taken last, if not done yet.

        Left for after the next update's send (or after the step, when none is due): the
        client waits for that update, and nothing reads the counters before.
        """
        sent_at = self.pending
        if sent_at is not None:
            self.pending = None
            self._taken(sent_at)

    def _taken(self, sent_at: float) -> None:
        """The answer's bookkeeping as ``ContractServer._data`` does it."""
        answer, server = self.answer, self.server
        clamped = self._expected.want[3]  # (the kernel's count, until its next answer)
        stats = server.stats
        self.session.heard = time.perf_counter()
        answer.serial += 1
        answer.latest_time, answer.last_rx = sent_at, self.now
        answer.received += 1
        stats.received += 1
        answer.released = False
        server._sync_data += 1
        if clamped:
            stats.clamped.update(answer.table.take_clamps())

    def send(self, now: float) -> None:
        """Send the update stamped ``now``; its answer is due from now on."""
        update, server = self.update, self.server
        message = update.message
        message.serial += 1
        if self.presend:  # (sent by ``take_answer``, stamped ``now``, this serial number)
            self.presend = False
            sent = int(self._sent[0])
        else:
            sent = self._send(*self._send_args, message.serial, now)
        if sent < 0:
            server.endpoint.send_failed(wire.error_of(sent))
        self.settle()  # (at the time the answer came: before ``now`` moves on)
        self.now = now
        update.sent_at(now)
        server.stats.sent += 1
        self.answer.answered(now)
        self.steps = max(math.ceil((update.due - now) / self._dt - 1e-6), 1)
