"""The server's lock-step fast path: one client's answer taken and its update sent, lean.

In lock-step pacing with one client, every update is the same exchange: the server sends the
contract, waits for the client's answer, applies it and runs the update period's physics
steps in one call (``Face.quiet_steps``). ``LeanExchange`` does the wait and the send with
what it prepared once per session: a receive into the endpoint's buffer, one unpack of the
header checked against the bytes and numbers it expects, the inputs written by the compiled
table, one ``take`` into the message. No object is made per update but the receive's own.

Anything else (another sender, another kind, a gap or a repeat in the serial numbers, a
malformed datagram) goes to the server's general path as it came, which counts and answers
it as it always does, and the wait goes on there.
"""

from __future__ import annotations

import os
import struct
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from vcosim.contracts import protocol as P
from vcosim.contracts import wire
from vcosim.contracts.server.sessions import ServerSession, ToClient, ToServer
from vcosim.vehicle.inputs import write_inputs

if TYPE_CHECKING:
    from vcosim.contracts.server.face import ContractServer
    from vcosim.sim.simulation import Simulation

EPS = 1e-9
TRIES = 64  # polls per compiled receive before Python looks at its clock again
EAGER = 50e-6  # s: a wait spins this long before it yields the core after each empty poll
_DATA_HEAD = struct.Struct("<8sHHId")  # the DATA header: its first 8 bytes whole, then the rest


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
        "address",
        "prefix",
        "size",
        "values",
        "inputs",
        "outputs",
        "_write",
        "_table",
        "_sendto",
        "raw",
        "sender",
        "fd",
        "peer",
        "_receive",
        "_sender_key",
        "_unpack",
    )

    def __init__(
        self, server: ContractServer, session: ServerSession, inputs: Any, outputs: Any
    ) -> None:
        endpoint = server.endpoint
        self.server = server
        self.inputs, self.outputs = inputs, outputs
        self.session = session
        (self.update,) = session.to_client
        (self.answer,) = session.to_server.values()
        self.address = session.address
        self.prefix = P.HEADER.pack(P.MAGIC, P.VERSION, P.Kind.DATA, session.id)
        width = self.answer.width
        self.size = P.DATA_HEADER.size + 8 * width
        self.values = np.frombuffer(endpoint.buffer, P.WIRE_DTYPE, width, P.DATA_HEADER.size)
        table = self._table = self.answer.table
        args = (self.values, inputs, table.rows, table.limits, table.clamps)
        self._write = wire.entry_point(write_inputs, args)
        self._sendto = endpoint.sock.sendto
        self.raw = np.frombuffer(endpoint.buffer, np.uint8)
        self.sender = np.zeros(wire.SOCKADDR, dtype=np.uint8)
        self._sender_key = self.sender[:8].view(np.uint64)  # family, port, host
        self.peer = wire.sockaddr_key(session.address)
        self.fd = endpoint.sock.fileno()
        self._receive = wire.entry_point(wire.receive, (self.fd, self.raw, self.sender, TRIES))
        self._unpack = _DATA_HEAD.unpack_from

    @classmethod
    def of(cls, server: ContractServer, inputs: Any, outputs: Any) -> LeanExchange | None:
        """The lean exchange for the server's one locked session, or None if it is not that.

        Lock-step, one session, one contract each way, the update read by one ``take`` of
        the vehicle's signals, the answer awaited only for the lock (no time sync, no
        overdue timeout).
        """
        if not server.lockstep or len(server.sessions) != 1:
            return None
        (session,) = server.sessions.values()
        if not session.locked or len(session.to_client) != 1 or len(session.to_server) != 1:
            return None
        update: ToClient = session.to_client[0]
        answer: ToServer = next(iter(session.to_server.values()))
        if not update.gather or update.functions or answer.time_sync or answer.overdue:
            return None
        return cls(server, session, inputs, outputs)

    def due(self) -> bool:
        """True while the latest update's answer is not in (the lock forbids the next step)."""
        answer = self.answer
        latest = answer.latest_time
        return not answer.released and (latest is None or latest < answer.ack_due - EPS)

    def take_answer(self, sim: Simulation, spin_end: float) -> bool:
        """Busy-poll for the answer until ``spin_end``; True once it is in and applied.

        False when the spin is over, the run stops or another datagram came (handed to the
        server's general path, which then holds on as it would have).
        """
        server, answer = self.server, self.answer
        endpoint = server.endpoint
        buffer, raw, sender, fd = endpoint.buffer, self.raw, self.sender, self.fd
        receive, unpack, sender_key = self._receive, self._unpack, self._sender_key
        peer, prefix, size_expected = self.peer, self.prefix, self.size
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
                if now >= spin_end or sim.stopping:
                    return False
                idle()  # let the client have the core, should it be waiting for one
                continue
            if size == size_expected and sender_key[0] == peer:
                head, contract, count, serial, sent_at = unpack(buffer)
                if (
                    head == prefix
                    and contract == answer.id
                    and count == answer.width
                    and serial == answer.serial + 1
                    and sent_at - sent_at == 0.0  # finite (NaN and inf give NaN)
                ):
                    self._apply(serial, sent_at, sim.time)
                    if sent_at >= answer.ack_due - EPS:
                        return True
                    continue  # an answer to an earlier update: wait on
            address = wire.address_of(sender)
            allow = endpoint.allow
            if allow is not None and not allow.admits(address):
                endpoint.reject(address)
                continue
            server._take(sim, size, address)
            return False

    def _apply(self, serial: int, sent_at: float, now: float) -> None:
        """The answer's bookkeeping as ``ContractServer._data`` does it, and its inputs."""
        answer, stats = self.answer, self.server.stats
        self.session.heard = time.perf_counter()
        answer.serial, answer.latest_time, answer.last_rx = serial, sent_at, now
        answer.received += 1
        stats.received += 1
        answer.released = False
        self.server._sync_data += 1
        table = self._table
        if self._write(self.values, self.inputs, table.rows, table.limits, table.clamps):
            stats.clamped.update(table.take_clamps())

    def send(self, now: float) -> None:
        """Send the update stamped ``now``; its answer is due from now on."""
        update, server = self.update, self.server
        message = update.message
        self.outputs.take(update.sig_idx, out=message.values)
        try:
            self._sendto(message.pack(self.session.id, now), self.address)
        except OSError as exc:
            server.endpoint.send_failed(exc)
        update.sent_at(now)
        server.stats.sent += 1
        self.answer.answered(now)
