"""Session-wide set-up: how many workers, and the modules and physics kernels compiled first."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

from helpers.kernels import compile_kernels, write_bytecode

settings.register_profile(
    "vcosim", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.load_profile("vcosim")
"""Property tests have no wall-clock deadline: on a loaded machine one example may take 10x
its usual time (a 200 ms deadline failed at 358 ms and 656 ms), which says nothing about the
code. Speed is measured by ``vcosim bench``, never by a test."""

COMPILED = "VCOSIM_TESTS_KERNELS_COMPILED"  # inherited: a pytest run inside the suite skips it
LONGEST_FIRST = (  # files of 10 s or more (four workers, idle), longest first
    "tests/docs/test_readme_setup.py",
    "tests/docs/test_docs_run.py",
    "tests/bench/test_bench_guard.py",
    "tests/test_demo.py",
    "tests/sweep/test_backends.py",
    "tests/modules/test_viewer_browser.py",
    "tests/fmi/test_vehicle_fmu.py",
    "tests/datasheet/test_datasheet.py",
    "tests/tight/test_timing.py",
    "tests/driving/test_driving_table.py",
    "tests/scenarios/test_harness.py",
    "tests/app/test_help.py",
    "tests/bus/test_bus_cli.py",
    "tests/app/test_extras.py",
    "tests/modules/test_drive_modules.py",
    "tests/tight/test_beamng_parity.py",
    "tests/tight/test_interface.py",
    "tests/bus/test_bus_liveness.py",
    "tests/tight/test_endpoint.py",
)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """Two workers more than there are cores (``-n auto``; ``--maxprocesses`` caps it).

    Much of the suite waits on real-time runs and child processes; a third and a fourth
    worker on two cores keep them busy meanwhile (233 s against 247 s with three, idle, and a
    larger share of a machine that is busy with other work).
    """
    return (os.cpu_count() or 1) + 2


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The longest files first: the workers take files in this order, so none starts late
    and the workers end close together."""
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    root = config.rootpath
    items.sort(key=lambda item: rank.get(item.path.relative_to(root).as_posix(), len(rank)))


def pytest_sessionstart(session: pytest.Session) -> None:
    if hasattr(session.config, "workerinput") or os.environ.get(COMPILED):
        return  # a worker, or a pytest the suite started: the kernels are compiled already
    write_bytecode()
    compile_kernels()
    os.environ[COMPILED] = "1"
