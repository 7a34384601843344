"""Runs that explain themselves: a simulator without a controller says what it waits for."""

from __future__ import annotations

import socket
import subprocess
import time

from helpers.forks import vcosim_command


def test_sim_without_a_controller_says_what_it_waits_for() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as nobody:  # a port nobody answers
        nobody.bind(("127.0.0.1", 0))
        port = nobody.getsockname()[1]
        sim = subprocess.Popen(
            [*vcosim_command(), "sim", "--duration", "60"]
            + ["--listen", "127.0.0.1:0", "--controller", f"127.0.0.1:{port}"],
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            started = hinted = None
            assert sim.stderr is not None
            for line in sim.stderr:
                if "listening on" in line:
                    started = time.monotonic()
                if "waiting:" in line:
                    hinted = time.monotonic()
                    break
            assert started is not None and hinted is not None
            assert f"no controller has answered on 127.0.0.1:{port}" in line
            assert "--no-coupling" in line
            # the run itself decides when to say it (1 s in); the clock here only bounds it
            assert hinted - started < 3.0
        finally:
            sim.terminate()
            sim.wait(timeout=30)
    assert sim.returncode == 130  # SIGTERM: interrupted, summary printed
