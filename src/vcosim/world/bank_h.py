"""The range sensor in bank H (the 50 custom values the simulator sends each message).

A leaf module, so a controller process reads the layout without the world behind it. The
slots, from the first custom value (``msg.custom[0]``) on:

======  =========================  ====================================================
slot    name                       meaning
======  =========================  ====================================================
H0      ``range_valid``            1 when a vehicle is in sight ahead, else 0
H1      ``range_distance``         bumper gap to it along the heading (m); the sensor's
                                   range when nothing is in sight
H2      ``range_relative_speed``   its speed minus own along the heading (m/s); < 0 closing
H3      ``range_relative_accel``   its acceleration minus own along the heading (m/s2)
H4      ``range_lateral_offset``   its centre left of the predicted own path (m)
H5      ``range_target``           its row in the world (0-based); -1 when none
======  =========================  ====================================================
"""

from __future__ import annotations

from typing import Any

import numpy as np

RANGE_SLOTS = (
    "range_valid",
    "range_distance",
    "range_relative_speed",
    "range_relative_accel",
    "range_lateral_offset",
    "range_target",
)
H_VALID, H_DISTANCE, H_RELATIVE_SPEED, H_RELATIVE_ACCEL, H_LATERAL, H_TARGET = range(6)


def fill_range_slots(sim: Any, bank: np.ndarray) -> None:
    """Write the range sensor of the vehicle a face serves into ``bank`` (a ``fill_custom``).

    ``sim`` is the host or a ``VehicleScope``: the reading is of its ``vehicle_name``, else of
    the world's ego.
    """
    world = sim.world
    name = getattr(sim, "vehicle_name", None) or world.ego
    reading = world.sense(name)
    valid = reading.target is not None
    bank[H_VALID] = 1.0 if valid else 0.0
    bank[H_DISTANCE] = reading.distance if valid else world.spec.sensor.range
    bank[H_RELATIVE_SPEED] = reading.relative_speed
    bank[H_RELATIVE_ACCEL] = reading.relative_acceleration
    bank[H_LATERAL] = reading.lateral_offset
    bank[H_TARGET] = world.index[reading.target] if valid else -1.0
