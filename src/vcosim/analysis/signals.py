"""Every signal by every name it goes by: the fixed layout, the interface CSV, the FMUs, contracts.

The catalogue (``vcosim.vehicle.signals``) says what each quantity is; each face names it its
own way: BeamNG's fixed layout by slot, its interface CSV by group and name
(``Kinematics vehicleGroundSpeed``), the FMUs by their variable names (``applied.throttle``
where an input has the plain name), contracts by the vcosim name. ``signal_names()`` puts them
side by side from the faces' own tables, so ``vcosim signals`` cannot drift from what the
faces serve; ``resolve`` finds a signal by any of its names.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Literal

from vcosim.errors import UnknownNameError
from vcosim.vehicle import layout as L
from vcosim.vehicle.inputs import CATALOGUE
from vcosim.vehicle.signals import DERIVED, INPUTS, OUTPUTS, Signal


def unit_text(unit: str) -> str:
    """A unit as people read it: ``-`` for a ratio, flag or count (FMI's ``1``), ``?`` unknown.

    The same in ``vcosim signals``, the plots' axes and their tables.
    """
    return {"1": "-", "": "?"}.get(unit, unit)


Way = Literal["output", "derived", "input"]
WAYS: dict[Way, str] = {
    "output": "vehicle to controller (outputs)",
    "derived": "derived, served only through an interface CSV",
    "input": "controller to vehicle (inputs)",
}


@dataclass(frozen=True)
class SignalNames:
    """One signal and its names: slot of the fixed layout, interface-CSV rows, FMU, contract."""

    signal: Signal
    way: Way
    fixed: str  # "slot 17" (simulator to controller), "reply slot 1", or ""
    csv: tuple[str, ...]  # "Kinematics vehicleGroundSpeed", ...
    fmu: str  # the vehicle FMU's variable (the coupling FMU's where only it has one), or ""
    contract: str  # the contract property, or ""

    @property
    def names(self) -> tuple[str, ...]:
        """Every name the signal goes by (the CSV's without their group)."""
        csv = tuple(row.split(" ", 1)[1] for row in self.csv)
        return tuple(dict.fromkeys(n for n in (self.signal.name, *csv, self.fmu) if n))

    def to_dict(self) -> dict[str, Any]:
        """The row as JSON-friendly values (``vcosim signals --json``)."""
        s = self.signal
        return {
            "name": s.name,
            "way": self.way,
            "unit": s.unit,
            "low": s.low,
            "high": s.high,
            "meaning": s.meaning,
            "fixed": self.fixed,
            "csv": list(self.csv),
            "fmu": self.fmu,
            "contract": self.contract,
        }


def signal_names() -> list[SignalNames]:
    """Every output, derived quantity and input with its names in each face."""
    from vcosim.contracts.objects import VEHICLE_READABLE, WRITERS
    from vcosim.fmi import coupling as coupling_fmu
    from vcosim.fmi.metadata import INPUTS as FMU_INPUTS
    from vcosim.fmi.metadata import output_name
    from vcosim.tight import beamng_csv as csv
    from vcosim.tight.protocol import CONTROLLER_SLOT_NAMES, SIM_SLOT_NAMES

    rows_out: dict[str, list[str]] = defaultdict(list)
    for group, table in (
        ("Kinematics", csv.KINEMATICS),
        ("Driver", csv.DRIVER_TO),
        ("Electrics", csv.ELECTRICS),
    ):
        for beamng, source in table.items():
            rows_out[source].append(f"{group} {beamng}")
    for quantity, ours in csv.WHEEL_TO.items():
        for wheel in L.WHEELS:
            source = f"wheel{wheel}_{ours}"
            if ours == "wheelAngle":  # the front wheels steer; the rear ones read 0
                source = "road_wheel_angle" if wheel.startswith("F") else ""
            rows_out[source].append(f"Wheels {quantity}{wheel}")
    by_index = _input_names()
    rows_in: dict[str, list[str]] = defaultdict(list)
    for group, targets in (("Driver", csv.DRIVER_FROM), ("Wheels", csv.WHEEL_FROM)):
        for beamng, (index, *_) in targets.items():
            rows_in[by_index[index]].append(f"{group} {beamng}")
    reply_slots = {_camel(name): i for i, name in enumerate(CONTROLLER_SLOT_NAMES)}
    fmu_inputs = {v.name for v in (*FMU_INPUTS, *coupling_fmu.INPUTS)}
    rows = [
        SignalNames(
            s,
            "output",
            f"slot {SIM_SLOT_NAMES.index(s.name)}" if s.name in L.BANK_NAMES else "",
            tuple(rows_out[s.name]),
            output_name(s.name) if s.name != "time" else "",
            s.name if s.name in VEHICLE_READABLE else "",
        )
        for s in OUTPUTS
    ]
    rows += [SignalNames(s, "derived", "", tuple(rows_out[s.name]), "", "") for s in DERIVED]
    rows += [
        SignalNames(
            s,
            "input",
            f"reply slot {reply_slots[s.name]}" if s.name in reply_slots else "",
            tuple(rows_in[s.name]),
            s.name if s.name in fmu_inputs else "",
            s.name if s.name in WRITERS else "",
        )
        for s in INPUTS
    ]
    return rows


def _input_names() -> dict[int, str]:
    """The catalogue's input name of each slot of the vehicle's input array."""
    return {
        slot: i.element_name(k) if i.width > 1 else i.name
        for i in CATALOGUE
        for k, slot in enumerate(i.targets)
    }


def _camel(slot: str) -> str:
    """The catalogue's name of a reply slot: ``brakingTorqueFL`` is ``braking_torque_FL``."""
    for wheel in L.WHEELS:
        for quantity in ("braking", "propulsion"):
            if slot == f"{quantity}Torque{wheel}":
                return f"{quantity}_torque_{wheel}"
    return {"driveMode": "drive_mode"}.get(slot, slot)


def resolve(name: str, rows: list[SignalNames] | None = None) -> list[SignalNames]:
    """The signals ``name`` names in any face: exactly, else case-insensitively, else in part.

    Raises:
        UnknownNameError: no signal goes by that name (the closest is suggested).
    """
    rows = signal_names() if rows is None else rows
    for match in (
        lambda n: n == name,
        lambda n: n.lower() == name.lower(),
        lambda n: name.lower() in n.lower(),
    ):
        found = [row for row in rows if any(match(n) for n in row.names)]
        if found:
            return found
    every = list(dict.fromkeys(n for row in rows for n in row.names))
    raise UnknownNameError("signal", name, every, where_listed="vcosim signals lists them")
