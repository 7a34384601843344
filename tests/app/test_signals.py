"""``vcosim signals``: every signal with its unit, range and meaning, and its names in each face.

The list is the catalogue (``vcosim.vehicle.signals``); its names are the faces' own tables,
so a test here fails when a face serves a signal the list does not show.
"""

from __future__ import annotations

import io
import json

from rich.console import Console
from typer.testing import CliRunner

from vcosim.analysis.signals import signal_names
from vcosim.app import app
from vcosim.app.signals import signal_listing, signal_table
from vcosim.fmi import coupling as coupling_fmu
from vcosim.fmi import metadata as vehicle_fmu
from vcosim.tight import beamng_csv
from vcosim.tight.interface import DERIVED_NAMES
from vcosim.vehicle import layout as L
from vcosim.vehicle.signals import DERIVED, INPUTS, OUTPUTS


def listed(*args: str) -> list[dict]:
    result = CliRunner().invoke(app, ["signals", "--json", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_the_list_is_the_catalogue() -> None:
    rows = listed()
    catalogue = [("output", s) for s in OUTPUTS] + [("derived", s) for s in DERIVED]
    catalogue += [("input", s) for s in INPUTS]
    assert [(r["way"], r["name"], r["unit"], r["low"], r["high"], r["meaning"]) for r in rows] == [
        (way, s.name, s.unit, s.low, s.high, s.meaning) for way, s in catalogue
    ]


def test_every_vehicle_signal_has_a_unit_and_a_meaning() -> None:
    assert tuple(s.name for s in OUTPUTS) == L.SIGNAL_NAMES
    assert all(s.unit and s.meaning for s in (*OUTPUTS, *DERIVED, *INPUTS))
    assert {s.name for s in DERIVED} == set(DERIVED_NAMES) - {"zero"}
    units = {s.name: s.unit for s in OUTPUTS}
    assert (units["groundspeed"], units["rpm"], units["accX"], units["yaw"]) == (
        "m/s",
        "1/min",
        "m/s2",
        "rad",
    )


def test_every_name_a_face_gives_a_signal_is_listed() -> None:
    rows = listed()
    csv_rows = {c for r in rows for c in r["csv"]}
    served = [f"Kinematics {n}" for n in beamng_csv.KINEMATICS]
    served += [f"Driver {n}" for n in (*beamng_csv.DRIVER_TO, *beamng_csv.DRIVER_FROM)]
    served += [f"Electrics {n}" for n in beamng_csv.ELECTRICS]
    served += [f"Wheels {n}" for n in beamng_csv.WHEEL_FROM]
    served += [f"Wheels {q}{w}" for q in beamng_csv.WHEEL_TO for w in ("FL", "FR")]
    assert set(served) <= csv_rows
    slots = sorted(int(r["fixed"].split()[-1]) for r in rows if r["fixed"].startswith("slot"))
    assert slots == list(range(1, 61))  # banks A-G, each once
    replies = sorted(int(r["fixed"].split()[-1]) for r in rows if r["fixed"].startswith("reply"))
    assert replies == list(range(1, 14))
    fmu = {r["fmu"] for r in rows}
    every = {v.name for v in (*vehicle_fmu.OUTPUTS, *vehicle_fmu.INPUTS, *coupling_fmu.INPUTS)}
    assert every <= fmu


def test_the_fmus_units_and_ranges_are_the_catalogues() -> None:
    units = {s.name: s.unit for s in OUTPUTS}
    assert all(o.unit == units[L.SIGNAL_NAMES[o.index]] for o in vehicle_fmu.OUTPUTS)
    inputs = {s.name: s for s in INPUTS}
    for variable in (*vehicle_fmu.INPUTS, *coupling_fmu.INPUTS):
        signal = inputs[variable.name]
        if variable.kind == "real":
            assert variable.unit == signal.unit, variable.name
        for bound in ("min", "max"):
            given = getattr(variable, bound)
            if given is not None:
                assert given == getattr(signal, "low" if bound == "min" else "high"), variable


def test_a_signal_is_found_by_any_of_its_names() -> None:
    assert [r["name"] for r in listed("vehicleGroundSpeed")] == ["groundspeed"]
    assert [(r["name"], r["way"]) for r in listed("applied.gear")] == [("gear", "output")]
    assert {r["name"] for r in listed("brakingTorqueFL")} == {
        "wheelFL_brakingTorque",
        "braking_torque_FL",
    }
    result = CliRunner().invoke(app, ["signals", "groundsped"])
    assert result.exit_code == 2
    assert result.output == (
        "error: unknown signal 'groundsped'; did you mean 'groundspeed'? (vcosim signals "
        "lists them)\n"
    )


def rendered(renderable: object, width: int) -> str:
    out = Console(file=io.StringIO(), width=width, color_system=None)
    out.print(renderable)
    return out.file.getvalue()  # type: ignore[attr-defined]


def test_a_wide_terminal_gets_a_table_a_narrow_one_two_lines_a_signal() -> None:
    rows = [r for r in signal_names() if r.signal.name == "groundspeed"]
    table = rendered(signal_table("outputs", rows), 200)
    row = next(line for line in table.splitlines() if "│ groundspeed" in line)
    assert [c.strip() for c in row.strip("│").split("│")] == [
        "groundspeed",
        "m/s",
        ">= 0",
        "17",
        "Kinematics vehicleGroundSpeed",
        "groundspeed",
        "speed over the ground (horizontal)",
    ]
    assert rendered(signal_listing("outputs", rows), 80).splitlines()[1:] == [
        "groundspeed (m/s, >= 0): speed over the ground (horizontal)",
        "    slot 17; CSV Kinematics vehicleGroundSpeed; FMU groundspeed",
    ]
