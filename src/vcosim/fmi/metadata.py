"""What the vehicle FMU declares: its inputs, outputs and parameters, with units and ranges.

One table per kind, independent of the FMI version; the native builders
(:mod:`vcosim.fmi.native`) write the model descriptions from them, with the unit
definitions they name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from vcosim.vehicle import inputs
from vcosim.vehicle.signals import OUTPUTS as SIGNALS

CONFIG_FILE = "vcosim_fmu.json"
"""The build options, shipped in the FMU's resources (``vcosim fmu`` reads them back)."""

Kind = Literal["real", "integer", "boolean", "string"]


@dataclass(frozen=True)
class Variable:
    """One FMU variable: its name, type, unit, range and what it means."""

    name: str
    kind: Kind = "real"
    unit: str | None = None
    min: float | None = None
    max: float | None = None
    description: str = ""


@dataclass(frozen=True)
class Input(Variable):
    """A driver control: ``slot`` is its index in the kernel's input array."""

    slot: int = 0
    start: float = 0.0


@dataclass(frozen=True)
class Output(Variable):
    """A vehicle signal: ``index`` is its index in ``Vehicle.outputs``."""

    index: int = 0


@dataclass(frozen=True)
class Parameter(Variable):
    """A vehicle parameter settable before the run: ``key`` is its dotted TOML key."""

    key: str = ""


NOT_INPUTS = frozenset({"automatic", "ground_from_inputs", "ground_height", "ground_friction"})
"""Catalogue inputs the FMU does not take: the gearbox is a parameter (``automatic``), and
its vehicle drives on its own terrain."""
FMI_KINDS: dict[str, Kind] = {"real": "real", "integer": "integer", "switch": "boolean"}
KEPT_INTEGER = frozenset({"drive_mode"})
"""Switches the FMU declares as Integer 0/1, as its first model descriptions did."""
STARTS = {"ignition": 2.0}  # the FMU's vehicle starts with its engine idling, key at 2


def input_variable(name: str) -> Input:
    """The FMU variable of a catalogue input or of one wheel's value (``braking_torque_FL``).

    Name, kind, unit, range and meaning are the catalogue's (``vcosim.vehicle.inputs``).
    """
    entry, k = inputs.element(name)
    kind = "integer" if entry.name in KEPT_INTEGER else FMI_KINDS[entry.kind]
    bounded = kind != "boolean"
    return Input(
        name,
        kind,
        unit=entry.unit if kind == "real" else None,
        min=entry.low if bounded else None,
        max=entry.high if bounded else None,
        slot=entry.index + k,
        start=STARTS.get(entry.name, entry.initial),
        description=entry.describe(k if entry.width > 1 else None),
    )


INPUTS: tuple[Input, ...] = tuple(
    input_variable(i.element_name(k) if i.width > 1 else i.name)
    for i in inputs.CATALOGUE
    if i.name not in NOT_INPUTS
    for k in range(i.width)
)
INPUT_NAMES = frozenset(i.name for i in INPUTS)

APPLIED = "applied."
"""Prefix of an output whose plain name an input bears (``applied.throttle``: what the
vehicle applies after its own logic; ``applied.gear``: the engaged gear)."""


def output_name(signal: str) -> str:
    """The FMU name of a vehicle signal: its vcosim name, prefixed if an input has it."""
    return APPLIED + signal if signal in INPUT_NAMES else signal


OUTPUTS: tuple[Output, ...] = tuple(
    Output(output_name(signal.name), unit=signal.unit, index=i, description=signal.meaning)
    for i, signal in enumerate(SIGNALS)
    if signal.name != "time"  # the master's own time (FMI 3: the independent variable)
)
"""Every vehicle signal, with the catalogue's unit and meaning (``vcosim.vehicle.signals``)."""

PARAMETERS: tuple[Parameter, ...] = (
    Parameter("body.chassis_mass", unit="kg", min=1.0, key="body.chassis_mass"),
    Parameter("body.engine_mass", unit="kg", min=0.0, key="body.engine_mass"),
    Parameter("tyres.friction", unit="1", min=0.0, key="tyres.friction"),
    Parameter("wheels.brake_torque_front", unit="N.m", min=0.0, key="wheels.brake_torque_front"),
    Parameter("wheels.brake_torque_rear", unit="N.m", min=0.0, key="wheels.brake_torque_rear"),
    Parameter("wheels.rolling_resistance", unit="1", min=0.0, key="wheels.rolling_resistance"),
    Parameter("wheels.steering_rate", unit="1/s", min=0.0, key="wheels.steering_rate"),
    Parameter("resistance.a2", unit="N.s2/m2", min=0.0, key="resistance.a2"),
    Parameter("driveline.final_drive", unit="1", min=0.0, key="driveline.final_drive"),
    Parameter("driveline.clutch_capacity", unit="N.m", min=0.0, key="driveline.clutch_capacity"),
    Parameter("engine.initial_fuel", unit="1", min=0.0, max=1.0, key="engine.initial_fuel"),
    Parameter("suspension.spring", unit="N", min=0.0, key="suspension.spring"),
    Parameter("suspension.damper", unit="N", min=0.0, key="suspension.damper"),
)

# Unit name -> SI base-unit exponents, for the model description's UnitDefinitions.
UNIT_DEFINITIONS: dict[str, dict[str, int] | tuple[dict[str, int], float]] = {
    "1": {},
    "s": {"s": 1},
    "m": {"m": 1},
    "kg": {"kg": 1},
    "rad": {"rad": 1},
    "m/s": {"m": 1, "s": -1},
    "m/s2": {"m": 1, "s": -2},
    "rad/s": {"rad": 1, "s": -1},
    "1/s": {"s": -1},
    "1/min": ({"s": -1}, 1.0 / 60.0),
    "N": {"kg": 1, "m": 1, "s": -2},
    "N.m": {"kg": 1, "m": 2, "s": -2},
    "Pa": {"kg": 1, "m": -1, "s": -2},
    "kg/s": {"kg": 1, "s": -1},
    "N.s2/m2": {"kg": 1, "m": -1},
}
