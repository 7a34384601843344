"""BeamNG's three coupling debug logs, same file names and columns, written in blocks.

Rows are buffered in a numpy block and appended to the CSV a block at a time, so logging a
2000 Hz run costs little; ``close`` writes what is buffered, and a file only ever holds whole
rows, so the logs are complete after a normal end, Ctrl-C or SIGTERM.
"""

from __future__ import annotations

from pathlib import Path
from typing import IO

import numpy as np

from vcosim.tight.protocol import CONTROLLER_SLOT_NAMES, SIM_SLOT_NAMES

SEND_LOG = "simulinkSendLog.csv"
RECEIVE_LOG = "simulinkReceiveLog.csv"
STEPS_LOG = "simulinkPhysicsStepsLog.csv"


class CsvBlockWriter:
    """Appends rows of floats to a CSV file through a fixed-size numpy block."""

    def __init__(self, path: Path, header: tuple[str, ...], block_rows: int = 4096) -> None:
        self.path = path
        self._file: IO[str] | None = path.open("w", encoding="ascii", newline="\n")
        self._file.write(",".join(header) + "\n")
        self._file.flush()
        self._block = np.empty((block_rows, len(header)))
        self._rows = 0
        self.written = 0

    def add(self, time: float, values: np.ndarray | None = None) -> None:
        """Buffer one row: a time, then the values."""
        row = self._block[self._rows]
        row[0] = time
        if values is not None:
            row[1:] = values
        self._rows += 1
        if self._rows == len(self._block):
            self.flush()

    def flush(self) -> None:
        """Write the buffered rows."""
        if self._file is None or self._rows == 0:
            return
        np.savetxt(self._file, self._block[: self._rows], delimiter=",", fmt="%.17g")
        self._file.flush()
        self.written += self._rows
        self._rows = 0

    def close(self) -> None:
        """Write what is buffered and close (safe twice)."""
        if self._file is not None:
            self.flush()
            self._file.close()
            self._file = None


class DebugLog:
    """The send, receive and physics-step logs of one coupled run, in one folder."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.send = CsvBlockWriter(self.folder / SEND_LOG, ("time", *SIM_SLOT_NAMES))
        self.receive = CsvBlockWriter(self.folder / RECEIVE_LOG, ("time", *CONTROLLER_SLOT_NAMES))
        self.steps = CsvBlockWriter(self.folder / STEPS_LOG, ("time",))

    def close(self) -> None:
        """Flush and close all three files (safe twice)."""
        for writer in (self.send, self.receive, self.steps):
            writer.close()
