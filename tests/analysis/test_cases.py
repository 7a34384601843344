"""`vcosim cases`: the checks against the spec's table, and one case run end to end."""

from __future__ import annotations

import numpy as np
import pytest

from vcosim.analysis.cases import CASES, cases_command, evaluate, run_cases
from vcosim.analysis.metrics import analyse
from vcosim.errors import ConfigError

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


def test_unknown_case_is_rejected(tmp_path):
    with pytest.raises(ConfigError, match="case 7: no such case"):
        cases_command(tmp_path, [7])
    assert list(tmp_path.iterdir()) == []


def test_one_case_end_to_end(tmp_path):
    [result] = run_cases(tmp_path, [CASES[1]], progress=False)
    assert result.error is None
    m = result.metrics
    assert m.skips == 9 and m.applied > 200
    assert result.checks[0].passed  # skips; landing and speed depend on the machine's load
    page = (tmp_path / "cases.html").read_text()
    assert page.count("data:image/png;base64,") == 1
    assert "Case 2 — seed: 9 non-blocking steps between sends" in page
    assert ("PASS" if result.passed else "FAIL") in page
    assert sorted(p.name for p in tmp_path.iterdir()) == ["case2", "cases.html"]
