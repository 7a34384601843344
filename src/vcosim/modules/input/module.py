"""The input module on the bus: polls a backend at 100 Hz, sends the driver at 25 Hz.

IMFM (pedals, wheel, a pending shift) goes to the vehicle and IMVM (the wheel angle) to the
visualisation every fourth poll; a shift rides on the next IMFM with enqueue set, so a pedal
update cannot replace it. Horn → SoundOnce to the sound module, camera → IMVMCamera to the
visualisation, quit → Shutdown to the router's id, which the router passes to every module.
ForceFeedback from the vehicle goes to the device.

Time is a tick count (``tick × 10 ms``), so a scripted second gives exactly 25 IMFM whatever
the machine's load; ``pace="fast"`` skips the waiting between ticks (tests).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any, Literal

from vcosim.bus.catalogue import (
    IMFM,
    IMVM,
    ForceFeedback,
    IMVMCamera,
    Message,
    ModuleId,
    Shutdown,
    SoundOnce,
)
from vcosim.bus.codec import Codec
from vcosim.constants import BUS_PORT, LOOPBACK
from vcosim.modules.base import BusModule, run_module
from vcosim.modules.input.backends import POLL_RATE, Backend
from vcosim.modules.input.feedback import ForceFeedbackOutput
from vcosim.modules.input.mapping import Mapping, to_driver
from vcosim.reports import Report

log = logging.getLogger("vcosim.input")

SEND_EVERY = 4  # polls per IMFM: 25 Hz

Pace = Literal["realtime", "fast"]


@dataclass
class InputReport(Report):
    """What was polled, sent and received."""

    module_id: int
    device: str
    polls: int
    sent: dict[str, int]
    received: dict[str, int]
    force_feedback: str  # the effect used and how many messages it played
    quit: bool  # the driver asked to end everything
    shutdown_received: bool
    malformed: int


class InputModule(BusModule[InputReport]):
    """The input module (the seed's IM): a device's controls to the bus, force feedback back.

    Args:
        backend: where the axes and buttons come from.
        mapping: which axis and button does what (checked against the device first).
        pace: ``realtime`` waits for each 10 ms tick; ``fast`` does not (tests).
    """

    name = "input"

    def __init__(
        self,
        backend: Backend,
        mapping: Mapping | None = None,
        host: str = LOOPBACK,
        port: int = BUS_PORT,
        *,
        module_id: int = ModuleId.INPUT,
        vehicle_id: int = ModuleId.VEHICLE,
        visualisation_id: int = ModuleId.VISUALISATION,
        sound_id: int = ModuleId.SOUND,
        codec: Codec | None = None,
        pace: Pace = "realtime",
        force_feedback: ForceFeedbackOutput | None = None,
    ) -> None:
        self.mapping = mapping if mapping is not None else Mapping()
        self.mapping.check_device(backend.name, backend.axes, backend.buttons)
        super().__init__(module_id, host, port, codec=codec)
        self.backend = backend
        self.pace = pace
        self.vehicle_id = vehicle_id
        self.visualisation_id = visualisation_id
        self.sound_id = sound_id
        self.ffb = force_feedback if force_feedback is not None else ForceFeedbackOutput(backend)
        self.ticks = 0
        self.quit = False
        self._held: set[str] = set()
        self._shift = 0
        self._said_engine = False

    def describe(self) -> str:
        """The device and where the module joined."""
        host, port = self.client.router_address
        return (
            f"input: {self.backend.name} as module {self.client.module_id} on the bus at "
            f"{host}:{port}"
        )

    def loop(self, duration: float | None) -> None:
        """Poll and send until quit, Shutdown, the script's end or ``duration``."""
        client, period = self.client, 1.0 / POLL_RATE
        start = time.monotonic()
        while not (self.shutdown or self.quit):
            t = self.ticks * period
            if self.backend.finished(t) or (duration is not None and t >= duration):
                break
            self.tick(t)
            self.ticks += 1
            if self.pace == "realtime":
                while (left := start + self.ticks * period - time.monotonic()) > 0:
                    client.wait(left)
                    self.take_messages()
            else:
                client.poll()
            self.take_messages()

    def tick(self, t: float) -> None:
        """One 10 ms poll: read, act on button presses, every 4th tick send IMFM and IMVM."""
        axes, buttons = self.backend.read(t)
        state = to_driver(self.mapping, axes, buttons, self._held)
        pressed = state.pressed
        if "shift_up" in pressed:
            self._shift = 1
        if "shift_down" in pressed:
            self._shift = -1
        if "horn" in pressed:
            self.send(SoundOnce(self.mapping.horn_file, 255, to=self.sound_id))
        if "camera" in pressed:
            self.send(IMVMCamera(to=self.visualisation_id))
        if "engine_start" in pressed and not self._said_engine:
            self._said_engine = True
            log.warning(
                "input: the bus has no engine-start message yet; the vehicle starts "
                "with its engine running"
            )
        if "quit" in pressed or self.backend.quit_requested():
            self.send(Shutdown(to=self.client.router_id or 0))  # the router tells everyone
            self.quit = True
            return
        if self.ticks % SEND_EVERY == 0:
            shift = self._shift
            self.send(
                IMFM(
                    state.throttle,
                    state.brake,
                    state.steering,
                    shift,
                    to=self.vehicle_id,
                    enqueue=bool(shift),
                )
            )
            self.send(IMVM(0.0, 0.0, state.angle, to=self.visualisation_id))
            self._shift = 0

    def on_message(self, message: Message) -> None:
        """ForceFeedback goes to the device; nothing else needs the driver's attention."""
        if isinstance(message, ForceFeedback):
            self.ffb.apply(message)

    def release(self) -> None:
        """Free the force-feedback effect and the device."""
        try:
            self.ffb.close()
        finally:
            self.backend.close()

    def report(self) -> InputReport:
        """What was polled, sent and received."""
        return InputReport(
            module_id=self.client.module_id,
            device=self.backend.name,
            polls=self.ticks,
            sent=dict(self.sent),
            received=dict(self.received),
            force_feedback=f"{self.ffb.kind}, {self.ffb.applied} applied",
            quit=self.quit,
            shutdown_received=self.shutdown,
            malformed=self.client.stats.malformed,
        )


@dataclass
class IdleReport(Report):
    """The input module without a device: only whether the Shutdown came."""

    device: None
    shutdown_received: bool


class IdleModule(BusModule[IdleReport]):
    """The input module without a device: on the bus, sending nothing, until Shutdown.

    Holds the input's id on a headless machine, so ``vcosim drive`` runs there and ends it
    with the others.
    """

    name = "input"

    def loop(self, duration: float | None) -> None:
        """Wait for Shutdown (or ``duration``), taking what arrives."""
        end = None if duration is None else time.monotonic() + duration
        while not self.shutdown:
            left = 0.5 if end is None else min(0.5, end - time.monotonic())
            if left <= 0:
                break
            self.client.wait(left)
            self.take_messages()

    def report(self) -> IdleReport:
        """Whether the Shutdown came."""
        return IdleReport(device=None, shutdown_received=self.shutdown)


def idle(
    host: str, port: int, *, module_id: int, codec: Codec, duration: float | None = None
) -> dict[str, Any]:
    """Stay on the bus without a device until Shutdown, Ctrl-C or SIGTERM; the report."""
    return run_module(IdleModule(module_id, host, port, codec=codec), duration)
