"""``SignalRecorder``: a face that samples every vehicle signal into a growing numpy buffer.

Attach it to a ``Simulation`` (``sim.attach("signals", SignalRecorder())``): it records one
row of ``sim.vehicle.outputs`` when the run starts and then every ``every`` physics steps
(default 20 = 10 ms). Code that steps a vehicle itself calls ``record(vehicle.outputs)``.
Rows are copied into a block-allocated array, so recording costs a counter per step and a
row copy per sample. ``write_csv`` writes ``time`` first, then every other signal.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from vcosim.vehicle import SIGNAL_NAMES

if TYPE_CHECKING:
    from vcosim.sim.simulation import Simulation

BLOCK_ROWS = 4096


def csv_header() -> list[str]:
    """``time`` first, then every other signal in ``SIGNAL_NAMES`` order."""
    return ["time", *(n for n in SIGNAL_NAMES if n != "time")]


def write_csv(path: str | Path, rows: np.ndarray) -> None:
    """Recorded rows (columns in ``SIGNAL_NAMES`` order) as a CSV with ``csv_header()``."""
    header = csv_header()
    order = [SIGNAL_NAMES.index(n) for n in header]
    np.savetxt(
        path, rows[:, order], delimiter=",", header=",".join(header), comments="", fmt="%.9g"
    )


class SignalRecorder:
    """Every vehicle signal, one row per ``every`` physics steps (a Simulation face)."""

    def __init__(self, every: int = 20) -> None:
        if every < 1:
            raise ValueError("every must be at least 1")
        self.every = every
        self._buffer = np.empty((BLOCK_ROWS, len(SIGNAL_NAMES)))
        self._n = 0
        self._countdown = every

    def start(self, sim: Simulation) -> None:
        """Record the state the run starts from; sample every ``every`` steps from here."""
        self.record(sim.vehicle.outputs)
        self._countdown = self.every

    def after_step(self, sim: Simulation) -> None:
        """Count the step; record a row every ``every`` steps."""
        self._countdown -= 1
        if self._countdown == 0:
            self._countdown = self.every
            self.record(sim.vehicle.outputs)

    def record(self, outputs: np.ndarray) -> None:
        """Append one row (a copy of ``outputs``, ordered as ``SIGNAL_NAMES``)."""
        if self._n == len(self._buffer):
            grown = np.empty((len(self._buffer) + BLOCK_ROWS, self._buffer.shape[1]))
            grown[: self._n] = self._buffer
            self._buffer = grown
        self._buffer[self._n] = outputs
        self._n += 1

    @property
    def rows(self) -> np.ndarray:
        """The rows recorded so far, one per sample, columns as ``SIGNAL_NAMES`` (a view)."""
        return self._buffer[: self._n]

    def column(self, name: str) -> np.ndarray:
        """One signal of the recorded rows."""
        return self.rows[:, SIGNAL_NAMES.index(name)]

    def write_csv(self, path: str | Path) -> None:
        """Write the rows as CSV: ``time`` first, then every other signal."""
        write_csv(path, self.rows)

    def report(self) -> dict[str, int]:
        """How many rows were recorded, and how often."""
        return {"rows": self._n, "every_steps": self.every}
