"""The voices of the sound module: engine, tyre skid, continuous tones and one-shot events.

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
- **Tones** (SoundCont): a soft tone whose pitch follows the playback frequency (440 Hz at
  22050 Hz).
- **Events** (SoundOnce): the starter, the horn, a gear change and the engine stopping are
  recognised by name (``engine_start.wav``, ``horn.wav``, ``gear_change.wav``,
  ``engine_stop.wav``); any other name plays a short beep.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

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


def glide(start: float, end: float, n: int) -> Array:
    """``n`` values moving linearly from just after ``start`` to ``end`` (block-to-block ramps)."""
    return start + (end - start) * (np.arange(1, n + 1) / n)


class Oscillator:
    """A sine bank whose phase carries over between blocks: frequency changes never click."""

    def __init__(self) -> None:
        self.phase = 0.0  # cycles of the fundamental, kept in [0, 1)
        self.frequency = 0.0

    def phases(self, target: float, n: int, sample_rate: int) -> Array:
        """Phase (cycles) of each sample while the frequency glides to ``target`` over the block."""
        freq = glide(self.frequency, target, n)
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
        amp = glide(self.amplitude, self.target_amplitude, n)
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
        amp = glide(self.amplitude, self.target_amplitude, n)
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
        amp = glide(self.amplitude, self.target_amplitude, n)
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
