"""A contract client's run on file: every port at every step (``vcosim connect --record``).

One CSV row per step: ``time`` (the block's local time), ``connection_status``, every output
field as the step function saw it, then every input field as the step left it (what was
sent). A field's column is its label (docs/contracts.md, "Ports"), one column per value for a
wider field (``wheel_speed[0]`` ...); a name already taken gets ``#2`` (a meta ``time`` field
is ``time#2``). Rows go to the file in blocks at least every second, so a long run does not
grow in memory and an interrupted one is complete to its last block.
"""

from __future__ import annotations

import io
import time
from pathlib import Path

import numpy as np

from vcosim.contracts.layout import BlockLayout, FieldSlot
from vcosim.errors import ConfigError


def port_columns(layout: BlockLayout) -> list[str]:
    """The recording's columns: time, status, the output fields, the input fields."""
    names = ["time", "connection_status"]
    for direction in ("to_client", "to_server"):
        fields = sorted(
            (
                f
                for c in (*layout.contracts, *layout.comm)
                if c.direction == direction
                for f in c.fields
            ),
            key=lambda f: f.flat,
        )
        names += [column for f in fields for column in _columns(f)]
    seen: dict[str, int] = {}
    unique = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        unique.append(name if seen[name] == 1 else f"{name}#{seen[name]}")
    return unique


def _columns(field: FieldSlot) -> list[str]:
    if field.width == 1:
        return [field.label]
    return [f"{field.label}[{k}]" for k in range(field.width)]


class PortLog:
    """Rows of a client's ports, written to a CSV file as the run goes (close it at the end).

    ``outputs`` and ``inputs`` are the block's flat arrays (slot 0: the status, the directive).
    """

    FLUSH_ROWS = 1024
    FLUSH_SECONDS = 1.0  # of wall time: an interrupted run loses at most this much

    def __init__(
        self, path: str | Path, layout: BlockLayout, outputs: np.ndarray, inputs: np.ndarray
    ) -> None:
        self.path = Path(path)
        if self.path.suffix.lower() != ".csv":
            raise ConfigError([f"--record: a .csv file, not {self.path.name!r}"], "recording")
        self.columns = port_columns(layout)
        self._outputs, self._inputs = outputs, inputs[1:]  # not the directive
        self._buffer = np.empty((self.FLUSH_ROWS, len(self.columns)))
        self._n = 0
        self.rows = 0
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file: io.BufferedWriter | None = self.path.open("wb")
        self._file.write((",".join(self.columns) + "\n").encode())
        self._flush_at = time.monotonic() + self.FLUSH_SECONDS

    def record(self, local_time: float) -> None:
        """Append the ports as they are now, at the block's ``local_time``."""
        row = self._buffer[self._n]
        row[0] = local_time
        n_out = len(self._outputs)
        row[1 : 1 + n_out] = self._outputs
        row[1 + n_out :] = self._inputs
        self._n += 1
        if self._n == self.FLUSH_ROWS or time.monotonic() >= self._flush_at:
            self._flush()

    def _flush(self) -> None:
        if self._file is not None and self._n:
            text = io.StringIO()
            np.savetxt(text, self._buffer[: self._n], delimiter=",", fmt="%.9g")
            self._file.write(text.getvalue().encode())
            self._file.flush()
            self.rows += self._n
            self._n = 0
        self._flush_at = time.monotonic() + self.FLUSH_SECONDS

    def close(self) -> None:
        """Write the last rows and close the file (safe twice)."""
        if self._file is not None:
            self._flush()
            self._file.close()
            self._file = None
