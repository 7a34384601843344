"""The face contract: what the simulation host calls on everything attached to it.

A face (the tight-coupling endpoint, the contract server, a bus module, a recorder, a
sweep's probe) subclasses ``Face`` and overrides the hooks it needs; the others do nothing.
The host calls, in this order: ``start`` once before the first step, ``before_step`` and
``after_step`` around every physics step (around a run of steps where every face's
``quiet_steps`` allows it), ``on_frame`` after every frame, then ``close`` (safe twice) and
``report``. A face whose hooks around the step are the base's costs the hot
loop nothing: the host calls only the hooks a face overrides.

Faces never reach into each other; figures they share go through ``sim.live``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from vcosim.reports import Report

if TYPE_CHECKING:
    from vcosim.sim.simulation import Simulation

COUPLING = "coupling"
"""The name of a lone car's coupling endpoint; a world's are ``coupling:VEHICLE``."""


def coupling_name(vehicle: str | None = None) -> str:
    """The face name of the coupling endpoint serving ``vehicle`` (None: the lone car)."""
    return COUPLING if vehicle is None else f"{COUPLING}:{vehicle}"


class Face:
    """The base of every face: no-op hooks, overridden where a face has work to do.

    ``kind`` names what the face is (``"coupling"``, ``"contracts"``, ``"bus"``, ...), so the
    host finds its couplings by kind, not by parsing names.
    """

    kind: ClassVar[str] = "face"
    quiet: bool = True
    """False once ``start`` knows ``quiet_steps`` would answer 1 at every step of the run (a
    coupling with a message every step): the host then steps one by one without asking."""

    def start(self, sim: Simulation) -> None:
        """Called once before the first step (open sockets, files; take first samples)."""

    def before_step(self, sim: Simulation) -> None:
        """Called before every physics step (apply inputs that are due)."""

    def after_step(self, sim: Simulation) -> None:
        """Called after every physics step (sample, send)."""

    def on_frame(self, sim: Simulation) -> None:
        """Called after every frame (a pacer's batch of steps)."""

    def quiet_steps(self, sim: Simulation) -> int:
        """After this step's ``before_step``: steps (this one first) with nothing to do between.

        The host runs that many physics steps in one compiled call when every face with step
        hooks allows it, then calls ``after_step`` once: a face that sends every few steps
        and only then has work (the contract server in lock-step) saves the hooks in between.
        1, the default: the hooks around every step.
        """
        return 1

    def advance(self, sim: Simulation, steps: int) -> int:
        """Run the ``steps`` physics steps ``quiet_steps`` agreed on, in place of the host.

        The host calls this instead of stepping when the face overrides it and is its one face
        with step hooks (``Simulation.stepper``): a face that waits for a peer and must answer
        the moment the steps end (the contract server in lock-step) fuses its wait, the steps
        and its send in one compiled call, calling its own ``after_step`` and ``before_step``
        between them as the host would. Returns the steps run (1 to ``steps``).
        """
        sim.body.run(steps)
        return steps

    def report(self) -> Report | None:
        """What the face did, once the run is over (None: nothing to say)."""
        return None

    def close(self) -> None:
        """Release what the face holds; safe to call twice."""


HOOKS = ("before_step", "after_step", "on_frame")
"""The hooks the host calls in its loop, so only those a face overrides (``overrides``)."""


def overrides(face: Face, hook: str) -> bool:
    """True when ``face``'s class defines ``hook`` itself (not the base's no-op)."""
    return getattr(type(face), hook) is not getattr(Face, hook)
