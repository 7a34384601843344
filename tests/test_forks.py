"""The tests' forked ``vcosim`` processes end with their client, as a killed process does."""

from __future__ import annotations

import socket
import subprocess
import threading

import pytest

from helpers.forks import FRESH, vcosim_command


@pytest.mark.skipif(FRESH, reason="every command starts from scratch (VCOSIM_TESTS_FRESH=1)")
def test_killing_the_client_kills_the_forked_command() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as nobody:
        nobody.bind(("127.0.0.1", 0))
        sim = subprocess.Popen(
            [*vcosim_command(), "sim", "--duration", "60", "--listen", "127.0.0.1:0"]
            + ["--controller", f"127.0.0.1:{nobody.getsockname()[1]}"],
            stderr=subprocess.PIPE,
            text=True,
        )
        assert sim.stderr is not None
        try:
            assert any("listening on" in line for line in sim.stderr)  # the command runs
            sim.kill()
            assert sim.wait(timeout=30) == -9
            # the command holds the pipe's other end: it is closed once the command is gone
            reader = threading.Thread(target=sim.stderr.read, daemon=True)
            reader.start()
            reader.join(timeout=30)
            assert not reader.is_alive(), "the command outlived its client"
        finally:
            sim.kill()
            sim.wait()
