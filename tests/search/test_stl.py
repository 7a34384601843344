"""Requirements in signal temporal logic: parsing, and robustness against hand computations."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vcosim.errors import ConfigError
from vcosim.search.stl import (
    Atom,
    Both,
    Not,
    Temporal,
    parse_requirement,
    robustness,
    robustness_trace,
    signal_names,
)
from vcosim.sweep.config import parse
from vcosim.sweep.faces import SignalSpec
from vcosim.sweep.runner import run_scenario


def test_the_fragment_parses_with_its_precedence() -> None:
    f = parse_requirement("always[1, 2.5] (x > 2 and not y <= 1 or 3 > z) implies eventually x < 0")
    x_above = Atom("x", True, 2.0)
    assert f == Both(
        Not(
            Temporal(
                Both(Both(x_above, Not(Atom("y", False, 1.0)), True), Atom("z", False, 3.0), False),
                universal=True,
                low=1.0,
                high=2.5,
            )
        ),
        Temporal(Atom("x", False, 0.0), universal=False),
        conjunction=False,
    )
    assert signal_names(f) == ["x", "y", "z"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("always (x > )", "column 13: expected a number, got ')'"),
        ("always (x > 1", "column 14: expected ')', got 'the end'"),
        ("x = 1", "column 3: unexpected '='"),
        ("always[3, 1] x > 1", "column 12: an interval [a, b] needs 0 <= a <= b (got [3.0, 1.0])"),
        ("1 > 2", "column 3: a comparison is a signal against a number"),
        ("x > 1 y", "column 7: expected the end, got 'y'"),
        ("", "column 1: an empty requirement"),
    ],
)
def test_a_bad_requirement_names_its_column(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_requirement(text)
    assert caught.value.problems == [f"{message} in {text!r}"]


def test_robustness_of_each_operator_by_hand() -> None:
    x = np.array([3.0, 1.0, 4.0, 1.5, 5.0, 9.0])
    y = np.array([0.0, 2.0, 0.5, 3.0, 1.0, 0.0])
    s = {"x": x, "y": y}
    dt = 0.5
    assert robustness(parse_requirement("always (x > 1.2)"), s, dt) == pytest.approx(-0.2)
    assert robustness(parse_requirement("eventually (x > 8)"), s, dt) == pytest.approx(1.0)
    assert robustness(parse_requirement("x > 1 and y < 1"), s, dt) == pytest.approx(1.0)
    # always[0.5, 1] at t = 0: samples 1 and 2 (x = 1, 4) -> min(1, 4) - 2 = -1
    trace = robustness_trace(parse_requirement("always[0.5, 1] (x > 2)"), s, dt)
    assert trace[0] == pytest.approx(-1.0)
    assert trace[3] == pytest.approx(3.0)  # samples 4 and 5: 5, 9
    assert trace[4] == pytest.approx(7.0)  # only sample 5 is left in the run
    assert trace[5] == math.inf  # an empty window: always holds
    # eventually[1, 1.5] (y > 2): at t = 0 samples 2, 3 -> max(0.5, 3) - 2 = 1
    assert robustness(parse_requirement("eventually[1, 1.5] (y > 2)"), s, dt) == pytest.approx(1.0)
    # implies: not (x > 2) or (y < 1): at t = 0 max(2 - 3, 1 - 0) = 1
    assert robustness(parse_requirement("x > 2 implies y < 1"), s, dt) == pytest.approx(1.0)


def test_robustness_on_a_recorded_run_agrees_with_a_hand_computation() -> None:
    sweep = parse(
        {
            "scenario": {"name": "stl", "duration": 4.0},
            "controller": {"name": "cruise", "speed": 12.0},
        }
    )
    _, signals = run_scenario(sweep.scenario, {}, SignalSpec(("groundspeed", "accX"), 20))
    assert signals is not None
    v, a, t = signals["groundspeed"], signals["accX"], signals["time"]
    dt = float(t[1] - t[0])
    assert dt == pytest.approx(0.01)
    # the hand computations, sample by sample with plain Python over the recorded lists
    assert robustness(parse_requirement("always (groundspeed > 5)"), signals, dt) == min(
        float(x) - 5.0 for x in v
    )
    assert robustness(parse_requirement("eventually (groundspeed > 11.5)"), signals, dt) == max(
        float(x) - 11.5 for x in v
    )
    in_window = [float(x) for x, ti in zip(a, t, strict=True) if 1.0 - 1e-9 <= ti <= 2.0 + 1e-9]
    assert robustness(parse_requirement("always[1, 2] (accX < 3)"), signals, dt) == min(
        3.0 - x for x in in_window
    )
    both = min(min(float(x) - 0.0 for x in v), min(4.0 - float(x) for x in a))
    assert robustness(parse_requirement("always (groundspeed > 0 and accX < 4)"), signals, dt) == (
        both
    )
