"""The mixer: every voice, the master volume and a limiter; messages in, blocks out.

All voices are summed, scaled by a master volume and passed through a limiter that never lets
a sample exceed ``ceiling``: the gain drops at once when a block would clip and recovers
slowly. The mixer is deterministic and needs no clock, so ``render_script`` renders a timed
message sequence offline (the tests do).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable

import numpy as np

from vcosim.bus.catalogue import FMLM, Message, SoundCont, SoundOnce, SoundStop
from vcosim.modules.sound.voices import (
    Array,
    EngineVoice,
    SkidVoice,
    SoundSettings,
    ToneVoice,
    glide,
    synthesise_event,
)

log = logging.getLogger("vcosim.sound")


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
        gain = glide(self.gain, target, x.size) if target > self.gain else target
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
