"""Session-wide set-up: how many workers, and the physics kernels compiled before they start."""

from __future__ import annotations

import os

import pytest

from helpers.kernels import compile_kernels

COMPILED = "VCOSIM_TESTS_KERNELS_COMPILED"  # inherited: a pytest run inside the suite skips it


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """One worker more than there are cores (``-n auto``; ``--maxprocesses`` caps it).

    Much of the suite waits on real-time runs and child processes; a third worker on two
    cores keeps them busy meanwhile.
    """
    return (os.cpu_count() or 1) + 1


def pytest_sessionstart(session: pytest.Session) -> None:
    if hasattr(session.config, "workerinput") or os.environ.get(COMPILED):
        return  # a worker, or a pytest the suite started: the kernels are compiled already
    compile_kernels()
    os.environ[COMPILED] = "1"
