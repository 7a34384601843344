"""The VS Connect version-2 configuration file as a validated model.

``load_config(path)`` reads a file (or ``parse_config(data)`` a decoded document) and either
returns a ``ContractConfig`` or raises one ``ConfigError`` listing every problem with its JSON
path (``$.outputs[0].ports[1][0].dataType: ...``). Shape and types are checked by pydantic;
the rules that span several keys (one time-synced contract, a period given once, meta fields
only where they mean something) by ``rule_problems`` over the raw document, so a file with
both kinds of mistakes still gets them all reported at once.

``vcosim.contracts.layout`` turns a valid configuration into the block it describes.
"""

from __future__ import annotations

import difflib
import json
import logging
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from vcosim.config import read_config_text, with_number_problems
from vcosim.constants import CONTRACTS_PORT
from vcosim.contracts.limits import (
    MAX_CONTRACT_WIDTH,
    MAX_PERIOD,
    MIN_PERIOD,
    Demand,
    Name,
    Period,
    PeriodMs,
    Timeout,
    TimeoutMs,
    Width,
    demand_problems,
    load_json,
    point_problem,
)
from vcosim.errors import ConfigError

log = logging.getLogger("vcosim.contracts")

DEFAULT_PORT = CONTRACTS_PORT
DEFAULT_PERIOD = 0.01  # s, when a group gives neither updatePeriod nor updatePeriodMs
CONTRACT_META = ("time", "receive_time_offset", "serial_number")
PING_META = ("ping_results", "pingResults")
PING_WIDTH = 3  # round trip (s), clock offset (s), simulation-time offset (s)
__all__ = ["MAX_CONTRACT_WIDTH", "ContractConfig", "load_config", "parse_config"]


class _Strict(BaseModel):
    """JSON-strict: unknown keys and wrongly typed values are errors, never coerced."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class FieldConfig(_Strict):
    """One field of a port: a remote property (or a meta value), its width and its defaults."""

    remoteObject: Name | None = None
    propertyName: Name
    propertyType: Literal["contract_field", "meta"] | None = None
    dataType: Literal["float"] = "float"
    dataSize: Literal[64] = 64
    arraySize: Width | None = None
    initialValue: float = 0.0
    invalidValue: float = 0.0
    params: Name | None = None

    def is_meta(self, group_type: str) -> bool:
        """Meta by its own propertyType, else by the group's default."""
        kind = self.propertyType or ("meta" if group_type == "commData" else "contract_field")
        return kind == "meta"

    @property
    def width(self) -> int:
        """Values the field occupies: arraySize, or the natural width of a meta property."""
        if self.arraySize is not None:
            return self.arraySize
        return PING_WIDTH if self.propertyName in PING_META else 1


class PortGroupConfig(_Strict):
    """A port group: a contract (or commData) with its schedule and its ports."""

    groupType: Literal["contract", "commData"] = "contract"
    updatePeriod: Period | None = None
    updatePeriodMs: PeriodMs | None = None
    timeSyncMode: Literal["none", "absolute"] = "none"
    overdueDataTimeout: Timeout | None = None
    overdueDataTimeoutMs: TimeoutMs | None = None
    blockTimeThreshold: Timeout | None = None  # deprecated spelling of overdueDataTimeout
    blockTimeThresholdMs: TimeoutMs | None = None  # deprecated spelling, milliseconds
    ports: Annotated[list[Annotated[list[FieldConfig], Field(min_length=1)]], Field(min_length=1)]

    @property
    def period(self) -> float:
        """The update period (s)."""
        if self.updatePeriod is not None:
            return self.updatePeriod
        if self.updatePeriodMs is not None:
            return self.updatePeriodMs / 1000.0
        return DEFAULT_PERIOD

    @property
    def overdue_timeout(self) -> float | None:
        """The overdue-data timeout (s), or None: the contract never blocks for lateness."""
        for seconds, millis in (
            (self.overdueDataTimeout, self.overdueDataTimeoutMs),
            (self.blockTimeThreshold, self.blockTimeThresholdMs),
        ):
            if seconds is not None:
                return seconds
            if millis is not None:
                return millis / 1000.0
        return None

    @property
    def time_sync(self) -> bool:
        """True for ``timeSyncMode: "absolute"``."""
        return self.timeSyncMode == "absolute"

    @property
    def is_contract(self) -> bool:
        """True for contract groups (commData groups produce no contract)."""
        return self.groupType == "contract"


class ContractConfig(_Strict):
    """A VS Connect S-function configuration file, version 2."""

    version: float
    timeDilation: Annotated[float, Field(ge=0, allow_inf_nan=False)] = 1.0
    remoteIP: Annotated[str, Field(min_length=1)] = "127.0.0.1"
    remotePort: Annotated[int, Field(ge=1, le=65535)] = DEFAULT_PORT
    remoteObject: str | None = None
    inputs: list[PortGroupConfig] = Field(default_factory=list)
    outputs: list[PortGroupConfig] = Field(default_factory=list)

    @field_validator("version")
    @classmethod
    def _version_2(cls, value: float) -> float:
        if value != 2:
            raise ValueError(f"must be 2 (this is the version-2 format), not {value:g}")
        return value

    def warnings(self) -> list[str]:
        """Legal but risky combinations the seed warns about."""
        notes = []
        ins = any(g.overdue_timeout is not None for g in self.inputs)
        outs = any(g.overdue_timeout is not None for g in self.outputs)
        if ins and outs:
            notes.append(
                "overdueDataTimeout is set on inputs and on outputs: both peers can "
                "block waiting for each other (a dead-lock); set it on one side only"
            )
        if any(g.time_sync for g in (*self.inputs, *self.outputs)) and (ins or outs):
            notes.append(
                "timeSyncMode and overdueDataTimeout are both used: the seed does not "
                "recommend combining them"
            )
        return notes


# -- loading and validation ------------------------------------------------------------------
def load_config(source: str | Path) -> ContractConfig:
    """Read and validate a configuration file; ConfigError lists every problem."""
    path = Path(source)
    try:
        text = read_config_text(path)
    except UnicodeDecodeError as exc:  # (read_config_text reports only OSError)
        raise ConfigError(
            [f"not UTF-8 text: byte {exc.start} is {exc.object[exc.start]:#04x}"], str(path)
        ) from None
    try:
        data = load_json(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            [f"line {exc.lineno}, column {exc.colno}: not valid JSON: {exc.msg}"], str(path)
        ) from None
    except ValueError as exc:  # nested too deep, a number too long...
        raise ConfigError([f"not a contract file: {exc}"], str(path)) from None
    return with_number_problems(data, str(path), lambda d: parse_config(d, str(path)))


def parse_config(data: Any, source: str = "contract configuration") -> ContractConfig:
    """Validate a decoded JSON document; every problem, each with its JSON path, or the model."""
    problems: list[str] = []
    config = None
    try:
        config = ContractConfig.model_validate(data)
    except ValidationError as exc:
        problems.extend(_describe(error) for error in exc.errors())
    problems.extend(rule_problems(data))
    problems.sort(key=_natural)
    if problems:
        raise ConfigError(problems, source)
    assert config is not None
    for note in config.warnings():
        log.warning("%s: %s", source, note)
    return config


def _natural(problem: str) -> list[Any]:
    """Sort problems by path, numbers as numbers (``[2]`` before ``[10]``)."""
    path = problem.split(": ", 1)[0]
    parts = re.split(r"([0-9]+)", path)  # ASCII digits: "²" is a digit to isdigit, not to int
    return [int(part) if part.isascii() and part.isdigit() else part for part in parts]


def json_path(loc: Sequence[str | int]) -> str:
    """A pydantic location as a JSON path: ``$.outputs[0].ports[1][0].dataType``."""
    path = "$"
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path


_KEYS = {
    "top": ContractConfig.model_fields,
    "group": PortGroupConfig.model_fields,
    "field": FieldConfig.model_fields,
}


def _describe(error: Any) -> str:
    """One pydantic error as ``path: message``, unknown keys with the closest valid one."""
    loc = error["loc"]
    path = json_path(loc)
    if error["type"] == "extra_forbidden":
        depth = len(loc)
        keys = list(_KEYS["top" if depth == 1 else "group" if depth == 3 else "field"])
        close = difflib.get_close_matches(str(loc[-1]), keys, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        return f"{path}: unknown key{hint}"
    if error["type"] == "missing":
        return f"{path}: required key missing"
    message = error["msg"].removeprefix("Value error, ")
    return f"{path}: {message}"


def rule_problems(data: Any) -> list[str]:
    """The rules that span keys, checked on the raw document (tolerant of wrong shapes)."""
    if not isinstance(data, dict):
        return [] if data is None else ["$: the document must be a JSON object"]
    problems: list[str] = []
    synced: list[str] = []
    demands: list[Demand] = []
    default_object = data.get("remoteObject")
    default_object = default_object if isinstance(default_object, str) else None
    for side in ("inputs", "outputs"):
        groups = data.get(side)
        if not isinstance(groups, list):
            continue
        for g, group in enumerate(groups):
            if not isinstance(group, dict):
                continue
            where = f"$.{side}[{g}]"
            problems.extend(_group_problems(group, where, side, default_object))
            if group.get("groupType") != "commData":
                demands.append(_demand(group, where, side))
                if group.get("timeSyncMode") == "absolute":
                    synced.append(where)
    problems.extend(demand_problems(demands))
    if len(synced) > 1:
        problems.append(
            f'$: only one contract may have timeSyncMode "absolute"; '
            f"{len(synced)} do: {', '.join(synced)}"
        )
    return problems


def _group_problems(
    group: dict[str, Any], where: str, side: str, default_object: str | None
) -> list[str]:
    problems = []
    if "updatePeriod" in group and "updatePeriodMs" in group:
        problems.append(f"{where}: give updatePeriod or updatePeriodMs, not both")
    given = [
        k
        for k in (
            "overdueDataTimeout",
            "overdueDataTimeoutMs",
            "blockTimeThreshold",
            "blockTimeThresholdMs",
        )
        if k in group
    ]
    if len(given) > 1:
        problems.append(f"{where}: give one overdue timeout, not {' and '.join(given)}")
    comm = group.get("groupType") == "commData"
    if comm and side == "inputs":
        problems.append(
            f"{where}.groupType: commData groups are outputs only (they report on "
            f"the link; nothing is sent)"
        )
    if comm and group.get("timeSyncMode") == "absolute":
        problems.append(
            f"{where}.timeSyncMode: a commData group is not a contract and cannot be time-synced"
        )
    for p, port in enumerate(_list(group.get("ports"))):
        for f, fld in enumerate(_list(port)):
            if isinstance(fld, dict):
                at = f"{where}.ports[{p}][{f}]"
                problems.extend(_field_problems(fld, at, side, comm, default_object))
    return problems


def _demand(group: dict[str, Any], where: str, side: str) -> Demand:
    """What a contract group asks of the server, read from the raw document (``limits``).

    Meta fields are the client's own (not on the wire); a period out of range counts at the
    nearest legal one (the period's own problem is reported by the model).
    """
    period = _number(group.get("updatePeriod"))
    if period is None:
        millis = _number(group.get("updatePeriodMs"))
        period = DEFAULT_PERIOD if millis is None else millis / 1000.0
    fields = [
        fld
        for port in _list(group.get("ports"))
        for fld in _list(port)
        if isinstance(fld, dict) and fld.get("propertyType", "contract_field") != "meta"
    ]
    sizes = [fld.get("arraySize", 1) for fld in fields]
    width = sum(size if isinstance(size, int) and size > 0 else 1 for size in sizes)
    period = min(max(period, MIN_PERIOD), MAX_PERIOD)
    return Demand(where, side == "outputs", period, len(fields), width)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _number(value: Any) -> float | None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    return float(value) if ok and math.isfinite(value) else None


def _field_problems(
    fld: dict[str, Any], at: str, side: str, comm: bool, default_object: str | None
) -> list[str]:
    problems = []
    kind = fld.get("propertyType", "meta" if comm else "contract_field")
    name = fld.get("propertyName")
    given = fld.get("remoteObject")
    obj = default_object if given is None else given
    if comm:
        if kind != "meta":
            problems.append(f'{at}.propertyType: fields of a commData group are "meta"')
        elif isinstance(name, str) and name not in PING_META:
            problems.append(
                f'{at}.propertyName: a commData meta field is "ping_results", not "{name}"'
            )
    elif kind == "meta":
        if side == "inputs":
            problems.append(
                f"{at}.propertyType: meta fields describe received data; they are outputs only"
            )
        elif isinstance(name, str) and name not in CONTRACT_META:
            valid = ", ".join(f'"{m}"' for m in CONTRACT_META)
            problems.append(
                f'{at}.propertyName: a contract meta field is one of {valid}, not "{name}"'
            )
    elif kind == "contract_field" and obj is None:
        problems.append(f"{at}: no remoteObject (give it here or at the top level)")
    elif kind == "contract_field" and isinstance(obj, str) and isinstance(name, str):
        problems.extend(_property_problems(fld, at, side, obj, name))
    if kind == "meta" and "params" in fld:
        problems.append(f"{at}.params: meta fields take no params")
    params = fld.get("params")
    if isinstance(params, str) and (problem := point_problem(params)) is not None:
        problems.append(f"{at}.params: {problem}")
    return problems


def _property_problems(fld: dict[str, Any], at: str, side: str, obj: str, name: str) -> list[str]:
    """A property no server has (misspelt, read-only as an input, of another width)."""
    from vcosim.contracts.objects import field_problem

    size, params = fld.get("arraySize", 1), fld.get("params")
    if isinstance(size, bool) or not isinstance(size, int) or not isinstance(params, str | None):
        return []  # the model reports the wrong type
    found = field_problem(obj, name, params, size, written=side == "inputs")
    return [] if found is None else [f"{at}.{found[0]}: {found[1]}"]
