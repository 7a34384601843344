"""The simulation host: one vehicle, a pacer, and the faces attached to it through hooks.

Every interface (tight coupling, contracts, bus, recorders) is a *face*: an object with any of
``start(sim)``, ``before_step(sim)``, ``after_step(sim)``, ``on_frame(sim)``, ``close()`` and
``report()``. The host calls them; faces never reach into each other.

Live figures are shared through the host instead: ``sim.live`` is a small dict where faces
publish figures as they run (name → float) and other faces read them. The host writes
``realtime_factor`` (simulated time / wall time since the run started, each frame); the
tight-coupling endpoint writes ``coupling_connected`` (0/1) and ``coupling_latency_ms`` (wall
time from sending a message to applying its reply, for the last reply applied). A reader must
treat a missing key as "not known" (e.g. no coupling attached).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from vcosim.reports import Report
from vcosim.sim.pacing import Pacer, PacingMode
from vcosim.vehicle import Vehicle

Hook = Callable[["Simulation"], None]


@dataclass
class RunReport(Report):
    """What a run achieved: simulated and wall time, real-time factor, frames, face reports.

    ``faces`` holds each face's own report (a ``Report``, or a dict from faces that still
    return one) under the face's name.
    """

    sim_time: float
    wall_time: float
    steps: int
    frames: dict[str, float]
    faces: dict[str, Any] = field(default_factory=dict)
    interrupted: bool = False

    @property
    def realtime_factor(self) -> float:
        """Simulated seconds per wall-clock second."""
        return self.sim_time / self.wall_time if self.wall_time > 0 else float("inf")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly summary: the run's figures, the frames', and each face's report."""
        return {
            "sim_time": self.sim_time,
            "wall_time": self.wall_time,
            "steps": self.steps,
            "realtime_factor": self.realtime_factor,
            "interrupted": self.interrupted,
            **self.frames,
            **{
                name: face.to_dict() if hasattr(face, "to_dict") else face
                for name, face in self.faces.items()
            },
        }


class Simulation:
    """Steps a vehicle at 0.5 ms under a pacer and calls the attached faces' hooks."""

    def __init__(self, vehicle: Vehicle | None = None, pacer: Pacer | None = None) -> None:
        self.vehicle = vehicle if vehicle is not None else Vehicle()
        self.pacer = pacer if pacer is not None else Pacer(PacingMode.fast)
        self.faces: dict[str, Any] = {}
        self._before: list[Hook] = []
        self._after: list[Hook] = []
        self._frame: list[Hook] = []
        self.wall_start = 0.0
        self._stopping = False
        self.live: dict[str, float] = {}
        """Live figures faces publish and read (see the module docstring)."""

    @property
    def dt(self) -> float:
        """The physics step (s)."""
        return self.vehicle.dt

    @property
    def time(self) -> float:
        """Simulation time (s)."""
        return self.vehicle.time

    def attach(self, name: str, face: Any) -> Any:
        """Attach a face; its hooks run from the next step on. Returns the face."""
        self.faces[name] = face
        for attr, hooks in (
            ("before_step", self._before),
            ("after_step", self._after),
            ("on_frame", self._frame),
        ):
            hook = getattr(face, attr, None)
            if hook is not None:
                hooks.append(hook)
        return face

    def run(
        self, duration: float | None = None, on_progress: Callable[[float], None] | None = None
    ) -> RunReport:
        """Run for ``duration`` simulated seconds (None: until interrupted); close every face.

        Ctrl-C (or SIGTERM turned into KeyboardInterrupt by the caller) ends the run cleanly:
        faces are closed, so their logs are complete, and the report says it was interrupted.
        """
        vehicle = self.vehicle
        end_step = None if duration is None else vehicle.step_index + round(duration / self.dt)
        start_step = vehicle.step_index
        interrupted = False
        self._stopping = False
        before, after, frame = self._before, self._after, self._frame
        live, start_time = self.live, vehicle.time
        try:
            for face in self.faces.values():  # inside try: a face that fails to start
                if hasattr(face, "start"):  # still gets every face closed
                    face.start(self)
            self.wall_start = time.perf_counter()
            self.pacer.start(vehicle.time)
            while (end_step is None or vehicle.step_index < end_step) and not self._stopping:
                n = self.pacer.steps_for_next_frame(vehicle.step_index)
                if end_step is not None:
                    n = min(n, end_step - vehicle.step_index)
                if before or after:
                    for _ in range(n):
                        for hook in before:
                            hook(self)
                        vehicle.step()
                        for hook in after:
                            hook(self)
                else:
                    vehicle.run(n)
                wall = time.perf_counter() - self.wall_start
                if wall > 0.0:
                    live["realtime_factor"] = (vehicle.time - start_time) / wall
                for hook in frame:
                    hook(self)
                if on_progress is not None:
                    on_progress(vehicle.time)
                self.pacer.end_frame()
        except KeyboardInterrupt:
            interrupted = True
        finally:
            wall = time.perf_counter() - self.wall_start
            self.close()
        return RunReport(
            sim_time=(vehicle.step_index - start_step) * self.dt,
            wall_time=wall,
            steps=vehicle.step_index - start_step,
            frames=self.pacer.stats.summary(),
            faces={
                name: face.report() for name, face in self.faces.items() if hasattr(face, "report")
            },
            interrupted=interrupted,
        )

    def stop(self) -> None:
        """Ask a running ``run`` to end after the current frame (from a hook or a callback)."""
        self._stopping = True

    @property
    def stopping(self) -> bool:
        """True once ``stop`` was asked for: faces that wait inside a step should give up."""
        return self._stopping

    def close(self) -> None:
        """Close every face (safe to call twice)."""
        for face in self.faces.values():
            if hasattr(face, "close"):
                face.close()
