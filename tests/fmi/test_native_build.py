"""Building the native FMU: the same inputs give the same bytes, whatever numba's cache held."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from vcosim.fmi.build import build_vehicle_fmu
from vcosim.fmi.native.kernel import LEVELS


def kernel_object(folder: Path, level: str, env: dict[str, str]) -> bytes:
    """The kernel's Linux object for ``level``, compiled by the child process as a build does."""
    folder.mkdir()
    command = [sys.executable, "-m", "vcosim.fmi.native.kernel", str(folder), level]
    command.append("x86_64-linux")
    done = subprocess.run(
        command, env=dict(os.environ, NUMBA_CPU_NAME=LEVELS[level], **env), capture_output=True
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    return (folder / f"kernel-{level}-x86_64-linux.compiled.o").read_bytes()


def test_the_kernel_compiled_afresh_is_the_kernel_loaded_from_numbas_cache(tmp_path):
    """numba names functions by how many the process compiled before; a cold compile and a
    cached one then differed in their local symbols, and the FMU's GUID with them."""
    warm = kernel_object(tmp_path / "warm", "x86-64", {})
    empty = tmp_path / "empty-cache"
    empty.mkdir()
    cold = kernel_object(tmp_path / "cold", "x86-64", {"NUMBA_CACHE_DIR": str(empty)})
    assert cold == warm
    assert any(empty.rglob("*.nbi"))  # it really compiled into the empty cache


def test_two_builds_give_the_same_bytes(tmp_path):
    first = build_vehicle_fmu(tmp_path / "a.fmu", vehicle="sedan", fmi_version=3)
    second = build_vehicle_fmu(tmp_path / "b.fmu", vehicle="sedan", fmi_version=3)
    assert first.read_bytes() == second.read_bytes()
    other = build_vehicle_fmu(tmp_path / "c.fmu", vehicle="nightrider", fmi_version=3)
    assert other.read_bytes() != first.read_bytes()
