"""The search file: a sweep file whose ``[search]`` section says what to look for, and where.

A search file has the scenario's sections of a sweep file (``[scenario]``, ``[world]``,
``[vehicle]``, ``[controller]``, ``[coupling]``, ...), ``[output]`` and ``[backend]``, and a
``[search]`` section instead of ``[sweep]``: the parameters with their ranges, the objective (a
run metric, or the robustness of a signal temporal logic requirement), the threshold under
which a run falsifies, the method, the budget and the seed. ``load_search`` checks all of it,
every problem of every part listed at once with its key path (``ConfigError``), before anything
runs. The reference is ``docs/search.md``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from vcosim.config import (
    parse_toml,
    read_config_text,
    validation_problems,
    with_number_problems,
)
from vcosim.errors import ConfigError, UnknownNameError
from vcosim.search.stl import Formula, parse_requirement
from vcosim.sweep.config import Scalar, Sweep, parse
from vcosim.sweep.config.parameters import check_path, is_number
from vcosim.sweep.config.runs import check_runs
from vcosim.sweep.metrics import METRICS, WORLD_METRICS, Metric

METHODS = ("tpe", "cmaes", "random")


class SearchSection(BaseModel):
    """``[search]``: what is varied, what is minimised, how, for how many runs."""

    model_config = ConfigDict(extra="forbid")

    method: Literal["tpe", "cmaes", "random"] = "tpe"
    objective: str | None = None
    """A metric column (``min_time_to_collision``), minimised towards its worst end."""
    requirement: str | None = None
    """A signal temporal logic requirement; its robustness is the objective."""
    threshold: float | None = None
    """A run whose objective is below it (a metric's worst side of it) falsifies."""
    budget: Annotated[int, Field(ge=1, le=1_000_000)] = 100
    max_time: Annotated[float, Field(gt=0)] | None = None
    """Wall seconds after which no new batch starts (the runs then depend on the machine)."""
    batch: Annotated[int, Field(ge=1, le=1024)] = 4
    """Runs asked of the method at once; the same on every backend, so results do not
    depend on the workers."""
    startup: Annotated[int, Field(ge=0)] | None = None
    """The first runs, a Latin hypercube over the ranges (default: one batch; random: none)."""
    seed: int = 0
    stop: Literal["budget", "first"] = "budget"
    """``first``: stop after the batch in which the first run falsifies."""
    cap: Annotated[float, Field(gt=0)] = 1000.0
    """Objective values beyond ±cap (a time to collision of inf) are given to the method as ±cap."""
    signals_every: Annotated[int, Field(ge=1)] = 20
    """Physics steps between two samples of the requirement's signals (20: 100 Hz)."""
    plot: list[str] | None = None
    """The two parameters of the falsifying-region plot (default: the first two)."""
    parameters: dict[str, Any] = Field(default_factory=dict)


@dataclass(frozen=True)
class Range:
    """A searched parameter: uniform in [low, high] (``log``: log-uniform; ``integer``)."""

    low: float
    high: float
    log: bool = False
    integer: bool = False


@dataclass(frozen=True)
class Search:
    """A validated search: the base sweep (its scenario and options) and ``[search]``."""

    sweep: Sweep
    section: SearchSection
    ranges: dict[str, Range]
    metric: Metric | None
    requirement: Formula | None
    threshold: float
    text: str = ""
    source: str = "search"

    @property
    def name(self) -> str:
        """The scenario's name."""
        return self.sweep.name

    @property
    def startup(self) -> int:
        """Runs of the Latin hypercube at the start (none for uniform random sampling)."""
        if self.section.method == "random":
            return 0
        return self.section.batch if self.section.startup is None else self.section.startup


def parse_range(spec: Any) -> tuple[Range | None, list[str]]:
    """One parameter's ``{low, high[, log, integer]}``, or the problems with it."""
    if not isinstance(spec, Mapping):
        return None, [f"give a range {{low = ..., high = ...}} (got {spec!r})"]
    unknown = sorted(set(spec) - {"low", "high", "log", "integer"})
    problems = [f"unknown key {k!r} in a range" for k in unknown]
    problems += [f"missing {k!r}" for k in ("low", "high") if k not in spec]
    if problems:
        return None, problems
    low, high = spec["low"], spec["high"]
    if not (is_number(low) and is_number(high)):
        return None, [f"low and high must be numbers (got {low!r}, {high!r})"]
    log, integer = spec.get("log", False), spec.get("integer", False)
    if not (isinstance(log, bool) and isinstance(integer, bool)):
        return None, ["log and integer are true or false"]
    if not low < high:
        problems.append(f"low ({low}) must be below high ({high})")
    if log and low <= 0:
        problems.append(f"a log range needs low > 0 (got {low})")
    if integer and not (float(low).is_integer() and float(high).is_integer()):
        problems.append("an integer range needs whole-number ends")
    return (None, problems) if problems else (Range(float(low), float(high), log, integer), [])


def _objective(
    section: SearchSection, problems: list[str]
) -> tuple[Metric | None, Formula | None, float]:
    """The metric or the requirement minimised, and the threshold of falsification."""
    metric, formula = None, None
    if section.objective is not None and section.requirement is not None:
        problems.append("search: give objective or requirement, not both")
    elif section.objective is None and section.requirement is None:
        problems.append(
            "search: give objective (a metric, e.g. 'min_time_to_collision') or requirement "
            "(e.g. 'always (groundspeed > 5)')"
        )
    if section.objective is not None:
        names = {m.name: m for m in METRICS}
        metric = names.get(section.objective)
        if metric is None:
            problems.append(
                f"search.objective: {UnknownNameError('metric', section.objective, tuple(names))}"
            )
    if section.requirement is not None:
        try:
            formula = parse_requirement(section.requirement)
        except ConfigError as exc:
            problems += [f"search.requirement: {p}" for p in exc.problems]
    threshold = section.threshold
    if threshold is None:
        if section.requirement is not None:
            threshold = 0.0  # a requirement is violated where its robustness is negative
        else:
            threshold = 0.0
            if metric is not None:
                problems.append("search.threshold: needed with a metric objective (e.g. 1.0)")
    return metric, formula, threshold


def _section(raw: dict[str, Any], problems: list[str]) -> SearchSection:
    """``[search]`` with its problems listed; a key with a problem is left at its default."""
    try:
        return SearchSection.model_validate(raw)
    except ValidationError as exc:
        problems += validation_problems(exc, "search.")
        bad = {str(error["loc"][0]) for error in exc.errors() if error["loc"]}
    try:
        return SearchSection.model_validate({k: v for k, v in raw.items() if k not in bad})
    except ValidationError:  # not expected: a key's default is always valid
        return SearchSection()


def parse_search(
    data: Mapping[str, Any], source: str = "search", directory: str = "", text: str = ""
) -> Search:
    """Validate a search given as a dict: the sweep's sections, ``[search]``, the ranges."""
    data = dict(copy.deepcopy(dict(data)))
    raw = data.pop("search", None)
    problems: list[str] = []
    if "sweep" in data:
        problems.append("sweep: a search file has [search] instead of [sweep] (docs/search.md)")
        data.pop("sweep")
    if raw is None:
        problems.append("search: missing: a search file needs a [search] section")
        raw = {}
    section = _section(raw if isinstance(raw, dict) else {}, problems)
    sweep: Sweep | None = None
    try:
        sweep = parse(data, source, directory, text)
    except ConfigError as exc:
        problems += exc.problems
    metric, formula, threshold = _objective(section, problems)
    world = None if sweep is None else sweep.scenario.world.file
    if metric is not None and metric.name in WORLD_METRICS and sweep is not None and world is None:
        problems.append(
            f"search.objective: {metric.name} is measured in a world's runs only: give [world] file"
        )
    if formula is not None:
        from vcosim.search.objective import check_signals

        problems += [f"search.requirement: {p}" for p in check_signals(formula)]
    ranges: dict[str, Range] = {}
    if not section.parameters:
        problems.append("search.parameters: none given: name at least one parameter's range")
    for path, spec in section.parameters.items():
        where = f"search.parameters.{path!r}"
        if sweep is not None:
            why = check_path(path, sweep.scenario)
            if why is not None:
                problems.append(f"{where}: {why}")
                continue
        found, range_problems = parse_range(spec)
        problems += [f"{where}: {p}" for p in range_problems]
        if found is not None:
            ranges[path] = found
    if section.plot is not None:
        if len(section.plot) != 2:
            problems.append(f"search.plot: two parameters (got {len(section.plot)})")
        problems += [
            f"search.plot: {name!r} is not a searched parameter"
            for name in section.plot
            if name not in section.parameters
        ]
    if sweep is not None and ranges and not problems:
        corners: list[dict[str, Scalar]] = [
            {p: _value(r, r.low) for p, r in ranges.items()},
            {p: _value(r, r.high) for p, r in ranges.items()},
        ]
        problems += [f"search.parameters: {p}" for p in check_runs(sweep.scenario, corners)]
    if problems:
        raise ConfigError(problems, source)
    assert sweep is not None
    return Search(sweep, section, ranges, metric, formula, threshold, text, source)


def _value(r: Range, x: float) -> Scalar:
    return int(round(x)) if r.integer else float(x)


def load_search(path: str | Path) -> Search:
    """Read and validate a search file; relative paths in it are relative to its folder."""
    path = Path(path)
    text = read_config_text(path)
    data = parse_toml(text, str(path), numbers=False)
    folder = str(path.resolve().parent)
    return with_number_problems(data, str(path), lambda d: parse_search(d, str(path), folder, text))
