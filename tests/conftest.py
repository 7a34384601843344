"""Session-wide set-up: how many workers, and the physics kernels compiled before they start."""

from __future__ import annotations

import os

import pytest

from helpers.kernels import compile_kernels


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """One worker more than there are cores (``-n auto``; ``--maxprocesses`` caps it).

    Much of the suite waits on real-time runs and child processes; a third worker on two
    cores keeps them busy meanwhile.
    """
    return (os.cpu_count() or 1) + 1


def pytest_sessionstart(session: pytest.Session) -> None:
    if not hasattr(session.config, "workerinput"):  # the session's own process, not a worker
        compile_kernels()
