"""Every input of the vehicle, declared once: its place, width, range, kind, unit and meaning.

Gymnasium declares an environment's ``action_space`` once and every wrapper reads it; this is
the vehicle's. Each face names the inputs in its own language (BeamNG's ``brakingTorqueFL``,
an FMU's ``braking_torque_FL``, a contract's ``braking_torque``) but what an input *is* lives
here, and every table of accepted inputs is derived from this one: the tight coupling's fixed
slots and a BeamNG CSV's names (``vcosim.tight``), the contract server's writers, the vehicle
FMU's model description, the kernel's own clamps (``vehicle.model``), the ``Vehicle``'s named
inputs, and the table in docs/vehicle-model.md (``markdown_table``, kept equal by a test).

What a coupling face writes (a tight-coupling reply, a contract's data) goes through ``limit``:
the same range check, rounding and switching for both, each clamp counted by the face, and a
NaN holds the input (BeamNG's "leave as it is"). The Python API (and the bus face through it)
and the FMU refuse a value that is not finite at their setters and write the rest as given;
the kernel clamps every slot to the same ``LOW``/``HIGH`` each step.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from math import inf
from typing import Literal

import numpy as np

from vcosim.vehicle import layout as L

Kind = Literal["real", "integer", "switch"]
"""``real``: clamped to [low, high]; ``integer``: clamped, then rounded; ``switch``: clamped,
then 1 from 0.5 up, else 0."""
NanRule = Literal["hold"]
"""What a NaN written by a face does: ``hold`` keeps the input as it was (the only rule yet)."""

REAL, INTEGER, SWITCH = 0, 1, 2  # ``Kind`` as the compiled writers see it
KIND_CODES: dict[Kind, int] = {"real": REAL, "integer": INTEGER, "switch": SWITCH}


@dataclass(frozen=True)
class Input:
    """One vehicle input: where it sits in the input array and the values it takes.

    Attributes:
        name: vcosim's name (``Vehicle.step(throttle=...)``).
        index: Its first slot in the input array (``vehicle.layout``).
        low: The lowest value the vehicle applies; lower ones are clamped up to it.
        high: The highest value the vehicle applies.
        kind: How a value becomes the input (``Kind``).
        unit: As FMI writes units (``1`` for a ratio, a flag or a count).
        description: What it means, for docs and model descriptions.
        width: Values it takes: 1, or 4 for one per wheel (FL, FR, RL, RR).
        initial: Its value in a vehicle just made or reset (released, or the terrain's own).
        choices: Names for its values, where the Python API takes them (``drive_mode``).
        nan: What a NaN from a face does (``NanRule``).
    """

    name: str
    index: int
    low: float
    high: float
    kind: Kind = "real"
    unit: str = "1"
    description: str = ""
    width: int = 1
    initial: float = 0.0
    choices: Mapping[str, float] = field(default_factory=dict)
    nan: NanRule = "hold"

    @property
    def targets(self) -> tuple[int, ...]:
        """Its slots in the input array, one per value."""
        return tuple(range(self.index, self.index + self.width))

    def describe(self, wheel: int | None = None) -> str:
        """The description; of one wheel's value with ``wheel`` (0-3) for a per-wheel input."""
        where = "each wheel" if wheel is None else f"the {L.WHEELS[wheel]} wheel"
        return self.description.replace("{wheel}", where)

    def element_name(self, wheel: int) -> str:
        """The name of one wheel's value of a per-wheel input: ``braking_torque_FL``."""
        return f"{self.name}_{L.WHEELS[wheel]}"

    @property
    def range(self) -> str:
        """The range as the docs write it: ``[0, 1]``, ``−1…5`` for an integer, or ``any``."""
        if self.low == -inf and self.high == inf:
            return "any"
        low, high = _shown(self.low), _shown(self.high)
        return f"{low}…{high}" if self.kind == "integer" else f"[{low}, {high}]"


def _shown(value: float) -> str:
    """A bound as the docs write it: ``−1``, ``0.5``, ``1e5``."""
    text = f"{value:g}" if abs(value) < 1e5 else f"{value:.0e}".replace("e+0", "e")
    return text.replace("-", "−")


TORQUE_LIMIT = 1.0e5  # N m: wheel torques given from outside, either way


def _switch(name: str, index: int, description: str) -> Input:
    return Input(name, index, 0.0, 1.0, "switch", description=description)


CATALOGUE: tuple[Input, ...] = (
    Input("throttle", L.U_THROTTLE, 0.0, 1.0, description="throttle pedal"),
    Input("brake", L.U_BRAKE, 0.0, 1.0, description="brake pedal"),
    Input("clutch", L.U_CLUTCH, 0.0, 1.0, description="clutch pedal, 1 = pressed"),
    Input("parkingbrake", L.U_PARKINGBRAKE, 0.0, 1.0, description="parking brake"),
    Input(
        "steering",
        L.U_STEERING,
        -1.0,
        1.0,
        description="steering, positive turns left; 1 = the largest road-wheel angle",
    ),
    Input(
        "gear",
        L.U_GEAR,
        -1.0,
        5.0,
        "integer",
        description="requested gear -1..5 (automatic gearbox: -1 R, 0 N, 1 and up D)",
    ),
    Input(
        "ignition",
        L.U_IGNITION,
        0.0,
        3.0,
        "integer",
        description="key: 0 off, 1 accessory, 2 on, 3 crank",
    ),
    _switch("highbeam", L.U_HIGHBEAM, "high beam on"),
    _switch("lowbeam", L.U_LOWBEAM, "low beam on"),
    _switch("signal_L", L.U_SIGNAL_L, "left turn signal on"),
    _switch("signal_R", L.U_SIGNAL_R, "right turn signal on"),
    Input(
        "drive_mode",
        L.U_DRIVE_MODE,
        0.0,
        1.0,
        "switch",
        description="0 pedals, 1 wheel torques (propulsion/braking torques replace the "
        "powertrain and brakes)",
        choices={"pedals": 0.0, "torques": 1.0},
    ),
    Input(
        "propulsion_torque",
        L.U_PROPULSION,
        -TORQUE_LIMIT,
        TORQUE_LIMIT,
        unit="N.m",
        description="drive torque at {wheel} in drive_mode 1",
        width=4,
    ),
    Input(
        "braking_torque",
        L.U_BRAKING,
        0.0,
        TORQUE_LIMIT,
        unit="N.m",
        description="brake torque at {wheel} in drive_mode 1",
        width=4,
    ),
    _switch(
        "automatic",
        L.U_AUTOMATIC,
        "1: torque-converter automatic (gear is the selector), 0: manual gearbox and clutch",
    ),
    _switch(
        "ground_from_inputs",
        L.U_GROUND_FROM_INPUTS,
        "1: the ground under each wheel is ground_height and ground_friction, not the terrain",
    ),
    Input(
        "ground_height",
        L.U_GROUND_HEIGHT,
        -inf,
        inf,
        unit="m",
        description="ground height under {wheel} (at most 10 m above the centre of gravity)",
        width=4,
    ),
    Input(
        "ground_friction",
        L.U_GROUND_FRICTION,
        0.0,
        2.0,
        description="ground friction under {wheel}",
        width=4,
        initial=1.0,
    ),
)
INPUTS: dict[str, Input] = {i.name: i for i in CATALOGUE}
"""The catalogue by name."""
INPUT_NAMES: tuple[str, ...] = tuple(INPUTS)
INPUT_INDEX: dict[str, int] = {i.name: i.index for i in CATALOGUE if i.width == 1 and not i.choices}
"""The inputs that are one plain number, by name: where each sits in the input array."""
VECTOR_INPUTS: dict[str, int] = {i.name: i.index for i in CATALOGUE if i.width == 4}
"""The inputs of one value per wheel, by name: where the first (FL) sits."""


def _by_slot(bound: str) -> tuple[float, ...]:
    values = [0.0] * L.N_INPUTS
    for i in CATALOGUE:
        for t in i.targets:
            values[t] = getattr(i, bound)
    return tuple(values)


LOW: tuple[float, ...] = _by_slot("low")
"""Each slot's lowest value, by input-array index (the kernel's clamps read it)."""
HIGH: tuple[float, ...] = _by_slot("high")
"""Each slot's highest value, by input-array index."""
INITIAL: np.ndarray = np.array(_by_slot("initial"))
"""A vehicle's inputs when it is made or reset."""
INITIAL.flags.writeable = False


def element(name: str) -> tuple[Input, int]:
    """The input a face's name stands for and which of its values: ``braking_torque_FL``.

    A per-wheel input's single wheel is its name with ``_FL`` … ``_RR`` appended.
    """
    if name in INPUTS:
        return INPUTS[name], 0
    base, _, wheel = name.rpartition("_")
    entry = INPUTS.get(base)
    if entry is None or entry.width != 4 or wheel not in L.WHEELS:
        raise KeyError(name)
    return entry, L.WHEELS.index(wheel)


def markdown_table() -> str:
    """The inputs as docs/vehicle-model.md shows them (a test keeps the two equal)."""
    lines = ["| input | values | range | unit | meaning |", "| --- | --- | --- | --- | --- |"]
    for i in CATALOGUE:
        values = f"{i.width} (FL, FR, RL, RR)" if i.width > 1 else "1"
        kind = {"real": "", "integer": "integer ", "switch": "switch "}[i.kind]
        names = "/".join(f'`"{c}"`' for c in i.choices)
        shown = f"{kind}{i.range}" + (f", {names}" if names else "")
        lines.append(f"| `{i.name}` | {values} | {shown.strip()} | {i.unit} | {i.describe()} |")
    return "\n".join(lines) + "\n"
