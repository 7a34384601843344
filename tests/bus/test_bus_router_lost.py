"""A bus router killed mid-run is named at once by the vehicle, and a real-time run keeps time.

Over real UDP: ``vcosim bus`` and ``vcosim sim --bus`` each in a process of its own; the router
is killed (SIGKILL) once the vehicle has joined.
"""

from __future__ import annotations

import re
import subprocess
import time

from helpers.forks import vcosim_command
from helpers.lines import lines_of, until
from helpers.loop import free_port


def test_a_killed_router_is_named_and_the_vehicles_real_time_run_ends_on_time():
    port = free_port()
    router = subprocess.Popen(
        [*vcosim_command(), "bus", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    vehicle = subprocess.Popen(
        [
            *vcosim_command(),
            "sim",
            "--bus",
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
    seen: list[str] = []
    said: dict[str, float] = {}
    try:
        assert vehicle.stderr is not None and vehicle.stdout is not None
        err = lines_of(vehicle.stderr)
        for _, line in until(err, time.monotonic() + 120):
            seen.append(line)
            if "on the bus at" in line:
                break
        assert "on the bus at" in "".join(seen), "".join(seen)
        router.kill()
        killed = time.monotonic()
        for read_at, line in until(err, killed + 120):
            seen.append(line)
            for word in ("it has gone", "still gone", "is back"):
                if word in line:
                    said.setdefault(word, read_at)
        out = vehicle.stdout.read()
        vehicle.wait(60)
        ended = time.monotonic()
    finally:
        router.kill()
        vehicle.kill()
        router.wait(10)
        vehicle.wait(10)
    text = "".join(seen) + out
    assert vehicle.returncode == 0, text  # 8 s of silence: not yet the 10 s that give up
    assert "it has gone" in said and "still gone" in said and "is back" not in said, text
    assert f"the bus router at 127.0.0.1:{port}" in text
    assert said["it has gone"] < said["still gone"], text
    assert re.search(r"simulated time\s+│ 8\.000 s", text), text
    print(text)
    print(
        f"lost line {said['it has gone'] - killed:.2f} s after the kill; the run ended "
        f"{ended - killed:.2f} s after it"
    )
