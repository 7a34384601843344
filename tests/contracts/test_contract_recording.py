"""``vcosim connect --record``: every port at every step on file, and ``vcosim plot`` of it."""

from __future__ import annotations

import csv
from pathlib import Path

from contract_helpers import Background, document, fields, served
from typer.testing import CliRunner

from vcosim.app import app
from vcosim.contracts import ConnectionStatus, ContractClient

STEP = 0.005
DURATION = 2.0


def step(ports):
    if ports.status is not ConnectionStatus.connected:
        return {"throttle": 0.0}
    return {"throttle": min(max(0.3 * (5.0 - ports["groundspeed"]), 0.0), 1.0)}


def test_a_clients_ports_are_recorded_every_step_and_drawn_with_units(tmp_path: Path) -> None:
    sim, server = served("lockstep", wait_for_clients=1, spin=0.0, sync_timeout=10.0)
    client = ContractClient(
        document(
            server.address[1],
            outputs=[
                {
                    "updatePeriod": STEP,
                    "timeSyncMode": "absolute",
                    "ports": [
                        *fields("groundspeed", "time"),
                        [{"propertyName": "wheel_speed", "arraySize": 4}],
                        [{"propertyName": "DISTANCE", "params": "Origin"}],
                        *fields("time", propertyType="meta"),
                    ],
                }
            ],
            inputs=[{"updatePeriod": STEP, "ports": fields("throttle")}],
        ),
        step,
        step=STEP,
        spin=0.0,  # client and server share this process's GIL: sleep, never spin
    )
    recording = tmp_path / "client.csv"
    client.record_to(recording)
    server_run = Background(lambda: sim.run(DURATION))
    client.run(DURATION)
    server_run.result()
    with recording.open() as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0]) == [
        "time",
        "connection_status",
        "groundspeed",
        "time#2",  # the vehicle's own time: a name already taken gets #2
        *(f"wheel_speed[{k}]" for k in range(4)),
        "DISTANCE(Origin)",
        "time#3",  # the meta field
        "throttle",
    ]
    assert len(rows) == round(DURATION / STEP)  # every step
    last = {k: float(v) for k, v in rows[-1].items()}
    assert last["time"] == DURATION - STEP and last["connection_status"] == 3
    assert last["groundspeed"] > 2.0 and last["DISTANCE(Origin)"] > 1.0  # it drove off
    assert last["throttle"] == min(max(0.3 * (5.0 - last["groundspeed"]), 0.0), 1.0)

    result = CliRunner().invoke(
        app, ["plot", str(recording), "groundspeed", "DISTANCE(Origin)", "wheel_speed[2]"]
    )
    assert result.exit_code == 0, result.output
    assert "client.csv: contract client, 1 source(s), the client's local time 0.00 to" in (
        result.output
    )
    for drawn in ("groundspeed (m/s)", "DISTANCE(Origin) (m)", "wheel_speed[2] (m/s)"):
        assert f"\n  {drawn}: starts " in result.output
    assert (tmp_path / "client.png").stat().st_size > 20_000
