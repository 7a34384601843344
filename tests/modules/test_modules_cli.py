"""`vcosim sound` and `vcosim input` as a user starts them (in-process, typer's runner)."""

from __future__ import annotations

import wave
from pathlib import Path

from typer.testing import CliRunner

from vcosim.app import app
from vcosim.bus.catalogue import FMLM, IMFM, ModuleId, Shutdown
from vcosim.bus.client import BusClient
from vcosim.bus.router import Router


def test_vcosim_sound_renders_for_its_duration(router: Router, tmp_path: Path) -> None:
    wav_path = tmp_path / "s.wav"
    result = CliRunner().invoke(
        app,
        ["sound", "--bus", f":{router.address[1]}", "--wav", str(wav_path), "--wall-time", "0.3"],
    )
    assert result.exit_code == 0, result.output
    with wave.open(str(wav_path), "rb") as wav:
        assert wav.getnframes() >= 0.3 * 44100 - 441


def test_vcosim_sound_without_a_bus_fails_and_leaves_no_file(tmp_path: Path) -> None:
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as silent:  # a port nobody answers
        silent.bind(("127.0.0.1", 0))
        wav_path = tmp_path / "s.wav"
        result = CliRunner().invoke(
            app, ["sound", "--bus", f":{silent.getsockname()[1]}", "--wav", str(wav_path)]
        )
    assert result.exit_code == 1, result.output
    assert "no answer from the bus router" in result.output
    assert not wav_path.exists()


def test_vcosim_input_script_quits_everyone(router: Router, tmp_path: Path) -> None:
    script = tmp_path / "quit.toml"
    script.write_text(
        "[[step]]\nt = 0.0\naxes = [0.0, 0.5, 0.0]\n"
        "[[step]]\nt = 0.2\nbuttons = [0, 0, 0, 0, 0, 1]\n"
    )
    port = router.address[1]
    with BusClient(ModuleId.VEHICLE, port=port) as vehicle:
        vehicle.send(FMLM(90, 22050, 0, 22050, to=ModuleId.SOUND))  # (no sound module: counted)
        result = CliRunner().invoke(app, ["input", "--port", str(port), "--script", str(script)])
        assert result.exit_code == 0, result.output
        messages = []
        while (m := vehicle.next_message(timeout=2.0)) is not None:
            messages.append(m)
            if isinstance(m, Shutdown):
                break
    assert isinstance(messages[-1], Shutdown)  # the router passed the quit on to everyone
    assert all(isinstance(m, IMFM) for m in messages[:-1]) and messages[0].throttle == 128


def test_vcosim_input_calibrate_needs_a_file() -> None:
    result = CliRunner().invoke(app, ["input", "--calibrate"])
    assert result.exit_code != 0
    # said on the console, or raised (before the command line printed its errors itself)
    assert "--calibrate needs --mapping FILE" in result.output + str(result.exception)
