"""Honest endings: every run summary ends with the vehicle's final speed, gear and position."""

from __future__ import annotations

import csv
import json
import math
import os
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers.forks import vcosim_command
from helpers.loop import free_port, lockstep_simulation, wait_until_bound
from vcosim.app import app
from vcosim.app.console import describe_state, final_state


def test_the_final_state_says_what_is_known_of_it() -> None:
    signals = {"groundspeed": 19.98, "gear": 4.0, "posX": 512.34, "posY": -0.44, "rpm": 2500.0}
    state = final_state(signals)
    assert state == {"speed_m_s": 19.98, "gear": 4, "x_m": 512.34, "y_m": -0.44}
    assert describe_state(state) == "19.98 m/s (71.9 km/h), gear 4, at (512.3, -0.4) m"
    # a CSV interface or a contract that does not carry a value: it is left out, not zero
    assert describe_state(final_state({"groundspeed": 3.0, "gear": math.nan})) == (
        "3.00 m/s (10.8 km/h)"
    )
    assert describe_state(final_state({"gear": -1.0, "posY": 2.0})) == "gear R, y 2.0 m"
    assert describe_state({}) == "not known"


def test_sim_ends_with_the_vehicles_final_state(tmp_path: Path) -> None:
    record, summary = tmp_path / "run.csv", tmp_path / "summary.json"
    result = CliRunner().invoke(
        app,
        ["sim", "--no-coupling", "--pacing", "fast", "--duration", "1", "--start-speed", "10"]
        + ["--record", str(record), "--json-out", str(summary)],
    )
    assert result.exit_code == 0, result.output
    with record.open() as file:
        last = list(csv.DictReader(file))[-1]
    state = json.loads(summary.read_text())["final_state"]["ego"]
    assert state == pytest.approx(
        {
            "speed_m_s": float(last["groundspeed"]),
            "gear": round(float(last["gear"])),
            "x_m": float(last["posX"]),
            "y_m": float(last["posY"]),
        },
        abs=1e-6,
    )
    assert 8.0 < state["speed_m_s"] < 10.0 and state["gear"] >= 2  # coasting in D
    table_end = result.output.rstrip().splitlines()[-3:]
    assert any("at the end" in line for line in table_end), result.output


def test_controller_ends_with_the_vehicle_of_the_last_message(tmp_path: Path) -> None:
    port = free_port()
    sim, endpoint = lockstep_simulation(port)
    summary = tmp_path / "controller.json"
    process = subprocess.Popen(
        [*vcosim_command(), "controller", "cruise", "--speed", "5"]
        + ["--listen", f"127.0.0.1:{port}", "--sim", f"127.0.0.1:{endpoint.address[1]}"]
        + ["--duration", "2", "--json-out", str(summary)],
        env={**os.environ, "COLUMNS": "200"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert wait_until_bound(port, process)
    sim.run(2.0)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    state = json.loads(summary.read_text())["final_state"]
    car = sim.vehicle  # the last message left one controller step (5 ms) before the end
    assert state["speed_m_s"] == pytest.approx(car.signal("groundspeed"), abs=0.05)
    assert state["gear"] == round(car.signal("gear")) and state["gear"] >= 1
    assert state["x_m"] == pytest.approx(car.signal("posX"), abs=0.05)
    assert f"vehicle in the last message │ {describe_state(state)}" in err
