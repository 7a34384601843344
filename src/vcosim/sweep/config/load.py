"""Reading a sweep file: every problem of every stage listed at once, before anything runs.

Three stages, each checked even when an earlier one found problems: the file's keys and types
(a key with a problem is left at its default for the later stages), the parameter paths and
their value specifications, then every run's complete configuration. Only what an earlier
problem makes meaningless is left out (a parameter naming no key is not expanded into runs).
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from vcosim.config import (
    parse_toml,
    read_config_text,
    validation_problems,
    with_number_problems,
)
from vcosim.errors import ConfigError, UnknownNameError
from vcosim.sweep.config.parameters import (
    Axis,
    check_path,
    expand,
    parse_axis,
    run_count,
    sweep_problems,
)
from vcosim.sweep.config.runs import check_runs
from vcosim.sweep.config.sections import (
    DERIVED_SIGNALS,
    MAX_RUNS,
    SECTIONS,
    BackendSection,
    OutputSection,
    Scalar,
    Scenario,
    SweepFile,
    WorldSection,
)
from vcosim.vehicle import layout as L

PATH_KEYS = (
    "vehicle.base",
    "terrain.height_map",
    "terrain.road_map",
    "terrain.friction_map",
    "terrain.road",
    "world.file",
    "sweep.distribution",
)
"""Keys holding file paths: relative ones are relative to the sweep file's folder."""
CHECKED_RUNS = 100
"""How many of a too-large sweep's first runs are still checked (their problems listed)."""


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
    backend: BackendSection = dataclasses.field(default_factory=BackendSection)


def _absolute(path: str, value: Any, directory: str) -> Any:
    if not isinstance(value, str) or not directory:
        return value
    if path == "vehicle.base" and not (value.endswith(".toml") or "/" in value):
        return value  # a preset name
    return value if Path(value).is_absolute() else str(Path(directory) / value)


def _with_absolute_paths(data: Mapping[str, Any], directory: str) -> dict[str, Any]:
    out = copy.deepcopy(dict(data))
    for path in PATH_KEYS:
        section, key = path.split(".")
        node = out.get(section)
        if isinstance(node, dict) and key in node:
            node[key] = _absolute(path, node[key], directory)
    return out


def _drop(data: dict[str, Any], loc: Sequence[int | str]) -> str:
    """Remove the section or key (the first two levels of ``loc``) a problem is in; its path."""
    section = data.get(str(loc[0])) if loc else None
    if len(loc) >= 2 and isinstance(section, dict):
        section.pop(str(loc[1]), None)
        return f"{loc[0]}.{loc[1]}"
    if loc:
        data.pop(str(loc[0]), None)
    return ".".join(str(part) for part in loc[:1])


def validate_file(data: Mapping[str, Any]) -> tuple[SweepFile, list[str], set[str]]:
    """The file's keys and types: its valid part, the problems, the keys with a problem.

    A key with a problem is dropped (its default stands in), so the later stages check the
    rest of the file as it would be with that key fixed.
    """
    try:
        return SweepFile.model_validate(data), [], set()
    except ValidationError as exc:
        problems = validation_problems(exc)
        valid = copy.deepcopy(dict(data))
        dropped = {_drop(valid, error["loc"]) for error in exc.errors()}
    try:
        return SweepFile.model_validate(valid), problems, dropped
    except ValidationError:  # not expected: a key's default is always valid
        return SweepFile(), problems, dropped


def parameter_axes(
    parameters: Mapping[str, Any],
    scenario: Scenario,
    directory: str = "",
    max_values: int = MAX_RUNS,
) -> tuple[dict[str, Axis], list[str]]:
    """Every parameter that names a key and has valid values, and the problems of the rest.

    No parameter's values are made beyond ``max_values`` (the sweep's ``max_runs``).
    """
    axes: dict[str, Axis] = {}
    problems: list[str] = []
    for path, spec in parameters.items():
        why = check_path(path, scenario)
        if why is not None:
            problems.append(f"sweep.parameters.{path!r}: {why}")
        axis, axis_problems = parse_axis(spec, max_values)
        problems += [f"sweep.parameters.{path!r}: {p}" for p in axis_problems]
        if axis is None or why is not None:
            continue
        if path in PATH_KEYS:
            values = tuple(_absolute(path, v, directory) for v in axis.values)
            axis = dataclasses.replace(axis, values=values)
        axes[path] = axis
    return axes, problems


def parse(
    data: Mapping[str, Any], source: str = "sweep", directory: str = "", text: str = ""
) -> Sweep:
    """Validate a sweep given as a dict: the file, every parameter, every run.

    ``directory``: the folder relative file paths in the sweep are relative to. A
    ``ConfigError`` lists every problem of every stage, each with its key path.
    """
    sweep_file, problems, dropped = validate_file(_with_absolute_paths(data, directory))
    scenario = Scenario.model_validate(sweep_file.model_dump(include=set(SECTIONS)))
    axes, axis_problems = parameter_axes(
        sweep_file.sweep.parameters, scenario, directory, sweep_file.sweep.max_runs
    )
    problems += axis_problems
    valid = (*L.SIGNAL_NAMES, *DERIVED_SIGNALS)
    problems += [
        f"output.signal_names: {UnknownNameError('signal', n, valid)}"
        for n in sweep_file.output.signal_names
        if n not in valid
    ]
    if not dropped & {"sweep", "sweep.mode"}:  # else the default mode would be judged
        problems += sweep_problems(sweep_file.sweep, axes)
    variations, varied = _variations(sweep_file, scenario, problems)
    if varied:
        scenario = scenario.model_copy(update={"world": WorldSection(file=varied)})
    count = run_count(sweep_file.sweep, axes) * len(variations)
    if count > sweep_file.sweep.max_runs:
        problems.append(
            f"sweep: {count:,} runs, more than sweep.max_runs = {sweep_file.sweep.max_runs:,} "
            "(fewer values, or raise max_runs (--max-runs) if the sweep really is that large)"
        )
        runs: list[dict[str, Scalar]] = []
        first = itertools.islice(
            (
                {**run, **each}
                for run in expand(sweep_file.sweep, axes, CHECKED_RUNS)
                for each in variations
            ),
            CHECKED_RUNS,
        )
        problems += check_runs(scenario, list(first))  # the runs' own problems, said too
    else:
        runs = [{**run, **each} for run in expand(sweep_file.sweep, axes) for each in variations]
        problems += check_runs(scenario, runs)
    if problems:
        raise ConfigError(problems, source)
    return Sweep(
        name=sweep_file.scenario.name,
        scenario=scenario,
        runs=runs,
        parameters=list(dict.fromkeys([*axes, *(k for each in variations for k in each)])),
        output=sweep_file.output,
        source=source,
        text=text,
        backend=sweep_file.backend,
    )


def _variations(
    sweep_file: SweepFile, scenario: Scenario, problems: list[str]
) -> tuple[list[dict[str, Scalar]], str | None]:
    """The runs of ``sweep.distribution`` (``world.NAME`` values), and the scenario it varies.

    Without a distribution: one empty variation. Its scenario must be ``world.file``, or the
    world when ``world.file`` is not given.
    """
    path = sweep_file.sweep.distribution
    if path is None:
        return [{}], None
    from vcosim.openscenario.distribution import read_distribution

    try:
        varied, variations = read_distribution(path, sweep_file.sweep.max_runs)
    except ConfigError as exc:
        problems.extend(f"sweep.distribution: {p}" for p in exc.problems)
        return [{}], None
    given = scenario.world.file
    if given is not None and Path(given).resolve() != varied.resolve():
        problems.append(f"sweep.distribution: it varies {varied}, not world.file {given}")
        return [{}], None
    runs = [{f"world.{k}": _scalar(v) for k, v in each.items()} for each in variations]
    return runs, None if given is not None else str(varied)


def _scalar(text: str) -> Scalar:
    """A parameter value of a distribution: a number when it reads as one."""
    try:
        return float(text)
    except ValueError:
        return text


def load_sweep(path: str | Path, max_runs: int | None = None) -> Sweep:
    """Read and validate a sweep file; relative paths in it are relative to its folder.

    ``max_runs`` (``vcosim sweep --max-runs``) replaces the file's ``sweep.max_runs``.
    """
    path = Path(path)
    text = read_config_text(path)
    data = parse_toml(text, str(path), numbers=False)
    if max_runs is not None and isinstance(data.get("sweep", {}), dict):
        data.setdefault("sweep", {})["max_runs"] = max_runs
    folder = str(path.resolve().parent)
    return with_number_problems(data, str(path), lambda d: parse(d, str(path), folder, text))
