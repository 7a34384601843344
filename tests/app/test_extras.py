"""Optional parts: a missing extra is one line naming it, exit code 2, before anything starts.

A missing package is simulated in this process (``sys.modules[name] = None`` makes its import
fail and ``find_spec`` find nothing, as for a package never installed), or in a child process
through a ``sitecustomize`` that does the same before vcosim is imported.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vcosim import extras
from vcosim.app import app

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def without(monkeypatch: pytest.MonkeyPatch, *modules: str) -> None:
    """Make ``modules`` look uninstalled in this process for the test."""
    for name in modules:
        monkeypatch.setitem(sys.modules, name, None)


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


def the_error(output: str) -> str:
    """The one error line; fails on a traceback or on more than one error."""
    assert "Traceback" not in output, output
    errors = [line for line in output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, output
    return errors[0]


def requirement_name(text: str) -> str:
    return re.split(r"[<>=!~;\[ ]", text, maxsplit=1)[0].lower().replace("_", "-")


def test_the_extras_modules_are_those_pyproject_installs() -> None:
    optional = PYPROJECT["optional-dependencies"]
    assert set(extras.EXTRAS) == set(optional) - {"test"}
    owners = packages_distributions()
    for extra, modules in extras.EXTRAS.items():
        wanted = {requirement_name(r) for r in optional[extra] if "linux" not in r}  # evdev
        found = {d.lower() for m in modules for d in owners.get(m, [requirement_name(m)])}
        assert found == wanted, extra


def test_the_viewer_and_the_logger_come_with_the_default_install() -> None:
    default = {requirement_name(r) for r in PYPROJECT["dependencies"]}
    optional = PYPROJECT["optional-dependencies"]
    assert {requirement_name(r) for r in optional["viewer"] + optional["logging"]} <= default


def test_the_install_command_follows_how_vcosim_was_installed(monkeypatch) -> None:
    monkeypatch.setattr(extras, "_editable", lambda: True)
    assert extras.install_command("logging", "viewer") == 'pip install -e ".[logging,viewer]"'
    monkeypatch.setattr(extras, "_editable", lambda: False)
    assert extras.install_command("fmi") == 'pip install "vcosim[fmi]"'


def test_view_refuses_in_one_line_and_prints_no_address(monkeypatch) -> None:
    without(monkeypatch, "uvicorn")
    code, output = run("view", "--listen", "127.0.0.1:0")
    assert code == 2
    assert the_error(output) == (
        f"error: vcosim view needs the `viewer` extra (uvicorn not installed): "
        f"{extras.install_command('viewer')}"
    )
    assert "http://" not in output


def test_drive_refuses_in_one_line_before_it_starts_anything(monkeypatch, tmp_path) -> None:
    without(monkeypatch, "mcap", "uvicorn", "starlette")
    code, output = run("drive", "--wall-time", "5", "--out", str(tmp_path / "runs"))
    assert code == 2
    line = the_error(output)
    assert "the logger needs the `logging` extra (mcap not installed)" in line
    assert "the viewer needs the `viewer` extra (starlette, uvicorn not installed)" in line
    assert extras.install_command("logging", "viewer") in line and "--skip-missing" in line
    assert not (tmp_path / "runs").exists()  # no run folder, no router, no module


THROTTLE_CSV = ROOT / "examples" / "beamng" / "throttle.csv"


@pytest.mark.parametrize(
    ("blocked", "args", "says"),
    [
        ("mcap", ["log", "{tmp}/bus.mcap"], "vcosim log needs the `logging` extra"),
        ("mcap", ["replay", "{tmp}/file"], "vcosim replay needs the `logging` extra"),
        (
            "mcap",
            ["sim", "--no-coupling", "--duration", "1", "--record", "{tmp}/run.mcap"],
            "--record FILE.mcap needs the `logging` extra",
        ),
        ("fmpy", ["controller", "--fmu", "{tmp}/file"], "--fmu needs the `fmu` extra"),
        ("ziglang", ["fmu", "vehicle", "{tmp}/car.fmu"], "FMI 2 FMUs needs the `fmi` extra"),
        ("ziglang", ["fmu", "coupling", "{tmp}/c.fmu", "--fmi", "3"], "the `fmi` extra"),
        (
            "fmpy",
            ["fmu", "coupling", "{tmp}/c.fmu", "--fmi", "3", "--interface", str(THROTTLE_CSV)],
            "the `fmi` extra",
        ),
        ("vehiclemodels", ["vehicle", "report"], "vehicle report needs the `datasheet` extra"),
        ("vehiclemodels", ["bench", "physics"], "bench physics needs the `bench` extra"),
        ("pyarrow", ["sweep", str(ROOT / "examples/sweeps/cruise-gains.toml")], "`sweep` extra"),
        ("pygame", ["input", "--calibrate", "--mapping", "{tmp}/m.toml"], "`input` extra"),
    ],
    ids=lambda v: " ".join(v[:2]) if isinstance(v, list) else None,
)
def test_every_command_checks_its_extra_first(monkeypatch, tmp_path, blocked, args, says) -> None:
    without(monkeypatch, blocked)
    (tmp_path / "file").write_bytes(b"")
    code, output = run(*(a.replace("{tmp}", str(tmp_path)) for a in args))
    assert code == 2, output
    line = the_error(output)
    assert says in line and f"{blocked} not installed" in line and "pip install" in line
    assert {p.name for p in tmp_path.iterdir()} == {"file"}  # nothing was written


def test_drive_with_skip_missing_drives_without_them_and_names_only_kept_files(
    tmp_path: Path,
) -> None:
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(
        "import sys\nsys.modules.update(dict.fromkeys(['mcap', 'uvicorn']))\n"
    )
    path = os.pathsep.join([str(blocker), *filter(None, [os.environ.get("PYTHONPATH")])])
    drive = subprocess.run(
        [sys.executable, "-m", "vcosim", "drive", "--skip-missing", "--wall-time", "2"]
        + ["--bus", "127.0.0.1:0", "--out", str(tmp_path / "runs")],
        env={**os.environ, "PYTHONPATH": path, "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert drive.returncode == 0, drive.stderr
    output = drive.stderr
    assert "logger: not started, the `logging` extra is not installed" in output
    assert "viewer: not started, the `viewer` extra is not installed" in output
    (run_dir,) = (tmp_path / "runs").iterdir()
    assert not (run_dir / "bus.mcap").exists() and "bus.mcap" not in output
    assert "open http" not in output
    assert re.search(r"at the end\s+│ \d+\.\d\d m/s \(\d+\.\d km/h\), gear \w, at \(", output)


def test_bench_all_names_every_missing_extra_at_once(monkeypatch):
    from vcosim.app.bench import _NEEDS

    modules = [m for extra, wanted in _NEEDS.values() for m in wanted or extras.EXTRAS[extra]]
    without(monkeypatch, *modules)
    code, output = run("bench", "all", "--quick")
    assert code == 2, output
    flat = " ".join(output.split())
    assert "needs the extras `bench`" in flat and "`fmi` (ziglang, fmpy)" in flat
    assert "`sumo` (libsumo, sumolib)" in flat
    assert '".[bench,fmi,sumo]"' in flat or '"vcosim[bench,fmi,sumo]"' in flat
