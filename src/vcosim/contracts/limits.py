"""What one client may ask of the contract server: the rules both sides check, written once.

The client checks its file against them before it connects (``vcosim connect`` rejects a file
the server would refuse, with JSON paths), the server checks every HELLO against them before
it allocates anything (a HELLO that breaks one gets an ERROR ``bad_hello`` that says which).
They bound what one HELLO may cost the server: periods, field counts and widths, name
lengths, and the bytes and datagrams per second it would send to that client.

``load_json`` reads JSON from a file or a datagram with its depth refused *before* parsing,
so no document can make the parser recurse (a datagram's size is bounded by UDP itself).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Annotated, Any

import numpy as np
from pydantic import Field

MIN_PERIOD = 0.0005  # s: one physics step of the 2000 Hz vehicle
MAX_PERIOD = 10.0  # s
MAX_TIMEOUT = 3600.0  # s: an overdue-data timeout
MAX_FIELD_WIDTH = 64  # values of one field (the widest property has 4)
MAX_CONTRACT_WIDTH = 8000  # values per contract: one datagram (65,507 bytes) holds 8,185
MAX_FIELDS = 256  # contract fields in one HELLO (its WELCOME must fit one datagram)
MAX_CONTRACTS = 64  # contracts in one HELLO
MAX_NAME = 64  # characters of an object or property name, or of params
MAX_CLIENT_RATE = 8_000_000  # bytes/s the server may send one client (8,000 values at 100 Hz)
MAX_CLIENT_SENDS = 10_000  # datagrams/s the server may send one client
MAX_COORDINATE = 1e7  # m: a point's coordinates (10,000 km from the origin)
MAX_JSON_DEPTH = 16  # a HELLO is 5 deep, a contract file 6
DATA_OVERHEAD = 24  # bytes of a DATA message besides its values

Period = Annotated[float, Field(ge=MIN_PERIOD, le=MAX_PERIOD, allow_inf_nan=False)]
PeriodMs = Annotated[float, Field(ge=MIN_PERIOD * 1e3, le=MAX_PERIOD * 1e3, allow_inf_nan=False)]
Timeout = Annotated[float, Field(ge=0, le=MAX_TIMEOUT, allow_inf_nan=False)]
TimeoutMs = Annotated[float, Field(ge=0, le=MAX_TIMEOUT * 1e3, allow_inf_nan=False)]
Width = Annotated[int, Field(ge=1, le=MAX_FIELD_WIDTH)]
Name = Annotated[str, Field(min_length=1, max_length=MAX_NAME)]
Finite = Annotated[float, Field(allow_inf_nan=False)]
Coordinate = Annotated[float, Field(ge=-MAX_COORDINATE, le=MAX_COORDINATE, allow_inf_nan=False)]


@dataclass(frozen=True)
class Demand:
    """One contract as the rules see it: where it is (for messages), its schedule and size."""

    where: str
    to_client: bool
    period: float
    fields: int
    width: int

    @property
    def rate(self) -> float:
        """Bytes per second the server sends for it (0 for a contract the client sends)."""
        return (DATA_OVERHEAD + 8 * self.width) / self.period if self.to_client else 0.0

    @property
    def sends(self) -> float:
        """Datagrams per second the server sends for it."""
        return 1.0 / self.period if self.to_client else 0.0


def demand_problems(demands: Iterable[Demand]) -> list[str]:
    """What a client's contracts ask beyond the limits, each with where (empty: none)."""
    demands = list(demands)
    problems = [
        f"{d.where}: {d.width} values do not fit one datagram "
        f"(at most {MAX_CONTRACT_WIDTH} per contract)"
        for d in demands
        if d.width > MAX_CONTRACT_WIDTH
    ]
    if len(demands) > MAX_CONTRACTS:
        problems.append(f"$: {len(demands)} contracts; at most {MAX_CONTRACTS}")
    fields = sum(d.fields for d in demands)
    if fields > MAX_FIELDS:
        problems.append(f"$: {fields} contract fields; at most {MAX_FIELDS}")
    rate = sum(d.rate for d in demands)
    if rate > MAX_CLIENT_RATE:
        problems.append(
            f"$: the server would send {rate / 1e6:.3g} MB/s; at most "
            f"{MAX_CLIENT_RATE / 1e6:g} MB/s per client (longer periods or fewer fields)"
        )
    sends = sum(d.sends for d in demands)
    if sends > MAX_CLIENT_SENDS:
        problems.append(
            f"$: the server would send {sends:.0f} updates/s; at most {MAX_CLIENT_SENDS} "
            f"per client (longer periods or fewer contracts)"
        )
    return problems


def coordinates(value: object) -> list[float] | None:
    """2 or 3 numbers from ``"X,Y"``/``"X,Y,Z"`` or a sequence, whatever their size; or None."""
    parts: list[object]
    if isinstance(value, str):
        parts = list(value.replace(";", ",").split(","))
    elif isinstance(value, (tuple, list)):
        parts = list(value)
    else:
        return None
    if len(parts) not in (2, 3):
        return None
    try:
        return [float(p) for p in parts]  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        return None


def point_problem(params: str) -> str | None:
    """Why ``params`` that read as a point are not a usable one (None: fine, or no point)."""
    xyz = coordinates(params)
    if xyz is None or all(abs(c) <= MAX_COORDINATE for c in xyz):  # (False for NaN)
        return None
    return f"a point's coordinates must be finite and within ±{MAX_COORDINATE:g} m"


def json_depth(data: bytes) -> int:
    """How deep arrays and objects nest in ``data`` (brackets inside strings not counted)."""
    skeleton = data.translate(None, _NOT_STRUCTURE)  # brackets, quotes and backslashes
    brackets = _STRING.sub(b"", skeleton) if b'"' in skeleton else skeleton
    if not brackets:
        return 0
    marks = np.frombuffer(brackets, np.uint8)
    opening = (marks == ord("[")) | (marks == ord("{"))
    return int(np.cumsum(opening.astype(np.int32) * 2 - 1).max())


def load_json(data: bytes | str, *, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """Parse JSON nested at most ``max_depth`` deep; ValueError (with why) for anything else.

    The depth is refused before parsing, so no document can exhaust the parser's recursion;
    any other failure of the parser (a number too long, bad UTF-8) is a ValueError too.
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    depth = json_depth(raw)
    if depth > max_depth:
        raise ValueError(f"nested {depth} deep; at most {max_depth}")
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        raise
    except Exception as exc:  # RecursionError cannot happen; anything else is bad input
        raise ValueError(f"not valid JSON: {type(exc).__name__}: {exc}") from None


_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b'[]{}"\\')
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
