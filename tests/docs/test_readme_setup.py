"""The README's two set-up commands, run as written in a fresh copy with the system's Python.

Nothing of this test's environment leaks in: no virtual environment on the PATH, an empty
kernel cache (``XDG_CACHE_HOME``), a copy of the repository's files in a new folder. Only the
download caches of pip and uv are shared, as a machine that installed anything before has them
(the packages are not downloaded again, everything else is done afresh). The test command's
``pytest`` runs one small test file: the whole suite inside the suite would run it twice.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from doc_blocks import fenced_blocks
from doc_runs import ROOT

pytestmark = pytest.mark.slow
SYSTEM_PYTHON = shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin")
COMPILING = "compiling the vehicle's kernels, once"
OFFLINE = ("Failed to establish a new connection", "Network is unreachable", "No route to host")


def readme_command(containing: str) -> str:
    """The README's set-up line that ends in ``containing``."""
    lines = [
        line
        for block in fenced_blocks(ROOT / "README.md")
        for line in block.text.splitlines()
        if line.startswith("python3 -m venv") and line.rstrip().endswith(containing)
    ]
    assert len(lines) == 1, lines
    return lines[0]


def fresh_copy(folder: Path) -> Path:
    """The repository's files as a clone would have them (and the ones not yet committed)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, (n.decode() for n in listed)):
        source = ROOT / name
        if source.is_file():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, folder / name)
    return folder


def clean_environment(cache: Path) -> dict[str, str]:
    """This process's environment without its virtual environment and Python settings."""
    venv = Path(sys.prefix) / "bin"
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "NUMBA_CACHE_DIR")
        and not key.startswith(("PYTEST_", "UV_", "PIP_"))
    }
    env["PATH"] = os.pathsep.join(
        p for p in env.get("PATH", "").split(os.pathsep) if p and Path(p) != venv
    )
    home = Path.home() / ".cache"
    env.update(
        XDG_CACHE_HOME=str(cache),  # an empty kernel cache: the first run compiles
        PIP_CACHE_DIR=str(home / "pip"),
        UV_CACHE_DIR=str(home / "uv"),
        PIP_DISABLE_PIP_VERSION_CHECK="1",
    )
    return env


def run(command: str, folder: Path, env: dict[str, str]) -> str:
    done = subprocess.run(
        ["bash", "-c", command],
        cwd=folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=900,
    )
    if done.returncode != 0 and any(sign in done.stdout for sign in OFFLINE):
        pytest.skip(f"no package index to install from: {done.stdout[-300:]}")
    assert done.returncode == 0, f"`{command}` exited {done.returncode}:\n{done.stdout[-4000:]}"
    return done.stdout


@pytest.mark.skipif(SYSTEM_PYTHON is None, reason="no system python3 on this machine")
def test_the_readmes_commands_set_up_a_fresh_copy_and_run_the_demo_and_the_tests(tmp_path):
    folder = fresh_copy(tmp_path / "vcosim")
    env = clean_environment(tmp_path / "cache")
    env["PATH"] = os.pathsep.join([str(Path(SYSTEM_PYTHON).parent), env["PATH"]])
    demo = run(readme_command("vcosim demo"), folder, env)
    lines = demo.splitlines()
    said = next(i for i, line in enumerate(lines) if line.startswith(COMPILING))  # empty cache
    ran = next(i for i, line in enumerate(lines) if line.startswith("cruise, lock-step:"))
    # Said before the compiling, and on the pipe while it lasts (a line a second), not silent:
    assert said < ran and any("still at it" in line for line in lines[said:ran]), demo[-3000:]
    assert "Run folder: runs/" in demo
    (run_folder,) = (folder / "runs").iterdir()
    assert {"signals.csv", "demo.png", "summary.json"} <= {p.name for p in run_folder.iterdir()}
    assert (folder / ".venv" / "bin" / "vcosim").exists()  # installed in the README's venv
    tests = run(readme_command("pytest") + " tests/test_stats.py -n 0 -p no:randomly", folder, env)
    assert " passed" in tests and "failed" not in tests, tests[-2000:]
