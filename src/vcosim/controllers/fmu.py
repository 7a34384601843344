"""An FMI co-simulation FMU as a controller: ``FmuController("ctrl.fmu")`` is a step function.

(One module, just past 400 lines: the map, its checks and the FMU's life cycle are one story.)

The FMU's inputs are fed from the simulator's message and its outputs become ``Controls``.
Variables are matched by name (an input ``groundspeed`` reads bank B's ground speed, an
output ``throttle`` sets the throttle) or through a TOML map file::

    [inputs]              # FMU input = bank quantity (or "time", "custom0".."custom49")
    v = "groundspeed"
    [outputs]             # FMU output = controls field
    u = "throttle"
    [parameters]          # FMU parameter = start value
    target_speed = 15.0

Every input and output must be mapped, and the whole mapping is checked before the FMU is
instantiated, so a misnamed variable is one clear error listing every problem instead of a
controller that silently sends nothing. FMI 2.0 and 3.0 co-simulation FMUs run through fmpy.
"""

from __future__ import annotations

import difflib
import shutil
import weakref
from collections.abc import Callable, Mapping
from ctypes import POINTER, c_uint
from pathlib import Path
from typing import Any

import numpy as np

from vcosim.config import read_toml
from vcosim.errors import ConfigError, VcosimError
from vcosim.tight.protocol import N_CUSTOM, SIM_CUSTOM, SIM_TO_CONTROLLER
from vcosim.tight.views import SLOT_BY_NAME, WHEEL_FIELDS, WHEEL_NAMES, Controls, SimulatorMessage

try:
    import fmpy
    from fmpy import fmi2, fmi3
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError("FMU controllers need fmpy: pip install 'vcosim[fmu]'") from exc

TIME = SIM_TO_CONTROLLER  # the message time goes after the 111 wire values
INPUTS: dict[str, int] = {
    "time": TIME,
    **SLOT_BY_NAME,
    **{f"custom{i}": SIM_CUSTOM.start + i for i in range(N_CUSTOM)},
}
"""What an FMU input can read: name -> index into the message values (plus the time)."""

OUTPUTS: dict[str, int] = {
    "throttle": 0,
    "brake": 1,
    "steering": 2,
    "gear": 3,
    **{f"braking_torque_{w}": 4 + i for i, w in enumerate(WHEEL_NAMES)},
    **{f"propulsion_torque_{w}": 8 + i for i, w in enumerate(WHEEL_NAMES)},
    "drive_mode": 12,
    **{f"custom{i}": 13 + i for i in range(N_CUSTOM)},
}
"""What an FMU output can set: name -> index into the controller message less its id."""

# FMI type of a variable -> the suffix of its get/set functions (fmi2SetReal, fmi3SetFloat64).
_API = {
    "2.0": {"Real": "Real", "Integer": "Integer", "Enumeration": "Integer", "Boolean": "Boolean"},
    "3.0": {
        **{
            t: t
            for t in (
                "Float32",
                "Float64",
                "Int8",
                "UInt8",
                "Int16",
                "UInt16",
                "Int32",
                "UInt32",
                "Int64",
                "UInt64",
                "Boolean",
            )
        },
        "Enumeration": "Int64",
    },
}
_SECTIONS = ("inputs", "outputs", "parameters")
_W, _CUSTOM = "{" + ",".join(WHEEL_NAMES) + "}", f"custom0 ... custom{N_CUSTOM - 1}"
_HINTS = {  # valid names, the per-wheel and custom ones folded
    "inputs": ", ".join(
        [
            *(n for n in INPUTS if not n.startswith(("wheel", "custom"))),
            f"wheel{_W}_{{{','.join(WHEEL_FIELDS)}}}",
            _CUSTOM,
        ]
    ),
    "outputs": ", ".join(
        [
            "throttle",
            "brake",
            "steering",
            "gear",
            "drive_mode",
            f"braking_torque_{_W}",
            f"propulsion_torque_{_W}",
            _CUSTOM,
        ]
    ),
}
_ROLES: tuple[tuple[str, str, dict[str, Any], str], ...] = (
    ("inputs", "input", INPUTS, "bank quantity"),
    ("outputs", "output", OUTPUTS, "controls field"),
    ("parameters", "parameter", {}, "parameter"),
)


def _fits(fmi_type: str, value: object) -> bool:
    """Whether a TOML value can be the start value of a variable of this FMI type."""
    if fmi_type in ("Boolean", "String"):
        return isinstance(value, bool if fmi_type == "Boolean" else str)
    if isinstance(value, bool):
        return False
    return isinstance(value, (int, float) if fmi_type.startswith(("Real", "Float")) else int)


def _unknown(kind: str, name: object, valid: dict[str, Any]) -> str:
    close = difflib.get_close_matches(str(name), list(valid), n=1)
    return f"no {kind} {name!r}" + (f" (did you mean {close[0]!r}?)" if close else "")


class _Channel:
    """The mapped variables of one FMI type: one get/set call per step on fixed buffers.

    fmpy's ``setReal``/``getReal`` build ctypes arrays on every call; here the value
    references and values live in arrays made once, so a step costs one foreign call.
    """

    __slots__ = ("call", "args", "buffer", "index", "exact")

    def __init__(
        self, fmu: Any, version: str, action: str, api: str, refs: list[int], index: list[int]
    ) -> None:
        major = version[0]
        ctype = getattr(fmi3 if major == "3" else fmi2, f"fmi{major}{api}")
        n = len(refs)
        self.buffer = np.zeros(n, dtype=np.dtype(ctype))
        self.index = np.array(index, dtype=np.intp)
        self.exact = self.buffer.dtype.kind == "f"  # else round: 0.6 is gear 1, not 0
        self.call = getattr(fmu, f"fmi{major}{action}{api}")  # raises on an error status
        values = self.buffer.ctypes.data_as(POINTER(ctype))
        count = (n,) if major == "3" else ()  # FMI 3 also takes the number of values
        self.args = (fmu.component, (c_uint * n)(*refs), n, values, *count)

    def put(self, source: np.ndarray) -> None:
        """Set the FMU inputs from the message values."""
        values = source[self.index]
        self.buffer[:] = values if self.exact else np.rint(values)
        self.call(*self.args)

    def get(self, out: np.ndarray) -> None:
        """Read the FMU outputs into their controls slots."""
        self.call(*self.args)
        out[self.index] = self.buffer


class FmuController:
    """Run an FMI 2.0/3.0 co-simulation FMU as a controller block's step function.

    Each call sets the FMU's inputs from the message, advances it by ``step`` and returns
    its outputs as ``Controls`` (direct feed-through). ``step`` must be the block's step:
    the messages carry no time, so the FMU's clock is the count of calls times ``step``.

    Attributes:
        inputs: FMU input -> the bank quantity it reads.
        outputs: FMU output -> the controls field it sets.
        parameters: FMU parameter -> the start value the map file (or ``parameters``) gave it.
        fmi_version: "2.0" or "3.0".

    ``parameters`` (FMU parameter -> start value, ``vcosim controller --param``) are set
    after the map file's and win over them.
    """

    def __init__(
        self,
        path: str | Path,
        map_file: str | Path | None = None,
        step: float = 0.005,
        parameters: Mapping[str, Any] | None = None,
    ) -> None:
        self.path = Path(path)
        self.step = float(step)
        self._fmu: Any = None
        self._running = False
        self._cleanup: Callable[[], Any] = lambda: None
        model = self._read_model()
        self.fmi_version: str = model.fmiVersion
        self.inputs, self.outputs, self.parameters = self._plan(model, map_file, parameters)
        self._source = np.zeros(SIM_TO_CONTROLLER + 1)
        self._blank = np.full(len(OUTPUTS), np.nan)
        self._steps = 0
        try:
            self._start(model)
        except BaseException:
            self.close()
            raise

    def _read_model(self) -> Any:
        """The model description, if the file is a co-simulation FMU this machine can run."""
        source = str(self.path)
        try:
            model = fmpy.read_model_description(self.path)
            platforms = fmpy.supported_platforms(self.path)
        except Exception as exc:  # fmpy raises plain exceptions for bad files
            raise ConfigError([f"cannot read the FMU: {exc}"], source) from None
        problems = []
        if model.fmiVersion not in _API:
            problems.append(f"FMI {model.fmiVersion} is not supported (2.0 and 3.0 are)")
        if model.coSimulation is None:
            problems.append("not a co-simulation FMU (model exchange is not supported)")
        if not {fmpy.platform, fmpy.platform_tuple} & set(platforms):
            problems.append(
                f"no binary for this platform ({fmpy.platform_tuple}); "
                f"the FMU has: {', '.join(platforms) or 'none'}"
            )
        if problems:
            raise ConfigError(problems, source)
        return model

    def _plan(
        self, model: Any, map_file: str | Path | None, given: Mapping[str, Any] | None = None
    ) -> tuple[dict[str, str], dict[str, str], dict[str, Any]]:
        """Match every FMU input and output, by the map file or by name; all problems at once."""
        table = self._read_map(map_file)
        where = Path(map_file).name if map_file is not None else "map"
        variables = {v.name: v for v in model.modelVariables}
        plan: dict[str, dict[str, Any]] = {s: {} for s in _SECTIONS}
        problems = [
            f"{where}: unknown table [{s}] (valid: {', '.join(_SECTIONS)})"
            for s in table
            if s not in _SECTIONS
        ]
        tables = {s: table.get(s, {}) for s in _SECTIONS}
        problems += [
            f"{where}: {s} must be a table ([{s}] with name = value lines)"
            for s, t in tables.items()
            if not isinstance(t, dict)
        ]
        tables = {s: t if isinstance(t, dict) else {} for s, t in tables.items()}
        tables["parameters"] = {**tables["parameters"], **(given or {})}
        for section, causality, valid, kind in _ROLES:
            for name, value in tables[section].items():
                entry, var = f"{where} [{section}] {name}", variables.get(name)
                if section == "parameters" and name in (given or {}):
                    entry = f"--param {name}"
                if var is None:
                    problems.append(f"{entry}: {_unknown('FMU variable', name, variables)}")
                elif var.causality != causality:
                    problems.append(
                        f"{entry}: the FMU's causality for it is "
                        f"{var.causality!r}, not {causality!r}"
                    )
                elif section == "parameters" and not _fits(var.type, value):
                    problems.append(f"{entry}: {value!r} does not fit its type {var.type}")
                elif section != "parameters" and not (isinstance(value, str) and value in valid):
                    problems.append(f"{entry}: {_unknown(kind, value, valid)}")
                else:
                    plan[section][name] = value
        hints = []
        for section, causality, valid, kind in _ROLES[:2]:
            for var in model.modelVariables:
                if var.causality != causality:
                    continue
                if var.type not in _API.get(model.fmiVersion, {}) or var.dimensions:
                    problems.append(
                        f"{causality} {var.name!r}: a {var.type}"
                        f"{' array' if var.dimensions else ''}; only scalar "
                        "numbers and booleans can be mapped"
                    )
                elif var.name in tables[section]:
                    continue  # mapped by the file (or already reported)
                elif var.name in valid:
                    plan[section][var.name] = var.name
                else:
                    problems.append(
                        f"{causality} {var.name!r} cannot be mapped: "
                        f"{_unknown(kind, var.name, valid)}; map it in "
                        f"[{section}]"
                    )
                    hints.append(f"hint: valid [{section}] names: {_HINTS[section]}")
        fields: dict[str, str] = {}
        for name, field in plan["outputs"].items():
            if field in fields:
                problems.append(f"outputs {fields[field]!r} and {name!r} both set {field!r}")
            fields[field] = name
        if problems:
            raise ConfigError(problems + list(dict.fromkeys(hints)), str(self.path))
        return plan["inputs"], plan["outputs"], plan["parameters"]

    @staticmethod
    def _read_map(map_file: str | Path | None) -> dict[str, Any]:
        if map_file is None:
            return {}
        return read_toml(map_file)

    def _start(self, model: Any) -> None:
        """Extract, instantiate and initialise the FMU; prepare the per-step channels."""
        version = model.fmiVersion
        unzipdir = fmpy.extract(self.path)
        self._cleanup = weakref.finalize(self, shutil.rmtree, unzipdir, ignore_errors=True)
        slave = fmi3.FMU3Slave if version == "3.0" else fmi2.FMU2Slave
        fmu = slave(
            guid=model.guid,
            unzipDirectory=unzipdir,
            modelIdentifier=model.coSimulation.modelIdentifier,
            instanceName="vcosim",
        )
        fmu.instantiate()
        self._fmu = fmu
        variables = {v.name: v for v in model.modelVariables}
        api = {**_API[version], "String": "String"}
        for name, value in self.parameters.items():
            var = variables[name]
            set_value = getattr(fmu, "set" + api[var.type])
            try:
                set_value([var.valueReference], [value])
            except Exception as exc:  # a ctypes conversion error or an FMI error status
                raise ConfigError(
                    [f"parameter {name!r} = {value!r}: {exc}"], str(self.path)
                ) from None
        if version == "3.0":
            fmu.enterInitializationMode(startTime=0.0)
        else:
            fmu.setupExperiment(startTime=0.0)
            fmu.enterInitializationMode()
        fmu.exitInitializationMode()  # without event mode, an FMI 3 FMU is now in step mode
        self._running = True
        self._put = self._channels(fmu, version, "Set", variables, self.inputs, INPUTS)
        self._get = self._channels(fmu, version, "Get", variables, self.outputs, OUTPUTS)

    @staticmethod
    def _channels(
        fmu: Any,
        version: str,
        action: str,
        variables: dict[str, Any],
        mapping: dict[str, str],
        slots: dict[str, int],
    ) -> list[_Channel]:
        groups: dict[str, tuple[list[int], list[int]]] = {}
        for name, target in mapping.items():
            var = variables[name]
            refs, index = groups.setdefault(_API[version][var.type], ([], []))
            refs.append(var.valueReference)
            index.append(slots[target])
        return [
            _Channel(fmu, version, action, api, refs, index)
            for api, (refs, index) in groups.items()
        ]

    def __call__(self, msg: SimulatorMessage) -> Controls:
        """One controller step: inputs in, ``doStep(t, step)``, outputs out."""
        if self._fmu is None:
            raise VcosimError(f"FMU controller {self.path.name} is closed")
        if abs(msg.dt - self.step) > 1e-9 * self.step:
            raise ConfigError(
                [
                    f"the block's step {msg.dt:g} s differs from the FMU "
                    f"controller's step {self.step:g} s"
                ],
                str(self.path),
            )
        source = self._source
        source[:TIME] = msg.values
        source[TIME] = msg.time
        for channel in self._put:
            channel.put(source)
        self._fmu.doStep(self._steps * self.step, self.step)
        self._steps += 1
        out = self._blank.copy()
        for channel in self._get:
            channel.get(out)
        return Controls(
            throttle=out[0],
            brake=out[1],
            steering=out[2],
            gear=out[3],
            braking_torque=out[4:8],
            propulsion_torque=out[8:12],
            drive_mode=out[12],
            custom=out[13:],
        )

    def close(self) -> None:
        """Terminate and free the FMU and delete its extracted files (safe twice)."""
        fmu, self._fmu = self._fmu, None
        running, self._running = self._running, False
        try:
            if running:
                fmu.terminate()
        finally:
            try:
                if fmu is not None:
                    fmu.freeInstance()
            finally:
                self._cleanup()  # also runs when the controller is collected unclosed

    def __enter__(self) -> FmuController:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
