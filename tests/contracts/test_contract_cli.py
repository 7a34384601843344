"""``vcosim sim --contracts`` and ``vcosim connect``, end to end (bench figures: tests/bench)."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

from contract_helpers import Background
from typer.testing import CliRunner

from helpers.forks import vcosim_command
from helpers.loop import free_port
from vcosim.app import app

EXAMPLES = Path(__file__).parents[2] / "examples" / "contracts"


def test_vcosim_connect_runs_the_json_cruise_controller_against_vcosim_sim(tmp_path):
    port = free_port()
    config = json.loads((EXAMPLES / "cruise.json").read_text())
    config["remotePort"] = port
    (tmp_path / "cruise.json").write_text(json.dumps(config))
    simulator = subprocess.Popen(
        [
            *vcosim_command(),
            "sim",
            "--contracts",
            "--contracts-listen",
            f"127.0.0.1:{port}",
            "--no-coupling",
            "--frame-rate",
            "500",
            "--duration",
            "60",
            "--json-out",
            str(tmp_path / "sim.json"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # time-synced: the block waits at t = 0 until the simulator is up, then runs 0.5 s
        invoked = Background(
            lambda: CliRunner().invoke(
                app,
                [
                    "connect",
                    str(tmp_path / "cruise.json"),
                    "--function",
                    f"{EXAMPLES / 'cruise_control.py'}:step",
                    "--step",
                    "0.01",
                    "--duration",
                    "0.5",
                    "--json-out",
                    str(tmp_path / "client.json"),
                ],
            )
        )
        result = invoked.result(timeout=60)
        assert result.exit_code == 0, result.output
    finally:
        simulator.send_signal(signal.SIGTERM)
        simulator.communicate(timeout=30)
    client = json.loads((tmp_path / "client.json").read_text())
    assert client["status"] == 1 and client["refused"] == [] and client["error"] is None
    assert client["sent"]["0"] == 50  # every 10 ms of its 0.5 s
    assert client["received"]["1"] >= 10  # fewer if the simulator was ahead at connection
    served = json.loads((tmp_path / "sim.json").read_text())["contracts"]
    assert served["sessions"] == 1 and served["ended"] == 1  # it said goodbye
    assert served["received"] == client["sent"]["0"]


def test_vcosim_connect_rejects_an_invalid_file_before_connecting(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"version": 2, "remotePort": 0, "inputs": [{"ports": []}]}))
    result = CliRunner().invoke(app, ["connect", str(bad)])
    assert result.exit_code == 2  # a usage error: nothing was run
    said = result.output + str(result.exception)  # printed by the command line (or raised)
    assert "is invalid (2 problem(s))" in said
    for problem in (
        "$.inputs[0].ports: List should have at least 1 item after validation, not 0",
        "$.remotePort: Input should be greater than or equal to 1",
    ):
        assert problem in said
