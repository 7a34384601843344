"""How a world calls its physics kernel: compiled entries, on one thread or numba's, the faster.

Two costs decide how fast a world steps beside the physics itself:

- **Dispatch.** numba's dispatcher types every argument of every call; for the parameter
  records (a field per parameter) that takes ~9 us, more than the step of a few cars, and a
  coupled world calls the kernel every step. The entries compiled for the world's arrays are
  looked up once and called directly while the arrays are the ones they were bound to.
- **Threads.** The serial and the threaded kernel step every vehicle identically (vehicles are
  independent), so choosing between them changes speed, never results. Whether waking numba's
  threads for a call of a driver period's steps pays depends on the world's size and on how
  busy the machine is, which changes during a run: the stepper times both now and then
  (``TRIAL`` calls each, taking turns call by call so that a burst of load elsewhere slows
  both) and uses the faster until the next trial. Trials come every ``CYCLE`` calls, and
  ever more rarely (up to ``LONGEST_CYCLE``) while they keep choosing the same kernel, and a
  trial ends at the first turn that shows one kernel twice as fast: a kernel far slower for
  the moment (threads waiting for a core on a busy machine) costs little to keep trying.
"""

from __future__ import annotations

import time
from operator import is_
from typing import Any

import numba
import numpy as np

from vcosim.vehicle.model import advance_each, advance_each_serial

PARALLEL_FROM = 2
"""Vehicles from which the threaded kernel is tried at all (a lone vehicle has nothing to
share out): on an idle 2-core machine the threads already pay at 10 cars (a ring of 10 IDM
cars ran 39× real time on one thread, 48–68× with the trials), on a busy one they lose."""
TRIAL = 6  # calls of each kernel per trial
CYCLE = 256  # kernel calls from one trial to the next (~5000 steps) after a change of kernel
LONGEST_CYCLE = 16 * CYCLE  # ... doubling up to this while trials keep the same one


class Stepper:
    """Calls the kernel for a world's arrays: ``stepper(arrays, n)`` steps every vehicle ``n``.

    ``arrays`` are (states, inputs, params, outputs, height, friction, grid).
    """

    def __init__(self, arrays: tuple[np.ndarray, ...]) -> None:
        self.arrays = arrays
        vehicles = arrays[0].shape[0]
        threaded = vehicles >= PARALLEL_FROM and numba.get_num_threads() > 1
        self.kernels: list[Any] = [advance_each_serial, advance_each][: 2 if threaded else 1]
        types = (*(numba.typeof(a) for a in arrays), numba.int64)
        self.entries: list[Any] = [kernel.compile(types) for kernel in self.kernels]
        self.choice = 0  # index into kernels: the one in use between trials
        self.calls = 0
        self.trial_at = 0  # the call the next trial begins with
        self.cycle = CYCLE
        self.spent = [0.0, 0.0]  # seconds and steps of each kernel in the current trial
        self.steps = [0, 0]

    @property
    def threaded(self) -> bool:
        """True while the threaded kernel is the one in use."""
        return self.choice == 1

    def __call__(self, arrays: tuple[np.ndarray, ...], n: int) -> None:
        """Step every vehicle ``n`` steps with the kernel in use, or whose turn it is in a trial."""
        if not all(map(is_, arrays, self.arrays)):  # replaced by hand: let numba type them
            self.kernels[self.choice](*arrays, n)
            return
        if len(self.entries) == 1:
            self.entries[0](*arrays, n)
            return
        phase = self.calls - self.trial_at
        self.calls += 1
        if phase < 0:
            self.entries[self.choice](*arrays, n)
            return
        k = phase % 2  # the serial kernel's turn, then the threaded one's
        start = time.perf_counter()
        self.entries[k](*arrays, n)
        self.spent[k] += time.perf_counter() - start
        self.steps[k] += n
        if phase % 2 == 0:
            return
        serial, threads = (t / max(m, 1) for t, m in zip(self.spent, self.steps, strict=True))
        clear = threads > 2.0 * serial or serial > 2.0 * threads
        if clear or phase == 2 * TRIAL - 1:
            choice = 1 if threads < serial else 0
            same = choice == self.choice
            self.cycle = min(2 * self.cycle, LONGEST_CYCLE) if same else CYCLE
            self.choice, self.trial_at = choice, self.calls + self.cycle
            self.spent, self.steps = [0.0, 0.0], [0, 0]
