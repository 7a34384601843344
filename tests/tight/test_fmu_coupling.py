"""FMUs that speak BeamNG's coupling, in a pytest process of their own.

The cases are in ``fmu_coupling_cases.py``. They load pythonfmu's FMI 2 and FMI 3 runtimes
(each embeds Python into the master's process) and run an FMU in a worker thread; a process
that did may abort at its exit ("free(): corrupted unsorted chunks") after every test has
passed (docs/fmi.md). Run apart (``helpers.apart``), nothing of theirs can take the suite's
exit code down with them.
"""

from __future__ import annotations

from pathlib import Path

from helpers.apart import run_apart

CASES = Path(__file__).with_name("fmu_coupling_cases.py")


def test_fmus_speaking_the_coupling_cruise_a_vcosim_vehicle():
    result = run_apart(CASES)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "7 passed" in result.stdout, result.stdout[-2000:]
