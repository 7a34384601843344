"""``Gearbox``: how a vehicle shifts, the one name every description of a run uses.

A run (``RunSpec.gearbox``), a world's vehicle, a sweep's run section, the datasheet's climbs
and ``vcosim sim --gearbox`` all say it with this enum.
"""

from __future__ import annotations

from enum import Enum


class Gearbox(str, Enum):
    """How a vehicle shifts: automatic (selector in D) or manual (its driver shifts)."""

    automatic = "automatic"
    manual = "manual"
