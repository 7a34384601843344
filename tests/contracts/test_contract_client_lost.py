"""A contract client killed mid-run is named at once, and a real-time run keeps time.

Over real UDP: ``vcosim sim --contracts`` and ``vcosim connect`` each in a process of its own;
the client kills itself (SIGKILL: no goodbye) after 2 s connected.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path

from helpers.forks import vcosim_command
from helpers.lines import lines_of, until
from helpers.loop import free_port

EXAMPLES = Path(__file__).parents[2] / "examples" / "contracts"
DIES_AFTER_2_S = """
import importlib.util, os, signal
from vcosim.contracts import ConnectionStatus

spec = importlib.util.spec_from_file_location("cruise_control", {path!r})
cruise = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cruise)
steps = 0


def step(ports):
    global steps
    steps += ports.status is ConnectionStatus.connected
    if steps > 200:  # 2 s at its 10 ms step
        os.kill(os.getpid(), signal.SIGKILL)
    return cruise.step(ports)
"""


def test_a_killed_contract_client_is_named_and_the_run_keeps_real_time(tmp_path):
    port = free_port()
    config = json.loads((EXAMPLES / "cruise.json").read_text())
    config["remotePort"] = port
    (tmp_path / "cruise.json").write_text(json.dumps(config))
    (tmp_path / "dies.py").write_text(
        DIES_AFTER_2_S.format(path=str(EXAMPLES / "cruise_control.py"))
    )
    simulator = subprocess.Popen(
        [
            *vcosim_command(),
            "sim",
            "--contracts",
            "--contracts-listen",
            f"127.0.0.1:{port}",
            "--no-coupling",
            "--pacing",
            "realtime",
            "--duration",
            "8",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    client = subprocess.Popen(
        [
            *vcosim_command(),
            "connect",
            str(tmp_path / "cruise.json"),
            "--function",
            f"{tmp_path / 'dies.py'}:step",
            "--step",
            "0.01",
            "--duration",
            "60",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    seen: list[str] = []
    said: dict[str, float] = {}
    try:
        assert simulator.stderr is not None and simulator.stdout is not None
        err = lines_of(simulator.stderr)
        for read_at, line in until(err, time.monotonic() + 120):
            seen.append(line)
            for word in (" lost: nothing heard", "still silent", "session ended"):
                if word in line:
                    said.setdefault(word, read_at)
        out = simulator.stdout.read()
        simulator.wait(60)
        ended = time.monotonic()
        assert client.wait(10) != 0  # it killed itself
    finally:
        client.kill()
        simulator.kill()
        client.wait(10)
        simulator.wait(10)
    text = "".join(seen) + out
    assert simulator.returncode == 0, text
    assert " lost: nothing heard" in said, text
    address = re.search(r"client (127\.0\.0\.1:\d+) lost", text)
    assert address is not None and f"client {address.group(1)} silent for 5 s" in text, text
    assert said[" lost: nothing heard"] < said["session ended"], text
    print(text)
    served = re.search(r"contracts: received\s+│ (\d+)", text)
    assert served is not None and int(served.group(1)) >= 190, text  # it was served a while
    print(f"the run ended {ended - said[' lost: nothing heard']:.2f} s after the lost line")
