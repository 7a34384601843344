"""The vehicle FMU's variable tables: complete, unique, every unit defined."""

from __future__ import annotations

from vcosim.fmi.metadata import INPUTS, OUTPUTS, PARAMETERS, UNIT_DEFINITIONS, output_name
from vcosim.fmi.vehicle import physics_steps
from vcosim.vehicle import layout as L


def test_every_vehicle_signal_is_an_output_and_every_name_is_unique():
    names = [v.name for v in (*INPUTS, *OUTPUTS, *PARAMETERS)]
    assert len(names) == len(set(names))
    assert {o.name for o in OUTPUTS} == {output_name(s) for s in L.SIGNAL_NAMES} - {"time"}
    assert output_name("throttle") == "applied.throttle"
    assert output_name("groundspeed") == "groundspeed"


def test_every_unit_named_is_defined():
    for variable in (*INPUTS, *OUTPUTS, *PARAMETERS):
        assert variable.unit is None or variable.unit in UNIT_DEFINITIONS, variable.name


def test_communication_steps_must_be_whole_physics_steps():
    assert physics_steps(0.0005) == 1
    assert physics_steps(0.001) == 2
    assert physics_steps(0.005) == 10
    assert physics_steps(0.1) == 200
    assert physics_steps(0.0007) is None
    assert physics_steps(0.0) is None
    assert physics_steps(0.00025) is None
