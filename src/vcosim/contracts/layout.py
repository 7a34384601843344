"""The block a contract configuration describes: contracts with ids, ports with names, slots.

``BlockLayout.of(config)`` numbers the file's contracts (inputs first, then outputs), names the
ports and places every field: in its port, in the block's flat arrays, and on the wire. The
client builds its state from it; ``next_tick`` is the update grid both sides share.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

from vcosim.contracts.config import PING_META, ContractConfig, FieldConfig, PortGroupConfig


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
