"""Busy-polling a socket from compiled code, for the lock-step fast paths of both ends.

(Just past 400 lines: the compiled receive and the exchange loops of both ends built on it share
one set of compiled system calls and buffers; split, each end would declare them again.)

A non-blocking receive that finds nothing costs Python a raised ``BlockingIOError`` (about
2 µs here); the peer's datagram lands during one of them and waits for it to end. ``receive``
polls in a compiled loop (libc's ``recvfrom`` with ``MSG_DONTWAIT``), so a poll costs only its
system call and a datagram is taken well under a microsecond after it arrived. It returns to
Python after ``tries`` empty polls, so the caller keeps its clock, its stop flag and its
manners (yielding the core) in Python.
"""

from __future__ import annotations

import math
import os
import socket
from typing import Any

import numpy as np
from numba import types

from vcosim.contracts import protocol as P
from vcosim.vehicle._jit_cache import entry_point, njit  # (its cache: the kernels it calls)
from vcosim.vehicle.model import advance
from vcosim.vehicle.writes import write_inputs

# libc's calls, by their C signatures (pointers passed as addresses: ``array.ctypes.data``)
_recvfrom: Any = types.ExternalFunction(
    "recvfrom",
    types.intp(types.intc, types.intp, types.intp, types.intc, types.intp, types.intp),
)
_sendto: Any = types.ExternalFunction(
    "sendto",
    types.intp(types.intc, types.intp, types.intp, types.intc, types.intp, types.intc),
)
_send: Any = types.ExternalFunction(
    "send", types.intp(types.intc, types.intp, types.intp, types.intc)
)
_errno: Any = types.ExternalFunction("__errno_location", types.CPointer(types.intc)())
_DONTWAIT = int(socket.MSG_DONTWAIT)
_EAGAIN = 11  # (Linux's EAGAIN, EWOULDBLOCK)
SOCKADDR = 16  # bytes of a sockaddr_in: family, port, IPv4 address, padding
SENDER = SOCKADDR + 4  # a receive's sender: the sockaddr, then its length (u32)
HEAD = 24  # bytes of a DATA message's header
_NEXT_SERIAL = np.uint64(1 << 32)  # one more in the serial number's place of the second word
EPS = 1e-9  # s: the server's tolerance on times (``ContractServer``)
NOTHING = -1
"""``receive``: no datagram within its tries."""
STEPPED = -(1 << 20)
"""``exchange``: returned after a turn (below every ``-1 - errno``)."""
UPDATED = -(1 << 21)
"""``receive_update``: the update waited for is taken (one comparison for the caller)."""


@njit()
def receive(fd: int, buffer: np.ndarray, sender: np.ndarray, tries: int) -> int:
    """The size of the first datagram within ``tries`` polls, its sender's sockaddr in ``sender``.

    ``sender`` has ``SENDER`` bytes: the sockaddr, then room for its length. ``NOTHING`` if
    none came; ``-1 - errno`` for a socket error (``error_of`` makes it the ``OSError``
    Python's receive would have raised).
    """
    data, size, where = buffer.ctypes.data, buffer.size, sender.ctypes.data
    for _ in range(tries):
        sender[SOCKADDR:] = 0  # the address length, a u32 after the address: 16
        sender[SOCKADDR] = SOCKADDR
        got = _recvfrom(fd, data, size, _DONTWAIT, where, where + SOCKADDR)
        if got >= 0:
            return got
        errno = _errno()[0]
        if errno != _EAGAIN:
            return -1 - errno
    return NOTHING


@njit()
def _expected(size: int, words: np.ndarray, want: np.ndarray, stamp: np.ndarray, n: int) -> bool:
    """True if the datagram is the DATA message ``want`` describes, with ``n`` finite values."""
    sent_at = stamp[0]
    return (
        size == HEAD + 8 * n
        and words[0] == want[0]
        and words[1] == want[1]
        and sent_at - sent_at == 0.0  # finite (NaN and inf give NaN)
    )


@njit()
def receive_answer(
    fd: int,
    buffer: np.ndarray,
    sender: np.ndarray,
    tries: int,
    peer: np.ndarray,
    words: np.ndarray,
    want: np.ndarray,
    stamp: np.ndarray,
    values: np.ndarray,
    inputs: np.ndarray,
    rows: np.ndarray,
    limits: np.ndarray,
    clamps: np.ndarray,
) -> int:
    """``receive``; if it is the answer ``want`` describes from ``peer``, write its inputs.

    ``peer`` is a sockaddr (``sockaddr``): family, port and host must match. Sets ``want[2]``
    to 1 when the answer was taken (and ``want[1]`` to the next serial), ``want[3]`` to the
    values clamped (``write_inputs``).
    """
    size = receive(fd, buffer, sender, tries)
    want[2] = 0
    if size >= 0 and _expected(size, words, want, stamp, values.size):
        for i in range(8):
            if sender[i] != peer[i]:
                return size
        want[3] = write_inputs(values, inputs, rows, limits, clamps)
        want[2] = 1
        want[1] += _NEXT_SERIAL
    return size


@njit()
def receive_update(
    fd: int,
    buffer: np.ndarray,
    sender: np.ndarray,
    tries: int,
    words: np.ndarray,
    want: np.ndarray,
    stamp: np.ndarray,
    values: np.ndarray,
    target: np.ndarray,
    out: np.ndarray,
    meta: np.ndarray,
    t: float,
    due: float,
) -> int:
    """``receive``; if it is the update ``want`` describes, copy its values into ``target``.

    Sets ``want[2]`` when the update was taken (and ``want[1]`` to the next serial): to 2 if
    it is stamped ``due`` or later (then returns ``UPDATED``, not its size), else 1. Writes
    its meta values into ``out`` at the slots ``meta`` names (0: none): its time, its age at
    local time ``t`` and its serial number.
    """
    size = receive(fd, buffer, sender, tries)
    want[2] = 0
    if size >= 0 and _expected(size, words, want, stamp, values.size):
        target[:] = values
        sent_at = stamp[0]
        if meta[0]:
            out[meta[0]] = sent_at
        if meta[1]:
            out[meta[1]] = t - sent_at
        if meta[2]:
            out[meta[2]] = want[1] >> np.uint64(32)
        want[1] += _NEXT_SERIAL
        if sent_at >= due:
            want[2] = 2
            return UPDATED
        want[2] = 1
    return size


@njit()
def next_tick(time: float, period: float) -> int:
    """``layout.next_tick`` (after ``time``) in compiled code, by the same operations."""
    return math.floor(time / period + 1e-9) + 1


@njit(nogil=True)  # (its waits let the interpreter's other threads run: a client, say)
def exchange(
    fd: int,
    buffer: np.ndarray,
    sender: np.ndarray,
    tries: int,
    peer: np.ndarray,
    want: np.ndarray,
    width: int,
    inputs: np.ndarray,
    rows: np.ndarray,
    limits: np.ndarray,
    clamps: np.ndarray,
    x: np.ndarray,
    u: np.ndarray,
    params: np.ndarray,
    y: np.ndarray,
    scratch: np.ndarray,
    height: np.ndarray,
    friction: np.ndarray,
    grid: np.ndarray,
    index: np.ndarray,
    message: np.ndarray,
    sent: np.ndarray,
    book: np.ndarray,
    first: int,
    budget: int,
    steps: int,
    due: float,
    next_due: float,
    serial: int,
    dt: float,
    update_period: float,
    answer_period: float,
) -> int:
    """The lock-step server's turns, as many in a row as answers come: no Python in between.

    A turn is ``receive_answer``; if the answer is to the update waited for (stamped ``due``
    or later), its ``width`` inputs written, ``steps`` physics steps (``model.advance`` on
    the vehicle's arrays ``x`` to ``grid``, from step ``first``) and, if the update (of
    the contract's signals ``y[index]``, in ``message``) is then due (at ``next_due``), its
    send, stamped ``serial`` and the time (``send_gathered``). The next turn follows at once
    while it is the same again: the update sent, the answer to it not in yet, its steps
    within the ``budget`` left; the schedule is the server's (``ToClient.sent_at``,
    ``ToServer.answered``, ``LeanExchange.send``) in the same arithmetic.

    Returns ``STEPPED`` after a turn, else what the receive of a turn's answer got (its
    size, ``NOTHING`` or an error; ``want[2]`` set if it is an answer, then an earlier one).
    ``sent``: the last send's result, the turns whose steps ran, the updates sent, the
    values clamped and the steps run. ``book``: the latest two answers' stamps, then the
    latest three updates' times. The views of ``buffer`` and ``message`` are made here: each
    array passed costs every call its unboxing, before the first poll.
    """
    whole = buffer.size // 8 * 8
    reals, words = buffer[:whole].view(np.float64), buffer[:whole].view(np.uint64)
    stamp, values = reals[2:3], reals[3 : 3 + width]
    fields = message.view(np.float64)
    serial_slot, time_slot = message.view(np.uint32)[3:4], fields[2:3]
    sent[:] = 0
    step = first
    while True:
        size = receive_answer(
            fd, buffer, sender, tries, peer, words[:2], want, stamp, values, inputs, rows,
            limits, clamps,
        )  # fmt: skip
        if not want[2] or stamp[0] < due:
            return size
        sent[3] += want[3]
        book[1], book[0] = book[0], stamp[0]
        advance(x, u, params, y, scratch, height, friction, grid, steps)
        sent[1] += 1
        sent[4] += steps
        budget -= steps
        step += steps
        now = step * dt
        if now + EPS < next_due:  # (the frame ends before the update is due)
            return STEPPED
        sent[0] = send_gathered(
            fd, y, index, fields[3:], serial_slot, time_slot, message, peer, serial, now
        )
        sent[2] += 1
        book[4], book[3], book[2] = book[3], book[2], now
        if sent[0] < 0 or budget <= 0:
            return STEPPED
        next_due = next_tick(now, update_period) * update_period
        due = (next_tick(now, answer_period) - 1) * answer_period - EPS
        if book[0] >= due:  # (its answer is in already: nothing to wait for)
            return STEPPED
        steps = min(max(math.ceil((next_due - now) / dt - 1e-6), 1), budget)
        serial += 1


class Expected:
    """The DATA message a lean path waits for, as the kernels check it, over a receive buffer.

    ``want`` holds the header's first 16 bytes as two words (magic, version, kind, session;
    contract, count, serial) and the kernels' two results. ``serial`` is the serial number
    waited for: ``expect`` sets it, a kernel that took the message counts it on (``taken``).
    """

    __slots__ = ("want", "words", "stamp", "values", "serial", "_base")

    def __init__(self, buffer: bytearray, session: int, contract: int, width: int) -> None:
        head = P.HEADER.pack(P.MAGIC, P.VERSION, P.Kind.DATA, session)
        self.want = np.zeros(4, dtype=np.uint64)
        self.want[0] = int.from_bytes(head, "little")
        self._base = contract | width << 16
        self.words = np.frombuffer(buffer, np.uint64, 2)
        self.stamp = np.frombuffer(buffer, P.WIRE_DTYPE, 1, 16)
        self.values = np.frombuffer(buffer, P.WIRE_DTYPE, width, HEAD)
        self.serial = -1

    def expect(self, serial: int) -> bool:
        """Wait for serial number ``serial``; False if it does not fit the wire."""
        if serial > 0xFFFFFFFF:
            return False
        if serial != self.serial:
            self.want[1] = self._base | serial << 32
            self.serial = serial
        return True

    def taken(self) -> None:
        """The kernel took the message waited for: the next serial number is waited for."""
        self.serial += 1


def error_of(code: int) -> OSError:
    """The ``OSError`` (its subclass by errno, as Python raises it) of a ``receive`` error."""
    errno = -1 - code
    return OSError(errno, os.strerror(errno))


def address_of(sender: np.ndarray) -> tuple[str, int]:
    """(host, port) of an IPv4 sockaddr as ``receive`` wrote it."""
    raw = sender.tobytes()
    return socket.inet_ntoa(raw[4:8]), int.from_bytes(raw[2:4], "big")


def sockaddr(address: tuple[str, int]) -> np.ndarray:
    """The sockaddr of an IPv4 (host, port), as ``receive`` writes a sender's."""
    raw = socket.AF_INET.to_bytes(2, "little")
    raw += address[1].to_bytes(2, "big") + socket.inet_aton(address[0])
    return np.frombuffer(raw.ljust(SOCKADDR, b"\0"), np.uint8).copy()


@njit()
def send_gathered(
    fd: int,
    source: np.ndarray,
    index: np.ndarray,
    values: np.ndarray,
    serial_slot: np.ndarray,
    time_slot: np.ndarray,
    message: np.ndarray,
    to: np.ndarray,
    serial: int,
    time: float,
) -> int:
    """Gather ``source[index]`` into a DATA message, stamp it, send it to the sockaddr ``to``.

    ``message`` is the datagram's bytes; ``values``, ``serial_slot`` and ``time_slot`` are
    views of it. Returns the bytes sent, or ``-1 - errno``.
    """
    for i in range(index.size):
        values[i] = source[index[i]]
    serial_slot[0] = serial
    time_slot[0] = time
    sent = _sendto(fd, message.ctypes.data, message.size, 0, to.ctypes.data, SOCKADDR)
    return sent if sent >= 0 else -1 - _errno()[0]


@njit()
def send_values(fd: int, source: np.ndarray, message: np.ndarray, serial: int, time: float) -> int:
    """Copy ``source`` into a DATA message, stamp it, send it on the connected socket ``fd``.

    As ``send_gathered``, without the gather and the address; the message's fields are
    reached through views made here, as each array passed costs the call its unboxing.
    """
    words = message.view(np.float64)  # (the header is 3 words, the values follow)
    for i in range(source.size):
        words[3 + i] = source[i]
    message.view(np.uint32)[3] = serial
    words[2] = time
    sent = _send(fd, message.ctypes.data, message.size, 0)
    return sent if sent >= 0 else -1 - _errno()[0]


class Stamps:
    """A DATA message's bytes and the views a compiled send stamps it through.

    Writes the header's constant part (magic, version, kind, session, contract, count) once.
    """

    __slots__ = ("raw", "serial", "time")

    def __init__(self, message: Any, session: int) -> None:
        message.pack(session, 0.0)
        message.serial -= 1  # (pack counted a message that was not sent)
        self.raw = np.frombuffer(message.buffer, np.uint8)
        self.serial = np.frombuffer(message.buffer, "<u4", 1, 12)
        self.time = np.frombuffer(message.buffer, "<f8", 1, 16)


def warm_up_exchange(vehicle: tuple[object, ...]) -> None:
    """Compile (or load) ``exchange`` for a vehicle's kernel arguments, as ``warm_up`` does."""
    raw, sender = np.zeros(HEAD + 8, dtype=np.uint8), np.zeros(SENDER, dtype=np.uint8)
    want, to = np.zeros(4, dtype=np.uint64), sockaddr(("127.0.0.1", 0))
    reals, index = np.zeros(1), np.zeros(1, dtype=np.int64)
    table = (np.zeros((1, 3), dtype=np.int64), np.zeros((1, 2)), index)
    answer = (-1, raw, sender, 1, to, want, 1, reals, *table, *vehicle)
    update = (index, raw, np.zeros(5, dtype=np.int64), np.zeros(5))
    entry_point(exchange, (*answer, *update, 0, 1, 1, 0.0, 0.0, 0, 0.0, 0.0, 0.0))


def warm_up(server: bool) -> None:
    """Compile (or load from numba's cache) one end's kernels for the arrays its path passes.

    A lean path is made when a session opens: compiling then would hold up the first
    exchanges for seconds, long enough for a lock-step peer to give up waiting. A lock-step
    server calls this when it starts (``server``), a time-synced client when it is made.
    """
    buffer = bytearray(HEAD + 8)
    raw, sender = np.frombuffer(buffer, np.uint8), np.zeros(SENDER, dtype=np.uint8)
    words, want = np.frombuffer(buffer, np.uint64, 2), np.zeros(4, dtype=np.uint64)
    stamp = np.frombuffer(buffer, P.WIRE_DTYPE, 1, 16)
    values = np.frombuffer(buffer, P.WIRE_DTYPE, 1, HEAD)
    serial = np.frombuffer(buffer, "<u4", 1, 12)
    reals, index = np.zeros(1), np.zeros(1, dtype=np.int64)
    if server:
        table = (np.zeros((1, 3), dtype=np.int64), np.zeros((1, 2)), index)
        to = sockaddr(("127.0.0.1", 0))
        answer = (-1, raw, sender, 1, to, words, want, stamp, values, reals, *table)
        entry_point(receive_answer, answer)
        entry_point(send_gathered, (-1, reals, index, values, serial, stamp, raw, to, 0, 0.0))
    else:
        meta = np.zeros(3, dtype=np.int64)
        update = (-1, raw, sender, 1, words, want, stamp, values, reals, reals, meta, 0.0, 0.0)
        entry_point(receive_update, update)
        entry_point(send_values, (-1, reals, raw, 0, 0.0))
