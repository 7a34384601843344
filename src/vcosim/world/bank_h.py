"""The range sensor in bank H (the 50 custom values the simulator sends each message).

A leaf module, so a controller process reads the layout without the world behind it. The
slots, from the first custom value (``msg.custom[0]``) on: a block of seven for the nearest
vehicle ahead (in the own lane or the sensor's cone), then one each for the nearest vehicle
ahead in the neighbouring lane to the left and to the right (a car about to cut in):

========  ========  ========  =========================  ====================================
ahead     left      right     name (``range_`` ahead,    meaning
                              ``left_``, ``right_``)
========  ========  ========  =========================  ====================================
H0        H7        H14       ``*_valid``                1 when a vehicle is in sight, else 0
H1        H8        H15       ``*_distance``             bumper gap to it along the heading
                                                         (m); the sensor's range when none
H2        H9        H16       ``*_relative_speed``       its speed minus own along the
                                                         heading (m/s); < 0 closing in
H3        H10       H17       ``*_relative_accel``       its acceleration minus own along the
                                                         heading (m/s2)
H4        H11       H18       ``*_lateral_offset``       its centre left of the predicted own
                                                         path (m)
H5        H12       H19       ``*_target``               its row in the world (0-based); -1
                                                         when none
H6        H13       H20       ``*_lateral_speed``        its velocity minus own across the
                                                         heading (m/s), left positive
========  ========  ========  =========================  ====================================

With SUMO's traffic in the world (``vcosim.traffic``), the next traffic light on the vehicle's
SUMO route follows:

======  ===================  ==============================================================
H21     ``signal_valid``     1 when a traffic light is ahead on its route, else 0
H22     ``signal_distance``  m to its stop line; the sensor's range when none
H23     ``signal_state``     0 red, 1 amber (or red-amber), 2 green, -1 off or none
======  ===================  ==============================================================
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import numpy as np

from vcosim.errors import VcosimError

if TYPE_CHECKING:
    from vcosim.world.world import World


class Served(Protocol):
    """What the bank reads of the host it is filled for (the host, or a ``VehicleScope``)."""

    world: World | None
    vehicle_name: str | None


FIELDS = (
    "valid",
    "distance",
    "relative_speed",
    "relative_accel",
    "lateral_offset",
    "target",
    "lateral_speed",
)
H_VALID, H_DISTANCE, H_RELATIVE_SPEED, H_RELATIVE_ACCEL, H_LATERAL, H_TARGET, H_LATERAL_SPEED = (
    range(len(FIELDS))
)
H_BLOCK = len(FIELDS)
H_AHEAD, H_LEFT, H_RIGHT = 0, H_BLOCK, 2 * H_BLOCK  # each block's first slot: add an H_* field
BLOCKS = {"range": ("ahead", H_AHEAD), "left": ("left", H_LEFT), "right": ("right", H_RIGHT)}
RANGE_SLOTS = tuple(f"{prefix}_{name}" for prefix in BLOCKS for name in FIELDS)
H_SIGNAL_VALID, H_SIGNAL_DISTANCE, H_SIGNAL_STATE = 21, 22, 23
SIGNAL_SLOTS = ("signal_valid", "signal_distance", "signal_state")


def fill_range_slots(sim: Served, bank: np.ndarray) -> None:
    """Write the range sensor of the vehicle a face serves into ``bank`` (a ``fill_custom``).

    ``sim`` is the host or a ``VehicleScope``: the reading is of its ``vehicle_name``, else of
    the world's ego.
    """
    world = sim.world
    if world is None:  # (the builder gives these hooks to a world's couplings only)
        raise VcosimError("bank H's range slots are a world's: this run has no world")
    name = sim.vehicle_name or world.ego
    readings = world.sense_lanes(name)
    for lane, first in BLOCKS.values():
        reading = readings[lane]
        target = reading.target
        valid = target is not None
        bank[first + H_VALID] = 1.0 if valid else 0.0
        bank[first + H_DISTANCE] = reading.distance if valid else world.spec.sensor.range
        bank[first + H_RELATIVE_SPEED] = reading.relative_speed
        bank[first + H_RELATIVE_ACCEL] = reading.relative_acceleration
        bank[first + H_LATERAL] = reading.lateral_offset
        bank[first + H_TARGET] = world.target_row(target) if target is not None else -1.0
        bank[first + H_LATERAL_SPEED] = reading.lateral_speed
    if world.objects is not None:  # SUMO's traffic lights (a storyboard's objects have none)
        signal = world.objects.next_signal(name)
        bank[H_SIGNAL_VALID] = 0.0 if signal is None else 1.0
        bank[H_SIGNAL_DISTANCE] = world.spec.sensor.range if signal is None else signal[0]
        bank[H_SIGNAL_STATE] = -1.0 if signal is None else signal[1]
