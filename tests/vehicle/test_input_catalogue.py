"""The input catalogue: every face's table of accepted inputs is the catalogue's, seen its way.

Each face's table is read back from the face (what it would accept and how it would limit
it) and checked against the catalogue slot by slot: a name the catalogue does not know, a
range or a kind it does not give, fails here.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

from vcosim.contracts.objects import WRITERS
from vcosim.errors import UnknownNameError
from vcosim.fmi import coupling as coupling_fmu
from vcosim.fmi import metadata as fmu
from vcosim.tight import beamng_csv
from vcosim.tight.interface import Interface
from vcosim.tight.kernels import apply_inputs
from vcosim.tight.protocol import CONTROLLER_INPUTS, CONTROLLER_SLOTS
from vcosim.vehicle import layout as L
from vcosim.vehicle.inputs import (
    CATALOGUE,
    HIGH,
    INITIAL,
    INPUT_NAMES,
    INPUTS,
    KIND_CODES,
    LOW,
    element,
    markdown_table,
)
from vcosim.vehicle.signals import INPUTS as INPUT_SIGNALS
from vcosim.vehicle.vehicle import set_inputs
from vcosim.vehicle.writes import InputWrites, limit

ROOT = Path(__file__).parents[2]


def declared() -> dict[int, tuple[float, float, int]]:
    """Each slot of the input array as the catalogue declares it: (low, high, kind code)."""
    slots: dict[int, tuple[float, float, int]] = {}
    for entry in CATALOGUE:
        for slot in entry.targets:
            assert slot not in slots, f"{entry.name}: slot {slot} declared twice"
            slots[slot] = (entry.low, entry.high, KIND_CODES[entry.kind])
    return slots


def check(face: str, table: dict[str, tuple[int, float | None, float | None, int]]) -> None:
    """Every name a face accepts is a catalogue input (or one wheel of one) in its slot.

    The range and kind the face gives it must be the catalogue's.
    """
    slots = declared()
    for name, (slot, low, high, kind) in table.items():
        entry, k = element(name)
        assert slot == entry.index + k, f"{face} {name}: slot {slot}"
        assert (low, high, kind) == slots[slot], f"{face} {name}: {(low, high, kind)}"


def test_the_catalogue_covers_the_input_array_once():
    assert sorted(declared()) == list(range(L.N_INPUTS))
    assert tuple(INPUTS) == INPUT_NAMES
    assert all(e.low <= e.initial <= e.high for e in CATALOGUE)
    assert INITIAL[L.U_GROUND_FRICTION] == 1.0 and INITIAL[L.U_THROTTLE] == 0.0


def test_every_name_a_face_accepts_and_its_range_is_the_catalogues():
    fixed = Interface.fixed(gear_slot=True).inputs.groups
    names = dict(CONTROLLER_INPUTS)
    check("fixed layout", {names[g.name]: (g.target, g.low, g.high, g.kind) for g in fixed})
    for beamng, ours in {**beamng_csv.DRIVER_INPUTS, **beamng_csv.WHEEL_INPUTS}.items():
        table = {**beamng_csv.DRIVER_FROM, **beamng_csv.WHEEL_FROM}
        check("interface CSV", {ours: table[beamng]})
    csv = Interface.from_csv(ROOT / "examples" / "beamng" / "full.csv").inputs.groups
    by_slot = {
        e.index + k: e.element_name(k) if e.width > 1 else e.name
        for e in CATALOGUE
        for k in range(e.width)
    }
    check("full.csv", {by_slot[g.target]: (g.target, g.low, g.high, g.kind) for g in csv})
    for prop, writer in WRITERS.items():
        kind = KIND_CODES[writer.kind]
        for k, slot in enumerate(writer.targets):
            name = INPUTS[writer.input].element_name(k) if len(writer.targets) > 1 else prop
            check("contracts", {name: (slot, writer.low, writer.high, kind)})
    fmi_kinds = {"real": "real", "integer": "integer", "boolean": "switch"}
    for variable in (*fmu.INPUTS, *coupling_fmu.INPUTS):
        entry, k = element(variable.name)
        if variable.kind == "boolean":  # an FMI Boolean has no range: it is 0 or 1
            assert (variable.min, variable.max) == (None, None)
            assert entry.kind == "switch", variable.name
            continue
        kind = fmi_kinds[variable.kind] if variable.name not in fmu.KEPT_INTEGER else "switch"
        check(
            "FMU", {variable.name: (entry.index + k, variable.min, variable.max, KIND_CODES[kind])}
        )


def test_the_python_api_takes_every_catalogue_name_and_no_other():
    u = INITIAL.copy()
    for entry in CATALOGUE:
        set_inputs(u, {entry.name: [0.0] * entry.width if entry.width > 1 else 0.0})
    with pytest.raises(UnknownNameError, match="brake_torque"):
        set_inputs(u, {"brake_torque": [0.0] * 4})
    with pytest.raises(UnknownNameError):
        set_inputs(u, {"drive_mode": "wheels"})


def test_the_kernel_signals_list_and_docs_say_what_the_catalogue_says():
    assert LOW[L.U_THROTTLE] == 0.0 and HIGH[L.U_GEAR] == 5.0 and HIGH[L.U_BRAKING + 3] == 1e5
    for signal in INPUT_SIGNALS:
        entry, _ = element(signal.name)
        assert (signal.low, signal.high) == tuple(
            None if math.isinf(v) else v for v in (entry.low, entry.high)
        )
    assert markdown_table() in (ROOT / "docs" / "vehicle-model.md").read_text()


@pytest.mark.parametrize(
    ("value", "low", "high", "kind", "expected"),
    [
        (0.4, 0.0, 1.0, "real", (0.4, 0)),
        (1.7, 0.0, 1.0, "real", (1.0, 1)),
        (-math.inf, -1.0, 1.0, "real", (-1.0, 1)),
        (2.6, -1.0, 5.0, "integer", (3.0, 0)),
        (9.0, -1.0, 5.0, "integer", (5.0, 1)),
        (0.5, 0.0, 1.0, "switch", (1.0, 0)),
        (0.49, 0.0, 1.0, "switch", (0.0, 0)),
        (7.0, 0.0, 1.0, "switch", (1.0, 1)),
    ],
)
def test_limit_clamps_counts_rounds_and_switches(value, low, high, kind, expected):
    assert limit(value, low, high, KIND_CODES[kind]) == expected


def test_a_reply_and_a_contract_write_the_same_inputs_and_count_the_same_clamps():
    """The same values, through the tight coupling's reply kernel and a contract's table."""
    face = Interface.fixed(gear_slot=True).inputs
    values = np.array([1.4, np.nan, -3.0, 2.6, 5.0, 0.0, 0.0, 2e5, -2e5, 3.0, 0.0, 0.0, 0.7])
    message = np.concatenate(([1.0], values, np.zeros(50)))
    by_reply, by_contract = INITIAL.copy(), INITIAL.copy()
    by_reply[L.U_BRAKE] = by_contract[L.U_BRAKE] = 0.25  # a NaN holds it
    clamps = np.zeros(len(face.groups), dtype=np.int64)
    apply_inputs(message, by_reply, np.zeros(len(face.groups)), clamps, face.slots, face.limits)
    names = dict(CONTROLLER_INPUTS)
    table = InputWrites(
        [(i, g.target, element(names[g.name])[0].name, g.name) for i, g in enumerate(face.groups)]
    )
    assert table.write(values, by_contract) == 4
    np.testing.assert_array_equal(by_reply, by_contract)
    assert by_reply[L.U_BRAKE] == 0.25 and by_reply[L.U_GEAR] == 3.0
    counted = table.take_clamps()
    assert counted == {n: int(c) for n, c in zip(face.names, clamps, strict=True) if c}
    assert counted == {"throttle": 1, "steering": 1, "brakingTorqueRR": 1, "propulsionTorqueFL": 1}
    assert table.take_clamps() == {}


def _bounds(text: str) -> list[tuple[float, float]]:
    """Every ``[low, high]`` in a line of the docs, as numbers."""
    pairs = re.findall(r"\[([−\-0-9.e]+), ([−\-0-9.e]+)\]", text)
    return [tuple(float(v.replace("−", "-")) for v in pair) for pair in pairs]  # type: ignore[misc]


def test_the_ranges_the_coupling_and_contract_docs_give_are_the_catalogues():
    reply = (ROOT / "docs" / "tight-coupling.md").read_text().split("Controller → simulator")[1]
    checked = 0
    for row in re.findall(r"^\| (\d+)(?:–(\d+))? \|.*$", reply, re.MULTILINE):
        line = next(x for x in reply.splitlines() if x.startswith(f"| {row[0]}"))
        if not _bounds(line):
            continue
        for slot in range(int(row[0]), int(row[1] or row[0]) + 1):
            _, entry, _ = CONTROLLER_SLOTS[slot - 1]
            assert _bounds(line) == [(entry.low, entry.high)], line
            checked += 1
    assert checked == 13
    writable = (ROOT / "docs" / "contracts.md").read_text().split("Writable on the vehicle")[1]
    rows = [x for x in writable.split("\n\n")[1].splitlines() if _bounds(x)]
    for line in rows:  # one range for every input named, or one for each
        names = re.findall(r"`(\w+)`", line.split("|")[1])
        bounds = _bounds(line) * len(names) if len(_bounds(line)) == 1 else _bounds(line)
        for name, given in zip(names, bounds, strict=True):
            entry, _ = element(name)
            assert given == (entry.low, entry.high), line
    assert len(rows) == 5
