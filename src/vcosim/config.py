"""Small helpers every configuration file of vcosim shares: read, merge, report problems."""

from __future__ import annotations

import math
import os
import stat
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Annotated, Any, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from vcosim.address import host_problem
from vcosim.errors import ConfigError

T = TypeVar("T")

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


MAX_CONFIG_BYTES = 1 << 20
"""The largest configuration file read (1 MiB): a hand-written file is a few kB; a bigger one
is a mistake or an attack, and parsing it costs memory and time before anything is said."""
MAX_NESTING = 16
"""The deepest nesting of tables and lists in a configuration file (vcosim's go 4 deep)."""
LARGEST_NUMBER = 1e12
"""No quantity vcosim reads, in SI units, is beyond this (a world 10^9 km across, a mass of
10^12 kg); a number beyond it is a typo, and the products of it overflow."""
SMALLEST_NUMBER = 1e-12
"""Nor is any non-zero quantity below this; smaller ones divide to infinity."""
TOO_LARGE = "is beyond any quantity (|x| <= 1e12)"
TOO_SMALL = "is below any quantity (0 or |x| >= 1e-12)"
"""What a number beyond ``LARGEST_NUMBER`` or below ``SMALLEST_NUMBER`` is told (after it, as
``%g``); the vehicle FMU's C check says the same words (``fmi.native.vehicle``)."""


MAX_INPUT_ENV = "VCOSIM_MAX_INPUT_MB"
"""The environment variable that sets the bound of every file a run reads, in MiB, instead of
the defaults (1 MiB for configuration files, :data:`MAX_SCENARIO_BYTES`, ...): for the rare
real file that is bigger."""
MAX_SCENARIO_BYTES = 16 << 20
"""The largest OpenSCENARIO file or catalogue read (16 MiB; the public corpora's largest is
0.6 MB): parsing costs about 16 times the file's size in memory."""
MAX_ROAD_BYTES = 64 << 20
"""The largest OpenDRIVE file read (64 MiB; a city's roads are a few MB)."""


MAX_DURATION = 1e7
"""The longest run, in simulated seconds (116 days): a longer one is a typo (an integer
duration of 2**63-1 would run forever), and its step count would overflow."""
MIN_FRAME_RATE = 0.1
"""The fewest frames per second (one every 10 s); fewer would leave the run unresponsive."""
MAX_FRAME_RATE = 2000.0
"""The most frames per second: one physics step (0.5 ms) per frame."""
MIN_TIME_DILATION, MAX_TIME_DILATION = 1e-3, 1e3
"""Simulated seconds per wall second in realtime pacing (``fast`` pacing has no limit)."""

Duration = Annotated[float, Field(gt=0, le=MAX_DURATION, allow_inf_nan=False)]
"""A run's length in simulated seconds."""
FrameRate = Annotated[float, Field(ge=MIN_FRAME_RATE, le=MAX_FRAME_RATE, allow_inf_nan=False)]
TimeDilation = Annotated[
    float, Field(ge=MIN_TIME_DILATION, le=MAX_TIME_DILATION, allow_inf_nan=False)
]


def _host(host: str) -> str:
    problem = host_problem(host)
    if problem is not None:
        raise ValueError(problem)
    return host


Host = Annotated[str, AfterValidator(_host)]
"""A host name or address, checked as the resolver would take it."""


def input_limit(default: int) -> int:
    """The bound of a kind of input file: ``default``, or what ``VCOSIM_MAX_INPUT_MB`` says."""
    said = os.environ.get(MAX_INPUT_ENV, "").strip()
    try:
        megabytes = float(said)
    except ValueError:
        return default
    return int(megabytes * (1 << 20)) if math.isfinite(megabytes) and megabytes > 0 else default


def read_input_bytes(path: str | Path, source: str, limit: int, what: str) -> bytes:
    """The bytes of an input file no bigger than ``limit``, else one ``ConfigError``.

    A FIFO, a device or a folder is refused before it is opened (opening a FIFO waits for a
    writer, reading a device may never end); ``what`` names the kind of file in the refusal.
    """
    limit = input_limit(limit)
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            raise ConfigError(["not a regular file (a folder, a FIFO or a device)"], source)
        if info.st_size > limit:
            raise ConfigError([_too_big(info.st_size, limit, what)], source)
        with open(path, "rb") as handle:
            raw = handle.read(limit + 1)
    except OSError as exc:
        raise ConfigError([f"cannot read: {exc.strerror or exc}"], source) from None
    if len(raw) > limit:  # it grew since
        raise ConfigError([_too_big(len(raw), limit, what)], source)
    return raw


def _too_big(size: int, limit: int, what: str) -> str:
    return (
        f"{size} bytes: {what} may have at most {limit} bytes "
        f"(set {MAX_INPUT_ENV} to a number of MiB to raise it)"
    )


def read_config_text(
    path: str | Path, source: str | None = None, *, encoding: str = "utf-8"
) -> str:
    """The text of a configuration file; unreadable, too big or not UTF-8 is a ConfigError."""
    where = str(path) if source is None else source
    raw = read_input_bytes(path, where, MAX_CONFIG_BYTES, "a configuration file")
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as exc:
        bad = exc.object[exc.start]
        raise ConfigError([f"not UTF-8 text: byte {exc.start} is {bad:#04x}"], where) from None


def parse_toml(text: str, source: str, *, numbers: bool = True) -> dict[str, Any]:
    """TOML text as a dict; not TOML, nested too deep or a number out of range: ConfigError.

    ``numbers=False`` leaves the numbers to the caller, who lists their problems with the
    rest (:func:`with_number_problems`).
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError([f"not valid TOML: {exc}"], source) from None
    except RecursionError:
        raise ConfigError(["not valid TOML: nested too deep"], source) from None
    deep = nesting_problems(data)
    if deep:
        raise ConfigError(deep, source)
    if numbers:
        check_numbers(data, source)
    return data


def _walk(data: Any) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Every (key path, value) of nested dicts and lists, iteratively, no deeper than allowed."""
    stack: list[tuple[tuple[str, ...], Any]] = [((), data)]
    while stack:
        path, value = stack.pop()
        yield path, value
        if isinstance(value, (dict, list)) and len(path) <= MAX_NESTING:
            items = value.items() if isinstance(value, dict) else enumerate(value)
            stack.extend(((*path, str(k)), v) for k, v in reversed(list(items)))


def nesting_problems(data: Any) -> list[str]:
    """The tables and lists nested deeper than ``MAX_NESTING``, by key path (without recursion)."""
    return [
        f"{'.'.join(path)}: nested deeper than {MAX_NESTING} tables and lists"
        for path, value in _walk(data)
        if isinstance(value, (dict, list)) and len(path) > MAX_NESTING
    ]


def number_problems(data: Any) -> list[str]:
    """Every number out of range or not finite, by key path."""
    problems: list[str] = []
    for path, value in _walk(data):
        where = ".".join(path) or "(top level)"
        if isinstance(value, float) and not math.isfinite(value):
            problems.append(f"{where}: {value} is not a finite number")
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            size = abs(value)
            if size > LARGEST_NUMBER and (isinstance(value, float) or size >= 2**63):
                problems.append(f"{where}: {value:g} {TOO_LARGE}")
            elif 0 < size < SMALLEST_NUMBER:
                problems.append(f"{where}: {value:g} {TOO_SMALL}")
    return problems


def check_numbers(data: Any, source: str) -> None:
    """Raise a ConfigError listing every problem of :func:`number_problems`."""
    problems = number_problems(data)
    if problems:
        raise ConfigError(problems, source)


def with_number_problems(data: Any, source: str, build: Callable[[Any], T]) -> T:
    """``build(data)``, its problems and those of the numbers in ``data`` listed together.

    The numbers' problems come first (each names its key). A number out of range can make
    ``build`` fail in a way of its own (an overflow in a derived quantity): with such
    problems known, that failure adds nothing and is not raised.
    """
    problems = number_problems(data)
    keys = {p.split(":", 1)[0] for p in problems}
    try:
        result = build(data)
    except ConfigError as exc:  # what it says of a bad number's key is said already
        more = [p for p in exc.problems if p.split(":", 1)[0] not in keys]
        raise ConfigError(problems + more, source) from None
    except (ArithmeticError, ValueError, RecursionError):
        if not problems:
            raise
        raise ConfigError(problems, source) from None
    if problems:
        raise ConfigError(problems, source)
    return result


def read_toml(
    path: str | Path, source: str | None = None, *, numbers: bool = True
) -> dict[str, Any]:
    """A TOML configuration file as a dict; every way it can be unreadable is a ConfigError."""
    where = str(path) if source is None else source
    return parse_toml(read_config_text(path, where), where, numbers=numbers)


def deep_merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` with ``over`` laid on top, nested tables merged key by key."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def validation_problems(exc: ValidationError, prefix: str = "") -> list[str]:
    """One line per pydantic error, with its dotted key path (unknown keys said plainly)."""
    out = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"])
        loc = f"{prefix}{loc}" if loc else (prefix.rstrip(".") or "(top level)")
        if err["type"] == "extra_forbidden":
            out.append(f"{loc}: unknown key")
        else:
            out.append(f"{loc}: {err['msg'].removeprefix('Value error, ')}")
    return out


class Options(BaseModel):
    """Base of vcosim's option models: unknown names refused, assignments validated.

    A bad value raises pydantic's ``ValidationError``, which lists every problem with its
    location (the command line turns it into one line per problem and exit code 2). Nested
    in a bigger model (a sweep file's section), the problems keep their full key paths.
    """

    model_config = ConfigDict(extra="forbid", validate_assignment=True)
