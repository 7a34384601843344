"""The FMUs where only FMPy is installed: no numba, no vcosim, nothing else of ours.

A venv of its own, with FMPy from the registry (by uv, as tests/helpers/asam_qc.py installs
its checkers); the masters below run in its interpreter.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from uv import find_uv_bin

from helpers.forks import vcosim_command
from helpers.loop import free_port

UNREACHABLE = ("Failed to fetch", "error sending request", "dns error")


@pytest.fixture(scope="module")
def fmpy_alone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The python of a venv holding FMPy and what FMPy needs, nothing else."""
    uv = find_uv_bin()
    venv = tmp_path_factory.mktemp("fmpy-alone") / "venv"
    subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(venv)], check=True)
    python = venv / "bin" / "python"
    done = subprocess.run(
        [uv, "pip", "install", "-q", "--python", str(python), "fmpy>=0.3.20"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    if done.returncode and any(sign in done.stderr for sign in UNREACHABLE):
        pytest.skip(f"FMPy cannot be installed, the registry is unreachable: {done.stderr[-300:]}")
    assert done.returncode == 0, done.stderr
    absent = "import importlib.util as u; print([m for m in ('numba', 'vcosim') if u.find_spec(m)])"
    listed = subprocess.run([python, "-c", absent], capture_output=True, text=True, check=True)
    assert listed.stdout.strip() == "[]"
    return python


def run_in(python: Path, script: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [python, "-c", textwrap.dedent(script)], capture_output=True, text=True, timeout=timeout
    )


def test_validate_and_20_simulations_in_one_process_give_one_speed(fmpy_alone, vehicle_fmus):
    script = """
        import sys
        from fmpy import simulate_fmu
        from fmpy.validation import validate_fmu

        for path in sys.argv[1:]:
            assert validate_fmu(path) == [], validate_fmu(path)
            speeds = {
                float(simulate_fmu(path, stop_time=2.0, output_interval=0.01,
                                   start_values={"throttle": 0.5},
                                   output=["groundspeed"])["groundspeed"][-1])
                for _ in range(20)
            }
            assert len(speeds) == 1 and speeds.pop() > 1.0, speeds
        print("ok")
    """
    paths = [str(vehicle_fmus[2]), str(vehicle_fmus[3])]
    done = subprocess.run(
        [fmpy_alone, "-c", textwrap.dedent(script), *paths],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]  # no abort at exit either
    assert done.stdout.strip() == "ok"


def test_the_coupling_fmu_drives_a_lockstep_simulator_from_there(
    fmpy_alone, coupling_fmus, tmp_path
):
    controller, simulator = free_port(), free_port()
    summary = tmp_path / "sim.json"
    sim = subprocess.Popen(
        [
            *vcosim_command(),
            *("sim", "--pacing", "lockstep", "--duration", "2"),
            *("--listen", f"127.0.0.1:{simulator}", "--controller", f"127.0.0.1:{controller}"),
            *("--json-out", str(summary)),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    script = f"""
        from fmpy import extract, instantiate_fmu, read_model_description

        path = {str(coupling_fmus[3])!r}
        description = read_model_description(path)
        ref = {{v.name: v.valueReference for v in description.modelVariables}}
        link = instantiate_fmu(extract(path), description)
        link.enterInitializationMode()
        link.setInt32([ref["listen_port"], ref["sim_port"]], [{controller}, {simulator}])
        link.setFloat64([ref["timeout"]], [30.0])  # the simulator may still be starting
        link.exitInitializationMode()
        time = 0.0
        for _ in range(399):  # the simulator sends 2 / 0.005 messages
            (speed,) = link.getFloat64([ref["groundspeed"]])
            link.setFloat64([ref["throttle"]], [min(max(0.25 * (20.0 - speed), 0.0), 1.0)])
            link.doStep(time, 0.005)
            time += 0.005
        print(link.getFloat64([ref["groundspeed"]])[0], link.getInt32([ref["timeouts"]])[0])
        link.terminate()
        link.freeInstance()
    """
    try:
        master = run_in(fmpy_alone, script)
        out, err = sim.communicate(timeout=120)
    finally:
        if sim.poll() is None:
            sim.kill()
            sim.wait()
    assert master.returncode == 0, master.stderr[-3000:]
    assert sim.returncode == 0, err[-3000:]
    speed, timeouts = master.stdout.split()
    assert int(timeouts) == 0 and float(speed) > 1.0  # it pulled away under the FMU's throttle
    report = json.loads(summary.read_text())
    assert report["coupling"]["timeouts"] == 0, report["coupling"]
