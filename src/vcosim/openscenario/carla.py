"""scenario_runner's reading of the files written for it (a ``CARLA:`` description).

CARLA's scenario_runner plays an OpenSCENARIO file as a tree of py_trees behaviours, and
where that tree and the standard part, a file written for it means what scenario_runner does:

- a SpeedAction is scenario_runner's ``ChangeActorTargetSpeed``: it sets the target speed
  (the shape only says how vcosim's driver gets there) and keeps running until its actor has
  moved the dynamics' distance in a straight line from where the action began, or, for any
  other dimension, until the dynamics' value in seconds has passed, or until another
  longitudinal action of the same actor starts (``srunner/tools/openscenario_parser.py``,
  ``atomic_behaviors.py``); a continuous relative one runs until overridden. So a "step to
  5 m/s over 30 m" holds its event open for 30 m, where by the standard a step ends at once.
- an Event's ``priority`` is not read: each event of a maneuver is its own branch of a
  parallel behaviour, and starting one stops none of the others.
"""

from __future__ import annotations

import math

from vcosim.openscenario import model as m
from vcosim.openscenario.actions import Run
from vcosim.openscenario.reader import CARLA_FRAME


def written_for_scenario_runner(description: str) -> bool:
    """Whether a file's FileHeader description marks it as CARLA's (read the way above)."""
    return description.startswith(CARLA_FRAME)


PRIORITY = "parallel"
"""The priority every event of such a file has: starting it stops no other event."""


class HeldSpeedRun(Run):
    """A SpeedAction as scenario_runner runs it: done by distance moved, time, or override."""

    def __init__(self, run: Run, dynamics: m.Dynamics, now: float, x: float, y: float) -> None:
        super().__init__(run.action, run.actor, run.channel, run.ramp)
        self.done = False
        self.t0, self.x0, self.y0 = now, x, y
        by_distance = dynamics.dimension == "distance"
        self.distance = dynamics.value if by_distance else math.inf
        self.duration = math.inf if by_distance else dynamics.value
        """scenario_runner takes any dimension but distance's value as seconds (rate's too)."""

    def update(self, now: float) -> None:
        """Done once its time has passed (a continuous one only when overridden)."""
        if not self.continuous and now - self.t0 > self.duration:
            self.done = True

    def moved(self, x: float, y: float) -> None:
        """Done once its actor is further than its distance from where the action began."""
        if not self.continuous and math.hypot(x - self.x0, y - self.y0) > self.distance:
            self.done = True
