"""Sampling a run at a fixed rate of simulated time.

The first sample at the start, then one every ``every`` physics steps, counted in the step hook
so that the rate holds in every pacing (lock-step included), whatever the frames or the wall
clock do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from vcosim.constants import PHYSICS_DT
from vcosim.errors import ConfigError
from vcosim.sim.face import Face

if TYPE_CHECKING:
    from vcosim.sim.simulation import Simulation


def steps_per_sample(rate: float, option: str, dt: float = PHYSICS_DT) -> int:
    """Physics steps between samples at ``rate`` Hz: a whole number, or a ``ConfigError``."""
    steps = 1.0 / (rate * dt) if rate > 0 else 0.0
    if rate <= 0 or steps < 1 - 1e-9 or abs(steps - round(steps)) > 1e-6:
        raise ConfigError(
            [
                f"{option} {rate:g}: a rate that divides the physics rate "
                f"({1 / dt:g} Hz) a whole number of times (e.g. 100, 50, 20)"
            ],
            option,
        )
    return round(steps)


class Sampler(Face):
    """A face that calls ``sample(sim)`` at the start and every ``every`` physics steps."""

    kind: ClassVar[str] = "groundtruth"

    def __init__(self, every: int) -> None:
        if every < 1:
            raise ValueError("every must be at least 1")
        self.every = every
        self.samples = 0
        self._countdown = every

    def start(self, sim: Simulation) -> None:
        """Open what the face needs (``open``), then take the first sample."""
        self.open(sim)
        self._take(sim)
        self._countdown = self.every

    def after_step(self, sim: Simulation) -> None:
        """Count the step; sample every ``every`` steps."""
        self._countdown -= 1
        if self._countdown == 0:
            self._countdown = self.every
            self._take(sim)

    def _take(self, sim: Simulation) -> None:
        self.sample(sim)
        self.samples += 1

    def open(self, sim: Simulation) -> None:
        """Called once before the first sample (files, sockets)."""

    def sample(self, sim: Simulation) -> None:
        """Called for every sample."""
        raise NotImplementedError
