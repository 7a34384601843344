"""The sound module (the seed's LM): engine, tyre skid and event sounds from bus messages.

Nothing is played from recordings: every sound is synthesised, so the module needs no files
and renders the same on every machine.

- **Engine**: harmonics of the firing frequency ``rpm / 60 × cylinders / 2``. The vehicle sends
  FMLM's engine frequency as the playback rate of a sample recorded at 1000 rpm and played at
  22050 Hz (see ``vcosim.bus.vehicle_module.SoundModel``), so rpm = frequency / 22050 × 1000.
  The timbre follows the volume (the vehicle's engine load: 90 at no load, 255 at full load):
  the upper harmonics grow with load. Oscillators keep their phase from block to block and
  glide their frequency and amplitude linearly across a block, so rpm changes never click.
- **Skid**: band-passed noise with a squeal tone, louder and brighter with FMLM's skid volume
  and frequency (the tyres' slip).
- **Events** (SoundOnce): the starter, the horn, a gear change and the engine stopping are
  recognised by name (``engine_start.wav``, ``horn.wav``, ``gear_change.wav``,
  ``engine_stop.wav``); any other name plays a short beep.
- **Continuous sounds** (SoundCont / SoundStop): any name, a tone whose pitch follows the
  playback frequency (440 Hz at 22050 Hz). ``engine.wav`` and ``skid.wav`` stop the engine
  and skid voices. At least 12 run at once (``SoundSettings.channels``, default 16).

All voices are summed, scaled by a master volume and passed through a limiter that never lets
a sample exceed ``ceiling``: the gain drops at once when a block would clip and recovers
slowly. ``Mixer`` is deterministic and needs no clock, so ``render_script`` renders a timed
message sequence offline (the tests do); ``SoundModule`` drives it from the bus and a clock
into a sink: the sound card (``sounddevice``, optional), a WAV file, or nothing.
"""

from __future__ import annotations

import logging
import math
import time
import wave
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np

from vcosim.bus.catalogue import FMLM, Message, ModuleId, Shutdown, SoundCont, SoundOnce, SoundStop
from vcosim.bus.client import DEFAULT_PORT, BusClient
from vcosim.bus.codec import Codec

log = logging.getLogger("vcosim.sound")

TAU = 2.0 * math.pi
Array = np.ndarray


@dataclass(frozen=True)
class SoundSettings:
    """How the module synthesises and mixes.

    ``engine_base_rpm`` / ``engine_base_rate`` and ``skid_base_rate`` must match the vehicle's
    ``SoundModel``: they turn FMLM's playback rates back into rpm and skid intensity.
    """

    sample_rate: int = 44100
    block: int = 441  # 10 ms: the vehicle's publish period
    cylinders: int = 4
    harmonics: int = 8
    engine_base_rpm: float = 1000.0
    engine_base_rate: float = 22050.0
    skid_base_rate: float = 22050.0
    tone_base_rate: float = 22050.0  # SoundCont: this playback rate sounds at 440 Hz
    channels: int = 16
    master_volume: float = 0.8
    ceiling: float = 0.95
    limiter_release: float = 0.02  # gain recovered per block after the limiter acted
    seed: int = 1

    def firing_frequency(self, engine_frequency: float) -> float:
        """The engine's firing frequency (Hz) for an FMLM engine playback rate."""
        rpm = engine_frequency / self.engine_base_rate * self.engine_base_rpm
        return rpm / 60.0 * self.cylinders / 2.0


def _glide(start: float, end: float, n: int) -> Array:
    """``n`` values moving linearly from just after ``start`` to ``end`` (block-to-block ramps)."""
    return start + (end - start) * (np.arange(1, n + 1) / n)


class Oscillator:
    """A sine bank whose phase carries over between blocks: frequency changes never click."""

    def __init__(self) -> None:
        self.phase = 0.0  # cycles of the fundamental, kept in [0, 1)
        self.frequency = 0.0

    def phases(self, target: float, n: int, sample_rate: int) -> Array:
        """Phase (cycles) of each sample while the frequency glides to ``target`` over the block."""
        freq = _glide(self.frequency, target, n)
        phase = self.phase + np.cumsum(freq) / sample_rate
        self.phase = float(phase[-1] % 1.0)
        self.frequency = target
        return phase


class EngineVoice:
    """Harmonics of the firing frequency; more upper harmonics under load."""

    def __init__(self, settings: SoundSettings) -> None:
        self.s = settings
        self.osc = Oscillator()
        self.amplitude = 0.0
        self.target_frequency = 0.0
        self.target_amplitude = 0.0
        self.load = 0.0

    def set(self, engine_volume: int, engine_frequency: float) -> None:
        """Follow an FMLM: the volume is both loudness and (as engine load) timbre."""
        self.target_frequency = self.s.firing_frequency(engine_frequency)
        self.target_amplitude = engine_volume / 255.0
        self.load = min(max((engine_volume - 90) / (255 - 90), 0.0), 1.0)

    def weights(self, frequency: float) -> Array:
        """Harmonic amplitudes (sum 1): 1/k^(2 - load), none above 0.45 of the sample rate."""
        k = np.arange(1, self.s.harmonics + 1)
        w = 1.0 / k ** (2.0 - self.load)
        w[k * frequency > 0.45 * self.s.sample_rate] = 0.0
        return w / w.sum()

    def render(self, n: int) -> Array:
        """The next ``n`` samples."""
        if self.amplitude == 0.0 and self.target_amplitude == 0.0:
            self.osc.frequency = self.target_frequency
            return np.zeros(n)
        phase = self.osc.phases(self.target_frequency, n, self.s.sample_rate)
        amp = _glide(self.amplitude, self.target_amplitude, n)
        self.amplitude = self.target_amplitude
        w = self.weights(self.target_frequency)
        k = np.arange(1, len(w) + 1)
        return amp * (w @ np.sin(TAU * np.outer(k, phase)))


class SkidVoice:
    """Tyre noise: band-passed noise (FIR with carried state) and a squeal tone."""

    TAPS = 63

    def __init__(self, settings: SoundSettings) -> None:
        self.s = settings
        self.rng = np.random.default_rng(settings.seed)
        self.osc = Oscillator()
        self.amplitude = 0.0
        self.target_amplitude = 0.0
        self.brightness = 1.0
        self.history = np.zeros(self.TAPS - 1)
        self._taps: dict[int, Array] = {}

    def set(self, skid_volume: int, skid_frequency: float) -> None:
        """Follow an FMLM: volume is the slip's intensity, frequency shifts the band up."""
        self.target_amplitude = skid_volume / 255.0
        self.brightness = skid_frequency / self.s.skid_base_rate

    def taps(self) -> Array:
        """Band-pass FIR (windowed sinc) around 1.6 kHz × brightness, cached by centre."""
        centre = int(round(1600 * self.brightness / 25.0)) * 25
        taps = self._taps.get(centre)
        if taps is None:
            sr, m = self.s.sample_rate, np.arange(self.TAPS) - (self.TAPS - 1) / 2
            low, high = (centre - 700) / sr, (centre + 900) / sr
            taps = 2 * high * np.sinc(2 * high * m) - 2 * low * np.sinc(2 * low * m)
            taps *= np.hamming(self.TAPS)
            self._taps[centre] = taps
        return taps

    def render(self, n: int) -> Array:
        """The next ``n`` samples."""
        if self.amplitude == 0.0 and self.target_amplitude == 0.0:
            return np.zeros(n)
        noise = np.concatenate([self.history, self.rng.standard_normal(n)])
        self.history = noise[-(self.TAPS - 1) :]
        band = np.convolve(noise, self.taps(), mode="valid")  # n samples, continuous
        squeal = np.sin(TAU * self.osc.phases(1100.0 * self.brightness, n, self.s.sample_rate))
        amp = _glide(self.amplitude, self.target_amplitude, n)
        self.amplitude = self.target_amplitude
        return amp * (0.5 * band + 0.25 * squeal)


class ToneVoice:
    """A continuous sound of any name (SoundCont): a soft tone following its playback rate."""

    def __init__(self, settings: SoundSettings) -> None:
        self.s = settings
        self.osc = Oscillator()
        self.amplitude = 0.0
        self.target_amplitude = 0.0
        self.target_frequency = 0.0
        self.stopping = False

    def set(self, frequency: float, volume: int) -> None:
        """Pitch 440 Hz × frequency / tone_base_rate; volume 0-255."""
        self.target_frequency = 440.0 * frequency / self.s.tone_base_rate
        self.target_amplitude = volume / 255.0
        self.stopping = False

    def stop(self) -> None:
        """Fade out over the next block (a cut would click), then the channel is free."""
        self.target_amplitude = 0.0
        self.stopping = True

    @property
    def done(self) -> bool:
        """True once a stopped voice has faded out."""
        return self.stopping and self.amplitude == 0.0

    def render(self, n: int) -> Array:
        """The next ``n`` samples (a sine with a little second harmonic)."""
        phase = self.osc.phases(self.target_frequency, n, self.s.sample_rate)
        amp = _glide(self.amplitude, self.target_amplitude, n)
        self.amplitude = self.target_amplitude
        return amp * (0.8 * np.sin(TAU * phase) + 0.2 * np.sin(2 * TAU * phase))


def _envelope(n: int, sample_rate: int, attack: float = 0.01, release: float = 0.05) -> Array:
    """Rise and fall at the ends of a one-shot sound, so it starts and ends without a click."""
    env = np.ones(n)
    a, r = max(1, int(attack * sample_rate)), max(1, int(release * sample_rate))
    env[:a] *= np.linspace(0.0, 1.0, a)
    env[-r:] *= np.linspace(1.0, 0.0, r)
    return env


def synthesise_event(name: str, sample_rate: int, seed: int = 1) -> Array:
    """A one-shot sound by its file name: starter, horn, gear change, engine stop, or a beep."""
    rng = np.random.default_rng(seed)
    lower = name.lower()
    if "horn" in lower:
        t = np.arange(int(0.6 * sample_rate)) / sample_rate
        wave_ = 0.5 * np.sin(TAU * 420 * t) + 0.5 * np.sin(TAU * 525 * t)
        wave_ = np.tanh(2.0 * wave_) / np.tanh(2.0)  # a brassy edge
    elif "start" in lower:
        t = np.arange(int(0.9 * sample_rate)) / sample_rate
        crank = 9.0 + 4.0 * t  # the starter turning the engine over, speeding up a little
        buzz = np.sin(TAU * np.cumsum(180 + 40 * t) / sample_rate)
        pulses = 0.5 + 0.5 * np.sin(TAU * np.cumsum(crank) / sample_rate)
        wave_ = 0.6 * buzz * pulses + 0.15 * rng.standard_normal(t.size) * pulses
    elif "stop" in lower:
        t = np.arange(int(0.7 * sample_rate)) / sample_rate
        freq = 30.0 * np.exp(-3.0 * t)  # the engine running down
        wave_ = np.sin(TAU * np.cumsum(freq) / sample_rate) * np.exp(-4.0 * t)
    elif "gear" in lower:
        t = np.arange(int(0.15 * sample_rate)) / sample_rate
        wave_ = (0.7 * np.sin(TAU * 140 * t) + 0.3 * rng.standard_normal(t.size)) * np.exp(
            -30.0 * t
        )
    else:
        t = np.arange(int(0.2 * sample_rate)) / sample_rate
        wave_ = np.sin(TAU * 880 * t)
    return 0.9 * wave_ * _envelope(t.size, sample_rate) / max(1.0, float(np.abs(wave_).max()))


class Mixer:
    """Every voice, the master volume and the limiter; applies messages, renders blocks.

    Deterministic and free of clocks and I/O: the same messages give the same samples, which
    is what ``render_script`` and the tests rely on.
    """

    def __init__(self, settings: SoundSettings | None = None) -> None:
        self.s = settings if settings is not None else SoundSettings()
        self.engine = EngineVoice(self.s)
        self.skid = SkidVoice(self.s)
        self.tones: dict[str, ToneVoice] = {}
        self.events: list[tuple[Array, int, float]] = []  # samples, position, gain
        self._event_cache: dict[str, Array] = {}
        self.gain = 1.0
        self.limited_blocks = 0
        self.refused: dict[str, int] = {}
        self.engine_file = "engine.wav"
        self.skid_file = "skid.wav"

    def apply(self, message: Message) -> None:
        """React to one bus message (other types are ignored)."""
        if isinstance(message, FMLM):
            self.engine.set(message.engine_volume, message.engine_frequency)
            self.skid.set(message.skid_volume, message.skid_frequency)
        elif isinstance(message, SoundOnce):
            self.play(message.file, message.volume)
        elif isinstance(message, SoundCont):
            self.start(message.file, message.frequency, message.volume)
        elif isinstance(message, SoundStop):
            self.stop(message.file)

    def play(self, file: str, volume: int) -> None:
        """Start a one-shot sound."""
        samples = self._event_cache.get(file)
        if samples is None:
            samples = self._event_cache[file] = synthesise_event(
                file, self.s.sample_rate, self.s.seed
            )
        self.events.append((samples, 0, volume / 255.0))

    def start(self, file: str, frequency: float, volume: int) -> None:
        """Start a continuous sound, or change its frequency and volume if it plays."""
        if file == self.engine_file:
            self.engine.set(volume, frequency)
            return
        voice = self.tones.get(file)
        if voice is None:
            if len(self.tones) >= self.s.channels:
                self.refused[file] = self.refused.get(file, 0) + 1
                if self.refused[file] == 1:
                    log.warning(
                        "sound: all %d channels are busy; %r is not played", self.s.channels, file
                    )
                return
            voice = self.tones[file] = ToneVoice(self.s)
        voice.set(frequency, volume)

    def stop(self, file: str) -> None:
        """Stop a continuous sound (fading out over one block)."""
        if file == self.engine_file:
            self.engine.target_amplitude = 0.0
        elif file == self.skid_file:
            self.skid.target_amplitude = 0.0
        elif file in self.tones:
            self.tones[file].stop()

    def render(self, n: int | None = None) -> Array:
        """The next block of mono samples (float64, |x| ≤ ceiling)."""
        n = self.s.block if n is None else n
        mix = self.engine.render(n) + self.skid.render(n)
        for name in list(self.tones):
            voice = self.tones[name]
            mix += voice.render(n)
            if voice.done:
                del self.tones[name]
        still: list[tuple[Array, int, float]] = []
        for samples, pos, gain in self.events:
            part = samples[pos : pos + n]
            mix[: part.size] += gain * part
            if pos + n < samples.size:
                still.append((samples, pos + n, gain))
        self.events = still
        return self._limit(mix * self.s.master_volume)

    def _limit(self, x: Array) -> Array:
        """Gain that drops at once when the block would exceed the ceiling, recovers slowly."""
        peak = float(np.abs(x).max()) if x.size else 0.0
        ceiling = self.s.ceiling
        target = min(1.0, self.gain + self.s.limiter_release)
        if peak * target > ceiling:
            target = ceiling / peak
            self.limited_blocks += 1
        gain = _glide(self.gain, target, x.size) if target > self.gain else target
        self.gain = target
        return np.clip(x * gain, -ceiling, ceiling)


def render_script(
    script: Iterable[tuple[float, Message]], duration: float, settings: SoundSettings | None = None
) -> Array:
    """Render timed messages offline: each ``(time s, message)`` applies at its block.

    The pure heart of the module for tests and tools: no bus, no clock, no sound card.
    """
    mixer = Mixer(settings)
    s = mixer.s
    events = sorted(script, key=lambda item: item[0])
    blocks = math.ceil(duration * s.sample_rate / s.block)
    out, i = [], 0
    for b in range(blocks):
        now = b * s.block / s.sample_rate
        while i < len(events) and events[i][0] <= now + 1e-12:
            mixer.apply(events[i][1])
            i += 1
        out.append(mixer.render())
    return np.concatenate(out) if out else np.zeros(0)


# -- sinks ------------------------------------------------------------------------------------
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
        reason = "sounddevice is not installed (pip install 'vcosim[sound]')"
    except Exception as exc:  # PortAudio missing or no device: sounddevice's own errors
        reason = f"no sound card: {exc}"
    log.warning(
        "sound: %s; rendering to nothing instead (use --wav FILE to keep the sound)", reason
    )
    return NullSink()


# -- the module -------------------------------------------------------------------------------
Pace = Literal["realtime", "messages"]


class SoundModule:
    """The sound module on the bus: messages in, blocks out to a sink, until Shutdown.

    Args:
        sink: where the sound goes.
        host, port: the router's handshake address.
        pace: ``realtime`` renders as the wall clock advances (the sound card's own pace when
            the sink is the card); ``messages`` renders one publish period (10 ms) per FMLM, so
            a WAV follows simulated time whatever the simulation's speed (used in tests).
    """

    def __init__(
        self,
        sink: Sink,
        host: str = "127.0.0.1",
        port: int = DEFAULT_PORT,
        *,
        module_id: int = ModuleId.SOUND,
        codec: Codec | None = None,
        settings: SoundSettings | None = None,
        pace: Pace = "realtime",
    ) -> None:
        self.mixer = Mixer(settings)
        self.sink = sink
        self.pace = pace
        self.client = BusClient(module_id, host, port, codec=codec)
        self.received: dict[str, int] = {}
        self.blocks = 0
        self.shutdown = False

    def connect(self, timeout: float = 5.0) -> None:
        """Join the bus (``run`` does it if needed)."""
        self.client.connect(timeout)

    def run(self, duration: float | None = None) -> dict[str, Any]:
        """Render until Shutdown, ``duration`` wall seconds, or Ctrl-C; returns a summary."""
        client, mixer, s = self.client, self.mixer, self.mixer.s
        period = s.block / s.sample_rate
        try:
            if not client.connected:
                self.connect()
            start = time.monotonic()
            while not self.shutdown:
                now = time.monotonic()
                if duration is not None and now - start >= duration:
                    break
                if self.pace == "messages":
                    client.wait(0.2)
                    self._drain(render_per_fmlm=True)
                    continue
                due = int((now - start) / period) + 1
                if self.sink.realtime:  # the card's blocking write is the clock
                    client.poll()
                    self._drain()
                    self._write(mixer.render())
                    continue
                while self.blocks < due:
                    self._drain()
                    self._write(mixer.render())
                client.wait(max(0.0, start + self.blocks * period - time.monotonic()))
            self._drain()
        finally:
            self.close()
        return self.report()

    def _drain(self, render_per_fmlm: bool = False) -> None:
        while (message := self.client.next_message()) is not None:
            name = type(message).__name__
            self.received[name] = self.received.get(name, 0) + 1
            if isinstance(message, Shutdown):
                self.shutdown = True
                continue
            self.mixer.apply(message)
            if render_per_fmlm and isinstance(message, FMLM):
                self._write(self.mixer.render())

    def _write(self, block: Array) -> None:
        self.sink.write(block)
        self.blocks += 1

    def report(self) -> dict[str, Any]:
        """What was received and rendered."""
        s = self.mixer.s
        return {
            "module_id": self.client.module_id,
            "received": dict(self.received),
            "blocks": self.blocks,
            "seconds": self.blocks * s.block / s.sample_rate,
            "limited_blocks": self.mixer.limited_blocks,
            "shutdown_received": self.shutdown,
            "sink": type(self.sink).__name__,
            "malformed": self.client.stats.malformed,
        }

    def close(self) -> None:
        """Finish the sink and leave the bus; safe twice."""
        try:
            self.sink.close()
        finally:
            self.client.close()
