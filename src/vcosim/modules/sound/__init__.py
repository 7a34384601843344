"""The sound module (the seed's LM): engine, tyre skid and event sounds from bus messages.

Every sound is synthesised (no files), so the module renders the same on every machine.

- :mod:`~vcosim.modules.sound.voices`: the engine's harmonics, the skid's noise and squeal,
  continuous tones and one-shot events, each phase-continuous from block to block.
- :mod:`~vcosim.modules.sound.mixer`: the voices summed, a master volume and a limiter;
  deterministic and clock-free (``render_script`` renders offline).
- :mod:`~vcosim.modules.sound.sinks`: the sound card (``sounddevice``, optional), a WAV file,
  or nothing.
- :mod:`~vcosim.modules.sound.module`: the module on the bus driving the mixer into a sink.

Continuous sounds (SoundCont / SoundStop) may have any name; ``engine.wav`` and ``skid.wav``
stop the engine and skid voices. At least 12 run at once (``SoundSettings.channels``).
"""

from vcosim.modules.sound.mixer import Mixer, render_script
from vcosim.modules.sound.module import SoundModule, SoundReport
from vcosim.modules.sound.sinks import CardSink, NullSink, Sink, WavSink, open_sink
from vcosim.modules.sound.voices import (
    EngineVoice,
    Oscillator,
    SkidVoice,
    SoundSettings,
    ToneVoice,
    synthesise_event,
)

__all__ = [
    "CardSink",
    "EngineVoice",
    "Mixer",
    "NullSink",
    "Oscillator",
    "Sink",
    "SkidVoice",
    "SoundModule",
    "SoundReport",
    "SoundSettings",
    "ToneVoice",
    "WavSink",
    "open_sink",
    "render_script",
    "synthesise_event",
]
