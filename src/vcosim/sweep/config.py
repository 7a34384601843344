"""The sweep file: a scenario, the parameters to vary, the output; validated before anything runs.

A sweep file (TOML) has the scenario's sections — ``[scenario]``, ``[vehicle]``, ``[terrain]``,
``[controller]``, ``[coupling]``, ``[metrics]`` — then ``[sweep]`` (how to vary) and
``[output]``. Parameters are named by dotted paths into the scenario's sections:
``vehicle.tyres.friction``, ``terrain.friction``, ``controller.kp``, ``coupling.ext_time``,
``scenario.initial_speed``. ``load_sweep`` checks the file, every parameter path and every
run's complete configuration, and reports every problem at once with its key path
(``ConfigError``). The reference is ``docs/sweeps.md``.
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import inspect
import itertools
import math
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from vcosim.config import deep_merge, read_config_text, validation_problems
from vcosim.errors import ConfigError, UnknownNameError, VcosimError
from vcosim.vehicle import layout as L
from vcosim.vehicle.params import VehicleParams

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

Positive = Annotated[float, Field(gt=0)]
NonNegative = Annotated[float, Field(ge=0)]
Scalar = bool | int | float | str

SECTIONS = ("scenario", "vehicle", "terrain", "controller", "coupling", "metrics")
"""Sections of a sweep file that parameters may vary (``sweep`` and ``output`` may not)."""

DERIVED_SIGNALS = {"yaw_deg": "yaw, unwrapped, in degrees"}
"""Metric signals computed from a vehicle signal."""

DEFAULT_TRACKING = {
    "cruise": ("groundspeed", "controller.speed"),
    "cruise-torque": ("groundspeed", "controller.speed"),
    "heading": ("yaw_deg", "controller.heading"),
}
"""The signal and target the tracking metrics follow for each example controller."""

MAX_LISTED_RUNS = 10  # problems of this many runs are listed; the rest are counted


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Manoeuvre(BaseModel):
    """A timed change of held vehicle inputs: ``{time = 3.0, steering = 0.1}``."""

    model_config = ConfigDict(extra="allow")

    time: Annotated[float, Field(ge=0)]

    @property
    def inputs(self) -> dict[str, Any]:
        """The vehicle inputs this event sets."""
        return dict(self.model_extra or {})


class ScenarioSection(_Strict):
    """What is simulated: how long, from which speed, with which gearbox, which manoeuvre."""

    name: str = "sweep"
    duration: Positive = 10.0
    initial_speed: NonNegative = 0.0
    gearbox: Literal["automatic", "manual"] = "automatic"
    manoeuvre: list[Manoeuvre] = Field(default_factory=list)


class VehicleSection(BaseModel):
    """``base``: a preset name or parameter TOML; any other key overrides a parameter."""

    model_config = ConfigDict(extra="allow")

    base: str = "nightrider"

    @property
    def overrides(self) -> dict[str, Any]:
        """The parameter overrides (nested sections as in a vehicle parameter file)."""
        return dict(self.model_extra or {})


class TerrainSection(_Strict):
    """Flat ground of one friction, or a terrain from pictures (``Terrain.from_images``)."""

    friction: NonNegative = 1.0
    height_map: str | None = None
    road_map: str | None = None
    friction_map: str | None = None
    hill_height: Positive = 10.0
    size: Positive = 1000.0
    road_friction: NonNegative = 1.0
    offroad_friction: NonNegative = 0.6

    @property
    def flat(self) -> bool:
        """True without pictures: level ground with ``friction`` everywhere."""
        return self.height_map is None and self.road_map is None and self.friction_map is None


class ControllerSection(BaseModel):
    """The controller and its parameters.

    ``name``: an example controller, a ``module:attr`` factory called with the parameters, or
    ``none`` (no coupling: only the manoeuvre drives).
    """

    model_config = ConfigDict(extra="allow")

    name: str = "cruise"

    @property
    def params(self) -> dict[str, Any]:
        """Keyword arguments for the controller's factory."""
        return dict(self.model_extra or {})


class CouplingSection(_Strict):
    """The tight coupling's timing, the controller's computation time and the transport."""

    ext_time: Positive = 0.005
    ping_time: NonNegative = 0.00001
    window: Annotated[int, Field(ge=1)] | None = None
    send_skips: Annotated[int, Field(ge=0)] | None = None
    send_offset: Annotated[int, Field(ge=0)] = 0
    memory: bool = False
    timing: Literal["lockstep", "realtime"] = "lockstep"
    compute_time: NonNegative | Literal["measured"] = 0.0
    busy_time: NonNegative = 0.0
    transport: Literal["in-process", "udp"] = "in-process"


class MetricsSection(_Strict):
    """Which signal the tracking metrics follow, its target, the settling band and windows."""

    signal: str | None = None
    target: float | str | None = None
    band: Annotated[float, Field(gt=0, lt=1)] = 0.02
    band_min: NonNegative = 0.1
    steady_window: Positive = 2.0


class Scenario(_Strict):
    """One complete scenario: everything a run needs except the varied parameters."""

    scenario: ScenarioSection = Field(default_factory=ScenarioSection)
    vehicle: VehicleSection = Field(default_factory=VehicleSection)
    terrain: TerrainSection = Field(default_factory=TerrainSection)
    controller: ControllerSection = Field(default_factory=ControllerSection)
    coupling: CouplingSection = Field(default_factory=CouplingSection)
    metrics: MetricsSection = Field(default_factory=MetricsSection)


class SweepSection(_Strict):
    """How parameters vary.

    ``grid``: every combination; ``list``: the i-th value of each parameter together;
    ``random``: ``samples`` draws from a generator seeded with ``seed``.
    """

    mode: Literal["grid", "list", "random"] = "grid"
    seed: int = 0
    samples: Annotated[int, Field(ge=1)] | None = None
    parameters: dict[str, Any] = Field(default_factory=dict)


DEFAULT_SIGNALS = ("groundspeed", "accY", "yaw", "throttle", "brake", "steering", "gear", "rpm")


class OutputSection(_Strict):
    """Where results go and what is saved beside the metrics."""

    dir: str | None = None
    signals: bool = False
    signal_names: list[str] = Field(default_factory=lambda: list(DEFAULT_SIGNALS))
    signals_every: Annotated[int, Field(ge=1)] = 20
    worst: Annotated[int, Field(ge=1)] = 5


class SweepFile(Scenario):
    """A whole sweep file: the scenario's sections, ``[sweep]`` and ``[output]``."""

    sweep: SweepSection = Field(default_factory=SweepSection)
    output: OutputSection = Field(default_factory=OutputSection)


# -- parameter specifications ------------------------------------------------------------------


@dataclass(frozen=True)
class Axis:
    """A parameter's values: fixed ones, or a distribution to draw from (random mode)."""

    values: tuple[Scalar, ...] = ()
    low: float = 0.0
    high: float = 0.0
    log: bool = False
    integer: bool = False

    @property
    def drawn(self) -> bool:
        """True for a {low, high} distribution."""
        return not self.values

    def draw(self, rng: np.random.Generator, n: int) -> list[Scalar]:
        """``n`` values: samples of the distribution, or choices among the fixed values."""
        if self.values:
            return [self.values[int(i)] for i in rng.integers(0, len(self.values), n)]
        if self.integer:
            return [
                int(v)
                for v in rng.integers(
                    math.ceil(self.low), math.floor(self.high), size=n, endpoint=True
                )
            ]
        if self.log:
            return [
                float(v) for v in np.exp(rng.uniform(math.log(self.low), math.log(self.high), n))
            ]
        return [float(v) for v in rng.uniform(self.low, self.high, n)]


def _is_scalar(value: Any) -> bool:
    return isinstance(value, bool | int | float | str)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def parse_axis(spec: Any) -> tuple[Axis | None, list[str]]:
    """One parameter's specification as an ``Axis``, or the problems with it.

    Forms: a value; a list of values; ``{values = [...]}``; ``{from, to, num[, log]}``
    (evenly or geometrically spaced); ``{low, high[, log, integer]}`` (random mode only).
    """
    if _is_scalar(spec):
        return Axis((spec,)), []
    if isinstance(spec, list):
        if not spec:
            return None, ["an empty list of values"]
        bad = [v for v in spec if not _is_scalar(v)]
        if bad:
            return None, [f"values must be numbers, strings or booleans (got {bad[0]!r})"]
        return Axis(tuple(spec)), []
    if not isinstance(spec, dict):
        return None, [f"not a parameter specification: {spec!r}"]
    keys = set(spec)
    forms = {
        "values": ({"values"}, set()),
        "range": ({"from", "to", "num"}, {"log"}),
        "distribution": ({"low", "high"}, {"log", "integer"}),
    }
    for form, (required, optional) in forms.items():
        if keys & required:
            missing, unknown = required - keys, keys - required - optional
            problems = [f"missing {k!r}" for k in sorted(missing)]
            problems += [f"unknown key {k!r} in a {form} specification" for k in sorted(unknown)]
            if problems:
                return None, problems
            return _axis_of(form, spec)
    return None, [
        f"unknown specification keys {sorted(keys)} (give a list, {{values = [...]}}, "
        "{from, to, num} or {low, high})"
    ]


def _axis_of(form: str, spec: dict[str, Any]) -> tuple[Axis | None, list[str]]:
    if form == "values":
        return parse_axis(list(spec["values"]) if isinstance(spec["values"], list) else None)
    numbers = {k: v for k, v in spec.items() if k not in ("log", "integer")}
    problems = [f"{k!r} must be a number" for k, v in numbers.items() if not _is_number(v)]
    problems += [
        f"{k!r} must be true or false"
        for k in ("log", "integer")
        if k in spec and not isinstance(spec[k], bool)
    ]
    if problems:
        return None, problems
    log = bool(spec.get("log", False))
    if form == "range":
        num = spec["num"]
        if not isinstance(num, int) or num < 1:
            return None, ["'num' must be a whole number >= 1"]
        start, stop = float(spec["from"]), float(spec["to"])
        if log and (start <= 0 or stop <= 0):
            return None, ["log = true needs 'from' and 'to' > 0"]
        values = np.geomspace(start, stop, num) if log else np.linspace(start, stop, num)
        return Axis(tuple(float(v) for v in values)), []
    low, high = float(spec["low"]), float(spec["high"])
    if not high > low:
        return None, ["'high' must be greater than 'low'"]
    if log and low <= 0:
        return None, ["log = true needs 'low' > 0"]
    integer = bool(spec.get("integer", False))
    if integer and math.floor(high) < math.ceil(low):
        return None, ["no whole number between 'low' and 'high'"]
    return Axis(low=low, high=high, log=log, integer=integer), []


def expand(section: SweepSection, axes: Mapping[str, Axis]) -> list[dict[str, Scalar]]:
    """Every run's parameter values, in run order (grid: the first parameter varies slowest)."""
    names = list(axes)
    if not names:
        return [{}]
    if section.mode == "grid":
        return [
            dict(zip(names, combo, strict=True))
            for combo in itertools.product(*(axes[n].values for n in names))
        ]
    if section.mode == "list":
        n = max(len(axes[name].values) for name in names)
        columns = [
            list(a.values) * n if len(a.values) == 1 else list(a.values) for a in axes.values()
        ]
        return [dict(zip(names, row, strict=False)) for row in zip(*columns, strict=False)][:n]
    rng = np.random.default_rng(section.seed)
    count = int(section.samples or 1)
    columns = [axes[name].draw(rng, count) for name in names]
    return [dict(zip(names, row, strict=True)) for row in zip(*columns, strict=True)]


def sweep_problems(section: SweepSection, axes: Mapping[str, Axis]) -> list[str]:
    """Problems of the ``[sweep]`` section as a whole."""
    problems = []
    if section.mode == "random" and section.samples is None:
        problems.append("sweep.samples: mode = 'random' needs a number of samples")
    if section.mode != "random" and section.samples is not None:
        problems.append(f"sweep.samples: only for mode = 'random' (mode is {section.mode!r})")
    for path, axis in axes.items():
        if axis.drawn and section.mode != "random":
            problems.append(
                f"sweep.parameters.{path!r}: a {{low, high}} distribution needs "
                "mode = 'random'; give values or {from, to, num}"
            )
    if section.mode == "list":
        lengths = {p: len(a.values) for p, a in axes.items() if len(a.values) > 1}
        if len(set(lengths.values())) > 1:
            listed = ", ".join(f"{p!r}: {n}" for p, n in lengths.items())
            problems.append(f"sweep.parameters: mode = 'list' needs lists of one length ({listed})")
    return problems


# -- applying parameters to a scenario ---------------------------------------------------------


def apply(base: Mapping[str, Any], params: Mapping[str, Scalar]) -> dict[str, Any]:
    """A deep copy of a scenario dict with each dotted path set to its value."""
    data = copy.deepcopy(dict(base))
    for path, value in params.items():
        node = data
        *parents, leaf = path.split(".")
        for part in parents:
            child = node.get(part)
            if not isinstance(child, dict):
                child = node[part] = {}
            node = child
        node[leaf] = value
    return data


@lru_cache(maxsize=32)
def base_vehicle(base: str) -> VehicleParams:
    """The vehicle a scenario starts from: a preset name or a parameter TOML file."""
    if base.endswith(".toml") or "/" in base:
        return VehicleParams.from_toml(base)
    return VehicleParams.preset(base)


def controller_factory(name: str) -> Callable[..., Any] | None:
    """What makes the controller: an example's class, a ``module:attr`` factory, or None."""
    from vcosim.entrypoints import load_object, load_user_code

    if name == "none":
        return None
    if ":" in name:
        return load_user_code(name, option="controller")
    from vcosim.controllers import EXAMPLES

    if name not in EXAMPLES:
        raise UnknownNameError("controller", name, (*EXAMPLES, "none", "module:attr"))
    return load_object(EXAMPLES[name])


def factory_parameters(factory: Callable[..., Any]) -> list[str] | None:
    """Keyword parameters a factory accepts (None: any)."""
    if dataclasses.is_dataclass(factory):
        return [
            f.name for f in dataclasses.fields(factory) if f.init and not f.name.startswith("_")
        ]
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):
        return None
    names = []
    for p in signature.parameters.values():
        if p.kind is p.VAR_KEYWORD:
            return None
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            names.append(p.name)
    return names


def _default_of(factory: Callable[..., Any], name: str) -> Any:
    if dataclasses.is_dataclass(factory):
        for f in dataclasses.fields(factory):
            if f.name == name and f.default is not dataclasses.MISSING:
                return f.default
        return None
    try:
        p = inspect.signature(factory).parameters.get(name)
    except (TypeError, ValueError):
        return None
    return None if p is None or p.default is p.empty else p.default


def _lookup(data: Mapping[str, Any], path: str) -> Any:
    node: Any = data
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


@dataclass(frozen=True)
class RunConfig:
    """One run, fully resolved: the scenario with its parameters applied, and checked."""

    scenario: Scenario
    vehicle: VehicleParams
    factory: Callable[..., Any] | None
    metric_signal: str | None
    target: float | None


def scenario_problems(run: Scenario) -> list[str]:
    """Rules across keys that the sections' types cannot say."""
    problems = []
    sc, cp = run.scenario, run.coupling
    if sc.initial_speed > 0 and sc.gearbox != "automatic":
        problems.append("scenario.initial_speed: a speed > 0 needs gearbox = 'automatic'")
    for i, event in enumerate(sc.manoeuvre):
        where = f"scenario.manoeuvre.{i}"
        if event.time >= sc.duration:
            problems.append(
                f"{where}.time: {event.time:g} s is not before the end of the run "
                f"({sc.duration:g} s)"
            )
        for name, value in event.inputs.items():
            if name not in L.INPUT_NAMES:
                problems.append(
                    f"{where}.{name}: {UnknownNameError('vehicle input', name, L.INPUT_NAMES)}"
                )
            elif name == "drive_mode":
                if value not in ("pedals", "torques"):
                    problems.append(f"{where}.drive_mode: 'pedals' or 'torques'")
            elif name in L.VECTOR_INPUTS:
                if not (
                    isinstance(value, list)
                    and len(value) == 4
                    and all(_is_number(v) for v in value)
                ):
                    problems.append(f"{where}.{name}: needs 4 numbers (FL, FR, RL, RR)")
            elif not _is_number(value):
                problems.append(f"{where}.{name}: must be a number")
    if cp.transport == "udp" and cp.timing != "lockstep":
        problems.append(
            "coupling.transport: 'udp' needs timing = 'lockstep' (a real-time UDP "
            "run is not reproducible)"
        )
    if cp.transport == "udp" and cp.compute_time == "measured":
        problems.append("coupling.compute_time: 'measured' needs transport = 'in-process'")
    signal = run.metrics.signal
    if signal is not None and signal not in L.SIGNAL_NAMES and signal not in DERIVED_SIGNALS:
        valid = (*L.SIGNAL_NAMES, *DERIVED_SIGNALS)
        problems.append(f"metrics.signal: {UnknownNameError('signal', signal, valid)}")
    if not run.terrain.flat:
        for key in ("height_map", "road_map", "friction_map"):
            value = getattr(run.terrain, key)
            if value is not None and not Path(value).exists():
                problems.append(f"terrain.{key}: no such file: {value}")
    return problems


def resolve(scenario: Scenario, params: Mapping[str, Scalar]) -> RunConfig:
    """Apply ``params`` to ``scenario`` and check the result; ``ConfigError`` lists problems."""
    data = apply(scenario.model_dump(), params)
    try:
        run = Scenario.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(validation_problems(exc), "run") from None
    problems = scenario_problems(run)
    vehicle = None
    try:
        base = base_vehicle(run.vehicle.base)
    except ConfigError as exc:
        problems += [f"vehicle.base: {p}" for p in exc.problems]
    else:
        try:
            vehicle = VehicleParams.from_dict(deep_merge(base.model_dump(), run.vehicle.overrides))
        except ConfigError as exc:
            problems += [f"vehicle.{p}" for p in exc.problems]
    factory = None
    try:
        factory = controller_factory(run.controller.name)
    except (VcosimError, ImportError) as exc:
        problems.append(f"controller.name: {exc}")
    else:
        accepted = factory_parameters(factory) if factory is not None else []
        for key in run.controller.params:
            if accepted is not None and key not in accepted:
                if factory is None:
                    problems.append(f"controller.{key}: controller 'none' takes no parameters")
                else:
                    problems.append(
                        f"controller.{key}: "
                        f"{UnknownNameError('controller parameter', key, accepted)}"
                    )
    signal, target = run.metrics.signal, run.metrics.target
    default = DEFAULT_TRACKING.get(run.controller.name)
    if default is not None:
        if signal is None:
            signal = default[0]
        if target is None and signal == default[0]:
            target = default[1]
    if isinstance(target, str):
        value = _lookup(data, target)
        if value is None and target.startswith("controller.") and factory is not None:
            value = _default_of(factory, target.split(".", 1)[1])
        if _is_number(value):
            target = float(value)
        else:
            problems.append(
                f"metrics.target: {target!r} is not a number in this run (give a "
                "number or the dotted path of one, e.g. 'controller.speed')"
            )
    if problems:
        raise ConfigError(problems, "run")
    assert vehicle is not None  # a vehicle that fails to build is one of the problems
    return RunConfig(
        run,
        vehicle,
        factory,
        signal,
        None if target is None else float(target),
    )


# -- parameter paths ---------------------------------------------------------------------------


def check_path(path: str, scenario: Scenario) -> str | None:
    """Why ``path`` names no parameter of ``scenario`` (None: it does)."""
    parts = path.split(".")
    section = parts[0]
    if section not in SECTIONS:
        hint = difflib.get_close_matches(section, SECTIONS, n=1)
        extra = f"; did you mean {hint[0]!r}?" if hint else ""
        return f"must start with one of {', '.join(SECTIONS)} (got {section!r}{extra})"
    if len(parts) < 2:
        return "names a section, not a parameter"
    key = parts[1]
    if section == "vehicle":
        return None if key == "base" and len(parts) == 2 else _vehicle_path(parts)
    if section == "controller":
        if key == "name":
            return None if len(parts) == 2 else "controller.name has no sub-keys"
        try:
            factory = controller_factory(scenario.controller.name)
        except (VcosimError, ImportError):
            return None  # the controller's own problem is reported with the runs
        if factory is None:
            return "controller 'none' has no parameters"
        accepted = factory_parameters(factory)
        if accepted is not None and key not in accepted:
            return str(UnknownNameError("controller parameter", key, accepted))
        return None if len(parts) == 2 else f"controller.{key} has no sub-keys"
    model = type(getattr(scenario, section))
    keys = [k for k in model.model_fields if not (section == "scenario" and k == "manoeuvre")]
    if key not in keys:
        return str(UnknownNameError(f"{section} parameter", key, keys))
    return None if len(parts) == 2 else f"{section}.{key} has no sub-keys"


def _vehicle_path(parts: list[str]) -> str | None:
    model: type[BaseModel] = VehicleParams
    for depth, part in enumerate(parts[1:], start=1):
        fields = model.model_fields
        if part not in fields:
            where = ".".join(parts[:depth])
            return str(UnknownNameError(f"parameter of {where}", part, list(fields)))
        annotation = fields[part].annotation
        is_section = isinstance(annotation, type) and issubclass(annotation, BaseModel)
        if depth < len(parts) - 1:
            if not is_section:
                return f"{'.'.join(parts[: depth + 1])} has no sub-keys"
            model = annotation  # type: ignore[assignment]
        elif is_section:
            return f"{'.'.join(parts)} is a section; name one of its keys"
    return None


# -- loading -----------------------------------------------------------------------------------

PATH_KEYS = ("vehicle.base", "terrain.height_map", "terrain.road_map", "terrain.friction_map")
"""Keys holding file paths: relative ones are relative to the sweep file's folder."""


def _absolute(path: str, value: Any, directory: str) -> Any:
    if not isinstance(value, str) or not directory:
        return value
    if path == "vehicle.base" and not (value.endswith(".toml") or "/" in value):
        return value  # a preset name
    return value if Path(value).is_absolute() else str(Path(directory) / value)


def parse(
    data: Mapping[str, Any], source: str = "sweep", directory: str = "", text: str = ""
) -> Sweep:
    """Validate a sweep given as a dict: the file, every parameter path, every run.

    ``directory``: the folder relative file paths in the sweep are relative to.
    """
    data = copy.deepcopy(dict(data))
    for path in PATH_KEYS:
        section, key = path.split(".")
        node = data.get(section)
        if isinstance(node, dict) and key in node:
            node[key] = _absolute(path, node[key], directory)
    problems: list[str] = []
    try:
        sweep_file: SweepFile | None = SweepFile.model_validate(data)
    except ValidationError as exc:
        problems += validation_problems(exc)
        sweep_file = None
    if sweep_file is not None:
        scenario = Scenario.model_validate(sweep_file.model_dump(include=set(SECTIONS)))
        parameters = sweep_file.sweep.parameters
    else:  # check the parameters anyway, against what of the file is valid
        scenario = _fallback_scenario(data)
        sweep_section = data.get("sweep")
        raw = sweep_section.get("parameters") if isinstance(sweep_section, dict) else None
        parameters = raw if isinstance(raw, dict) else {}
    axes: dict[str, Axis] = {}
    for path, spec in parameters.items():
        why = check_path(path, scenario)
        if why is not None:
            problems.append(f"sweep.parameters.{path!r}: {why}")
        axis, axis_problems = parse_axis(spec)
        problems += [f"sweep.parameters.{path!r}: {p}" for p in axis_problems]
        if axis is not None:
            if path in PATH_KEYS:
                axis = dataclasses.replace(
                    axis, values=tuple(_absolute(path, v, directory) for v in axis.values)
                )
            axes[path] = axis
    if sweep_file is None:
        raise ConfigError(problems, source)
    valid = (*L.SIGNAL_NAMES, *DERIVED_SIGNALS)
    problems += [
        f"output.signal_names: {UnknownNameError('signal', n, valid)}"
        for n in sweep_file.output.signal_names
        if n not in valid
    ]
    problems += sweep_problems(sweep_file.sweep, axes)
    if problems:
        raise ConfigError(problems, source)
    runs = expand(sweep_file.sweep, axes)
    problems = check_runs(scenario, runs)
    if problems:
        raise ConfigError(problems, source)
    return Sweep(
        name=sweep_file.scenario.name,
        scenario=scenario,
        runs=runs,
        parameters=list(axes),
        output=sweep_file.output,
        source=source,
        text=text,
    )


def _fallback_scenario(data: Mapping[str, Any]) -> Scenario:
    """The default scenario with the file's controller section, if that one is valid."""
    try:
        return Scenario(controller=ControllerSection.model_validate(data.get("controller", {})))
    except (ValidationError, TypeError):
        return Scenario()


def check_runs(scenario: Scenario, runs: list[dict[str, Scalar]]) -> list[str]:
    """Problems of every run's complete configuration; a problem shared by runs listed once."""
    seen: dict[str, list[int]] = {}
    for index, params in enumerate(runs):
        try:
            resolve(scenario, params)
        except ConfigError as exc:
            for problem in exc.problems:
                seen.setdefault(problem, []).append(index)
    if len(runs) == 1:
        return list(seen)
    out = []
    for problem, indices in seen.items():
        shown = ", ".join(str(i) for i in indices[:MAX_LISTED_RUNS])
        more = (
            f" and {len(indices) - MAX_LISTED_RUNS} more" if len(indices) > MAX_LISTED_RUNS else ""
        )
        values = ", ".join(f"{k} = {v!r}" for k, v in runs[indices[0]].items())
        runs_text = f"run {shown}{more}" if len(indices) == 1 else f"runs {shown}{more}"
        out.append(f"{problem} ({runs_text}; first: {values})")
    return out


def load_sweep(path: str | Path) -> Sweep:
    """Read and validate a sweep file; relative paths in it are relative to its folder."""
    path = Path(path)
    text = read_config_text(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError([f"not valid TOML: {exc}"], str(path)) from None
    return parse(data, str(path), str(path.resolve().parent), text)


@dataclass(frozen=True)
class Sweep:
    """A validated sweep: the scenario, every run's parameter values, the output options."""

    name: str
    scenario: Scenario
    runs: list[dict[str, Scalar]]
    parameters: list[str]
    output: OutputSection
    source: str = "sweep"
    text: str = ""
