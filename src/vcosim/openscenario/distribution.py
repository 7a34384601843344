"""OpenSCENARIO parameter variations: a ``ParameterValueDistribution`` file as runs.

The deterministic distributions are read: a single parameter's ``DistributionSet`` (its
values) or ``DistributionRange`` (lower to upper limit, both included, ``stepWidth`` apart),
and a multi-parameter ``ValueSetDistribution`` (sets of values that go together). The
variations are every combination of them (their cartesian product), as the standard says.
Stochastic distributions and anything else are refused with their line, as in a scenario.
"""

from __future__ import annotations

import itertools
from pathlib import Path

from vcosim.errors import ConfigError
from vcosim.openscenario.reader import UNSUPPORTED, Node, Reader, Refused, read_root

RANGE_TOLERANCE = 1e-9
"""A range's upper limit is included when the steps reach it within this (relatively)."""


def read_distribution(path: str | Path) -> tuple[Path, list[dict[str, str]]]:
    """The scenario file a distribution varies, and its variations (parameter -> value).

    Raises ``ConfigError`` listing every problem with its line.
    """
    path = Path(path)
    source = f"OpenSCENARIO distribution {path}"
    root = read_root(path, source)
    reader = Reader({})
    try:
        scenario, axes = _distribution(reader, root)
    except Refused as exc:
        raise ConfigError([str(exc)], source) from None
    reader.problems += [
        f"line {node.line}: <{node.tag}> {UNSUPPORTED}"
        for node in root.walk()
        if not node.used and node is not root
    ]
    if reader.problems:
        raise ConfigError(reader.problems, source)
    variations = [
        {name: value for chosen in combination for name, value in chosen.items()}
        for combination in itertools.product(*axes)
    ]
    return path.parent / scenario, variations


def _distribution(r: Reader, root: Node) -> tuple[str, list[list[dict[str, str]]]]:
    header = r.need(root, "FileHeader")
    for part in header.walk():
        part.used = True
    node = r.need(root, "ParameterValueDistribution")
    scenario = r.text(r.need(node, "ScenarioFile"), "filepath")
    stochastic = r.one(node, "Stochastic", required=False)
    if stochastic is not None:
        raise Refused(stochastic, "stochastic distributions are not supported")
    kind = r.need(node, "Deterministic")
    axes: list[list[dict[str, str]]] = []
    for part in r.kids(kind):
        if part.tag == "DeterministicSingleParameterDistribution":
            name = r.text(part, "parameterName")
            axes.append([{name: value} for value in _values(r, r.need(part))])
        elif part.tag == "DeterministicMultiParameterDistribution":
            sets = r.kids(r.need(part, "ValueSetDistribution"), "ParameterValueSet")
            axes.append([
                {r.text(a, "parameterRef"): r.text(a, "value") for a in r.kids(s, "ParameterAssignment")}  # noqa: E501
                for s in sets
            ])  # fmt: skip
        else:
            raise Refused(part, "not a deterministic distribution")
    if not axes:
        raise Refused(kind, "no distribution in it")
    return scenario, axes


def _values(r: Reader, node: Node) -> list[str]:
    """The values of one parameter's set or range."""
    if node.tag == "DistributionSet":
        values = [r.text(e, "value") for e in r.kids(node, "Element")]
        if not values:
            raise Refused(node, "an empty set")
        return values
    if node.tag == "DistributionRange":
        step = r.number(node, "stepWidth")
        limits = r.need(node, "Range")
        low, high = r.number(limits, "lowerLimit"), r.number(limits, "upperLimit")
        if step <= 0 or high < low:
            raise Refused(node, f"no values from {low:g} to {high:g} in steps of {step:g}")
        count = int((high - low) / step * (1 + RANGE_TOLERANCE) + RANGE_TOLERANCE) + 1
        return [repr(low + k * step) for k in range(count)]
    raise Refused(node, "not a set or a range")
