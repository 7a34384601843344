"""What each direction of the tight coupling carries, for both of BeamNG's layouts.

``Interface.fixed()`` is the 111/64 layout of BeamNG's ``vehicleSystemsCoupling`` and its
first S-function; ``Interface.from_csv(path)`` is the layout an interface CSV lists (BeamNG
≥ 0.32's ``cosimulationCoupling``, its 2024 S-function and FMUs). Either way slot 0 is the
message id; the simulator fills the rest from its *sources* (the vehicle's outputs and a few
quantities derived from its state) and applies the reply through *input groups*: one per
vehicle input, each with the wire slots of its value, multiply, add and freeze channels.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from vcosim.tight.beamng_csv import Connection, read_interface_csv
from vcosim.tight.protocol import (
    CONTROLLER_SLOT_NAMES,
    CONTROLLER_SLOTS,
    N_CUSTOM,
    SIM_SLOT_NAMES,
)
from vcosim.vehicle import layout as L
from vcosim.vehicle.inputs import INTEGER, KIND_CODES, REAL

# Quantities derived from the vehicle's state, appended to its outputs as further sources.
DERIVED_NAMES = (
    "roll_rate",
    "pitch_rate",  # body-frame angular velocity (rad/s)
    "forwardX",
    "forwardY",
    "forwardZ",
    "upX",
    "upY",
    "upZ",  # body axes in the world frame
    "rightX",
    "rightY",
    "rightZ",
    "zero",
)
SOURCE_NAMES = L.SIGNAL_NAMES + DERIVED_NAMES
SOURCE_INDEX = {name: i for i, name in enumerate(SOURCE_NAMES)}

# How a reply value is turned into an input: the input's kind (the catalogue's), or a CSV's
# boolean (any non-zero is 1) taken as it is.
PLAIN, ROUND, BOOLEAN = REAL, INTEGER, 3


# Columns of InputMap.slots: one row per input group.
TARGET, VALUE, MULTIPLY, ADD, FREEZE, KIND = range(6)


@dataclass(frozen=True)
class InputGroup:
    """One vehicle input set by the reply, and where its channels are on the wire."""

    name: str
    target: int
    low: float
    high: float
    kind: int = PLAIN
    value: int = -1
    multiply: int = -1
    add: int = -1
    freeze: int = -1


class InputMap:
    """The input groups as the two arrays ``apply_inputs`` works on.

    Two arrays, not one per column: numba's call overhead grows with each array passed, and
    this runs for every reply.
    """

    def __init__(self, groups: list[InputGroup]) -> None:
        self.groups = groups
        self.names = tuple(g.name for g in groups)
        rows = [(g.target, g.value, g.multiply, g.add, g.freeze, g.kind) for g in groups]
        self.slots = np.array(rows, dtype=np.int64).reshape(len(groups), 6)
        self.limits = np.array([(g.low, g.high) for g in groups]).reshape(len(groups), 2)
        self.target = self.slots[:, TARGET]


@dataclass(frozen=True)
class Interface:
    """The two message layouts of a coupling.

    Attributes:
        name: "fixed 111/64" or the CSV file.
        to_controller: Wire names of the simulator's message after the id.
        sources: vcosim's source (``SOURCE_NAMES``) of each of them; a custom slot is None.
        from_controller: Wire names of the reply after the id.
        inputs: How the reply becomes vehicle inputs.
        custom: The fixed layout's 50 custom values each way (bank H, custom bank B).
        torque_mode: The reply carries wheel torques only (the vehicle drives on them).
        connection: A CSV's connection rows (addresses, ports, timing), else empty.
    """

    name: str
    to_controller: tuple[str, ...]
    sources: tuple[str | None, ...]
    from_controller: tuple[str, ...]
    inputs: InputMap
    custom: bool = False
    torque_mode: bool = False
    connection: Connection = field(default_factory=Connection)

    @property
    def sim_to_controller(self) -> int:
        """Doubles in the simulator's message, id included."""
        return 1 + len(self.to_controller)

    @property
    def controller_to_sim(self) -> int:
        """Doubles in the controller's reply, id included."""
        return 1 + len(self.from_controller)

    @property
    def needs_derived(self) -> bool:
        """Some source is derived from the state, not a vehicle output."""
        return any(s in DERIVED_NAMES for s in self.sources)

    @classmethod
    def fixed(cls, gear_slot: bool = False) -> Interface:
        """BeamNG's fixed layout: 111 doubles out, 64 back.

        Slot 4 is reserved (BeamNG ignores it) unless ``gear_slot`` makes it vcosim's
        requested-gear extension.
        """
        groups = []
        for slot, (name, entry, k) in enumerate(CONTROLLER_SLOTS, start=1):
            if name == "gear" and not gear_slot:
                continue
            kind = KIND_CODES[entry.kind]
            groups.append(InputGroup(name, entry.index + k, entry.low, entry.high, kind, slot))
        return cls(
            "fixed 111/64",
            SIM_SLOT_NAMES[1:],
            (*L.BANK_NAMES, *(None,) * N_CUSTOM),
            CONTROLLER_SLOT_NAMES[1:],
            InputMap(groups),
            custom=True,
        )

    @classmethod
    def from_csv(cls, path: str | Path) -> Interface:
        """The layout a BeamNG interface CSV lists (``ConfigError`` lists every problem)."""
        parsed = read_interface_csv(path)
        groups: dict[int, dict[str, object]] = {}
        for slot, signal in enumerate(parsed.signals_from, start=1):
            group = groups.setdefault(
                signal.target,
                {
                    "name": signal.name,
                    "target": signal.target,
                    "low": signal.low,
                    "high": signal.high,
                    "kind": BOOLEAN if signal.boolean else signal.kind,
                },
            )
            group[signal.channel] = slot
        wheels = [g for g in groups if g >= L.U_PROPULSION]
        return cls(
            str(parsed.path),
            tuple(s.name for s in parsed.signals_to),
            tuple(s.source for s in parsed.signals_to),
            tuple(
                f"{s.name}.{s.channel}" if s.channel != "value" else s.name
                for s in parsed.signals_from
            ),
            InputMap([InputGroup(**g) for g in groups.values()]),  # type: ignore[arg-type]
            torque_mode=bool(wheels),
            connection=parsed.connection,
        )

    def missing_wheel_torques(self) -> list[str]:
        """In torque mode: the wheel torques the reply does not carry (they stay zero)."""
        if not self.torque_mode:
            return []
        given = set(self.inputs.target.tolist())
        return [
            f"{kind}Torque{w}"
            for kind, first in (("propulsion", L.U_PROPULSION), ("braking", L.U_BRAKING))
            for k, w in enumerate(L.WHEELS)
            if first + k not in given
        ]

    def source_indices(self) -> np.ndarray:
        """Where each non-custom value of the simulator's message comes from."""
        return np.array([SOURCE_INDEX[s] for s in self.sources if s is not None], dtype=np.int64)


class CsvAdapter:
    """The controller side of a CSV interface, seen through the fixed layout's views.

    Step functions are written against ``SimulatorMessage`` and ``Controls`` (the fixed
    layout). A CSV message is spread into the 111 slots (NaN where it carries nothing; every
    value also by its BeamNG name in ``signals``), and the 64 reply slots are gathered into
    the CSV's reply. BeamNG's ``cosimulationCoupling`` has no "leave as it is": a value the
    step function leaves unset goes as the last value sent (0 at first), a multiply channel
    as 1, add and freeze channels as 0.
    """

    def __init__(self, interface: Interface) -> None:
        self.interface = interface
        slot = {name: i for i, name in enumerate(SIM_SLOT_NAMES)}
        self.spread_slots = [
            (i + 1, slot[src]) for i, src in enumerate(interface.sources) if src in slot
        ]
        """(wire slot of the CSV message, fixed-layout slot) of each value it carries."""
        fixed_slot = {name: i for i, name in enumerate(CONTROLLER_SLOT_NAMES)}
        fixed_slot |= {"steeringWheelPosition": fixed_slot["steering"]}
        self.gather_slots: list[tuple[int, int, str]] = []
        """(wire slot of the CSV reply, fixed-layout reply slot or -1, channel) of each."""
        for i, wire in enumerate(interface.from_controller, start=1):
            name, _, channel = wire.partition(".")
            self.gather_slots.append((i, fixed_slot.get(name, -1), channel or "value"))
        self._held = np.zeros(interface.controller_to_sim)
        for i, _, channel in self.gather_slots:
            self._held[i] = 1.0 if channel == "multiply" else 0.0
        self.first_reply = self._held.copy()
        """The reply before any value was set: multiply channels 1, the others 0."""

    def spread(self, message: np.ndarray, slots: np.ndarray) -> dict[str, float]:
        """Fill the 111 ``slots`` from a CSV message; return its values by BeamNG name."""
        slots[:] = np.nan
        slots[0] = message[0]
        for wire, fixed in self.spread_slots:
            slots[fixed] = message[wire]
        return dict(zip(self.interface.to_controller, message[1:].tolist(), strict=True))

    def gather(self, reply: np.ndarray) -> np.ndarray:
        """The CSV reply for the fixed-layout ``reply`` (id in slot 0)."""
        held = self._held
        held[0] = reply[0]
        for wire, fixed, channel in self.gather_slots:
            if channel == "value" and fixed >= 0:
                value = reply[fixed]
                if value == value:
                    held[wire] = value
        return held
