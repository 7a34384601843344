"""The BeamNG-compatible tight-coupling wire format and its scheduling arithmetic.

A datagram is a bare array of little-endian float64: 111 values from the simulator (id, banks
A-G of the vehicle, 50 custom values H), 64 values from the controller (id, pedals, steering,
a reserved slot, per-wheel torques, drive mode, 50 custom values B). See docs/tight-coupling.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from vcosim.constants import BLOCKING_TIMEOUT
from vcosim.vehicle.inputs import Input, element
from vcosim.vehicle.layout import BANK_NAMES, WHEELS

WIRE_DTYPE = np.dtype("<f8")
SIM_TO_CONTROLLER = 111  # 888 bytes
CONTROLLER_TO_SIM = 64  # 512 bytes
N_CUSTOM = 50
SIM_CUSTOM = slice(61, 111)  # bank H
CONTROLLER_CUSTOM = slice(14, 64)  # custom bank B of the controller's message


SIM_SLOT_NAMES: tuple[str, ...] = ("id", *BANK_NAMES, *(f"custom{i}" for i in range(N_CUSTOM)))

# Controller -> simulator slots 1-13: BeamNG's name of each and the vehicle input it sets.
CONTROLLER_INPUTS: tuple[tuple[str, str], ...] = (
    ("throttle", "throttle"),
    ("brake", "brake"),
    ("steering", "steering"),
    ("gear", "gear"),
    *((f"brakingTorque{w}", f"braking_torque_{w}") for w in WHEELS),
    *((f"propulsionTorque{w}", f"propulsion_torque_{w}") for w in WHEELS),
    ("driveMode", "drive_mode"),
)
CONTROLLER_SLOTS: tuple[tuple[str, Input, int], ...] = tuple(
    (wire, *element(name)) for wire, name in CONTROLLER_INPUTS
)
"""Each slot's wire name, its input in the catalogue (range, kind) and which of its values."""
CONTROLLER_SLOT_NAMES: tuple[str, ...] = (
    "id",
    *(name for name, _ in CONTROLLER_INPUTS),
    *(f"custom{i}" for i in range(N_CUSTOM)),
)


def send_skips_for(ext_time: float, dt: float) -> int:
    """Physics steps between two sends: ceil(T_ext / dt) - 1 (never negative)."""
    return max(math.ceil(round(ext_time / dt, 9)) - 1, 0)


def window_for(ping_time: float, ext_time: float) -> int:
    """Messages that may be unanswered before the simulator waits: ceil(T_ping / T_ext), >= 1."""
    return max(math.ceil(round(ping_time / ext_time, 9)), 1)


@dataclass(frozen=True)
class Schedule:
    """The coupling's timing in force: derived from T_ext and T_ping, or set directly."""

    send_skips: int
    window: int
    send_offset: int = 0
    timeout: float = BLOCKING_TIMEOUT

    @classmethod
    def derive(
        cls,
        ext_time: float,
        ping_time: float,
        dt: float,
        *,
        window: int | None = None,
        send_skips: int | None = None,
        send_offset: int = 0,
        timeout: float = BLOCKING_TIMEOUT,
    ) -> Schedule:
        """BeamNG's derivation, with any value given directly taking precedence."""
        return cls(
            send_skips=send_skips_for(ext_time, dt) if send_skips is None else send_skips,
            window=window_for(ping_time, ext_time) if window is None else window,
            send_offset=send_offset,
            timeout=timeout,
        )

    def controller_step(self, dt: float) -> float:
        """The controller's effective sample time, (send_skips + 1) dt."""
        return (self.send_skips + 1) * dt
