"""The sound module on the bus: messages in, blocks out to a sink, until Shutdown."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Literal

from vcosim.bus.catalogue import FMLM, Message, ModuleId
from vcosim.bus.codec import Codec
from vcosim.constants import BUS_PORT, LOOPBACK
from vcosim.modules.base import BusModule
from vcosim.modules.sound.mixer import Mixer
from vcosim.modules.sound.sinks import Sink
from vcosim.modules.sound.voices import Array, SoundSettings
from vcosim.reports import Report

Pace = Literal["realtime", "messages"]


@dataclass
class SoundReport(Report):
    """What was received and rendered."""

    module_id: int
    received: dict[str, int]
    blocks: int
    seconds: float  # sound rendered
    limited_blocks: int  # blocks the limiter turned down
    shutdown_received: bool
    sink: str
    malformed: int


class SoundModule(BusModule[SoundReport]):
    """The sound module (the seed's LM) on the bus.

    Args:
        sink: where the sound goes.
        host, port: the router's handshake address.
        pace: ``realtime`` renders as the wall clock advances (the sound card's own pace when
            the sink is the card); ``messages`` renders one publish period (10 ms) per FMLM, so
            a WAV follows simulated time whatever the simulation's speed (used in tests).
    """

    name = "sound"

    def __init__(
        self,
        sink: Sink,
        host: str = LOOPBACK,
        port: int = BUS_PORT,
        *,
        module_id: int = ModuleId.SOUND,
        codec: Codec | None = None,
        settings: SoundSettings | None = None,
        pace: Pace = "realtime",
    ) -> None:
        super().__init__(module_id, host, port, codec=codec)
        self.mixer = Mixer(settings)
        self.sink = sink
        self.pace = pace
        self.blocks = 0

    def describe(self) -> str:
        """Where the module joined and where its sound goes."""
        return f"{super().describe()}, sink {type(self.sink).__name__}"

    def loop(self, duration: float | None) -> None:
        """Render until Shutdown or ``duration`` wall seconds."""
        client, mixer, s = self.client, self.mixer, self.mixer.s
        period = s.block / s.sample_rate
        start = time.monotonic()
        while not self.shutdown:
            now = time.monotonic()
            if duration is not None and now - start >= duration:
                break
            if self.pace == "messages":  # on_message renders a block per FMLM
                client.wait(0.2)
                self.take_messages()
                continue
            due = int((now - start) / period) + 1
            if self.sink.realtime:  # the card's blocking write is the clock
                client.poll()
                self.take_messages()
                self._write(mixer.render())
                continue
            while self.blocks < due:
                self.take_messages()
                self._write(mixer.render())
            client.wait(max(0.0, start + self.blocks * period - time.monotonic()))
        if duration is not None and not self.shutdown and self.pace != "messages":
            # a wake-up late past the end (a busy machine) still leaves the whole duration
            while not self.sink.realtime and self.blocks < round(duration / period):
                self.take_messages()
                self._write(mixer.render())
        self.take_messages()

    def on_message(self, message: Message) -> None:
        """Into the mixer; paced by messages, each FMLM is one publish period of sound."""
        self.mixer.apply(message)
        if self.pace == "messages" and isinstance(message, FMLM):
            self._write(self.mixer.render())

    def _write(self, block: Array) -> None:
        self.sink.write(block)
        self.blocks += 1

    def release(self) -> None:
        """Complete the sink (a WAV's header gets its length)."""
        self.sink.close()

    def report(self) -> SoundReport:
        """What was received and rendered."""
        s = self.mixer.s
        return SoundReport(
            module_id=self.client.module_id,
            received=dict(self.received),
            blocks=self.blocks,
            seconds=self.blocks * s.block / s.sample_rate,
            limited_blocks=self.mixer.limited_blocks,
            shutdown_received=self.shutdown,
            sink=type(self.sink).__name__,
            malformed=self.client.stats.malformed,
        )
