"""The varied parameters: their dotted paths, their value specifications, the runs they make.

A parameter is a dotted path into the scenario's sections (``vehicle.tyres.friction``,
``controller.kp``); its values are a value, a list, ``{values}``, ``{from, to, num}`` or, in
random mode, ``{low, high}``. ``expand`` turns them into every run's values.
"""

from __future__ import annotations

import difflib
import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from pydantic import BaseModel

from vcosim.errors import UnknownNameError, VcosimError
from vcosim.sweep.config.controllers import controller_factory, factory_parameters
from vcosim.sweep.config.sections import SECTIONS, Scalar, Scenario, SweepSection
from vcosim.vehicle.params import VehicleParams

MAX_AXIS_VALUES = 100_000
"""The most values one parameter's ``{from, to, num}`` makes unless told (``max_runs``)."""


def is_scalar(value: Any) -> bool:
    """True for a value a parameter may take: a number, a string or a boolean."""
    return isinstance(value, bool | int | float | str)


def is_number(value: Any) -> bool:
    """True for an int or float (a boolean is not a number here)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


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


def parse_axis(spec: Any, max_values: int = MAX_AXIS_VALUES) -> tuple[Axis | None, list[str]]:
    """One parameter's specification as an ``Axis``, or the problems with it.

    Forms: a value; a list of values; ``{values = [...]}``; ``{from, to, num[, log]}``
    (evenly or geometrically spaced); ``{low, high[, log, integer]}`` (random mode only).
    """
    if is_scalar(spec):
        return Axis((spec,)), []
    if isinstance(spec, list):
        if not spec:
            return None, ["an empty list of values"]
        bad = [v for v in spec if not is_scalar(v)]
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
            return _axis_of(form, spec, max_values)
    return None, [
        f"unknown specification keys {sorted(keys)} (give a list, {{values = [...]}}, "
        "{from, to, num} or {low, high})"
    ]


def _axis_of(form: str, spec: dict[str, Any], max_values: int) -> tuple[Axis | None, list[str]]:
    if form == "values":
        return parse_axis(list(spec["values"]) if isinstance(spec["values"], list) else None)
    numbers = {k: v for k, v in spec.items() if k not in ("log", "integer")}
    problems = [f"{k!r} must be a number" for k, v in numbers.items() if not is_number(v)]
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
        if not isinstance(num, int) or not 1 <= num <= max_values:
            return None, [
                f"'num' must be a whole number from 1 to {max_values:,} "
                "(sweep.max_runs, or --max-runs, raises the bound)"
            ]
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


def run_count(section: SweepSection, axes: Mapping[str, Axis]) -> int:
    """How many runs ``expand`` would make, without making them."""
    if section.mode == "random":
        return int(section.samples or 1) if axes else 1
    sizes = [len(axis.values) for axis in axes.values() if not axis.drawn]
    if not sizes:
        return 1
    return math.prod(sizes) if section.mode == "grid" else max(sizes)


def expand(
    section: SweepSection, axes: Mapping[str, Axis], limit: int | None = None
) -> list[dict[str, Scalar]]:
    """Every run's parameter values, in run order (grid: the first parameter varies slowest).

    A distribution outside random mode (a problem ``sweep_problems`` reports) is left out, so
    the other parameters' runs can still be checked. ``limit``: only the first runs (those of
    a sweep too large to make are still checked).
    """
    if section.mode != "random":
        axes = {name: axis for name, axis in axes.items() if not axis.drawn}
    names = list(axes)
    if not names:
        return [{}]
    if section.mode == "grid":
        return [
            dict(zip(names, combo, strict=True))
            for combo in itertools.islice(
                itertools.product(*(axes[n].values for n in names)), limit
            )
        ]
    if section.mode == "list":
        n = max(len(axes[name].values) for name in names)
        n = n if limit is None else min(n, limit)
        columns = [
            list(a.values) * n if len(a.values) == 1 else list(a.values) for a in axes.values()
        ]
        return [dict(zip(names, row, strict=False)) for row in zip(*columns, strict=False)][:n]
    rng = np.random.default_rng(section.seed)
    count = int(section.samples or 1) if limit is None else min(int(section.samples or 1), limit)
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
        return _controller_path(parts, scenario)
    if section == "world":  # checked with the world file, run by run (``runs.resolve``)
        return None if key != "file" or len(parts) == 2 else "world.file has no sub-keys"
    model = type(getattr(scenario, section))
    keys = [k for k in model.model_fields if not (section == "scenario" and k == "manoeuvre")]
    if key not in keys:
        return str(UnknownNameError(f"{section} parameter", key, keys))
    return None if len(parts) == 2 else f"{section}.{key} has no sub-keys"


def _controller_path(parts: list[str], scenario: Scenario) -> str | None:
    key = parts[1]
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
