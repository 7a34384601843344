"""The demo's other core: kernels compiled ahead and the plot, in a process of their own.

On two cores the simulator's process is the demo's critical path: it compiles the vehicle
(on the first run, about 11 s of CPU on one core), runs, then writes. Meanwhile the
controller process only waits, and the second core idles. ``AheadProcess`` puts that core to
work: on the first run it compiles into numba's cache the kernels the vehicle's step calls
(``vcosim.vehicle.ahead``, 3 to 4 s of CPU, before the simulator's compiling reaches them)
and the coupling endpoint's (about 2 s), which the simulator then loads in a blink; on every
run it imports pyplot (a second of CPU) while the simulator prepares, then draws
``demo.png`` while the simulator writes the signals and the summary (half a second).

It is an accelerator, not a requirement: when it failed or is gone, the simulator compiles and
draws as it did without it.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import queue
from dataclasses import dataclass
from multiprocessing.queues import Queue
from pathlib import Path

from vcosim.arrays import FloatArray
from vcosim.errors import VcosimError
from vcosim.scenarios.harness import ORPHAN_CHECK, ChildLink, ChildProcess
from vcosim.scenarios.metrics import CouplingTiming

KERNELS_WAIT = 30.0
"""Seconds the simulator waits, once its vehicle is compiled, for the coupling's kernels from
the other process. Past that (a very busy machine) it compiles them itself: the same result."""
STOP_GRACE = 0.1
"""Seconds it gets to end after each request to stop (the harness's default is 5)."""
DRAWING_WAIT = 30.0
"""Seconds the simulator waits for the plot, once the run's rows were sent."""


@dataclass(frozen=True)
class PlotJob:
    """What ``plot_coupled`` draws: sent, pickled, from the simulator to the other process."""

    path: Path
    rows: FloatArray
    target: FloatArray
    timing: CouplingTiming
    rtf: float
    title: str

    def draw(self) -> None:
        """Draw and save the plot here (in whichever process calls it)."""
        from vcosim.scenarios.plots import plot_coupled

        plot_coupled(self.path, self.rows, self.target, self.timing, self.rtf, self.title)


def _ahead_main(link: ChildLink, compile_kernels: bool, jobs: Queue[PlotJob]) -> None:
    """Compile the kernels (then say ready), import pyplot, draw the one plot sent.

    Whatever fails here fails again in the simulator's process, which then says so as a
    command does: here it only leaves the work to it (no second report, no traceback).
    """
    if compile_kernels:
        with contextlib.suppress(Exception):  # (numba's errors, among others)
            from vcosim.tight.endpoint import SimulatorEndpoint
            from vcosim.vehicle.ahead import compile_step_callees

            compile_step_callees()  # first: the simulator's compiling needs them soonest
            SimulatorEndpoint.compile_ahead()
    link.ready()
    from vcosim.scenarios.plots import pyplot

    pyplot()  # imported while the simulator still compiles or loads its kernels
    while not link.stopping:
        try:
            job = jobs.get(timeout=ORPHAN_CHECK)
        except queue.Empty:
            continue
        try:
            job.draw()
        except Exception:  # (matplotlib's errors, a full disk): drawn there, or said there
            link.result(None)
        else:
            link.result(job.path)
        return


class AheadProcess(ChildProcess):
    """The other core's share of the demo (see the module): a context manager, stopped on exit.

    ``compile_kernels``: compile the vehicle step's and the coupling's kernels (the first
    run: numba's cache holds no vehicle kernel yet); otherwise it only imports pyplot and draws.
    """

    def __init__(self, compile_kernels: bool) -> None:
        self._jobs: Queue[PlotJob] = mp.get_context("spawn").Queue()
        super().__init__(_ahead_main, compile_kernels, self._jobs, name="demo's helper process")
        self._sent = False

    def stop(self, grace: float = STOP_GRACE) -> object:
        """Stop it without waiting out its interpreter's exit (seconds on a busy machine).

        Once the plot is saved it holds nothing, and before that nothing worth a wait: numba
        writes each cache file whole, under a name of its own until it is complete.
        """
        return super().stop(grace)

    def kernels_compiled(self, timeout: float = KERNELS_WAIT) -> bool:
        """Wait until the kernels are in numba's cache; False if they may not be."""
        try:
            self.ready(timeout)
        except VcosimError:  # it failed, ended, or is slow: the endpoint compiles them itself
            return False
        return True

    def draw(self, job: PlotJob) -> None:
        """Have the plot drawn there if it is still there, else here at once."""
        if self.pid is not None and self.exitcode is None and self.error is None:
            self._jobs.put(job)
            self._sent = True
        else:
            job.draw()

    def drawn(self, job: PlotJob, timeout: float = DRAWING_WAIT) -> None:
        """Wait until the plot is saved; draw it here if the other process could not."""
        if not self._sent:
            return
        self._sent = False
        with contextlib.suppress(VcosimError):  # (its error is kept in ``error``)
            if self.result(timeout) == job.path:
                return
        job.draw()
