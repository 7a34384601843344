"""Where the rendered sound goes: the sound card, a WAV file, or nothing."""

from __future__ import annotations

import logging
import wave
from pathlib import Path
from typing import Protocol

import numpy as np

from vcosim.extras import install_command
from vcosim.modules.sound.voices import Array, SoundSettings

log = logging.getLogger("vcosim.sound")


class Sink(Protocol):
    """Where rendered blocks go."""

    realtime: bool

    def write(self, block: Array) -> None:
        """Take one block of mono float samples in [-1, 1]."""

    def close(self) -> None:
        """Finish; safe twice."""


class NullSink:
    """Discards the sound (headless runs that only need the module on the bus)."""

    realtime = False

    def __init__(self) -> None:
        self.samples = 0

    def write(self, block: Array) -> None:
        """Count and forget."""
        self.samples += block.size

    def close(self) -> None:
        """Nothing to finish."""


class WavSink:
    """A 16-bit mono WAV file (standard library ``wave``), complete after ``close``."""

    realtime = False

    def __init__(self, path: str | Path, sample_rate: int) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._wav = wave.open(str(self.path), "wb")  # noqa: SIM115 (closed in close())
        self._wav.setnchannels(1)
        self._wav.setsampwidth(2)
        self._wav.setframerate(sample_rate)
        self.samples = 0
        self._closed = False

    def write(self, block: Array) -> None:
        """Append the block as 16-bit PCM."""
        pcm = np.round(np.clip(block, -1.0, 1.0) * 32767).astype("<i2")
        self._wav.writeframes(pcm.tobytes())
        self.samples += block.size

    def close(self) -> None:
        """Write the header's final length; safe twice."""
        if not self._closed:
            self._closed = True
            self._wav.close()


class CardSink:
    """The default sound card through ``sounddevice`` (blocking writes pace the module)."""

    realtime = True

    def __init__(self, sample_rate: int, block: int) -> None:
        import sounddevice

        self._stream = sounddevice.OutputStream(
            samplerate=sample_rate, channels=1, dtype="float32", blocksize=block
        )
        self._stream.start()
        self._closed = False

    def write(self, block: Array) -> None:
        """Queue the block for playing (waits while the card's buffer is full)."""
        self._stream.write(block.astype(np.float32).reshape(-1, 1))

    def close(self) -> None:
        """Stop the stream; safe twice."""
        if not self._closed:
            self._closed = True
            self._stream.stop()
            self._stream.close()


def open_sink(wav: Path | None, null: bool, settings: SoundSettings) -> Sink:
    """The sink asked for: null, WAV, or the sound card, falling back (said once) without one."""
    if null:
        return NullSink()
    if wav is not None:
        return WavSink(wav, settings.sample_rate)
    try:
        return CardSink(settings.sample_rate, settings.block)
    except ImportError:
        reason = f"sounddevice is not installed ({install_command('sound')})"
    except Exception as exc:  # PortAudio missing or no device: sounddevice's own errors
        reason = f"no sound card: {exc}"
    log.warning(
        "sound: %s; rendering to nothing instead (use --wav FILE to keep the sound)", reason
    )
    return NullSink()
