"""vcosim's contract wire protocol (version 1): binary data messages, JSON handshakes.

Every datagram starts with the same 8 bytes in every version, so a peer can always tell a
version it does not speak from garbage: magic ``b"VC"``, protocol version (u8), message kind
(u8), session id (u32, little-endian). Then, by kind:

- HELLO (client → server), WELCOME (server → client), ERROR (server → client): UTF-8 JSON.
- DATA (both ways): contract id (u16), value count (u16), serial number (u32), the sender's
  simulation time (f64), then the values (f64 each). 24 bytes of header.
- PING (client → server): sequence (u32), send time on the client's monotonic clock (f64),
  on its wall clock (f64), the client's simulation time (f64).
- PONG (server → client): the PING's four fields echoed, then the server's wall-clock time
  (f64) and simulation time (f64) at receipt.
- BYE, BYE_ACK (both ways): the header alone.

See docs/contracts.md for the exchange; the handshake bodies are the pydantic models below.
"""

from __future__ import annotations

import random
import struct
from enum import IntEnum
from math import isfinite
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from vcosim.contracts import limits
from vcosim.contracts.limits import Demand, Finite, Name, Period, Timeout, Width
from vcosim.errors import ProtocolError

MAGIC = b"VC"
VERSION = 1
MAX_DATAGRAM = 65507
WIRE_DTYPE = np.dtype("<f8")


class Kind(IntEnum):
    """Message kinds (the fourth byte)."""

    HELLO = 1
    WELCOME = 2
    DATA = 3
    PING = 4
    PONG = 5
    BYE = 6
    BYE_ACK = 7
    ERROR = 8


HEADER = struct.Struct("<2sBBI")  # magic, version, kind, session
DATA_HEADER = struct.Struct("<2sBBIHHId")  # + contract, count, serial, sender's time
PING = struct.Struct("<2sBBIIddd")  # + sequence, monotonic send time, wall send time, sim time
PONG = struct.Struct("<2sBBIIddddd")  # + server wall time, server sim time
_KINDS = frozenset(int(k) for k in Kind)
_DATA = int(Kind.DATA)
_pack_data = DATA_HEADER.pack_into


class Malformed(ProtocolError):
    """A datagram that is not a valid message; ``reason`` is the counter it goes to."""

    def __init__(self, reason: str, detail: str = "") -> None:
        self.reason = reason
        self.detail = detail
        super().__init__(f"{reason}: {detail}" if detail else reason)


def read_header(data: bytes | bytearray | memoryview, size: int) -> tuple[int, int]:
    """(kind, session) of a datagram of ``size`` bytes; Malformed if it is not ours."""
    if size < HEADER.size:
        raise Malformed("short", f"{size} bytes")
    magic, version, kind, session = HEADER.unpack_from(data)
    if magic != MAGIC:
        raise Malformed("bad_magic")
    if version != VERSION:
        raise Malformed("version", f"protocol version {version}; this side speaks {VERSION}")
    if kind not in _KINDS:
        raise Malformed("unknown_kind", f"kind {kind}")
    return kind, session


def new_session_id() -> int:
    """A random non-zero 32-bit session id: a new one for every connection attempt."""
    return random.randrange(1, 1 << 32)


def header(kind: Kind, session: int) -> bytes:
    """The 8-byte header alone (BYE, BYE_ACK)."""
    return HEADER.pack(MAGIC, VERSION, kind, session)


# -- data ------------------------------------------------------------------------------------
class DataMessage:
    """A reusable outgoing DATA datagram: fill ``values`` in place, then ``pack``."""

    __slots__ = ("buffer", "values", "contract", "serial", "_count")

    def __init__(self, contract: int, width: int) -> None:
        self.buffer = bytearray(DATA_HEADER.size + 8 * width)
        self.values = np.frombuffer(self.buffer, WIRE_DTYPE, width, DATA_HEADER.size)
        self.contract = contract
        self.serial = 0
        self._count = width

    def pack(self, session: int, time: float) -> bytearray:
        """Stamp the next serial number and the sender's time; returns the datagram."""
        self.serial += 1
        _pack_data(
            self.buffer,
            0,
            MAGIC,
            VERSION,
            _DATA,
            session,
            self.contract,
            self._count,
            self.serial,
            time,
        )
        return self.buffer


def read_data(data: bytes | bytearray, size: int) -> tuple[int, int, float, np.ndarray]:
    """(contract, serial, time, values) of a DATA datagram; values is a view of ``data``."""
    if size < DATA_HEADER.size:
        raise Malformed("short", f"DATA of {size} bytes")
    _, _, _, _, contract, count, serial, time = DATA_HEADER.unpack_from(data)
    if size != DATA_HEADER.size + 8 * count:
        raise Malformed("bad_length", f"DATA says {count} values in {size} bytes")
    if not isfinite(time):
        raise Malformed("bad_time", f"DATA stamped {time!r}")
    return contract, serial, time, np.frombuffer(data, WIRE_DTYPE, count, DATA_HEADER.size)


class DataReader:
    """Reads DATA datagrams out of one receive buffer, as ``read_data`` does.

    The values are a view of the buffer, made once per value count and kept: a receiver in
    lock-step reads thousands of updates a second and need not build a view for each.
    """

    __slots__ = ("_buffer", "_views")

    def __init__(self, buffer: bytearray) -> None:
        self._buffer = buffer
        self._views: dict[int, np.ndarray] = {}

    def read(self, size: int) -> tuple[int, int, float, np.ndarray]:
        """(contract, serial, time, values) of the DATA datagram of ``size`` bytes in the buffer.

        The values are valid until the next datagram is received into the buffer.
        """
        if size < DATA_HEADER.size:
            raise Malformed("short", f"DATA of {size} bytes")
        _, _, _, _, contract, count, serial, time = DATA_HEADER.unpack_from(self._buffer)
        if size != DATA_HEADER.size + 8 * count:
            raise Malformed("bad_length", f"DATA says {count} values in {size} bytes")
        if not isfinite(time):
            raise Malformed("bad_time", f"DATA stamped {time!r}")
        values = self._views.get(count)
        if values is None:
            values = np.frombuffer(self._buffer, WIRE_DTYPE, count, DATA_HEADER.size)
            self._views[count] = values
        return contract, serial, time, values


# -- pings -----------------------------------------------------------------------------------
def ping(session: int, sequence: int, mono: float, wall: float, sim_time: float) -> bytes:
    """A PING datagram."""
    return PING.pack(MAGIC, VERSION, Kind.PING, session, sequence, mono, wall, sim_time)


def read_ping(data: bytes | bytearray, size: int) -> tuple[int, float, float, float]:
    """(sequence, monotonic send time, wall send time, client simulation time)."""
    if size != PING.size:
        raise Malformed("bad_length", f"PING of {size} bytes")
    return PING.unpack_from(data)[4:]


def pong(
    session: int, echoed: tuple[int, float, float, float], wall: float, sim_time: float
) -> bytes:
    """The PONG answering a PING's fields ``echoed``."""
    return PONG.pack(MAGIC, VERSION, Kind.PONG, session, *echoed, wall, sim_time)


def read_pong(data: bytes | bytearray, size: int) -> tuple[int, float, float, float, float, float]:
    """(sequence, monotonic send, wall send, client sim time, server wall, server sim time)."""
    if size != PONG.size:
        raise Malformed("bad_length", f"PONG of {size} bytes")
    return PONG.unpack_from(data)[4:]


# -- handshake -------------------------------------------------------------------------------
class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FieldRequest(_Body):
    """A field the client asks for: a property of an object, with params and a width."""

    object: Name | None = None
    property: Name
    params: Name | None = None
    size: Width = 1


class ContractRequest(_Body):
    """A contract as the client proposes it (direction from the server's point of view)."""

    id: Annotated[int, Field(ge=0, le=65535)]
    direction: Literal["to_client", "to_server"]
    period: Period
    time_sync: bool = False
    overdue_timeout: Timeout | None = None
    fields: Annotated[list[FieldRequest], Field(max_length=limits.MAX_FIELDS)]

    def demand(self, where: str) -> Demand:
        """What this contract asks of the server (``limits.demand_problems`` judges it)."""
        return Demand(
            where,
            self.direction == "to_client",
            self.period,
            len(self.fields),
            sum(f.size for f in self.fields),
        )


class Hello(_Body):
    """HELLO: the client's contracts."""

    client: Annotated[str, Field(max_length=limits.MAX_NAME)] = ""
    time: Finite = 0.0
    contracts: Annotated[list[ContractRequest], Field(max_length=limits.MAX_CONTRACTS)]

    def problems(self) -> list[str]:
        """What it asks beyond ``limits`` (the client checks its file by the same rules)."""
        return limits.demand_problems(
            c.demand(f"contracts[{i}]") for i, c in enumerate(self.contracts)
        )


class FieldAnswer(_Body):
    """The server's answer for one field: accepted, or refused with a reason."""

    accepted: bool
    reason: str | None = None


class ContractAnswer(_Body):
    """The answers for one contract's fields, in order."""

    id: int
    fields: list[FieldAnswer]


class Welcome(_Body):
    """WELCOME: per-field answers, the server's time and step, the objects it serves."""

    server: str = ""
    time: Finite = 0.0
    dt: Finite = 0.0
    objects: list[str] = Field(default_factory=list)
    contracts: list[ContractAnswer]


class ErrorBody(_Body):
    """ERROR: a code the client acts on (``unknown_session``, ``bad_hello``, ``busy``), a text."""

    code: str
    message: str | None = None


def encode(kind: Kind, session: int, body: BaseModel) -> bytes:
    """A JSON message (HELLO, WELCOME, ERROR); ProtocolError if it does not fit a datagram."""
    data = header(kind, session) + body.model_dump_json(exclude_none=True).encode()
    if len(data) > MAX_DATAGRAM:
        raise ProtocolError(
            f"{kind.name} of {len(data)} bytes does not fit one datagram "
            f"({MAX_DATAGRAM}); use fewer fields per contract"
        )
    return data


def error(session: int, code: str, message: str, limit: int) -> bytes | None:
    """An ERROR of at most ``limit`` bytes (its message cut to fit); None if none fits.

    The server never answers with more bytes than it was sent: no reply amplifies.
    """
    body = ErrorBody(code=code, message=message)
    data = encode(Kind.ERROR, session, body)
    excess = len(data) - limit
    if excess <= 0:
        return data
    text = message.encode()
    keep = len(text) - excess - 3
    # the text cut to fit (on a character boundary), or left out
    body.message = text[:keep].decode(errors="ignore") + "..." if keep > 0 else None
    data = encode(Kind.ERROR, session, body)
    return data if len(data) <= limit else None


def decode(data: bytes | bytearray, size: int, model: type[_Body]) -> Any:
    """The JSON body of a HELLO, WELCOME or ERROR as ``model``; Malformed if it is not one.

    Never raises anything else: ``bad_json`` if the body is not JSON (or nests deeper than
    any message), ``bad_body`` if it is JSON but not a valid ``model``.
    """
    try:
        document = limits.load_json(bytes(data[HEADER.size : size]))
    except Exception as exc:
        raise Malformed("bad_json", f"{model.__name__}: {_short(str(exc))}") from None
    try:
        return model.model_validate(document)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        text = f"{where}: {first['msg']}" if where else first["msg"]
        raise Malformed("bad_body", f"{model.__name__}: {_short(text)}") from None
    except Exception as exc:
        raise Malformed("bad_body", f"{model.__name__}: {_short(repr(exc))}") from None


def _short(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
