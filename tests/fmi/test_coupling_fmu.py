"""The coupling FMU: an FMI master (here a small one over fmpy) drives a real ``vcosim sim``."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from fmpy import read_model_description
from fmpy.validation import validate_fmu

from helpers.loop import free_port
from vcosim.fmi.coupling import BANKS, INPUTS, STATUS

STEP = 0.005


def test_the_model_description_passes_fmpy_validation(coupling_fmu):
    assert validate_fmu(str(coupling_fmu)) == []
    description = read_model_description(str(coupling_fmu))
    names = {v.causality: set() for v in description.modelVariables}
    for v in description.modelVariables:
        names[v.causality].add(v.name)
    assert names["input"] == {v.name for v in INPUTS}
    assert names["output"] == {o.name for o in BANKS} | {s.name for s in STATUS}
    assert {"listen_port", "sim_port", "memory", "timeout"} <= names["parameter"]


def test_without_a_simulator_a_step_times_out_and_says_so(coupling_fmu, open_fmu):
    fmu = open_fmu(coupling_fmu).start(listen_port=free_port(), sim_port=free_port(), timeout=0.2)
    fmu.step(STEP)
    connected, timeouts, received = fmu.get("connected", "timeouts", "received")
    assert (connected, received) == (False, 0)
    assert timeouts == 2  # leaving initialization and the step waited in vain
    with pytest.raises(Exception, match="DoStep failed"):
        fmu.fmu.doStep(fmu.time, 0.01)  # one message per step: the step is the ext_time


def test_a_master_with_the_pi_fmu_cruises_a_lockstep_simulator_at_20_m_s(
    coupling_fmu, pi_fmu, open_fmu, tmp_path
):
    seconds = 40.0
    controller_port, sim_port = free_port(), free_port()
    sim = subprocess.Popen(
        [
            *(sys.executable, "-m", "vcosim", "sim", "--pacing", "lockstep"),
            *("--duration", str(seconds), "--ext-time", str(STEP)),
            *("--controller", f"127.0.0.1:{controller_port}", "--listen", f"127.0.0.1:{sim_port}"),
            *("--json-out", str(tmp_path / "sim.json")),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        pi = open_fmu(pi_fmu).start(target_speed=20.0)
        # A generous timeout: the simulator may still be starting when the FMU binds.
        link = open_fmu(coupling_fmu).start(
            listen_port=controller_port, sim_port=sim_port, timeout=20.0
        )
        speeds = []
        for _ in range(round(seconds / STEP) - 1):  # message 0 came with the initialization
            speed = link.get("groundspeed")[0]
            speeds.append(speed)
            pi.set(groundspeed=speed)
            pi.step(STEP)
            throttle, brake = pi.get("throttle", "brake")
            link.set(throttle=throttle, brake=brake)
            link.step(STEP)
        status = dict(
            zip(
                ("connected", "timeouts", "stale", "received", "message_id"),
                link.get("connected", "timeouts", "stale", "received", "message_id"),
                strict=True,
            )
        )
        link.close()
        output, _ = sim.communicate(timeout=60)
    finally:
        if sim.poll() is None:
            sim.kill()
            sim.wait()
    assert sim.returncode == 0, output[-2000:]
    assert status == {
        "connected": True,
        "timeouts": 0,
        "stale": 0,
        "received": round(seconds / STEP),
        "message_id": round(seconds / STEP) - 1,
    }
    settled = np.array(speeds[round(25.0 / STEP) :])
    assert np.all(np.abs(settled - 20.0) < 0.5), (settled.min(), settled.max())
