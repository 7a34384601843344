"""A test module run by pytest in a process of its own, as the FMU cases need.

Processes that loaded pythonfmu's runtimes now and then abort at their exit, after every
case passed, as the libraries unload (docs/fmi.md: the damage is in the exporter's
runtime, not in vcosim's model). The process here ends with ``os._exit`` once pytest has
reported, so the exit code is the cases' and not that teardown's.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]
_RUN = (
    "import os, sys, pytest; code = int(pytest.main(sys.argv[1:])); "
    "sys.stdout.flush(); sys.stderr.flush(); os._exit(code)"
)


def run_apart(cases: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """pytest over ``cases`` in a new interpreter; its output captured."""
    return subprocess.run(
        [sys.executable, "-c", _RUN, str(cases), "-p", "no:cacheprovider", "-n", "0"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
