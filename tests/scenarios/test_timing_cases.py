"""`vcosim cases`: one case run end to end, its report, and the command's case selection."""

from __future__ import annotations

import pytest

from vcosim.analysis.cases import CASES
from vcosim.app.cases import cases_command, selected_cases
from vcosim.errors import ConfigError
from vcosim.scenarios.cases import run_cases, simulator_command


def test_unknown_case_is_rejected(tmp_path):
    with pytest.raises(ConfigError, match="case 7: no such case"):
        cases_command(tmp_path, [7])
    assert list(tmp_path.iterdir()) == []
    assert [c.number for c in selected_cases([3, 1, 3])] == [1, 3]
    assert selected_cases(None) == list(CASES)


def test_simulator_command_line(tmp_path):
    args = simulator_command(CASES[2], 4321, tmp_path, 1.5)
    assert args[1:4] == ["-m", "vcosim", "sim"]
    line = " ".join(args[4:])
    assert "--duration 1.5 --pacing realtime --frame-rate 2000 --ext-time 0.005" in line
    assert f"--controller 127.0.0.1:4321 --debug-log {tmp_path}" in line


def test_one_case_end_to_end(tmp_path):
    started, finished = [], []
    [result] = run_cases(tmp_path, [CASES[1]], on_case=started.append, on_result=finished.append)
    assert started == [CASES[1]] and finished == [result]
    assert result.error is None
    m = result.metrics
    assert m.skips == 9 and m.applied > 200
    assert result.checks[0].passed  # skips; landing and speed depend on the machine's load
    page = (tmp_path / "cases.html").read_text()
    assert page.count("data:image/png;base64,") == 1
    assert "Case 2 — expected: 9 non-blocking steps between sends" in page
    assert ("PASS" if result.passed else "FAIL") in page
    assert sorted(p.name for p in tmp_path.iterdir()) == ["case2", "cases.html"]
