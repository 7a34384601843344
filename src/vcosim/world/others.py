"""What a world holds besides its vehicles, as every face reads it: others' cars and signals.

A world's objects (SUMO's traffic, ``vcosim.traffic``) bring cars that move without the
world's physics and traffic lights. ``World.others()`` gives both at one instant, so the bus,
the contract server, Foxglove and OSI all read the same thing instead of asking SUMO each in
its own way: the cars by slot (row ``first_row + slot`` of the world, ``""`` for an empty
slot) with their interpolated poses, and the traffic lights as ``Signal`` heads with a state
each.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

RED, AMBER, GREEN, OFF = 0.0, 1.0, 2.0, -1.0
"""A signal's state, as bank H (H23) and the faces give it (amber includes red-amber)."""
STATE_NAMES = {RED: "red", AMBER: "amber", GREEN: "green", OFF: "off"}


@dataclass(frozen=True)
class Signal:
    """One head of a traffic light: the state of one link (a lane into a lane beyond).

    It stands at its lane's stop line, ``z`` metres up (the heads of one lane stacked, a link
    each), facing the traffic it stops (``yaw``: that traffic's heading, rad).
    """

    name: str  # "C.3": light C, its link 3 (SUMO's link index)
    x: float
    y: float
    z: float
    yaw: float
    lane: str  # the lane it stops (SUMO's id)
    direction: str  # where its link goes: s straight, l left, r right, t turn, L/R partly


@dataclass
class Others:
    """The world's objects at one instant: cars by slot and signal heads with their states."""

    time: float
    first_row: int  # the world's row of slot 0 (its vehicles' count)
    names: list[str] = field(default_factory=list)  # by slot; "" for an empty one
    poses: dict[str, np.ndarray] = field(default_factory=dict)  # the world's pose columns
    signals: list[Signal] = field(default_factory=list)
    states: np.ndarray = field(default_factory=lambda: np.zeros(0))  # by signal: RED ... OFF

    def cars(self) -> list[tuple[int, str]]:
        """(slot, name) of every occupied slot."""
        return [(slot, name) for slot, name in enumerate(self.names) if name]
