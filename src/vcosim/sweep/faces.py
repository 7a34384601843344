"""What a run attaches to its simulation: the recorder, the manoeuvre, the controller's timing.

The recorder and the manoeuvre are faces of the ``Simulation`` (hooks before and after each
physics step); ``MeasuredDelayLink`` and ``busy`` model the controller's computation time;
``UdpController`` runs the controller over loopback UDP for ``transport = "udp"``.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from vcosim.sim.face import Face
from vcosim.sim.simulation import Simulation
from vcosim.stats import Samples
from vcosim.sweep.config import DERIVED_SIGNALS, CouplingSection
from vcosim.tight.controller import Responder
from vcosim.tight.endpoint import SimulatorEndpoint
from vcosim.tight.inprocess import InProcessLink
from vcosim.vehicle import layout as L
from vcosim.vehicle.vehicle import set_inputs

_ACC_Y = L.SIGNAL_INDEX["accY"]


@dataclass(frozen=True)
class SignalSpec:
    """Which signals to keep from each run, and how often (every ``every`` physics steps)."""

    names: tuple[str, ...]
    every: int = 20


class Recorder(Face):
    """Records the metric signal and accY at every step, and chosen signals every N steps."""

    def __init__(self, steps: int, metric_index: int | None, spec: SignalSpec | None) -> None:
        self.steps = steps
        self.metric_index = metric_index
        self.metric = np.full(steps + 1, np.nan)
        self.acc_y = np.full(steps + 1, np.nan)
        self.spec = spec
        self._rows: np.ndarray | None = None
        self._columns: list[int] = []
        self._every = spec.every if spec is not None else 0
        if spec is not None:
            self._columns = [
                L.SIGNAL_INDEX["yaw" if n in DERIVED_SIGNALS else n] for n in spec.names
            ]
            self._rows = np.full((steps // spec.every + 1, len(self._columns)), np.nan)
        self._i = 0
        self._row = 0
        self._countdown = 0
        self._y: np.ndarray = np.empty(0)

    def start(self, sim: Simulation) -> None:
        """Take the first sample (time 0 of the run)."""
        self._y = sim.vehicle.outputs
        self._i = 0
        self._row = 0
        self._countdown = 0
        self._sample()

    def after_step(self, sim: Simulation) -> None:
        """Take a sample after every physics step."""
        self._i += 1
        self._sample()

    def _sample(self) -> None:
        y, i = self._y, self._i
        if i > self.steps:
            return
        if self.metric_index is not None:
            self.metric[i] = y[self.metric_index]
        self.acc_y[i] = y[_ACC_Y]
        if self._rows is not None:
            if self._countdown == 0:
                self._rows[self._row] = y[self._columns]
                self._row += 1
                self._countdown = self._every
            self._countdown -= 1

    def signals(self, dt: float) -> dict[str, np.ndarray]:
        """The kept signals, with their time (s from the start of the run)."""
        if self._rows is None or self.spec is None:
            return {}
        rows = self._rows[: self._row]
        out = {"time": np.arange(rows.shape[0]) * self.spec.every * dt}
        for k, name in enumerate(self.spec.names):
            column = rows[:, k]
            out[name] = np.degrees(np.unwrap(column)) if name == "yaw_deg" else column.copy()
        return out


class ManoeuvrePlayer(Face):
    """Changes held vehicle inputs at given times of the run (before the step at that time)."""

    def __init__(self, events: list[tuple[float, dict[str, Any]]], dt: float) -> None:
        order = sorted(range(len(events)), key=lambda i: events[i][0])
        self.events = [(round(events[i][0] / dt), events[i][1]) for i in order]
        self._next = 0
        self._start = 0

    def start(self, sim: Simulation) -> None:
        """Count the events' steps from the start of the run."""
        self._start = sim.vehicle.step_index
        self._next = 0

    def before_step(self, sim: Simulation) -> None:
        """Apply every event that is due."""
        events = self.events
        while (
            self._next < len(events)
            and sim.vehicle.step_index - self._start >= events[self._next][0]
        ):
            set_inputs(sim.vehicle.input_array, events[self._next][1])
            self._next += 1


class MeasuredDelayLink(InProcessLink):
    """An in-process link whose replies land after the *measured* computation time."""

    def __init__(
        self, responder: Responder, clock: Callable[[], int], dt: float, ping_time: float
    ) -> None:
        super().__init__(responder, clock, 0)
        self.dt = dt
        self.ping_time = ping_time

    def reply_delay(self) -> int:
        """The measured computation time of the reply just computed, plus the round trip."""
        return math.ceil(round((self.responder.compute.last + self.ping_time) / self.dt, 9))


def busy(step_fn: Callable[[Any], Any], seconds: float) -> Callable[[Any], Any]:
    """``step_fn`` made to compute for at least ``seconds`` (a busy wait: real CPU time)."""

    def step(msg: Any) -> Any:
        end = time.perf_counter() + seconds
        out = step_fn(msg)
        while time.perf_counter() < end:
            pass
        return out

    return step


class UdpController:
    """A ``ControllerBlock`` in a thread on loopback: the UDP transport of a run."""

    def __init__(self, sim: Simulation, step_fn: Callable[[Any], Any], cp: CouplingSection) -> None:
        from vcosim.tight import ControllerBlock

        step = cp.schedule(sim.dt).controller_step(sim.dt)
        self.block = ControllerBlock(
            step_fn, listen_port=0, sim_port=0, spin=0.0, step=step, memory=cp.memory
        )
        sim.attach(
            "coupling",
            SimulatorEndpoint(
                cp.endpoint_config(listen_port=0, controller_port=self.block.address[1], spin=0.0)
            ),
        )
        self.thread = threading.Thread(
            target=self.block.run, daemon=True, name="sweep udp controller"
        )
        self.thread.start()

    @property
    def compute(self) -> Samples:
        """The measured computation time of every reply (s)."""
        return self.block.responder.compute

    def close(self) -> None:
        """Stop the block and wait for its thread."""
        self.block.stop()
        self.thread.join(timeout=5)
