"""`vcosim sim --contracts --pacing lockstep --wait-for-clients 1` with `vcosim connect`.

As a user runs them, in two processes over UDP on loopback: the simulator holds at t = 0 until
the client joins, advances only as its contract allows, says goodbye at the end, and the
client ends with it. Twice, with identical recordings.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
from pathlib import Path

from helpers.forks import vcosim_command

ROOT = Path(__file__).parents[2]


def free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def coupled_run(folder: Path) -> tuple[bytes, str]:
    """The simulator's recording and what the client printed."""
    port = free_udp_port()
    config = json.loads((ROOT / "examples/contracts/cruise.json").read_text())
    config["remotePort"] = port
    (folder / "cruise.json").write_text(json.dumps(config))
    vcosim = vcosim_command()
    sim = subprocess.Popen(
        [*vcosim, "sim", "--contracts", "--contracts-listen", f"127.0.0.1:{port}"]
        + ["--no-coupling", "--pacing", "lockstep", "--wait-for-clients", "1"]
        + ["--duration", "3", "--record", str(folder / "signals.csv")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    client = subprocess.run(
        [*vcosim, "connect", str(folder / "cruise.json"), "--step", "0.01"]
        + ["--function", str(ROOT / "examples/contracts/cruise_control.py") + ":step"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "200"},
    )
    _, sim_err = sim.communicate(timeout=120)
    assert sim.returncode == 0, sim_err
    assert client.returncode == 0, client.stderr  # it ended with the simulator's goodbye
    assert "said goodbye" in client.stderr
    return (folder / "signals.csv").read_bytes(), client.stderr


def test_a_lockstep_contract_run_is_deterministic(tmp_path: Path) -> None:
    (first := tmp_path / "1").mkdir()
    (second := tmp_path / "2").mkdir()
    (one, said), (two, _) = coupled_run(first), coupled_run(second)
    assert one == two
    rows = one.decode().splitlines()
    assert len(rows) == 1 + 301  # header, then 100 Hz for 3 s from t = 0
    header, last = rows[0].split(","), rows[-1].split(",")
    speed = float(last[header.index("groundspeed")])
    assert speed > 5.0  # the client's throttle reached the vehicle
    # the client's summary ends with the vehicle as its last update gave it: cruise.json asks
    # for groundspeed only, so speed alone (the update of t = 3 s; the recording's last row is
    # one physics step later, t = 3.0005 s, within 0.01 m/s of it while the car accelerates)
    shown = re.search(r"vehicle in the last update │ ([0-9.]+) m/s \(([0-9.]+) km/h\)", said)
    assert shown is not None, said
    value, kmh = float(shown[1]), float(shown[2])
    assert abs(value - speed) <= 0.011 and abs(kmh - value * 3.6) <= 0.06
