"""The VS Connect version-2 configuration file as a validated model, and the block it describes.

``load_config(path)`` reads a file (or ``parse_config(data)`` a decoded document) and either
returns a ``ContractConfig`` or raises one ``ConfigError`` listing every problem with its JSON
path (``$.outputs[0].ports[1][0].dataType: ...``). Shape and types are checked by pydantic;
the rules that span several keys (one time-synced contract, a period given once, meta fields
only where they mean something) by ``rule_problems`` over the raw document, so a file with
both kinds of mistakes still gets them all reported at once.

``BlockLayout`` turns a valid configuration into what the client needs: contracts with ids,
ports with names and widths, and where each field's values live.
"""

from __future__ import annotations

import difflib
import json
import logging
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from vcosim.config import read_config_text
from vcosim.constants import CONTRACTS_PORT
from vcosim.errors import ConfigError

log = logging.getLogger("vcosim.contracts")

DEFAULT_PORT = CONTRACTS_PORT
DEFAULT_PERIOD = 0.01  # s, when a group gives neither updatePeriod nor updatePeriodMs
CONTRACT_META = ("time", "receive_time_offset", "serial_number")
PING_META = ("ping_results", "pingResults")
PING_WIDTH = 3  # round trip (s), clock offset (s), simulation-time offset (s)
MAX_CONTRACT_WIDTH = 8000  # values per contract: one datagram (65,507 bytes) holds 8,185

Positive = Annotated[float, Field(gt=0)]
NonNegative = Annotated[float, Field(ge=0)]


class _Strict(BaseModel):
    """JSON-strict: unknown keys and wrongly typed values are errors, never coerced."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class FieldConfig(_Strict):
    """One field of a port: a remote property (or a meta value), its width and its defaults."""

    remoteObject: str | None = None
    propertyName: Annotated[str, Field(min_length=1)]
    propertyType: Literal["contract_field", "meta"] | None = None
    dataType: Literal["float"] = "float"
    dataSize: Literal[64] = 64
    arraySize: Annotated[int, Field(ge=1)] | None = None
    initialValue: float = 0.0
    invalidValue: float = 0.0
    params: str | None = None

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
    updatePeriod: Positive | None = None
    updatePeriodMs: Positive | None = None
    timeSyncMode: Literal["none", "absolute"] = "none"
    overdueDataTimeout: NonNegative | None = None
    overdueDataTimeoutMs: NonNegative | None = None
    blockTimeThreshold: NonNegative | None = None  # deprecated spelling of overdueDataTimeout
    blockTimeThresholdMs: NonNegative | None = None  # deprecated spelling, milliseconds
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
    timeDilation: float = 1.0
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
    text = read_config_text(path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            [f"line {exc.lineno}, column {exc.colno}: not valid JSON: {exc.msg}"], str(path)
        ) from None
    return parse_config(data, str(path))


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
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", path)]


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
    has_default_object = isinstance(data.get("remoteObject"), str)
    for side in ("inputs", "outputs"):
        groups = data.get(side)
        if not isinstance(groups, list):
            continue
        for g, group in enumerate(groups):
            if not isinstance(group, dict):
                continue
            where = f"$.{side}[{g}]"
            problems.extend(_group_problems(group, where, side, has_default_object))
            if group.get("timeSyncMode") == "absolute" and group.get("groupType") != "commData":
                synced.append(where)
    if len(synced) > 1:
        problems.append(
            f'$: only one contract may have timeSyncMode "absolute"; '
            f"{len(synced)} do: {', '.join(synced)}"
        )
    return problems


def _group_problems(
    group: dict[str, Any], where: str, side: str, has_default_object: bool
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
    ports = group.get("ports")
    if not isinstance(ports, list):
        return problems
    width = 0
    for p, port in enumerate(ports):
        if not isinstance(port, list):
            continue
        for f, fld in enumerate(port):
            if not isinstance(fld, dict):
                continue
            at = f"{where}.ports[{p}][{f}]"
            problems.extend(_field_problems(fld, at, side, comm, has_default_object))
            size = fld.get("arraySize", 1)
            width += size if isinstance(size, int) and size > 0 else 1
    if width > MAX_CONTRACT_WIDTH:
        problems.append(
            f"{where}: {width} values do not fit one datagram "
            f"(at most {MAX_CONTRACT_WIDTH} per contract)"
        )
    return problems


def _field_problems(
    fld: dict[str, Any], at: str, side: str, comm: bool, has_default_object: bool
) -> list[str]:
    problems = []
    kind = fld.get("propertyType", "meta" if comm else "contract_field")
    name = fld.get("propertyName")
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
    elif (
        kind == "contract_field"
        and not has_default_object
        and not isinstance(fld.get("remoteObject"), str)
    ):
        problems.append(f"{at}: no remoteObject (give it here or at the top level)")
    if kind == "meta" and "params" in fld:
        problems.append(f"{at}.params: meta fields take no params")
    return problems


# -- the block a configuration describes ------------------------------------------------------
@dataclass
class FieldSlot:
    """Where one field lives: in its port, in the block's flat array, on the wire."""

    config: FieldConfig
    label: str
    object: str | None
    meta: str | None  # the meta property, or None for a contract field
    width: int
    flat: int  # first index in the block's flat array of outputs (or inputs)
    wire: int | None  # first index among the contract's values on the wire (None: meta)
    port: int  # index of the port (0-based among data ports of that side)


@dataclass
class ContractLayout:
    """One contract (or commData group) of the file, with everything resolved."""

    id: int | None  # None for commData groups: they are not contracts
    direction: Literal["to_client", "to_server"]
    group: PortGroupConfig
    fields: list[FieldSlot] = field(default_factory=list)

    @property
    def wire_fields(self) -> list[FieldSlot]:
        """The contract fields, in wire order."""
        return [f for f in self.fields if f.meta is None]

    @property
    def wire_width(self) -> int:
        """Values per data message."""
        return sum(f.width for f in self.wire_fields)


@dataclass
class PortLayout:
    """A port of the block: a name, a width and its slice of the flat array."""

    name: str
    start: int
    width: int
    contract: ContractLayout


@dataclass
class BlockLayout:
    """The block a configuration describes: contracts, named ports, flat arrays."""

    contracts: list[ContractLayout]
    comm: list[ContractLayout]
    inputs: list[PortLayout]
    outputs: list[PortLayout]
    n_inputs: int
    n_outputs: int

    @classmethod
    def of(cls, config: ContractConfig) -> BlockLayout:
        """Number the contracts (inputs first, then outputs) and name the ports.

        A port is named after its fields' labels joined by commas; a label is the property
        name, with ``(params)`` when given and ``Object.`` when the object is not the file's
        default. A repeated name gets ``#2``, ``#3``...
        """
        contracts: list[ContractLayout] = []
        comm: list[ContractLayout] = []
        sides: dict[str, list[PortLayout]] = {"inputs": [], "outputs": []}
        sizes = {"inputs": 0, "outputs": 0}
        directions: tuple[tuple[str, Literal["to_client", "to_server"]], ...] = (
            ("inputs", "to_server"),
            ("outputs", "to_client"),
        )
        for side, direction in directions:
            groups = config.inputs if side == "inputs" else config.outputs
            names: dict[str, int] = {}
            for group in groups:
                layout = ContractLayout(
                    None if not group.is_contract else len(contracts), direction, group
                )
                (contracts if group.is_contract else comm).append(layout)
                wire = 0
                for port in group.ports:
                    start = sizes[side]
                    labels = []
                    for fld in port:
                        meta = fld.propertyName if fld.is_meta(group.groupType) else None
                        obj = None if meta else (fld.remoteObject or config.remoteObject)
                        label = _label(fld, obj, config.remoteObject, meta)
                        labels.append(label)
                        layout.fields.append(
                            FieldSlot(
                                fld,
                                label,
                                obj,
                                meta,
                                fld.width,
                                sizes[side],
                                None if meta else wire,
                                len(sides[side]),
                            )
                        )
                        if meta is None:
                            wire += fld.width
                        sizes[side] += fld.width
                    name = ",".join(labels)
                    names[name] = names.get(name, 0) + 1
                    if names[name] > 1:
                        name = f"{name}#{names[name]}"
                    sides[side].append(PortLayout(name, start, sizes[side] - start, layout))
        return cls(
            contracts, comm, sides["inputs"], sides["outputs"], sizes["inputs"], sizes["outputs"]
        )


def _label(fld: FieldConfig, obj: str | None, default: str | None, meta: str | None) -> str:
    if meta is not None:
        return "ping_results" if meta in PING_META else meta
    label = fld.propertyName
    if fld.params is not None:
        label += f"({fld.params})"
    if obj != default:
        label = f"{obj}.{label}"
    return label


def next_tick(time: float, period: float, *, after: bool = True) -> int:
    """Index k of the next update time ``k * period`` after ``time`` (or at it: after=False).

    Updates fall on a grid of whole periods from time 0, counted by an integer (never a
    running sum): a period that is not a multiple of the step does not drift, and contracts
    of one period update together.
    """
    k = time / period
    return math.floor(k + 1e-9) + 1 if after else math.ceil(k - 1e-9)
