"""The FMU cases, each module in a pytest process of its own.

The cases (``*_cases.py`` here) load pythonfmu's FMI 2 and FMI 3 runtimes, which embed this
interpreter, and FMPy loads a fresh copy of a runtime per extracted FMU. Each module alone
exits cleanly, every time; all in one process, the interpreter's exit now and then aborts
("corrupted double-linked list") after every case passed, as tests/tight/test_fmu_coupling.py
found for its FMUs (docs/fmi.md). Apart (``helpers.apart``, which ends the process before
that teardown), a crash could not take the suite's exit code down with it.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest

from helpers.apart import run_apart

HERE = Path(__file__).parent
CASES = {"vehicle_fmu_cases.py": 15, "coupling_fmu_cases.py": 8, "ssp_cases.py": 2}


@pytest.mark.parametrize("cases", sorted(CASES))
def test_fmu_cases(cases: str) -> None:
    result = run_apart(HERE / cases)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    passed = re.search(r"(\d+) passed", result.stdout)
    assert passed is not None and int(passed.group(1)) == CASES[cases], result.stdout[-2000:]
    for said in sorted(set(re.findall(r"UserWarning: (.*)", result.stdout))):
        warnings.warn(said, stacklevel=1)  # shown in this suite's summary too
