"""The vehicle as an FMI co-simulation FMU: vcosim's 2000 Hz model inside any FMI master.

:class:`VehicleSlave` is mixed into pythonfmu's ``Fmi2Slave`` or pythonfmu3's ``Fmi3Slave``
by the script :mod:`vcosim.fmi.build` puts in the FMU. It steps a :class:`Vehicle` at its own
0.5 ms: a communication step must be a whole number of physics steps (others are refused
with an FMI error). Inputs are held between steps, as the vehicle holds them; the FMU state
(``fmi2GetFMUstate``) is the vehicle's snapshot plus the inputs, so a master that rolls back
replays the same future bit for bit.
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any

import numpy as np

from vcosim.errors import ConfigError
from vcosim.fmi.metadata import INPUTS, OUTPUTS, PARAMETERS, Variable
from vcosim.fmi.slave import SlaveMixin, read_config
from vcosim.vehicle import Vehicle
from vcosim.vehicle import layout as L
from vcosim.vehicle.params import DT, VehicleParams

DESCRIPTION = "vcosim vehicle: NightRider's car at 2000 Hz (co-simulation, steps of 0.5 ms)"
STEP_TOLERANCE = 1e-6  # of a physics step: how far a communication step may be off a multiple


def physics_steps(step_size: float) -> int | None:
    """How many 0.5 ms steps ``step_size`` is, or None if it is not a positive multiple."""
    n = round(step_size / DT)
    return n if n >= 1 and abs(n * DT - step_size) <= STEP_TOLERANCE * DT else None


def parameter_value(params: VehicleParams, key: str) -> float:
    """The value of a dotted key (``body.chassis_mass``) in ``params``."""
    node: Any = params
    for part in key.split("."):
        node = getattr(node, part)
    return float(node)


class VehicleSlave(SlaveMixin):
    """The vehicle FMU's behaviour; pythonfmu(3) supplies the FMI plumbing."""

    description = DESCRIPTION

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.description = DESCRIPTION
        self._setup()
        config = read_config(kwargs.get("resources"))
        self.base = VehicleParams.from_dict(config["params"]) if "params" in config else None
        base = self.base or VehicleParams()
        self.automatic = bool(config.get("automatic", True))
        self.engine_running = True
        self.failed = ""  # why the FMU refuses to step (a bad parameter), or ""
        self._step = (0.0, 0)  # the last communication step and its physics steps
        self._changed = False  # inputs set since the last step
        self.parameters = {p.name: parameter_value(base, p.key) for p in PARAMETERS}
        self._defaults = dict(self.parameters)
        starts = {"gear": 1.0 if self.automatic else 0.0}
        self.values = np.array([starts.get(i.name, i.start) for i in INPUTS])
        self.slots = np.array([i.slot for i in INPUTS])
        self.vehicle = self._make_vehicle(base)
        self._register()

    def _register(self) -> None:
        if self.fmi_version == 3:  # FMI 3 wants the independent variable; it is the time
            self._add("time", "independent", self._time)
        for p in PARAMETERS:
            self._add(
                p,
                "parameter",
                partial(self.parameters.__getitem__, p.name),
                partial(self._set_parameter, p.name),
            )
        flags = {
            "automatic": "automatic gearbox (gear is the selector; a torque converter pulls away)",
            "start_engine_idling": "start with the engine idling (else off: crank it with "
            "ignition = 3)",
        }
        attributes = {"automatic": "automatic", "start_engine_idling": "engine_running"}
        for name, text in flags.items():
            self._add(
                Variable(name, "boolean", description=text),
                "parameter",
                partial(getattr, self, attributes[name]),
                partial(self._set_flag, attributes[name]),
            )
        for j, i in enumerate(INPUTS):
            self._add(i, "input", partial(self.values.__getitem__, j), partial(self._set_input, j))
        for o in OUTPUTS:
            self._add(o, "output", partial(self._output, o.index))

    def _time(self) -> float:
        return self.vehicle.time

    def _output(self, index: int) -> float:
        return float(self.vehicle.outputs[index])

    def _set_parameter(self, name: str, value: float) -> None:
        self.parameters[name] = float(value)

    def _set_flag(self, attribute: str, value: bool) -> None:
        setattr(self, attribute, bool(value))

    def _set_input(self, j: int, value: float) -> None:
        """Hold a new input value; a non-finite one is refused (logged), the old one kept."""
        if math.isfinite(value):
            self.values[j] = float(value)
            self._changed = True
        else:  # logged, not raised: no exception may cross pythonfmu's runtime
            self._error(f"input {INPUTS[j].name} = {value!r} refused: not a finite number")

    def _make_vehicle(self, params: VehicleParams) -> Vehicle:
        vehicle = Vehicle(params, engine_running=self.engine_running)
        vehicle.input_array[L.U_AUTOMATIC] = float(self.automatic)
        vehicle.input_array[self.slots] = self.values
        return vehicle

    # -- FMI life cycle ---------------------------------------------------------------------
    def exit_initialization_mode(self) -> None:
        """Build the vehicle with the parameters the master set (settled, at rest, time 0)."""
        changed = {
            p.key: self.parameters[p.name]
            for p in PARAMETERS
            if self.parameters[p.name] != self._defaults[p.name]
        }
        base = self.base or VehicleParams()
        try:
            self.vehicle = self._make_vehicle(base.with_changes(**changed) if changed else base)
        except ConfigError as exc:
            self.failed = f"parameters refused: {'; '.join(exc.problems)}"
            if self.fmi_version == 2:  # refused now: the master stops here (fmi2Fatal)
                self._fail_fmi2_call(self.failed)
            self._error(self.failed)  # FMI 3: logged, and every doStep then fails

    def do_step(self, current_time: float, step_size: float, *_: Any) -> bool:
        """Hold the inputs and advance ``step_size`` (a multiple of 0.5 ms)."""
        if step_size != self._step[0]:  # a new step size: check it once
            n = physics_steps(step_size)
            if n is None:
                return self._error(
                    f"communication step {step_size!r} s is not a multiple of the vehicle's "
                    f"{DT * 1e3:g} ms physics step; use 0.0005, 0.001, 0.005, ..."
                )
            self._step = (step_size, n)
        if self.failed:
            return self._error(self.failed)
        vehicle = self.vehicle
        if self._changed:
            vehicle.input_array[self.slots] = self.values
            self._changed = False
        vehicle.run(self._step[1])
        return True

    # -- rolling back ------------------------------------------------------------------------
    def _get_fmu_state(self) -> dict[str, Any]:
        return {"vehicle": self.vehicle.snapshot(), "inputs": self.values.copy()}

    def _set_fmu_state(self, state: dict[str, Any]) -> None:
        self.vehicle.restore(state["vehicle"])
        self.values[:] = state["inputs"]
        self._changed = True
