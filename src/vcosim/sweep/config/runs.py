"""One run's complete configuration: the scenario with the run's values applied, and checked.

``resolve`` builds what a run needs (the vehicle's parameters, the controller's factory, the
signal and target of the tracking metrics) and lists every problem of that run;
``check_runs`` does it for every run of a sweep before anything runs, a problem several runs
share listed once with the runs it concerns.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from vcosim.config import deep_merge, validation_problems
from vcosim.errors import ConfigError, UnknownNameError, VcosimError
from vcosim.sweep.config.controllers import (
    controller_factory,
    factory_parameters,
    parameter_default,
)
from vcosim.sweep.config.parameters import is_number
from vcosim.sweep.config.sections import DERIVED_SIGNALS, Scalar, Scenario
from vcosim.sweep.config.world import storyboard, world_spec
from vcosim.vehicle import layout as L
from vcosim.vehicle.inputs import INPUT_NAMES, INPUTS
from vcosim.vehicle.params import VehicleParams
from vcosim.world.spec import WorldFile

if TYPE_CHECKING:
    from vcosim.scenarios.spec import StoryboardFaceSpec

DEFAULT_TRACKING = {
    "cruise": ("groundspeed", "controller.speed"),
    "cruise-torque": ("groundspeed", "controller.speed"),
    "heading": ("yaw_deg", "controller.heading"),
}
"""The signal and target the tracking metrics follow for each example controller."""

MAX_LISTED_RUNS = 10  # problems of this many runs are listed; the rest are counted


@dataclass(frozen=True)
class RunConfig:
    """One run, fully resolved: the scenario with its parameters applied, and checked."""

    scenario: Scenario
    vehicle: VehicleParams
    factory: Callable[..., Any] | None
    metric_signal: str | None
    target: float | None
    world: WorldFile | None = None
    storyboard: StoryboardFaceSpec | None = None


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


def scenario_problems(run: Scenario) -> list[str]:
    """Rules across keys that the sections' types cannot say."""
    problems = []
    sc, cp = run.scenario, run.coupling
    if run.world.file is not None and sc.initial_speed > 0:
        problems.append("scenario.initial_speed: a world's vehicles start as its file says")
    if run.world.file is None and run.world.overrides:
        problems.append(f"world.{next(iter(run.world.overrides))}: there is no world.file")
    if sc.initial_speed > 0 and sc.gearbox != "automatic":
        problems.append("scenario.initial_speed: a speed > 0 needs gearbox = 'automatic'")
    for i, event in enumerate(sc.manoeuvre):
        where = f"scenario.manoeuvre.{i}"
        if event.time >= sc.duration:
            problems.append(
                f"{where}.time: {event.time:g} s is not before the end of the run "
                f"({sc.duration:g} s)"
            )
        problems += [f"{where}.{p}" for p in _input_problems(event.inputs)]
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
        for key in ("height_map", "road_map", "friction_map", "road"):
            value = getattr(run.terrain, key)
            if value is not None and not Path(value).exists():
                problems.append(f"terrain.{key}: no such file: {value}")
    return problems


def _input_problems(inputs: Mapping[str, Any]) -> list[str]:
    """Problems of a manoeuvre event's vehicle inputs, each as ``name: why``."""
    problems = []
    for name, value in inputs.items():
        if name not in INPUTS:
            problems.append(f"{name}: {UnknownNameError('vehicle input', name, INPUT_NAMES)}")
        elif INPUTS[name].choices:
            if value not in INPUTS[name].choices:
                problems.append(f"{name}: {' or '.join(map(repr, INPUTS[name].choices))}")
        elif INPUTS[name].width == 4:
            if not (isinstance(value, list) and len(value) == 4 and all(map(is_number, value))):
                problems.append(f"{name}: needs 4 numbers (FL, FR, RL, RR)")
        elif not is_number(value):
            problems.append(f"{name}: must be a number")
    return problems


def _vehicle(run: Scenario, problems: list[str]) -> VehicleParams | None:
    try:
        base = base_vehicle(run.vehicle.base)
    except ConfigError as exc:
        problems += [f"vehicle.base: {p}" for p in exc.problems]
        return None
    try:
        return VehicleParams.from_dict(deep_merge(base.model_dump(), run.vehicle.overrides))
    except ConfigError as exc:
        problems += [f"vehicle.{p}" for p in exc.problems]
        return None


def _controller(run: Scenario, problems: list[str]) -> Callable[..., Any] | None:
    try:
        factory = controller_factory(run.controller.name)
    except (VcosimError, ImportError) as exc:
        problems.append(f"controller.name: {exc}")
        return None
    accepted = factory_parameters(factory) if factory is not None else []
    numeric = _numeric_fields(factory)
    for key, value in run.controller.params.items():
        if key in numeric and (isinstance(value, bool) or not isinstance(value, (int, float))):
            problems.append(f"controller.{key}: {value!r} is not a number")
        if accepted is None or key in accepted:
            continue
        if factory is None:
            problems.append(f"controller.{key}: controller 'none' takes no parameters")
        else:
            why = UnknownNameError("controller parameter", key, accepted)
            problems.append(f"controller.{key}: {why}")
    return factory


def _numeric_fields(factory: Any) -> set[str]:
    """The fields of an example controller (a dataclass) that hold numbers."""
    if not dataclasses.is_dataclass(factory):
        return set()
    return {f.name for f in dataclasses.fields(factory) if f.type in ("float", "int", float, int)}


def _tracking(
    run: Scenario,
    data: Mapping[str, Any],
    factory: Callable[..., Any] | None,
    problems: list[str],
) -> tuple[str | None, float | None]:
    """The signal and target of the tracking metrics, the controller's defaults filled in."""
    signal, target = run.metrics.signal, run.metrics.target
    default = DEFAULT_TRACKING.get(run.controller.name)
    if default is not None:
        if signal is None:
            signal = default[0]
        if target is None and signal == default[0]:
            target = default[1]
    if not isinstance(target, str):
        return signal, None if target is None else float(target)
    value = _lookup(data, target)
    if value is None and target.startswith("controller.") and factory is not None:
        value = parameter_default(factory, target.split(".", 1)[1])
    if is_number(value):
        return signal, float(value)
    problems.append(
        f"metrics.target: {target!r} is not a number in this run (give a "
        "number or the dotted path of one, e.g. 'controller.speed')"
    )
    return signal, None


def _lookup(data: Mapping[str, Any], path: str) -> Any:
    node: Any = data
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def resolve(scenario: Scenario, params: Mapping[str, Scalar]) -> RunConfig:
    """Apply ``params`` to ``scenario`` and check the result; ``ConfigError`` lists problems."""
    data = apply(scenario.model_dump(), params)
    try:
        run = Scenario.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(validation_problems(exc), "run") from None
    problems = scenario_problems(run)
    world, story = None, None
    if run.world.file is not None:
        try:
            world, story = world_spec(run.world), storyboard(run.world)
        except ConfigError as exc:
            problems += exc.problems
    vehicle = _vehicle(run, problems)
    factory = _controller(run, problems)
    signal, target = _tracking(run, data, factory, problems)
    if problems:
        raise ConfigError(problems, "run")
    assert vehicle is not None  # a vehicle that fails to build is one of the problems
    return RunConfig(run, vehicle, factory, signal, target, world, story)


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
