from __future__ import annotations

import threading
import wave
from pathlib import Path

import numpy as np
import pytest

from vcosim.bus.catalogue import FMLM, ModuleId, Shutdown, SoundCont, SoundOnce, SoundStop
from vcosim.bus.client import BusClient
from vcosim.bus.router import Router
from vcosim.bus.vehicle_module import SoundModel
from vcosim.modules.sound import (
    EngineVoice,
    Mixer,
    NullSink,
    SoundModule,
    SoundReport,
    SoundSettings,
    WavSink,
    open_sink,
    render_script,
)

S = SoundSettings()
MODEL = SoundModel()  # the vehicle's side of FMLM


def fmlm(rpm: float, load: float = 1.0, slip: float = 0.0, speed: float = 20.0) -> FMLM:
    return MODEL.fmlm(rpm, load, slip, speed, True, ModuleId.SOUND)


def hold(messages: list[FMLM], seconds: float) -> list[tuple[float, FMLM]]:
    """Each message repeated at the vehicle's 100 Hz for ``seconds``, one after the other."""
    steps = round(seconds * 100)
    return [(i * 0.01 + j * seconds, m) for j, m in enumerate(messages) for i in range(steps)]


def write_wav(path: Path, samples: np.ndarray) -> np.ndarray:
    """Through the WAV sink and back: what a listener would get."""
    sink = WavSink(path, S.sample_rate)
    for start in range(0, samples.size, S.block):
        sink.write(samples[start : start + S.block])
    sink.close()
    sink.close()  # safe twice
    with wave.open(str(path), "rb") as wav:
        assert (wav.getnchannels(), wav.getsampwidth(), wav.getframerate()) == (1, 2, 44100)
        pcm = np.frombuffer(wav.readframes(wav.getnframes()), dtype="<i2")
    return pcm / 32767.0


def peak_frequency(x: np.ndarray, low: float = 10.0) -> float:
    """The strongest spectral component (Hann window, 16× zero padding)."""
    n = x.size * 16
    spectrum = np.abs(np.fft.rfft(x * np.hanning(x.size), n))
    freqs = np.fft.rfftfreq(n, 1 / S.sample_rate)
    spectrum[freqs < low] = 0
    return float(freqs[np.argmax(spectrum)])


def band_energy(x: np.ndarray, low: float, high: float) -> float:
    spectrum = np.abs(np.fft.rfft(x)) ** 2
    freqs = np.fft.rfftfreq(x.size, 1 / S.sample_rate)
    return float(spectrum[(freqs >= low) & (freqs <= high)].sum() / x.size)


def test_firing_frequency_from_fmlm() -> None:
    # 22050 Hz playback is 1000 rpm; a four-cylinder four-stroke fires twice per revolution
    assert S.firing_frequency(22050) == pytest.approx(1000 / 60 * 2)
    assert S.firing_frequency(fmlm(3000).engine_frequency) == pytest.approx(100.0)


@pytest.mark.parametrize("load", [0.0, 1.0])
def test_dominant_component_follows_firing_frequency(tmp_path: Path, load: float) -> None:
    rpms = [900, 1500, 2500, 3500, 4500, 6000]
    samples = write_wav(
        tmp_path / "sweep.wav",
        render_script(hold([fmlm(r, load) for r in rpms], 0.6), 0.6 * len(rpms)),
    )
    for j, rpm in enumerate(rpms):
        steady = samples[int((0.6 * j + 0.1) * S.sample_rate) : int(0.6 * (j + 1) * S.sample_rate)]
        expected = rpm / 60 * S.cylinders / 2
        assert peak_frequency(steady) == pytest.approx(expected, rel=0.03), rpm


def test_timbre_brightens_with_load() -> None:
    def brightness(load: float) -> float:
        x = render_script(hold([fmlm(2000, load)], 0.5), 0.5)[4410:]
        return band_energy(x, 150, 600) / band_energy(x, 50, 80)

    assert brightness(1.0) > 2 * brightness(0.0)


def test_skid_band_energy_rises_with_slip() -> None:
    energies = []
    for slip in (0.0, 0.1, 0.2, 0.3, 0.45):
        x = render_script(hold([fmlm(3000, 0.5, slip)], 0.4), 0.4)[4410:]
        energies.append(band_energy(x, 900, 3000))
    assert all(b > a for a, b in zip(energies, energies[1:], strict=False)), energies
    assert energies[-1] > 20 * energies[0]


def test_rpm_changes_never_click() -> None:
    """Bound: no jump beyond the steepest slope of the steady sound at the highest rpm.

    A sum of sines sum_k w_k sin(2 pi k f t) at amplitude A changes by at most
    A * 2 pi f * sum_k k w_k / sample_rate per sample. Phase-continuous oscillators keep every
    jump, across abrupt rpm steps too, within that bound at the sweep's top frequency (here
    0.8 * 2 pi * 200 Hz * 2.94 / 44100 ≈ 0.067 of full scale); a phase reset would jump by up
    to twice the amplitude (1.6).
    """
    rpms = [1000, 6000, 800, 4000, 2000, 6000, 1000]  # steps of thousands of rpm at once
    x = render_script(hold([fmlm(r) for r in rpms], 0.2), 0.2 * len(rpms))
    voice = EngineVoice(S)
    voice.load = 1.0
    f_max = max(S.firing_frequency(fmlm(r).engine_frequency) for r in rpms)
    k = np.arange(1, S.harmonics + 1)
    bound = S.master_volume * 2 * np.pi * f_max * float(k @ voice.weights(f_max)) / S.sample_rate
    assert bound < 0.07
    assert np.abs(np.diff(x)).max() <= bound * 1.01


def test_twelve_continuous_sounds_mix_without_clipping(tmp_path: Path) -> None:
    frequencies = [11025 + 2205 * i for i in range(12)]  # tones 220..704 Hz
    script = [(0.0, SoundCont(f"tone{i}.wav", f, 255)) for i, f in enumerate(frequencies)]
    script += hold([fmlm(5000, 1.0, 0.45)], 0.5)  # engine and skid at full volume too
    script += [(0.1, SoundOnce("horn.wav", 255))]
    mixer_settings = SoundSettings()
    x = write_wav(tmp_path / "mix.wav", render_script(script, 0.5, mixer_settings))
    assert np.abs(x).max() <= mixer_settings.ceiling + 1e-4  # the limiter held
    spectrum = np.abs(np.fft.rfft(x[4410:]))
    freqs = np.fft.rfftfreq(x[4410:].size, 1 / S.sample_rate)
    floor = np.median(spectrum)
    for f in frequencies:  # every channel is audible in the mix
        tone = 440 * f / 22050
        assert spectrum[np.abs(freqs - tone) < 3].max() > 20 * floor, tone


def test_channels_limit_and_stop() -> None:
    mixer = Mixer(SoundSettings(channels=12))
    for i in range(13):
        mixer.apply(SoundCont(f"t{i}.wav", 22050, 100))
    assert len(mixer.tones) == 12 and mixer.refused == {"t12.wav": 1}
    mixer.render()
    mixer.apply(SoundStop("t0.wav"))
    mixer.render()  # fades out over one block, then frees the channel
    assert "t0.wav" not in mixer.tones
    mixer.apply(SoundCont("t12.wav", 22050, 100))
    assert "t12.wav" in mixer.tones


@pytest.mark.parametrize(
    "name", ["engine_start.wav", "engine_stop.wav", "gear_change.wav", "horn.wav", "anything.wav"]
)
def test_one_shot_sounds_play_and_end(name: str) -> None:
    mixer = Mixer()
    mixer.apply(SoundOnce(name, 255))
    blocks = [mixer.render() for _ in range(120)]
    assert np.abs(np.concatenate(blocks[:10])).max() > 0.05
    assert mixer.events == [] and np.abs(blocks[-1]).max() == 0.0


def test_engine_stop_fades_out() -> None:
    mixer = Mixer()
    mixer.apply(fmlm(2000))
    mixer.render()
    mixer.apply(SoundStop("engine.wav"))
    mixer.render()
    assert np.abs(mixer.render()).max() == 0.0


def test_no_sound_card_falls_back(caplog: pytest.LogCaptureFixture, tmp_path: Path) -> None:
    assert isinstance(open_sink(None, True, S), NullSink)
    assert isinstance(open_sink(tmp_path / "a.wav", False, S), WavSink)
    sink = open_sink(None, False, S)  # CI has no card (or no sounddevice): a NullSink, said once
    sink.close()
    if isinstance(sink, NullSink):
        assert "rendering to nothing instead" in caplog.text


def test_module_on_the_bus_renders_to_wav(router: Router, tmp_path: Path) -> None:
    path = tmp_path / "bus.wav"
    module = SoundModule(WavSink(path, S.sample_rate), port=router.address[1], pace="messages")
    module.connect(timeout=2.0)
    reports: list[SoundReport] = []
    thread = threading.Thread(target=lambda: reports.append(module.run(duration=20)))
    thread.start()
    with BusClient(ModuleId.VEHICLE, port=router.address[1]) as vehicle:
        vehicle.send(SoundOnce("engine_start.wav", 255, to=ModuleId.SOUND))
        for i in range(50):  # queued, so that none replaces an unread one: 50 blocks
            m = fmlm(1000 + 80 * i)
            vehicle.send(FMLM(*m.values, to=m.to, enqueue=True))
        vehicle.send(Shutdown(to=ModuleId.SOUND))
        thread.join(timeout=10)
    assert not thread.is_alive()
    (report,) = reports
    assert report.shutdown_received is True and report.blocks == 50
    assert report.received == {"SoundOnce": 1, "FMLM": 50, "Shutdown": 1}
    assert report.to_dict().keys() == {
        "module_id",
        "received",
        "blocks",
        "seconds",
        "limited_blocks",
        "shutdown_received",
        "sink",
        "malformed",
    }
    with wave.open(str(path), "rb") as wav:
        assert wav.getnframes() == 50 * S.block
