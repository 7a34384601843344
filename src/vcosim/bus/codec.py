"""The bus's text formats: messages (``§4§16§0+100§150§156§0¶``) and the control frames.

A message is Latin-1 text: a start symbol, the common part (type, destination id, enqueue flag)
split by the separator and closed by the common-part end, then the parameters split by the
separator, then the end symbol. The four symbols and the maximum length are configurable; both
ends of a link must agree on them.

Integers are written in decimal, floats as Python's shortest round-trip form (``repr``), so a
float survives the wire exactly and a replayed recording carries the very same values.

Control frames are short ASCII lines that are never confused with messages (they do not begin
with the start symbol, which may not be a letter):

- ``ID <n>,END`` / ``ID <n>,MONITOR,END`` — a module asks the router for id ``n`` (a monitor
  also gets a copy of every message); the router answers ``ID <router id>,END`` from the
  socket it opened for that module, or ``REFUSED <n>,<reason>,END``.
- ``BYE <n>,END`` — a module leaves; its id becomes free.
- ``COPY <sender id>,<message>`` — the router's copy of a message, sent to monitors.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from vcosim.bus.catalogue import CATALOGUE, Message
from vcosim.errors import ConfigError, ProtocolError

DEFAULT_MAX_LENGTH = 256
"""Bytes in one message at most, symbols included (the seed's limit)."""

_INT = re.compile(r"-?\d+\Z")
_FLOAT = re.compile(r"-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\Z")
_FORBIDDEN_SYMBOLS = "-.0123456789eE"


@dataclass(frozen=True)
class Codec:
    """Turns messages into bytes and back, with configurable symbols and maximum length."""

    start: str = "§"
    separator: str = "§"
    common_end: str = "+"
    end: str = "¶"
    max_length: int = DEFAULT_MAX_LENGTH

    def __post_init__(self) -> None:
        problems = []
        symbols = {
            "start": self.start,
            "separator": self.separator,
            "common_end": self.common_end,
            "end": self.end,
        }
        for name, symbol in symbols.items():
            if len(symbol) != 1 or ord(symbol) > 255:
                problems.append(f"{name}: {symbol!r} must be one Latin-1 character")
            elif symbol.isalnum() or symbol.isspace() or symbol in _FORBIDDEN_SYMBOLS:
                problems.append(f"{name}: {symbol!r} may not be a letter, digit, space, '-' or '.'")
        if len({self.separator, self.common_end, self.end}) < 3:
            problems.append("separator, common_end and end must be three different symbols")
        if "+" in (self.separator, self.end):
            problems.append("separator and end may not be '+', which numbers like 1e+20 contain")
        if self.start in (self.common_end, self.end):
            problems.append("start may equal the separator, but not common_end or end")
        if not 16 <= self.max_length <= 65000:
            problems.append(f"max_length: {self.max_length} is not in 16..65000 bytes")
        if problems:
            raise ConfigError(problems, "bus codec")

    @classmethod
    def from_symbols(cls, symbols: str, max_length: int = DEFAULT_MAX_LENGTH) -> Codec:
        """A codec from four symbols in the order start, separator, common end, end (``§§+¶``)."""
        if len(symbols) != 4:
            raise ConfigError(
                [
                    f"symbols: {symbols!r} must be four characters: start, "
                    "separator, common end, end (default '§§+¶')"
                ],
                "bus codec",
            )
        return cls(symbols[0], symbols[1], symbols[2], symbols[3], max_length)

    # -- encoding ---------------------------------------------------------------------------
    def encode(self, message: Message) -> bytes:
        """The message as wire bytes; ProtocolError if it cannot be written or is too long."""
        sep = self.separator
        parts = []
        for p, value in zip(message.params, message.values, strict=True):
            if p.kind is str:
                for symbol in (sep, self.end):
                    if symbol in value:
                        raise ProtocolError(
                            f"{type(message).__name__}.{p.name}: {value!r} "
                            f"contains the symbol {symbol!r}"
                        )
                parts.append(value)
            else:
                parts.append(repr(value) if p.kind is float else str(value))
        text = (
            f"{self.start}{message.type_id}{sep}{message.to}{sep}{int(message.enqueue)}"
            f"{self.common_end}{sep.join(parts)}{self.end}"
        )
        data = text.encode("latin-1")
        if len(data) > self.max_length:
            raise ProtocolError(
                f"{type(message).__name__} to {message.to} is {len(data)} bytes, "
                f"more than the maximum {self.max_length}"
            )
        return data

    # -- decoding ---------------------------------------------------------------------------
    def decode(self, data: bytes) -> Message:
        """The message in ``data``; a ProtocolError that says what is wrong if it is malformed."""
        if len(data) > self.max_length:
            raise ProtocolError(
                f"message of {len(data)} bytes is longer than the maximum {self.max_length}"
            )
        text = data.decode("latin-1")
        if not text.startswith(self.start):
            hint = " (UTF-8? the bus speaks Latin-1)" if data[:1] == b"\xc2" else ""
            raise ProtocolError(f"message does not begin with {self.start!r}{hint}: {_clip(text)}")
        if not text.endswith(self.end) or len(text) < 2:
            raise ProtocolError(f"message does not end with {self.end!r}: {_clip(text)}")
        common, found, body = text[1:-1].partition(self.common_end)
        if not found:
            raise ProtocolError(f"no {self.common_end!r} closes the common part: {_clip(text)}")
        head = common.split(self.separator)
        if len(head) != 3 or not all(_INT.match(h) for h in head) or head[2] not in ("0", "1"):
            raise ProtocolError(
                f"the common part must be <type>{self.separator}<to>"
                f"{self.separator}<0|1>, got {common!r}"
            )
        cls = CATALOGUE.get(int(head[0]))
        if cls is None:
            raise ProtocolError(
                f"unknown message type {head[0]} (known: "
                f"{', '.join(f'{t} {c.__name__}' for t, c in CATALOGUE.items())})"
            )
        fields = body.split(self.separator) if body else []
        if len(fields) != len(cls.params):
            names = ", ".join(p.name for p in cls.params) or "none"
            raise ProtocolError(
                f"{cls.__name__} needs {len(cls.params)} parameter(s) ({names}), "
                f"got {len(fields)}: {_clip(text)}"
            )
        values: list[Any] = []
        for p, raw in zip(cls.params, fields, strict=True):
            if p.kind is int:
                if not _INT.match(raw):
                    raise ProtocolError(f"{cls.__name__}.{p.name}: {raw!r} is not an integer")
                values.append(int(raw))
            elif p.kind is float:
                if not _FLOAT.match(raw):
                    raise ProtocolError(f"{cls.__name__}.{p.name}: {raw!r} is not a number")
                values.append(float(raw))
            else:
                values.append(raw)
        return cls(*values, to=int(head[1]), enqueue=head[2] == "1")


def _clip(text: str, n: int = 60) -> str:
    return repr(text if len(text) <= n else text[:n] + "…")


# --- control frames --------------------------------------------------------------------------
_HELLO = re.compile(r"ID (\d+)(,MONITOR)?,END\Z")
_ANSWER = re.compile(r"ID (\d+),END\Z")
_REFUSED = re.compile(r"REFUSED (\d+),(.*),END\Z", re.S)
_BYE = re.compile(r"BYE (\d+),END\Z")
_COPY = re.compile(rb"COPY (\d+),")


def hello(module_id: int, monitor: bool = False) -> bytes:
    """A module's handshake: ask for ``module_id`` (as a monitor: copies of every message)."""
    return f"ID {module_id}{',MONITOR' if monitor else ''},END".encode("ascii")


def answer(router_id: int) -> bytes:
    """The router's acceptance of a handshake."""
    return f"ID {router_id},END".encode("ascii")


def refused(module_id: int, reason: str) -> bytes:
    """The router's refusal of a handshake, with the reason."""
    return f"REFUSED {module_id},{reason},END".encode("latin-1", "replace")


def bye(module_id: int) -> bytes:
    """A module leaving the bus."""
    return f"BYE {module_id},END".encode("ascii")


def copy_frame(sender: int, data: bytes) -> bytes:
    """A monitor's copy of a routed message, tagged with the sender's id."""
    return b"COPY %d," % sender + data


def _text(data: bytes) -> str:
    return data.decode("latin-1").strip().rstrip("\0").strip()


def parse_hello(data: bytes) -> tuple[int, bool] | None:
    """(module id, monitor) of a handshake; None if ``data`` is not one."""
    m = _HELLO.match(_text(data))
    return (int(m.group(1)), m.group(2) is not None) if m else None


def parse_answer(data: bytes) -> int | str | None:
    """The router's id from an acceptance, the reason text from a refusal, else None."""
    text = _text(data)
    if m := _ANSWER.match(text):
        return int(m.group(1))
    if m := _REFUSED.match(text):
        return m.group(2)
    return None


def parse_bye(data: bytes) -> int | None:
    """The module id of a leave frame; None if ``data`` is not one."""
    m = _BYE.match(_text(data)) if data[:4] == b"BYE " else None
    return int(m.group(1)) if m else None


def parse_copy(data: bytes) -> tuple[int, bytes] | None:
    """(sender id, message bytes) of a monitor copy; None if ``data`` is not one."""
    m = _COPY.match(data)
    return (int(m.group(1)), data[m.end() :]) if m else None
