"""The bus commands, each module a process of its own as a user starts it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers.forks import vcosim_command
from helpers.loop import free_port
from vcosim.app import app
from vcosim.bus.catalogue import FMVM, IMFM, Shutdown
from vcosim.bus.client import BusClient
from vcosim.bus.router import Router
from vcosim.errors import CouplingTimeout

pytest.importorskip("mcap")

from vcosim.modules.logger import McapRecorder, Recorded, read_recording  # noqa: E402


def vcosim(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*vcosim_command(), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def test_vcosim_bus_routes_until_a_shutdown():
    port = free_port()
    router = vcosim("bus", "--port", str(port))
    try:
        with BusClient(16, port=port) as vehicle, BusClient(17, port=port) as driver:
            vehicle.connect(timeout=60.0)  # handshakes repeat until the router is up
            driver.connect(timeout=5.0)
            driver.send(IMFM(1, 2, 3, 0, to=16))
            assert vehicle.next_message(timeout=5.0) == IMFM(1, 2, 3, 0, to=16)
            driver.send_raw(b"junk")
            driver.send(Shutdown(to=0))
            assert vehicle.next_message(timeout=5.0) == Shutdown(to=16)
        output, _ = router.communicate(timeout=20)
    finally:
        router.kill()
    assert router.returncode == 0, output
    assert "routed" in output and "malformed by sender" in output and "junk" in output


def test_vcosim_log_records_until_a_shutdown(tmp_path: Path):
    with Router("127.0.0.1", 0).start() as router:
        port = router.address[1]
        logger = vcosim("log", str(tmp_path / "bus.mcap"), "--port", str(port), "--csv")
        try:
            assert router.wait_until(lambda: 20 in router.modules, 20.0)
            with BusClient(16, port=port) as vehicle:
                vehicle.send(FMVM(1, 2, 3, 4, 5, 6, 7, to=18))
                vehicle.send(Shutdown(to=0))
                output, _ = logger.communicate(timeout=20)
        finally:
            logger.kill()
    assert logger.returncode == 0, output
    messages = [r.message for r in read_recording(tmp_path / "bus.mcap")]
    assert messages == [FMVM(1, 2, 3, 4, 5, 6, 7, to=18), Shutdown(to=0)]
    assert (tmp_path / "bus.csv").read_text().count("\n") == 3


def test_vcosim_drive_runs_router_vehicle_and_logger(tmp_path: Path):
    drive = vcosim("drive", "--duration", "1.5", "--port", "0", "--out", str(tmp_path))
    try:
        output, _ = drive.communicate(timeout=120)
    finally:
        drive.kill()
    assert drive.returncode == 0, output
    (run,) = tmp_path.iterdir()
    recording = list(read_recording(run / "bus.mcap"))
    poses = [r for r in recording if isinstance(r.message, FMVM)]
    assert len(poses) > 50 and all(r.sender == 16 for r in poses)
    assert (recording[-1].sender, recording[-1].message) == (0, Shutdown(to=0))
    files = {p.name for p in run.iterdir()}
    assert {"bus.mcap", "logger.log", "vehicle.log", "vehicle.json"} <= files  # and module logs
    assert files <= {
        "bus.mcap",
        "logger.log",
        "vehicle.log",
        "vehicle.json",  # the vehicle's summary, whose final state ends drive's
        "input.log",
        "sound.log",
        "viewer.log",
    }


def test_vcosim_replay_exports_csv(tmp_path: Path):
    with McapRecorder(tmp_path / "rec.mcap") as recorder:
        recorder.write(Recorded(5, 17, IMFM(1, 2, 3, 0, to=16)))
    result = CliRunner().invoke(
        app, ["replay", str(tmp_path / "rec.mcap"), "--to-csv", str(tmp_path / "rec.csv")]
    )
    assert result.exit_code == 0, result.output
    assert (tmp_path / "rec.csv").read_text().splitlines()[1].startswith("0.000000,5,17,16,4,")


def test_vcosim_bus_allow_is_checked_before_anything_starts():
    result = vcosim("bus", "--listen", "127.0.0.1:0", "--allow", "127.0.0.1:99999,no.such.invalid")
    output, _ = result.communicate(timeout=30)
    assert result.returncode == 2, output
    assert "--allow '127.0.0.1:99999': port '99999' is not 1..65535" in output
    assert "--allow 'no.such.invalid'" in output and "bus router (id" not in output


def test_vcosim_bus_allow_lets_another_loopback_host_join():
    port = free_port()
    router = vcosim("bus", "--listen", f"127.0.0.1:{port}", "--allow", "127.0.0.2")
    try:
        module = BusClient(16, port=port, bind_host="127.0.0.2")
        try:
            assert module.connect(timeout=20.0).connected  # (repeated until the router is up)
        finally:
            module.close()
        stranger = BusClient(17, port=port, bind_host="127.0.0.3")
        with pytest.raises(CouplingTimeout):
            stranger.connect(timeout=0.5)
        stranger.close()
    finally:
        router.terminate()
        output, _ = router.communicate(timeout=20)
    assert "joining from 127.0.0.1, 127.0.0.2" in output
    assert "not an allowed peer" in output and "not allowed" in output


def test_vcosim_bus_membership_options_are_checked_before_anything_starts(tmp_path: Path):
    result = CliRunner().invoke(app, ["bus", "--listen", "127.0.0.1:0", "--timeout", "0"])
    assert result.exit_code == 2, result.output
    assert "--timeout': must be greater than 0, not 0" in result.output
    (tmp_path / "file").write_text("")
    state = tmp_path / "file" / "bus.json"  # a folder that cannot be made
    router = vcosim("bus", "--listen", "127.0.0.1:0", "--state", str(state))
    output, _ = router.communicate(timeout=30)
    assert router.returncode == 2, output
    assert f"--state {state}: cannot make its folder" in output and "bus router (id" not in output
