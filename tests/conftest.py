"""Session-wide set-up: the physics kernels compiled once, before the workers start."""

from __future__ import annotations

import pytest

from helpers.kernels import compile_kernels


def pytest_sessionstart(session: pytest.Session) -> None:
    if not hasattr(session.config, "workerinput"):  # the session's own process, not a worker
        compile_kernels()
