"""`vcosim cases`: the checks against the spec's table, the interpretation and the JSON form."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from vcosim.analysis.cases import CASES, CaseResult, evaluate
from vcosim.analysis.metrics import analyse

DT = 0.0005


def synthetic(skips: int, landing: int, step_wall: float = DT):
    steps = np.arange(3000) * step_wall
    send_steps = np.arange(0, 3000 - landing, skips + 1)
    ids = np.arange(send_steps.size, dtype=float)
    m, _ = analyse(steps, steps[send_steps] + 1e-5, ids, steps[send_steps + landing] + 5e-6, ids)
    return m


@pytest.mark.parametrize(
    "number,skips,landing,step_wall,passed",
    [
        (1, 0, 1, DT, True),
        (2, 9, 1, DT, True),
        (3, 9, 3, DT, True),
        (4, 9, 10, DT, True),
        (5, 0, 1, 2 * DT, True),
        (2, 9, 3, DT, False),  # lands too late for case 2
        (3, 9, 10, DT, False),  # case 3 must land in a non-blocking step
        (1, 0, 1, 2 * DT, False),  # too slow for case 1
        (5, 0, 1, DT, False),  # case 5 must run slower than real time
        (4, 4, 5, DT, False),  # wrong skips
    ],
)
def test_checks_follow_the_spec_table(number, skips, landing, step_wall, passed):
    case = CASES[number - 1]
    checks = evaluate(case, synthetic(skips, landing, step_wall))
    assert [c.name for c in checks] == [
        "observed skips",
        "median landing (steps after the send)",
        "real-time factor",
    ]
    assert all(c.passed for c in checks) is passed


class Analysed:
    """What a result needs of an analysed run: its metrics."""

    def __init__(self, metrics):
        self.metrics = metrics


def test_interpretation_says_what_was_expected_and_why_it_failed():
    case = CASES[1]
    ok = CaseResult(case, Path("case2"), run=Analysed(synthetic(9, 1)))
    ok.checks = evaluate(case, ok.metrics)
    assert ok.passed
    assert ok.interpretation().startswith("Case 2 — expected: 9 non-blocking steps")
    assert ok.interpretation().endswith("As expected.")
    late = CaseResult(case, Path("case2"), run=Analysed(synthetic(9, 3)), other_load=0.9)
    late.checks = evaluate(case, late.metrics)
    text = late.interpretation()
    assert "Not as expected: median landing (steps after the send) 3 (expected 1)." in text
    assert "Other processes used 0.90 CPU during the run: the machine was busy" in text
    failed = CaseResult(case, Path("case2"), error="vcosim sim exited with 2: boom")
    assert failed.interpretation().endswith("The run failed: vcosim sim exited with 2: boom")
    assert not failed.passed
    assert "seed" not in ok.interpretation() + text + failed.interpretation()


def test_result_as_json():
    case = CASES[1]
    result = CaseResult(case, Path("runs/case2"), run=Analysed(synthetic(9, 1)), wall_time=2.5)
    result.checks = evaluate(case, result.metrics)
    d = json.loads(json.dumps(result.to_dict()))
    assert d["case"] == 2 and d["passed"] is True and d["error"] is None
    assert d["ext_time_s"] == 0.005 and d["compute_s"] == 0.0 and d["wall_time_s"] == 2.5
    assert [c["name"] for c in d["checks"]] == [c.name for c in result.checks]
    assert d["checks"][0] == {
        "name": "observed skips",
        "expected": "9",
        "observed": "9",
        "passed": True,
    }
    assert d["folder"] == "runs/case2" and d["interpretation"] == result.interpretation()
