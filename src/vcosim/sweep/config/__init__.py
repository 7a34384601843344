"""The sweep file: a scenario, the parameters to vary, the output; validated before anything runs.

A sweep file (TOML) has the scenario's sections — ``[scenario]``, ``[vehicle]``, ``[terrain]``,
``[controller]``, ``[coupling]``, ``[metrics]`` — then ``[sweep]`` (how to vary), ``[output]``
and ``[backend]``. Parameters are named by dotted paths into the scenario's sections:
``vehicle.tyres.friction``, ``terrain.friction``, ``controller.kp``, ``coupling.ext_time``,
``scenario.initial_speed``. ``load_sweep`` checks the file, every parameter and every run's
complete configuration, and reports every problem of every stage at once with its key path
(``ConfigError``). The reference is ``docs/sweeps.md``.

- ``sections``: one pydantic model per section (what each key is);
- ``controllers``: the controller's factory and the parameters it takes;
- ``parameters``: parameter paths, value specifications, their expansion into runs;
- ``runs``: one run's configuration resolved and checked (``resolve``, ``RunConfig``);
- ``load``: the stages of validation (``parse``, ``load_sweep``, ``Sweep``).
"""

from vcosim.sweep.config.load import Sweep, load_sweep, parse
from vcosim.sweep.config.parameters import Axis, expand, parse_axis
from vcosim.sweep.config.runs import RunConfig, resolve
from vcosim.sweep.config.sections import (
    DERIVED_SIGNALS,
    BackendSection,
    ControllerSection,
    CouplingSection,
    Manoeuvre,
    MetricsSection,
    OutputSection,
    Scalar,
    Scenario,
    ScenarioSection,
    SweepFile,
    SweepSection,
    TerrainSection,
    VehicleSection,
)

__all__ = [
    "DERIVED_SIGNALS",
    "Axis",
    "BackendSection",
    "ControllerSection",
    "CouplingSection",
    "Manoeuvre",
    "MetricsSection",
    "OutputSection",
    "RunConfig",
    "Scalar",
    "Scenario",
    "ScenarioSection",
    "Sweep",
    "SweepFile",
    "SweepSection",
    "TerrainSection",
    "VehicleSection",
    "expand",
    "load_sweep",
    "parse",
    "parse_axis",
    "resolve",
]
