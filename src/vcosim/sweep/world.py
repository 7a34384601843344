"""A sweep run of a world: the controller drives the ego; a probe measures how close it came.

The probe samples every driver period (when the world's range sensor is fresh): the range
sensor's bumper gap to the vehicle ahead over the ego's speed (the time gap; only while it
rolls faster than ``MIN_SPEED``), how near the ego's box came to any other vehicle's (the
separating-axis gap, 0 at contact: a car cutting in is near before the sensor calls it
"ahead"), the time to collision with the vehicle ahead (the bumper gap over the closing speed,
while closing), and the ego's longitudinal acceleration, whose differences give the jerk.
Definitions: ``docs/sweeps.md``.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from vcosim.sim.face import Face
from vcosim.sim.simulation import RunReport, Simulation
from vcosim.sweep.metrics import RunMetrics
from vcosim.vehicle import layout as L
from vcosim.world import World
from vcosim.world.geometry import box_overlap

MIN_SPEED = 0.5  # m/s: below this a time gap means nothing (a queue at a stop)


class WorldProbe(Face):
    """The ego's gap, time gap and longitudinal acceleration, once per driver period."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.every = world.driver_steps
        self._countdown = self.every
        self.gaps: list[float] = []
        self.time_gaps: list[float] = []
        self.min_ttc = math.inf
        self.acceleration: list[float] = []
        self._outputs = world.vehicle.outputs

    def start(self, sim: Simulation) -> None:
        """Sample the start."""
        self._sample()
        self._countdown = self.every

    def after_step(self, sim: Simulation) -> None:
        """Count the step; sample when the range sensor has been read again."""
        self._countdown -= 1
        if self._countdown == 0:
            self._countdown = self.every
            self._sample()

    def _sample(self) -> None:
        reading = self.world.sense(self.world.ego)
        speed = float(self._outputs[L.SIGNAL_INDEX["groundspeed"]])
        self.gaps.append(self._nearest())
        gap = max(reading.distance, 0.0)  # boxes that overlap are no time apart
        self.time_gaps.append(gap / speed if speed > MIN_SPEED else math.inf)
        closing = -reading.relative_speed  # > 0: the gap shrinks (0 when nobody is ahead)
        if closing > 0.0 and gap / closing < self.min_ttc:
            self.min_ttc = gap / closing
        self.acceleration.append(float(self._outputs[L.SIGNAL_INDEX["accX"]]))

    def _nearest(self) -> float:
        """The gap between the ego's box and the nearest other vehicle's (m, 0 at contact)."""
        world, ego = self.world, self.world.row(self.world.ego)
        p = world.poses()
        box = (p["cx"], p["cy"], p["yaw"], p["half_length"], p["half_width"])
        depth = max(
            (box_overlap(*box, ego, other) for other in range(len(world)) if other != ego),
            default=-math.inf,
        )
        return max(-depth, 0.0)

    def metrics(self, metrics: RunMetrics, report: RunReport) -> RunMetrics:
        """``metrics`` with the world's columns filled in."""
        dt = self.every * self.world.dt
        jerk = np.abs(np.diff(self.acceleration)) / dt
        hits = [] if report.world is None else report.world.collisions
        collided = any(self.world.ego in hit.vehicles for hit in hits)
        return replace(
            metrics,
            min_time_gap=float(min(self.time_gaps)),
            min_distance=float(min(self.gaps)),
            min_time_to_collision=0.0 if collided else self.min_ttc,
            collision=1.0 if collided else 0.0,
            peak_jerk=float(jerk.max()) if jerk.size else math.nan,
        )
