"""OSI over UDP resolves its host once, at the start, and refuses a name that does not resolve
before the run (issue 45, H). ``sendto`` with a name asked the resolver at every frame: a name
that did not resolve ran at 0.167 of real time with 501 send errors and no warning.
"""

from __future__ import annotations

import socket

import pytest

pytest.importorskip("osi3")

from osi3.osi_sensorview_pb2 import SensorView  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from vcosim.app.cli import app  # noqa: E402
from vcosim.errors import ConfigError  # noqa: E402
from vcosim.groundtruth.osi_io import OsiUdp  # noqa: E402

UNRESOLVABLE = "no-such-host.invalid"  # RFC 6761: .invalid never resolves


def test_a_name_is_resolved_once_and_frames_arrive() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as receiver:
        receiver.bind(("127.0.0.1", 0))
        receiver.settimeout(10.0)
        sender = OsiUdp("localhost", receiver.getsockname()[1])
        try:
            assert sender.address[0] in ("127.0.0.1", "::1")  # numeric from now on
            if sender.address[0] == "::1":
                pytest.skip("localhost resolves to ::1 first here")
            sender.put(SensorView(), b"frame")
            assert receiver.recv(64) == b"frame"
        finally:
            sender.close()
    assert sender.counts.sent == 1 and sender.counts.send_errors == 0


def test_a_name_that_does_not_resolve_is_refused_at_the_start() -> None:
    with pytest.raises(ConfigError, match="does not resolve"):
        OsiUdp(UNRESOLVABLE, 48198)


def test_vcosim_sim_refuses_an_osi_host_that_does_not_resolve_exit_2() -> None:
    result = CliRunner().invoke(
        app,
        ["sim", "--no-coupling", "--duration", "0.1", "--osi", f"udp://{UNRESOLVABLE}:5000"],
    )
    assert result.exit_code == 2, result.output
    assert f"host '{UNRESOLVABLE}' does not resolve" in result.output
    assert "Traceback" not in result.output and "summary" not in result.output


def test_vcosim_sim_refuses_a_controller_host_that_does_not_resolve_exit_2() -> None:
    """The coupling's peer too: a name was resolved at every message (and failed each)."""
    result = CliRunner().invoke(
        app, ["sim", "--duration", "0.1", "--controller", f"{UNRESOLVABLE}:64890"]
    )
    assert result.exit_code == 2, result.output
    assert f"host '{UNRESOLVABLE}' does not resolve" in result.output
    assert "Traceback" not in result.output
