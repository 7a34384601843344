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

No bytes can make a decoder raise anything but :class:`Malformed` (a ``ProtocolError`` with a
short ``reason`` to count by): numbers are bounded in length before they are converted (an
integer of 5000 digits is refused, not handed to ``int``), and any other exception inside a
decoder becomes ``Malformed("decoder", ...)``. The frame parsers return None for anything
that is not their frame.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from vcosim.bus.catalogue import CATALOGUE, MAX_MODULE_ID, Message, Param
from vcosim.constants import BUS_MAX_LENGTH, BUS_SYMBOLS
from vcosim.errors import ConfigError, ProtocolError

DEFAULT_MAX_LENGTH = BUS_MAX_LENGTH
"""Bytes in one message at most, symbols included (the seed's limit)."""

MAX_INT_DIGITS = 18
"""Digits of an integer parameter at most: every catalogue range fits, and ``int`` stays cheap."""

_ID_DIGITS = len(str(MAX_MODULE_ID))
_INT = re.compile(rf"-?\d{{1,{MAX_INT_DIGITS}}}\Z")
_ID = re.compile(rf"\d{{1,{_ID_DIGITS}}}\Z")
_FLOAT = re.compile(r"-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?\Z")  # (no backtracking)
_FORBIDDEN_SYMBOLS = "-.0123456789eE"


class Malformed(ProtocolError):
    """Bytes that are not a valid message; ``reason`` is a short key to count them by.

    Reasons: ``length``, ``start``, ``end``, ``common``, ``type``, ``parameters``,
    ``number``, ``decoder`` (anything else that went wrong inside the decoder).
    """

    def __init__(self, reason: str, text: str) -> None:
        super().__init__(text)
        self.reason = reason


@dataclass(frozen=True)
class Codec:
    """Turns messages into bytes and back, with configurable symbols and maximum length."""

    start: str = BUS_SYMBOLS[0]
    separator: str = BUS_SYMBOLS[1]
    common_end: str = BUS_SYMBOLS[2]
    end: str = BUS_SYMBOLS[3]
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
        """The message in ``data``; :class:`Malformed` that says what is wrong, and nothing else.

        The one boundary between network bytes and messages: whatever goes wrong inside
        (a bug, an exotic exception of a new message type's checks) is a ``Malformed`` too.
        """
        try:
            return self._decode(data)
        except Malformed:
            raise
        except ProtocolError as exc:  # a parameter's check in the catalogue
            raise Malformed("parameters", str(exc)) from None
        except Exception as exc:  # noqa: BLE001 (the boundary: nothing may pass)
            raise Malformed("decoder", f"{type(exc).__name__}: {_clip(str(exc))}") from None

    def _decode(self, data: bytes) -> Message:
        if len(data) > self.max_length:
            raise Malformed(
                "length",
                f"message of {len(data)} bytes is longer than the maximum {self.max_length}",
            )
        text = data.decode("latin-1")
        if not text.startswith(self.start):
            hint = " (UTF-8? the bus speaks Latin-1)" if data[:1] == b"\xc2" else ""
            raise Malformed(
                "start", f"message does not begin with {self.start!r}{hint}: {_clip(text)}"
            )
        if not text.endswith(self.end) or len(text) < 2:
            raise Malformed("end", f"message does not end with {self.end!r}: {_clip(text)}")
        common, found, body = text[1:-1].partition(self.common_end)
        if not found:
            raise Malformed(
                "common", f"no {self.common_end!r} closes the common part: {_clip(text)}"
            )
        head = common.split(self.separator)
        if len(head) != 3 or not all(_ID.match(h) for h in head) or head[2] not in ("0", "1"):
            raise Malformed(
                "common",
                f"the common part must be <type>{self.separator}<to>"
                f"{self.separator}<0|1>, got {_clip(common)}",
            )
        cls = CATALOGUE.get(int(head[0]))
        if cls is None:
            raise Malformed(
                "type",
                f"unknown message type {head[0]} (known: "
                f"{', '.join(f'{t} {c.__name__}' for t, c in CATALOGUE.items())})",
            )
        fields = body.split(self.separator) if body else []
        if len(fields) != len(cls.params):
            names = ", ".join(p.name for p in cls.params) or "none"
            raise Malformed(
                "parameters",
                f"{cls.__name__} needs {len(cls.params)} parameter(s) ({names}), "
                f"got {len(fields)}: {_clip(text)}",
            )
        values: list[Any] = []
        for p, raw in zip(cls.params, fields, strict=True):
            if p.kind is int:
                if not _INT.match(raw):
                    raise Malformed(
                        "number", f"{cls.__name__}.{p.name}: {_clip(raw)} is not an integer"
                    )
                values.append(int(raw))
            elif p.kind is float:
                if not _FLOAT.match(raw):
                    raise Malformed(
                        "number", f"{cls.__name__}.{p.name}: {_clip(raw)} is not a number"
                    )
                values.append(float(raw))
            elif self.end in raw:  # the encoder could not write it back
                raise Malformed(
                    "parameters", f"{cls.__name__}.{p.name}: {_clip(raw)} contains {self.end!r}"
                )
            else:
                values.append(raw)
        return cls(*values, to=int(head[1]), enqueue=head[2] == "1")


def _clip(text: str, n: int = 60) -> str:
    return repr(text if len(text) <= n else text[:n] + "…")


# --- plain messages: valid at a glance --------------------------------------------------------
# A router must refuse whatever ``decode`` refuses, but need not build a message to know that a
# message is fine: most are spelt the way ``encode`` spells them. ``plain_pattern`` matches
# only such spellings whose every value is already known to be in range, so one regex match
# replaces the decoder for them; anything else (leading zeros, an exponent of three digits, a
# type whose ranges no pattern can express) is simply not plain and goes to ``decode``.

_FINITE = r"(?:\d{1,200}(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d{1,2})?"  # below 1e299: never inf
_UNIT = r"(?:0*1(?:\.0*)?|0+(?:\.\d*)?|0*\.\d+)"  # 0..1, written without an exponent
_FLOATS = (  # each pattern with the values it can spell, widest first
    (f"-?{_FINITE}", -math.inf, math.inf),
    (_FINITE, 0.0, math.inf),
    (f"-?{_UNIT}", -1.0, 1.0),
    (_UNIT, 0.0, 1.0),
)
_INT_LIMIT = 10**MAX_INT_DIGITS - 1


def plain_pattern(codec: Codec) -> re.Pattern[bytes]:
    """A pattern whose every full match ``codec.decode`` accepts, for the catalogue as it is now.

    Its length is checked too. Each message type is one branch that captures one group, the
    destination id, so ``match[match.lastindex]`` is it, spelt as ``str(id)`` (no leading
    zeros). A type with checks of its own (its own ``__post_init__``) has no branch: only the
    decoder knows them.
    """
    start, sep, common_end, end = (
        re.escape(symbol.encode("latin-1"))
        for symbol in (codec.start, codec.separator, codec.common_end, codec.end)
    )
    text = b"[^" + sep + end + b"]+"
    destination = b"(" + _spellings(0, MAX_MODULE_ID) + b")"
    branches = []
    for type_id, cls in CATALOGUE.items():
        values = [text if p.kind is str else _value_pattern(p) for p in cls.params]
        if None in values or cls.__post_init__ is not Message.__post_init__:
            continue
        head = b"%d%s%s%s[01]%s" % (type_id, sep, destination, sep, common_end)
        branches.append(head + sep.join(v for v in values if v is not None) + end)
    longest = b"(?=(?s:.){0,%d}\\Z)" % codec.max_length
    return re.compile(longest + start + b"(?:" + b"|".join(branches) + b")")


def _value_pattern(p: Param) -> bytes | None:
    """Spellings of a number that are surely in the parameter's range; None if none fit."""
    low = -math.inf if p.low is None else p.low
    high = math.inf if p.high is None else p.high
    if p.kind is int:
        first = -_INT_LIMIT if p.low is None else max(math.ceil(p.low), -_INT_LIMIT)
        last = _INT_LIMIT if p.high is None else min(math.floor(p.high), _INT_LIMIT)
        return _spellings(first, last) if first <= last else None
    for pattern, smallest, largest in _FLOATS:
        if low <= smallest and largest <= high:
            return pattern.encode("ascii")
    return None


def _spellings(low: int, high: int) -> bytes:
    """A regex of the integers ``low..high`` as ``str`` writes them (no ``-0``, ``+1``, ``07``)."""
    parts = []
    if low < 0:
        parts.append(b"-" + _naturals(max(1, -high), -low))
    if high >= 0:
        parts.append(_naturals(max(0, low), high))
    return b"(?:" + b"|".join(parts) + b")"


def _naturals(low: int, high: int) -> bytes:
    """The integers ``low..high`` (0 <= low <= high) without leading zeros, length by length."""
    parts = []
    for digits in range(len(str(low)), len(str(high)) + 1):
        first = max(low, 10 ** (digits - 1) if digits > 1 else 0)
        last = min(high, 10**digits - 1)
        parts.append(_digit_range(str(first), str(last)))
    return b"(?:" + b"|".join(parts) + b")"


def _digit_range(low: str, high: str) -> bytes:
    """A regex of the digit strings ``low..high``, both of the same length."""
    rest = len(low) - 1
    if low == high:
        return low.encode("ascii")
    if rest == 0 or (low[1:] == "0" * rest and high[1:] == "9" * rest):
        return b"[%s-%s]\\d{%d}" % (low[0].encode(), high[0].encode(), rest)
    if low[0] == high[0]:
        return low[0].encode("ascii") + _digit_range(low[1:], high[1:])
    parts = [low[0].encode("ascii") + _digit_range(low[1:], "9" * rest)]
    if int(high[0]) - int(low[0]) > 1:
        parts.append(b"[%d-%d]\\d{%d}" % (int(low[0]) + 1, int(high[0]) - 1, rest))
    parts.append(high[0].encode("ascii") + _digit_range("0" * rest, high[1:]))
    return b"(?:" + b"|".join(parts) + b")"


# --- control frames --------------------------------------------------------------------------
# Ids have at most as many digits as MAX_MODULE_ID: a 5000-digit id is not a frame at all.
_N = rf"(\d{{1,{_ID_DIGITS}}})"
_HELLO = re.compile(rf"ID {_N}(,MONITOR)?,END\Z")
_ANSWER = re.compile(rf"ID {_N},END\Z")
_REFUSED = re.compile(rf"REFUSED {_N},(.*),END\Z", re.S)
_BYE = re.compile(rf"BYE {_N},END\Z")
_COPY = re.compile(rf"COPY {_N},".encode())


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


def _module_id(digits: str) -> int | None:
    n = int(digits)  # (at most _ID_DIGITS digits: cheap)
    return n if n <= MAX_MODULE_ID else None


def parse_hello(data: bytes) -> tuple[int, bool] | None:
    """(module id, monitor) of a handshake; None if ``data`` is not one."""
    m = _HELLO.match(_text(data))
    n = _module_id(m.group(1)) if m else None
    return None if m is None or n is None else (n, m.group(2) is not None)


def parse_answer(data: bytes) -> int | str | None:
    """The router's id from an acceptance, the reason text from a refusal, else None."""
    text = _text(data)
    if m := _ANSWER.match(text):
        return _module_id(m.group(1))
    if m := _REFUSED.match(text):
        return m.group(2)
    return None


def parse_bye(data: bytes) -> int | None:
    """The module id of a leave frame; None if ``data`` is not one."""
    m = _BYE.match(_text(data)) if data[:4] == b"BYE " else None
    return _module_id(m.group(1)) if m else None


def parse_copy(data: bytes) -> tuple[int, bytes] | None:
    """(sender id, message bytes) of a monitor copy; None if ``data`` is not one."""
    m = _COPY.match(data)
    n = _module_id(m.group(1).decode("ascii")) if m else None
    return None if m is None or n is None else (n, data[m.end() :])
