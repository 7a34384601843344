"""Building the native FMU: the same inputs give the same bytes, whatever numba's cache held."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from vcosim.fmi.build import build_vehicle_fmu
from vcosim.fmi.native.kernel import CACHE_VARIABLE, LEVELS
from vcosim.fmi.native.vehicle import PLATFORMS


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


def build_apart(out: Path, cache: Path) -> tuple[bytes, str]:
    """Build the default FMI 2 vehicle FMU in a fresh process with ``cache`` as object cache."""
    code = "import sys; from vcosim.fmi.build import build_vehicle_fmu as b; b(sys.argv[1])"
    done = subprocess.run(
        [sys.executable, "-c", code, str(out)],
        env=dict(os.environ, **{CACHE_VARIABLE: str(cache)}),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return out.read_bytes(), done.stderr


def test_a_build_from_the_object_cache_gives_the_bytes_of_one_that_compiled(tmp_path):
    cache = tmp_path / "cache"
    compiled, _ = build_apart(tmp_path / "compiled.fmu", cache)
    kept = sorted(p.name for p in cache.rglob("*.o"))
    assert kept == sorted(
        f"kernel-{level}-{platform}.o" for level in LEVELS for platform in PLATFORMS
    )
    cached, _ = build_apart(tmp_path / "cached.fmu", cache)
    assert cached == compiled
    spoiled = next(cache.rglob("kernel-x86-64-x86_64-linux.o"))
    spoiled.write_bytes(b"not an object")
    with pytest.raises(AssertionError):  # the cache is what the build used
        build_apart(tmp_path / "spoiled.fmu", cache)
