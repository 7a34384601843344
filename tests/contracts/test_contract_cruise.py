"""The JSON-configured cruise controller of examples/contracts holds its speed in closed loop."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
from contract_helpers import Background, served, wait_until

from vcosim.contracts import ContractClient

EXAMPLES = Path(__file__).parents[2] / "examples" / "contracts"


def load_example_module():
    spec = importlib.util.spec_from_file_location("cruise_control", EXAMPLES / "cruise_control.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_json_configured_cruise_controller_holds_its_target_speed():
    dilation = 10.0  # simulated seconds per wall second, both sides
    sim, server = served("realtime", dilation=dilation, frame_rate=1000, wait_for_clients=1)
    config = json.loads((EXAMPLES / "cruise.json").read_text())
    config.update(remotePort=server.address[1], timeDilation=dilation)
    controller = load_example_module().ContractCruise(speed=10.0)
    trace = []

    def step(ports):
        trace.append((ports["time"], ports["groundspeed"]))
        return controller(ports)

    client = ContractClient(config, step, step=0.01)
    server_run = Background(lambda: sim.run(None))
    report = client.run(20.0)
    sent = sum(report.sent.values())  # throttle and brake, every 10 ms
    # the server reads what is still on its way before it stops (a busy machine lags it)
    wait_until(lambda: server.report().received >= sent)
    sim.stop()
    server_run.result()
    assert report.refused == [] and report.gaps == 0
    stamp, speed = np.array(trace).T
    late = speed[stamp > 12.0]
    assert abs(late.mean() - 10.0) < 0.1 and np.abs(late - 10.0).max() < 0.3
    assert sent >= 1990 and server.report().received == sent
