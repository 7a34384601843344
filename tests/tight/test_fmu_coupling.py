"""FMUs that speak BeamNG's coupling, in a pytest process of their own.

The cases are in ``fmu_coupling_cases.py``. They load pythonfmu's FMI 2 and FMI 3 runtimes
(each embeds Python into the master's process) and run an FMU in a worker thread; with the
rest of the suite in the same process, the interpreter's exit then now and then aborts
("free(): corrupted unsorted chunks") after every test has passed. Run apart, they exit
cleanly, and nothing of theirs can take the suite's exit code down with them.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CASES = Path(__file__).with_name("fmu_coupling_cases.py")


def test_fmus_speaking_the_coupling_cruise_a_vcosim_vehicle():
    result = subprocess.run(
        [sys.executable, "-m", "pytest", str(CASES), "-p", "no:cacheprovider", "-n", "0"],
        cwd=Path(__file__).parents[2],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "7 passed" in result.stdout, result.stdout[-2000:]
