"""OpenSCENARIO parameter variations: a ``ParameterValueDistribution`` file as runs.

Deterministic distributions (1.1 and later): a single parameter's ``DistributionSet`` (its
values) or ``DistributionRange`` (lower to upper limit, both included, ``stepWidth`` apart),
and a multi-parameter ``ValueSetDistribution`` (sets of values that go together). The runs
are every combination of them (their cartesian product), as the standard says.

Stochastic distributions: ``numberOfTestRuns`` runs, each drawing one value of every
``StochasticDistribution``'s parameter from a numpy ``Generator`` seeded with ``randomSeed``
(:data:`DEFAULT_SEED` without one), so the same file always gives the same runs.
``ProbabilityDistributionSet`` (values by weight), ``NormalDistribution`` and
``LogNormalDistribution`` (their own ``expectedValue`` and ``variance``), ``UniformDistribution``,
``PoissonDistribution`` (whole numbers) and ``Histogram`` (a bin by weight, uniform within
it); an optional ``Range`` truncates a distribution (a value outside it is drawn again).

Every run's values are checked against the varied scenario's ``ValueConstraint``s (1.2) before
anything runs. A user-defined distribution and anything else is refused with its line.
"""

from __future__ import annotations

import itertools
import math
import struct
from collections.abc import Callable
from pathlib import Path

import numpy as np

from vcosim.errors import ConfigError
from vcosim.openscenario.reader import UNSUPPORTED, Node, Reader, Refused, read_root

RANGE_TOLERANCE = 1e-9
"""A range's upper limit is included when the steps reach it within this (relatively)."""
DEFAULT_SEED = 0
"""The seed of a stochastic distribution without ``randomSeed``."""
REDRAWS = 1000
"""How many times values outside a distribution's ``Range`` are drawn again before the range
is refused as holding (almost) none of it."""
MAX_RUNS = 100_000
"""The most runs a distribution may give unless told otherwise (``vcosim sweep --max-runs``,
a sweep's ``max_runs``): counted from the file's numbers before any run is made."""
SHOWN_RUNS = 5
"""How many runs a problem names before it says how many more there are."""

Origins = dict[str, Node]
"""The element of the distribution file that gives each parameter its values."""


def read_distribution(
    path: str | Path, max_runs: int = MAX_RUNS, dropped: list[str] | None = None
) -> tuple[Path, list[dict[str, str]]]:
    """The scenario file a distribution varies, and its runs (parameter -> value).

    Raises ``ConfigError`` listing every problem with its line; a distribution of more than
    ``max_runs`` runs is refused before any run is made. A run outside the scenario's
    ``ValueConstraint``s is a problem; given a ``dropped`` list, such runs are left out instead
    and their problems added to it, and only a distribution with no run left is refused (the
    survey: the other runs of a distribution are still its author's scenarios).
    """
    path = Path(path)
    source = f"OpenSCENARIO distribution {path}"
    root = read_root(path, source)
    reader = Reader({})
    try:
        scenario, variations, origins = _distribution(reader, root, max_runs)
    except Refused as exc:
        raise ConfigError([str(exc)], source) from None
    reader.problems += [
        f"line {node.line}: <{node.tag}> {UNSUPPORTED}"
        for node in root.walk()
        if not node.used and node is not root
    ]
    if reader.problems:
        raise ConfigError(reader.problems, source)
    varied = path.parent / scenario
    problems, outside = outside_constraints(varied, variations, origins)
    if problems and dropped is not None and len(outside) < len(variations):
        dropped += problems
        return varied, [run for n, run in enumerate(variations, 1) if n not in outside]
    if problems:
        raise ConfigError(problems, source)
    return varied, variations


def outside_constraints(
    scenario: Path, variations: list[dict[str, str]], origins: Origins
) -> tuple[list[str], set[int]]:
    """The values of runs outside the ``ValueConstraint``s the scenario declares, and the runs.

    The runs are numbered from 1. Each problem is given the line of the distribution element
    the value comes from, and names the runs that give it. A scenario that cannot be read
    says so when it is read.
    """
    try:
        root = read_root(scenario, f"OpenSCENARIO {scenario}")
    except ConfigError:
        return [], set()
    declared = next((c for c in root.children if c.tag == "ParameterDeclarations"), None)
    if declared is None:
        return [], set()
    found: dict[tuple[str, str], tuple[int, str, list[int]]] = {}
    for number, variation in enumerate(variations, 1):
        reader = Reader({})
        try:
            reader.declare(declared, variation)
        except Refused:
            return [], set()  # the scenario's own problem, said when it is read
        for name, line, unmet in reader.outside:
            if name in variation:
                found.setdefault((name, variation[name]), (line, unmet, []))[2].append(number)
    problems = []
    for (name, value), (line, unmet, runs) in found.items():
        shown = ", ".join(str(n) for n in runs[:SHOWN_RUNS])
        more = f" and {len(runs) - SHOWN_RUNS} more" if len(runs) > SHOWN_RUNS else ""
        origin = origins[name]
        problems.append(
            f"line {origin.line}: <{origin.tag}>: parameter {name!r} = {value!r} (in runs "
            f"'{shown}{more}') is outside its constraints at line {line} of "
            f"'{scenario.name}': {unmet}"
        )
    return problems, {n for _, _, runs in found.values() for n in runs}


def _distribution(
    r: Reader, root: Node, max_runs: int
) -> tuple[str, list[dict[str, str]], Origins]:
    header = r.need(root, "FileHeader")
    for part in header.walk():
        part.used = True
    node = r.need(root, "ParameterValueDistribution")
    scenario = r.text(r.need(node, "ScenarioFile"), "filepath")
    stochastic = r.one(node, "Stochastic", required=False)
    if stochastic is not None:
        return (scenario, *_stochastic(r, stochastic, max_runs))
    return (scenario, *_deterministic(r, r.need(node, "Deterministic"), max_runs))


def _many(count: float) -> str:
    """A count as a refusal says it (a huge one in powers of ten, not 300 digits)."""
    return f"{count:,.0f}" if count < 1e15 else f"{count:.3g}"


def _too_many(node: Node, count: float, what: str, max_runs: int) -> Refused:
    return Refused(
        node, f"{_many(count)} {what}, more than {max_runs:,} (--max-runs raises the bound)"
    )


def _size(r: Reader, part: Node, max_runs: int) -> float:
    """How many values one deterministic distribution gives, counted without making them."""
    if part.tag == "DeterministicMultiParameterDistribution":
        inner = next((c for c in part.children if c.tag == "ValueSetDistribution"), None)
        return float(sum(c.tag == "ParameterValueSet" for c in inner.children)) if inner else 1
    inner = next(iter(part.children), None)
    if part.tag != "DeterministicSingleParameterDistribution" or inner is None:
        return 1.0  # refused with its reason when it is read
    if inner.tag == "DistributionRange":
        return _range_count(r, inner, max_runs)
    return float(sum(c.tag == "Element" for c in inner.children))


def _range_count(r: Reader, node: Node, max_runs: int) -> float:
    """The number of values of a ``DistributionRange``, refused above ``max_runs``."""
    step = r.number(node, "stepWidth")
    low, high = _range(r, r.need(node, "Range"))
    if step <= 0:
        raise Refused(node, f"no values from {low:g} to {high:g} in steps of {step:g}")
    count = (high - low) / step * (1 + RANGE_TOLERANCE) + RANGE_TOLERANCE + 1  # inf at worst
    count = float(math.floor(count)) if math.isfinite(count) else count
    if not count <= max_runs:
        raise _too_many(node, count, "values", max_runs)
    return count


def _deterministic(r: Reader, kind: Node, max_runs: int) -> tuple[list[dict[str, str]], Origins]:
    """Every combination of the single- and multi-parameter distributions' values.

    Their number is the product of the sizes, counted from the file before any is made.
    """
    total = math.prod(_size(r, part, max_runs) for part in kind.children)
    if total > max_runs:
        raise _too_many(kind, total, "runs", max_runs)
    axes: list[list[dict[str, str]]] = []
    origins: Origins = {}
    for part in r.kids(kind):
        if part.tag == "DeterministicSingleParameterDistribution":
            name = r.text(part, "parameterName")
            axes.append([{name: value} for value in _values(r, r.need(part), max_runs)])
        elif part.tag == "DeterministicMultiParameterDistribution":
            sets = r.kids(r.need(part, "ValueSetDistribution"), "ParameterValueSet")
            axes.append([
                {r.text(a, "parameterRef"): r.text(a, "value") for a in r.kids(s, "ParameterAssignment")}  # noqa: E501
                for s in sets
            ])  # fmt: skip
        else:
            raise Refused(part, "not a deterministic distribution")
        origins.update(dict.fromkeys((name for run in axes[-1] for name in run), part))
    if not axes:
        raise Refused(kind, "no distribution in it")
    variations = [
        {name: value for chosen in combination for name, value in chosen.items()}
        for combination in itertools.product(*axes)
    ]
    return variations, origins


def _values(r: Reader, node: Node, max_runs: int) -> list[str]:
    """The values of one parameter's set or range."""
    if node.tag == "DistributionSet":
        values = [r.text(e, "value") for e in r.kids(node, "Element")]
        if not values:
            raise Refused(node, "an empty set")
        return values
    if node.tag == "DistributionRange":
        count = int(_range_count(r, node, max_runs))
        step = r.number(node, "stepWidth")
        low, _ = _range(r, r.need(node, "Range"))
        return [repr(float(f"{low + k * step:.12g}")) for k in range(count)]  # 0.3, not 0.30..04
    if node.tag == "UserDefinedDistribution":
        raise Refused(node, f"a user-defined distribution ({r.text(node, 'type', '')!r})")
    raise Refused(node, "not a set or a range")


def _stochastic(r: Reader, node: Node, max_runs: int) -> tuple[list[dict[str, str]], Origins]:
    """``numberOfTestRuns`` runs, each parameter drawn from its distribution."""
    runs = r.number(node, "numberOfTestRuns")
    if runs < 1 or runs > max_runs or not runs.is_integer():
        raise Refused(
            node,
            f"numberOfTestRuns={_many(runs)}: 1 to {max_runs:,} runs are drawn "
            "(--max-runs raises the bound)",
        )
    runs = int(runs)
    rng = np.random.default_rng(seed_of(r.number(node, "randomSeed", float(DEFAULT_SEED))))
    columns: dict[str, list[str]] = {}
    origins: Origins = {}
    for part in r.kids(node, "StochasticDistribution"):
        name = r.text(part, "parameterName")
        columns[name] = _draw(r, r.need(part), runs, rng)
        origins[name] = part
    if not columns:
        raise Refused(node, "no distribution in it")
    variations = [{name: values[k] for name, values in columns.items()} for k in range(runs)]
    return variations, origins


def seed_of(seed: float) -> int:
    """A numpy seed for ``randomSeed`` (a double): itself when a whole number, else its bits."""
    if seed.is_integer() and seed >= 0:
        return int(seed)
    return int.from_bytes(struct.pack("<d", seed), "little")


def _draw(r: Reader, node: Node, count: int, rng: np.random.Generator) -> list[str]:
    """``count`` values of one stochastic distribution, as text."""
    if node.tag in ("ProbabilityDistributionSet", "Histogram"):
        parts = r.kids(node, "Element" if node.tag == "ProbabilityDistributionSet" else "Bin")
        if not parts:
            raise Refused(node, "an empty set" if node.tag != "Histogram" else "no bins")
        weights = np.array([r.number(p, "weight") for p in parts])
        if (weights < 0).any() or weights.sum() <= 0:
            raise Refused(node, "the weights must be positive or 0, and not all 0")
        picks = rng.choice(len(parts), size=count, p=weights / weights.sum())
        if node.tag == "ProbabilityDistributionSet":
            values = [r.text(p, "value") for p in parts]
            return [values[k] for k in picks]
        bins = [_range(r, r.need(p, "Range")) for p in parts]
        return [repr(float(rng.uniform(*bins[k]))) for k in picks]
    sample: Callable[[int], np.ndarray]
    if node.tag == "UniformDistribution":
        low, high = _range(r, r.need(node, "Range"))
        return [repr(float(x)) for x in rng.uniform(low, high, count)]
    if node.tag == "NormalDistribution":
        mean, variance = r.number(node, "expectedValue"), _variance(r, node)
        sample = lambda k: rng.normal(mean, math.sqrt(variance), k)  # noqa: E731
    elif node.tag == "LogNormalDistribution":
        mean, variance = r.number(node, "expectedValue"), _variance(r, node)
        if mean <= 0:
            raise Refused(node, f"expectedValue={mean:g}: a log-normal distribution's is above 0")
        spread = math.log1p(variance / mean**2)  # the variance of the underlying normal
        sample = lambda k: rng.lognormal(math.log(mean) - spread / 2, math.sqrt(spread), k)  # noqa: E731
    elif node.tag == "PoissonDistribution":
        rate = r.number(node, "expectedValue")
        if rate < 0:
            raise Refused(node, f"expectedValue={rate:g} is negative")
        sample = lambda k: rng.poisson(rate, k).astype(float)  # noqa: E731
    elif node.tag == "UserDefinedDistribution":
        raise Refused(node, f"a user-defined distribution ({r.text(node, 'type', '')!r})")
    else:
        raise Refused(node, "not a stochastic distribution")
    limits = r.one(node, "Range", required=False)
    drawn = _within(node, sample, count, None if limits is None else _range(r, limits))
    if node.tag == "PoissonDistribution":
        return [str(int(x)) for x in drawn]
    return [repr(float(x)) for x in drawn]


def _within(
    node: Node, sample: Callable[[int], np.ndarray], count: int, limits: tuple[float, float] | None
) -> np.ndarray:
    """``count`` draws, those outside ``limits`` drawn again (a truncated distribution)."""
    drawn = sample(count)
    if limits is None:
        return drawn
    low, high = limits
    kept = drawn[(drawn >= low) & (drawn <= high)]
    for _ in range(REDRAWS):
        if len(kept) >= count:
            return kept[:count]
        more = sample(count)
        kept = np.concatenate([kept, more[(more >= low) & (more <= high)]])
    raise Refused(node, f"its Range [{low:g}, {high:g}] holds (almost) none of the distribution")


def _variance(r: Reader, node: Node) -> float:
    variance = r.number(node, "variance")
    if variance < 0:
        raise Refused(node, f"variance={variance:g} is negative")
    return variance


def _range(r: Reader, node: Node) -> tuple[float, float]:
    """A ``Range``'s lower and upper limits."""
    low, high = r.number(node, "lowerLimit"), r.number(node, "upperLimit")
    if high < low:
        raise Refused(node, f"upperLimit {high:g} is below lowerLimit {low:g}")
    return low, high
