"""`vcosim drive` with the scripted input and the WAV sound sink, end to end."""

from __future__ import annotations

import os
import subprocess
import sys
import wave
from pathlib import Path

import numpy as np
import pytest

from vcosim.bus.catalogue import FMVM, IMFM, ModuleId

pytest.importorskip("mcap")

from vcosim.modules.logger import read_recording  # noqa: E402


def dominant(x: np.ndarray, rate: int) -> float:
    n = x.size * 8
    spectrum = np.abs(np.fft.rfft(x * np.hanning(x.size), n))
    freqs = np.fft.rfftfreq(n, 1 / rate)
    spectrum[freqs < 10] = 0
    return float(freqs[np.argmax(spectrum)])


def test_drive_with_scripted_input_and_wav_sound(tmp_path: Path) -> None:
    script = tmp_path / "drive.toml"
    script.write_text(
        "end = 60.0\n[[step]]\nt = 0.0\naxes = [0.0, 0.0, 0.0]\n"
        "[[step]]\nt = 4.0\naxes = [0.0, 1.0, 0.0]\n"
    )  # idle, then full gas
    wav_path = tmp_path / "drive.wav"
    env = {**os.environ, "VCOSIM_INPUT_SCRIPT": str(script), "VCOSIM_SOUND_WAV": str(wav_path)}
    drive = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "vcosim",
            "drive",
            "--wall-time",
            "8",
            "--bus",
            "127.0.0.1:0",
            "--out",
            str(tmp_path / "runs"),
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        output, _ = drive.communicate(timeout=120)
    finally:
        drive.kill()
    (run,) = (tmp_path / "runs").iterdir()
    for module in ("input", "sound"):  # each ended on the drive's Shutdown, cleanly
        log = (run / f"{module}.log").read_text()
        assert "shutdown received │ true" in log, (module, log, output)

    recording = list(read_recording(run / "bus.mcap"))
    driver = [r.message for r in recording if isinstance(r.message, IMFM)]
    assert driver and all(
        r.sender == ModuleId.INPUT for r in recording if isinstance(r.message, IMFM)
    )
    assert driver[0].throttle == 0 and driver[-1].throttle == 255
    poses = [r.message for r in recording if isinstance(r.message, FMVM)]
    assert poses[-1].speed > 5.0  # the scripted throttle moved the car

    with wave.open(str(wav_path), "rb") as wav:
        rate = wav.getframerate()
        x = np.frombuffer(wav.readframes(wav.getnframes()), dtype="<i2") / 32767.0
    assert x.size > 3 * rate
    windows = [
        dominant(x[i : i + rate // 2], rate) for i in range(0, x.size - rate // 2, rate // 4)
    ]
    # drive starts the input module last, once the sound module is on the bus, and the script
    # idles for its first 4 s: the sound hears the idling engine however slow the start-up.
    idle = min(windows)
    assert idle < 40.0  # ~800 rpm: a 27 Hz firing frequency
    assert max(windows) > 3 * idle  # the pitch rose as the car accelerated
