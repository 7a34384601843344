"""BeamNG's three coupling debug logs, same file names and columns, and vcosim's events log.

The logs exist to measure timing, so logging must not disturb it: during the run rows go to
a binary side file a block at a time (a memory copy and one write), and ``close`` turns them
into the CSV (written to a temporary name, then renamed: a CSV is never half-written). A
normal end, Ctrl-C and SIGTERM all pass through ``close``; after a hard kill the binary
``.part`` file still holds every whole row.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO

import numpy as np

from vcosim.tight.protocol import CONTROLLER_SLOT_NAMES, SIM_SLOT_NAMES

SEND_LOG = "simulinkSendLog.csv"
RECEIVE_LOG = "simulinkReceiveLog.csv"
STEPS_LOG = "simulinkPhysicsStepsLog.csv"
EVENTS_LOG = "vcosimCouplingEvents.csv"
EVENTS_HEADER = ("time", "event", "id", "largest", "blocking")


class Event:
    """Event codes of the events log: what the coupling dropped or gave up on."""

    STALE = 1  # a reply with an id below the largest applied, dropped
    DUPLICATE = 2  # a reply with the id of the largest applied (> 0), dropped
    STARTUP = 3  # a reply with id <= 0 while nothing was applied yet: not applied
    TIMEOUT = 4  # a blocking receive gave up; send counter and largest id reset


class RowLog:
    """Rows of floats: binary while running, one CSV (header, then rows) when closed."""

    def __init__(self, path: Path, header: tuple[str, ...], block_rows: int = 4096) -> None:
        self.path = path
        self.header = header
        self.part = path.with_name(path.name + ".part")
        self._raw: IO[bytes] | None = self.part.open("wb")
        self._block = np.empty((block_rows, len(header)))
        self._rows = 0

    def add(self, time: float, values: np.ndarray | None = None) -> None:
        """Buffer one row: a time, then the values."""
        row = self._block[self._rows]
        row[0] = time
        if values is not None:
            row[1:] = values
        self._rows += 1
        if self._rows == len(self._block):
            self._spill()

    def _spill(self) -> None:
        if self._raw is not None and self._rows:
            self._block[: self._rows].tofile(self._raw)
            self._rows = 0

    def close(self) -> None:
        """Write the CSV from every row logged, then drop the binary file (safe twice)."""
        if self._raw is None:
            return
        self._spill()
        self._raw.close()
        self._raw = None
        width = len(self.header)
        rows = np.fromfile(self.part)
        rows = rows[: len(rows) // width * width].reshape(-1, width)
        temporary = self.path.with_name(self.path.name + ".tmp")
        with temporary.open("w", encoding="ascii", newline="\n") as out:
            out.write(",".join(self.header) + "\n")
            np.savetxt(out, rows, delimiter=",", fmt="%.17g")
        os.replace(temporary, self.path)
        self.part.unlink()


class DebugLog:
    """The send, receive, physics-step and events logs of one coupled run, in one folder.

    The events log holds dropped replies and timeouts, which BeamNG's files cannot show: its
    receive log holds only applied replies.
    """

    def __init__(
        self,
        folder: str | Path,
        send_names: tuple[str, ...] = SIM_SLOT_NAMES,
        receive_names: tuple[str, ...] = CONTROLLER_SLOT_NAMES,
    ) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.send = RowLog(self.folder / SEND_LOG, ("time", *send_names))
        self.receive = RowLog(self.folder / RECEIVE_LOG, ("time", *receive_names))
        self.steps = RowLog(self.folder / STEPS_LOG, ("time",))
        self.events = RowLog(self.folder / EVENTS_LOG, EVENTS_HEADER, block_rows=256)

    def close(self) -> None:
        """Flush and close all four files (safe twice)."""
        for writer in (self.send, self.receive, self.steps, self.events):
            writer.close()
