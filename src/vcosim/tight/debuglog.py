"""BeamNG's three coupling debug logs, same file names and columns.

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
    """The send, receive and physics-step logs of one coupled run, in one folder."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.send = RowLog(self.folder / SEND_LOG, ("time", *SIM_SLOT_NAMES))
        self.receive = RowLog(self.folder / RECEIVE_LOG, ("time", *CONTROLLER_SLOT_NAMES))
        self.steps = RowLog(self.folder / STEPS_LOG, ("time",))

    def close(self) -> None:
        """Flush and close all three files (safe twice)."""
        for writer in (self.send, self.receive, self.steps):
            writer.close()
