"""Force feedback: the vehicle's ForceFeedback messages felt at the wheel.

A constant-force effect through evdev (Linux) where the device has one, else rumble, else a
one-time message that the device has neither.
"""

from __future__ import annotations

import logging

from vcosim.bus.catalogue import ForceFeedback
from vcosim.modules.input.backends import Backend, PygameBackend

log = logging.getLogger("vcosim.input")


class EvdevForce:
    """A constant-force effect on a Linux event device that supports it (python-evdev)."""

    def __init__(self, name: str | None) -> None:
        import evdev
        from evdev import ecodes

        self._evdev, self._ec = evdev, ecodes
        for path in evdev.list_devices():
            dev = evdev.InputDevice(path)
            ff = dev.capabilities().get(ecodes.EV_FF, [])
            if ecodes.FF_CONSTANT in ff and (name is None or name.lower() in dev.name.lower()):
                self.device = dev
                self._effect = -1
                return
            dev.close()
        raise LookupError("no event device with a constant-force effect")

    def apply(self, force: float, duration: float) -> None:
        """Upload (or update) and play the constant force; + turns the wheel left."""
        ev, ec = self._evdev, self._ec
        level = int(max(-1.0, min(1.0, force)) * 32767)
        effect = ev.ff.Effect(
            ec.FF_CONSTANT,
            self._effect,
            0xC000,  # direction: pulls towards the left
            ev.ff.Trigger(0, 0),
            ev.ff.Replay(max(1, int(duration * 1000)), 0),
            ev.ff.EffectType(ff_constant_effect=ev.ff.Constant(level, ev.ff.Envelope(0, 0, 0, 0))),
        )
        self._effect = self.device.upload_effect(effect)
        self.device.write(ec.EV_FF, self._effect, 1)

    def close(self) -> None:
        """Release the device."""
        self.device.close()


class ForceFeedbackOutput:
    """ForceFeedback messages to the device: constant force, else rumble, else said once."""

    def __init__(self, backend: Backend, constant: EvdevForce | None = None) -> None:
        self.backend = backend
        self.constant = constant
        self.kind = "constant force" if constant is not None else "rumble"
        self.applied = 0

    @classmethod
    def open(cls, backend: Backend, device: str | None) -> ForceFeedbackOutput:
        """Try evdev's constant force for the device; otherwise rumble (or nothing)."""
        if isinstance(backend, PygameBackend):
            try:
                return cls(backend, EvdevForce(device or backend.name))
            except (ImportError, OSError, LookupError) as exc:
                log.info("input: no constant-force effect (%s); trying rumble", exc)
        return cls(backend)

    def apply(self, message: ForceFeedback) -> None:
        """Play one ForceFeedback message on whatever the device has."""
        if self.kind == "none":
            return
        if self.constant is not None:
            self.constant.apply(message.force, message.duration)
        elif not self.backend.rumble(abs(message.force), message.duration):
            self.kind = "none"
            log.warning(
                "input: %r has neither a constant-force effect nor rumble; force "
                "feedback is ignored",
                self.backend.name,
            )
            return
        self.applied += 1

    def close(self) -> None:
        """Release the effect's device."""
        if self.constant is not None:
            self.constant.close()
