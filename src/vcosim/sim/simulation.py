"""The simulation host: a vehicle (or a world of them), a pacer, and faces attached through hooks.

Every interface (tight coupling, contracts, bus, recorders) is a *face*: a ``Face``
(``vcosim.sim.face``) overriding the hooks it needs of ``start(sim)``, ``before_step(sim)``,
``after_step(sim)``, ``on_frame(sim)``, ``close()`` and ``report()``. The host calls them;
faces never reach into each other. ``sim.couplings()`` finds the coupling endpoints by kind.

Live figures are shared through the host instead: ``sim.live`` is a small dict where faces
publish figures as they run (name → float) and other faces read them. The host writes
``realtime_factor`` (simulated time / wall time since the run started, each frame); the
tight-coupling endpoint writes ``coupling_connected`` (0/1) and ``coupling_latency_ms`` (wall
time from sending a message to taking its reply, for the last reply applied). A reader must
treat a missing key as "not known" (e.g. no coupling attached).

A host runs one vehicle or a ``World`` of many. ``sim.vehicle`` is always one vehicle, seen as
a ``VehicleView`` (with a world: its ego; the host steps ``sim.body``), so single-vehicle faces
work unchanged; ``sim.vehicles`` names them all (``{"ego": vehicle}`` for a lone car) and
``sim.world`` is the world or None.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NoReturn, TypeVar, cast

from vcosim.errors import ConfigError, UnknownNameError
from vcosim.reports import Report
from vcosim.sim.face import COUPLING, HOOKS, Face, overrides
from vcosim.sim.pacing import Pacer, PacingMode
from vcosim.vehicle import Vehicle, VehicleView
from vcosim.world.world import World

if TYPE_CHECKING:
    from vcosim.world.world import WorldReport

Hook = Callable[["Simulation"], None]
F = TypeVar("F", bound=Face)


@dataclass
class RunReport(Report):
    """What a run achieved: simulated and wall time, real-time factor, frames, face reports.

    ``faces`` holds each face's own report under the face's name (faces with nothing to
    report are left out).
    """

    sim_time: float
    wall_time: float
    steps: int
    frames: dict[str, float]
    faces: dict[str, Report] = field(default_factory=dict)
    interrupted: bool = False
    world: WorldReport | None = None  # when the host ran a world

    @property
    def realtime_factor(self) -> float:
        """Simulated seconds per wall-clock second."""
        return self.sim_time / self.wall_time if self.wall_time > 0 else float("inf")

    def to_dict(self) -> dict[str, object]:
        """A JSON-friendly summary: the run's figures, the frames', and each face's report."""
        return {
            "sim_time": self.sim_time,
            "wall_time": self.wall_time,
            "steps": self.steps,
            "realtime_factor": self.realtime_factor,
            "interrupted": self.interrupted,
            **self.frames,
            **{name: face.to_dict() for name, face in self.faces.items()},
            **({} if self.world is None else {"world": self.world.to_dict()}),
        }


class NoVehicle:
    """``sim.vehicle`` in a world of objects only: whatever a face reads of it says so."""

    def __getattr__(self, name: str) -> NoReturn:
        raise ConfigError(
            ["the world has no vehicle (every entity moves kinematically): a face that serves "
             "one (a coupling, the bus, a vehicle's plot) has none to serve"],
            "world",
        )  # fmt: skip


class Simulation:
    """Steps a vehicle or a world at 0.5 ms under a pacer and calls the attached faces' hooks."""

    vehicle_name: str | None = None
    """The vehicle a face attached to one vehicle serves (``VehicleScope``); None: the host's."""

    def __init__(self, vehicle: Vehicle | World | None = None, pacer: Pacer | None = None) -> None:
        self.body: Vehicle | World
        """What the host steps: the vehicle, or the world."""
        self.world: World | None
        self.vehicle: VehicleView
        """The vehicle single-vehicle faces serve: the lone car, or the world's ego."""
        self.vehicles: dict[str, VehicleView]
        if isinstance(vehicle, World):
            self.body = self.world = vehicle
            self.vehicles = vehicle.vehicles
            # a world of objects only has no vehicle: a face that reads one is told so
            self.vehicle = vehicle.vehicle if vehicle.ego else cast(VehicleView, NoVehicle())
        else:
            self.body = self.vehicle = vehicle if vehicle is not None else Vehicle()
            self.world, self.vehicles = None, {"ego": self.vehicle}
        self.pacer = pacer if pacer is not None else Pacer(PacingMode.fast)
        self.faces: dict[str, Face] = {}
        self._scopes: dict[str, Simulation] = {}
        self._serves: dict[str, str | None] = {}
        self._before: list[Hook] = []
        self._after: list[Hook] = []
        self._frame: list[Hook] = []
        self._quiet: list[tuple[Face, Callable[[Simulation], int]]] = []  # faces' quiet_steps
        self._all_quiet = True
        self.wall_start = 0.0
        self._stopping = False
        self.live: dict[str, float] = {}
        """Live figures faces publish and read (see the module docstring)."""

    @property
    def dt(self) -> float:
        """The physics step (s)."""
        return self.body.dt

    @property
    def time(self) -> float:
        """Simulation time (s)."""
        return self.body.time

    def attach(self, name: str, face: F, *, vehicle: str | None = None) -> F:
        """Attach a face; its hooks run from the next step on. Returns the face.

        With ``vehicle`` the face serves that vehicle of the world: its hooks get a
        ``VehicleScope``, the host as it is but with ``.vehicle`` that vehicle.
        """
        if not isinstance(face, Face):
            raise TypeError(
                f"face {name!r}: a {type(face).__name__} is not a vcosim.sim.face.Face "
                "(subclass it and override the hooks you need)"
            )
        view = self
        if vehicle is not None:
            if vehicle not in self.vehicles:
                raise UnknownNameError("vehicle", vehicle, tuple(self.vehicles))
            # a scope reads as the host in every other attribute: a face sees no difference
            view = self._scopes[name] = cast("Simulation", VehicleScope(self, vehicle))
        self.faces[name] = face
        self._serves[name] = vehicle
        for hook_name, hooks in zip(HOOKS, (self._before, self._after, self._frame), strict=True):
            if overrides(face, hook_name):
                hook: Hook = getattr(face, hook_name)
                hooks.append(hook if view is self else _scoped(hook, view))
        if overrides(face, "before_step") or overrides(face, "after_step"):
            if overrides(face, "quiet_steps"):
                quiet = face.quiet_steps
                self._quiet.append((face, quiet if view is self else lambda _: quiet(view)))
            else:
                self._all_quiet = False
        return face

    def stepper(self) -> Face | None:
        """The face that runs the physics steps itself (``Face.advance``), or None.

        Only a face the host serves directly, overriding ``advance`` and ``quiet_steps``, and
        the one face with step hooks: nothing else must run between its wait and its steps.
        """
        stepping = [
            name
            for name, face in self.faces.items()
            if overrides(face, "before_step") or overrides(face, "after_step")
        ]
        if len(stepping) != 1 or self._serves[stepping[0]] is not None:
            return None
        face = self.faces[stepping[0]]
        fused = overrides(face, "advance") and overrides(face, "quiet_steps")
        return face if fused else None

    def couplings(self) -> dict[str | None, Face]:
        """The coupling endpoints by the vehicle they serve (None: the lone car, or the host's)."""
        return {
            self._serves[name]: face for name, face in self.faces.items() if face.kind == COUPLING
        }

    def run(
        self, duration: float | None = None, on_progress: Callable[[float], None] | None = None
    ) -> RunReport:
        """Run for ``duration`` simulated seconds (None: until interrupted); close every face.

        Ctrl-C (or SIGTERM turned into KeyboardInterrupt by the caller) ends the run cleanly:
        faces are closed, so their logs are complete, and the report says it was interrupted.
        """
        body, world = self.body, self.world
        end_step = None if duration is None else body.step_index + round(duration / self.dt)
        start_step = body.step_index
        interrupted = False
        self._stopping = False
        before, after, frame = self._before, self._after, self._frame
        stepper = self.stepper()
        advance = None if stepper is None else stepper.advance
        live, start_time = self.live, body.time
        try:
            for name, face in self.faces.items():  # inside try: a face that fails to start
                face.start(self._scopes.get(name, self))  # still gets every face closed
            quiet = [q for _, q in self._quiet]  # (empty: a hooked face never is quiet)
            if not self._all_quiet or not all(face.quiet for face, _ in self._quiet):
                quiet = []
            self.wall_start = time.perf_counter()
            self.pacer.start(body.time)
            while (end_step is None or body.step_index < end_step) and not self._stopping:
                n = self.pacer.steps_for_next_frame(body.step_index)
                if end_step is not None:
                    n = min(n, end_step - body.step_index)
                if before or after:
                    while n > 0:
                        for hook in before:
                            hook(self)
                        k = n if quiet else 1
                        for q in quiet:
                            k = min(k, q(self))
                        if advance is not None:
                            k = advance(self, k)
                        elif k > 1:
                            body.run(k)
                        else:
                            body.step()
                        n -= max(k, 1)
                        for hook in after:
                            hook(self)
                        if world is not None and world.stop_requested:
                            break
                else:
                    body.run(n)
                if world is not None and world.stop_requested:
                    self._stopping = True
                wall = time.perf_counter() - self.wall_start
                if wall > 0.0:
                    live["realtime_factor"] = (body.time - start_time) / wall
                for hook in frame:
                    hook(self)
                if on_progress is not None:
                    on_progress(body.time)
                self.pacer.end_frame()
                if self.pacer.stats.stopped_late:  # --on-late stop: a late frame ends the run
                    self._stopping = True
        except KeyboardInterrupt:
            interrupted = True
        finally:
            wall = time.perf_counter() - self.wall_start
            self.close()
        return RunReport(
            sim_time=(body.step_index - start_step) * self.dt,
            wall_time=wall,
            steps=body.step_index - start_step,
            frames=self.pacer.stats.summary(),
            faces={
                name: report
                for name, face in self.faces.items()
                if (report := face.report()) is not None
            },
            interrupted=interrupted,
            world=None if world is None else world.report(),
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
            face.close()


class VehicleScope:
    """The host as a face of one vehicle sees it: ``vehicle`` is that one, the rest is the host.

    A face written for one car (the coupling endpoint, the contract server) serves any
    vehicle of a world unchanged: attach it with ``sim.attach(name, face, vehicle=NAME)``.
    """

    def __init__(self, sim: Simulation, name: str) -> None:
        self.host = sim
        self.vehicle_name = name
        self.vehicle = sim.vehicles[name]

    def __getattr__(self, attr: str) -> object:
        return getattr(self.host, attr)


def _scoped(hook: Hook, view: Simulation) -> Hook:
    """``hook`` called with ``view`` instead of the host."""

    def call(_: Simulation) -> None:
        hook(view)

    return call
