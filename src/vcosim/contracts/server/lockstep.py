"""The server's lock-step fast path: one client's answer taken and its update sent, lean.

In lock-step pacing with one client, every update is the same exchange: the server sends the
contract, waits for the client's answer, applies it and runs the update period's physics
steps in one call (``Face.quiet_steps``). ``LeanExchange`` does the wait and the send with
what it prepared once per session, each in one compiled call (``vcosim.contracts.wire``): the
receive loop, which checks the answer's header, sender and time against what it expects and
writes its inputs through the session's table; the gather of the update's values, its stamps
and the send. Python keeps the counters, the clock and the decisions; no object is made per
update. When the server steps the vehicle itself, one call runs turn after turn (answer,
steps, update) as long as the answers come and the frame has steps left, and Python books
the turns after it: the server's Python, a few microseconds a turn, would otherwise start
each wait after the client's answer had come.

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
        "ran",
        "steps",
        "_dt",
        "_expected",
        "_fused",
        "_fused_args",
        "_sent",
        "_book",
        "_stash",
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
        self.ran = 0  # the physics steps the latest ``take_answer`` ran
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
        self._sent = np.zeros(5, dtype=np.int64)  # the fused call's counts (``wire.exchange``)
        self._book = np.zeros(5)  # and its latest stamps and times
        self._stash: int | None = None  # what it received after its turns, for the next wait
        self._fused: Any = None
        self._fused_args: tuple[object, ...] = ()
        if vehicle is not None:
            raw, sender, tries, to, _, want, *_ = self._receive_args
            writes = (inputs, table.rows, table.limits, table.clamps)
            self._fused_args = (raw, sender, tries, to, want, self.answer.width, *writes, *vehicle)
            self._fused_args += (self.update.sig_idx, stamps.raw, self._sent, self._book)
            schedule = (0, 1, 1, 0.0, 0.0, 0, 0.0, 0.0, 0.0)
            self._fused = wire.entry_point(wire.exchange, (fd, *self._fused_args, *schedule))

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

    def take_answer(
        self, sim: Simulation, spin_end: float, steps: int = 0, budget: int = 0
    ) -> bool:
        """Busy-poll for the answer until ``spin_end``; True once it is in and applied.

        False when the spin is over, the run stops or another datagram came (handed to the
        server's general path, which then holds on as it would have). ``steps``: with the
        vehicle's arguments, the answer is followed in the same compiled call by that many
        physics steps and, if then due, the next update (``wire.exchange``; ``presend``),
        and by as many more such turns as answers come and the ``budget`` of steps allows;
        ``ran`` is then the steps run, and the last turn's bookkeeping is left as a single
        one's. What the call received after its turns waits for the next call.
        """
        server, answer, expected = self.server, self.answer, self._expected
        endpoint = server.endpoint
        stash, self._stash = self._stash, None
        self.ran = 0
        if not expected.expect(answer.serial + 1):
            return False
        receive, fd, want = self._receive, self.fd, expected.want
        args: tuple[object, ...] = self._receive_args
        fused = steps > 0 and self._fused is not None
        if fused:  # (the schedule, as ``after_step`` and ``before_step`` will see it)
            receive = self._fused
            first, due = sim.body.step_index, answer.ack_due - EPS
            serial, periods = self.update.message.serial + 1, (self.update.period, answer.period)
            schedule = (first, max(budget, steps), steps, due, server._next_due, serial, self._dt)
            args = (*self._fused_args, *schedule, *periods)
        clock, idle = time.perf_counter, os.sched_yield
        polite = clock() + EAGER  # from then on, yield after each empty poll
        while True:
            if stash is not None:  # (received by the last call, after its turns)
                size, stash = stash, None
            else:
                size = receive(fd, *args)
                if fused and self._sent[1]:  # turns ran: the bookkeeping, then the rest later
                    self._turns(size)
                    return True
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

    def _turns(self, last: int) -> None:
        """The bookkeeping of the turns a fused call ran, ``last`` what it returned.

        Every turn but the last as ``_taken`` and ``send`` would have done it, in one go; the
        last left as a single turn's (``pending``, ``presend``), for ``after_step``. What the
        call received while waiting for a further answer is kept for the next wait.
        """
        counts, book = self._sent.tolist(), self._book.tolist()
        _, turns, sends, clamped, self.ran = counts
        self._expected.serial += turns  # (the kernel counted the answers it took)
        if clamped:
            self.server.stats.clamped.update(self.answer.table.take_clamps())
        if turns > 1:  # turns 1..n complete: each answer taken, each update sent
            n = turns - 1  # (book[2 + sends - i] is the time of the i-th update it sent)
            self._taken(book[1], n, book[3 + sends - n] if n > 1 else self.now)
            self._sent_many(n, book[2 + sends - n])
            self.server.stats.holds += n  # (one wait each)
        self.pending = book[0]
        self.presend = sends == turns
        if last != wire.STEPPED and last != wire.NOTHING:
            self._stash = last  # (only while a further answer is due: the next wait takes it)

    def settle(self) -> None:
        """The bookkeeping of the answer taken last, if not done yet.

        Left for after the next update's send (or after the step, when none is due): the
        client waits for that update, and nothing reads the counters before.
        """
        sent_at = self.pending
        if sent_at is not None:
            self.pending = None
            self._taken(sent_at)

    def _taken(self, sent_at: float, count: int = 1, answered: float | None = None) -> None:
        """The answer's bookkeeping as ``ContractServer._data`` does it (``count`` of them).

        ``answered``: the time of the update the last of them answered (the latest sent).
        """
        answer, server = self.answer, self.server
        clamped = self._expected.want[3]  # (the kernel's count, until its next answer)
        stats = server.stats
        self.session.heard = time.perf_counter()
        answer.serial += count
        answer.latest_time = sent_at
        answer.last_rx = self.now if answered is None else answered
        answer.received += count
        stats.received += count
        answer.released = False
        server._sync_data += count
        if clamped:
            stats.clamped.update(answer.table.take_clamps())

    def send(self, now: float) -> None:
        """Send the update stamped ``now``; its answer is due from now on."""
        message = self.update.message
        if self.presend:  # (sent by ``take_answer``, stamped ``now``, this serial number)
            self.presend = False
            sent = int(self._sent[0])
        else:
            sent = self._send(*self._send_args, message.serial + 1, now)
        if sent < 0:
            self.server.endpoint.send_failed(wire.error_of(sent))
        self.settle()  # (at the time the answer came: before ``now`` moves on)
        self._sent_many(1, now)

    def _sent_many(self, count: int, now: float) -> None:
        """The bookkeeping of ``count`` updates sent, the last stamped ``now``."""
        update, server = self.update, self.server
        update.message.serial += count
        self.now = now
        update.sent_at(now)
        server.stats.sent += count
        self.answer.answered(now)
        self.steps = max(math.ceil((update.due - now) / self._dt - 1e-6), 1)
        server._next_due = update.due
