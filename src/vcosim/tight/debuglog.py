"""BeamNG's three coupling debug logs, same file names and columns, and vcosim's events log.

The logs exist to measure timing, so logging must not disturb it, and they must survive the
run being killed. During the run each log is a NumPy ``.npy`` file (``simulinkSendLog.npy``;
one record per row, its fields named as the CSV's columns) to which rows go a block at a time
(a memory copy and one write) and at least every second; the row count in its header follows
each write. So at any instant the file on disk is what ``numpy.load`` and ``vcosim analyze``
read, up to the last write, even after ``kill -9``.

``close`` then writes BeamNG's CSV files from them. Formatting text costs about a microsecond
per value (a 4.5 M-step run holds ~50 M values), and a program being stopped is killed ~10 s
after SIGTERM: so after Ctrl-C or SIGTERM, logs of more than ``CSV_AT_CLOSE`` values (about
25 s of a coupled run) keep their ``.npy`` form, which ``vcosim analyze`` reads as it reads
the CSVs and ``write_csv(folder)`` turns into CSVs whenever asked. A normal end always writes
the CSVs. A CSV is written to a temporary name and renamed, and only then is its ``.npy``
removed: at no instant is a log only half there.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from vcosim.interrupts import interrupted
from vcosim.tight.protocol import CONTROLLER_SLOT_NAMES, SIM_SLOT_NAMES

log = logging.getLogger("vcosim.tight")

SEND_LOG = "simulinkSendLog.csv"
RECEIVE_LOG = "simulinkReceiveLog.csv"
STEPS_LOG = "simulinkPhysicsStepsLog.csv"
EVENTS_LOG = "vcosimCouplingEvents.csv"
EVENTS_HEADER = ("time", "event", "id", "largest", "blocking")
LOG_NAMES = (STEPS_LOG, SEND_LOG, RECEIVE_LOG, EVENTS_LOG)
FLUSH_SECONDS = 1.0  # rows reach the file at least this often (s of the logs' clock)
CSV_AT_CLOSE = 1_000_000  # values: more would keep a stopping program waiting (~1 µs each)


class Event:
    """Event codes of the events log: what the coupling dropped or gave up on."""

    STALE = 1  # a reply with an id below the largest applied, dropped
    DUPLICATE = 2  # a reply with the id of the largest applied (> 0), dropped
    STARTUP = 3  # a reply with id <= 0 while nothing was applied yet: not applied
    TIMEOUT = 4  # a blocking receive gave up; send counter and largest id reset


def binary_path(csv_path: Path) -> Path:
    """Where a log's rows are while its run goes on: the CSV's name with ``.npy``."""
    return csv_path.with_suffix(".npy")


def row_dtype(header: Iterable[str]) -> np.dtype:
    """One float64 field per column, named as the column (a repeated name gets ``~2``...)."""
    names: list[str] = []
    for name in header:
        unique, n = name, 1
        while unique in names:
            n += 1
            unique = f"{name}~{n}"
        names.append(unique)
    return np.dtype([(name, "<f8") for name in names])


def _npy_header(dtype: np.dtype, rows: int) -> bytes:
    """An ``.npy`` header whose length does not depend on ``rows``: rewritten in place."""
    text = f"{{'descr': {dtype.descr!r}, 'fortran_order': False, 'shape': ({rows:20d},), }}"
    version, length_bytes = (b"\x01\x00", 2) if len(text) < 60_000 else (b"\x02\x00", 4)
    preamble = 6 + 2 + length_bytes
    size = -(-(preamble + len(text) + 1) // 64) * 64  # header and data aligned on 64 bytes
    text = text.ljust(size - preamble - 1) + "\n"
    return b"\x93NUMPY" + version + len(text).to_bytes(length_bytes, "little") + text.encode()


def read_rows(path: Path) -> tuple[tuple[str, ...], np.ndarray, int]:
    """The column names, the whole rows and the bytes of a torn last row of a ``.npy`` log.

    Rows are counted from the file's size, not its header: a run killed between writing rows
    and counting them in the header loses none.

    Raises:
        ValueError: not an ``.npy`` file of float64 rows.
    """
    with path.open("rb") as stream:
        major, _ = np.lib.format.read_magic(stream)
        read_header = (
            np.lib.format.read_array_header_1_0
            if major == 1
            else np.lib.format.read_array_header_2_0
        )
        shape, _, dtype = read_header(stream, max_header_size=1 << 24)
        offset = stream.tell()
    if dtype.names:
        names = tuple(dtype.names)
        if any(dtype[name] != np.dtype("<f8") for name in names):
            raise ValueError("its columns are not all float64")
    elif dtype == np.dtype("<f8") and len(shape) in (1, 2):
        names = tuple(f"column {i + 1}" for i in range(shape[1] if len(shape) == 2 else 1))
    else:
        raise ValueError(f"its rows are {dtype}, not float64")
    width = len(names)
    data_bytes = path.stat().st_size - offset
    rows = data_bytes // (8 * width)
    data = np.fromfile(path, dtype="<f8", count=rows * width, offset=offset)
    return names, data.reshape(rows, width), data_bytes - rows * 8 * width


class FlushSchedule:
    """When the logs of one run next put their rows on disk: all together, every second."""

    def __init__(self, every: float = FLUSH_SECONDS) -> None:
        self.every = every
        self.due = every
        self.logs: list[RowLog] = []

    def flush(self, now: float) -> None:
        """Write every log's rows; the next flush is ``every`` seconds after ``now``."""
        for row_log in self.logs:
            row_log.flush()
        self.due = now + self.every


class RowLog:
    """Rows of floats in a ``.npy`` file as the run goes; a CSV (header, rows) on request.

    ``add`` takes the time first, on the clock that also schedules the flushes.
    """

    def __init__(
        self,
        path: Path,
        header: tuple[str, ...],
        block_rows: int = 4096,
        schedule: FlushSchedule | None = None,
    ) -> None:
        self.path = path
        self.header = header
        self.binary = binary_path(path)
        self.dtype = row_dtype(header)
        self.schedule = schedule if schedule is not None else FlushSchedule()
        self.schedule.logs.append(self)
        self._block = np.empty((block_rows, len(header)))
        self._rows = 0
        self.rows_written = 0
        self._fd: int | None = os.open(self.binary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
        self._header_size = len(_npy_header(self.dtype, 0))
        os.write(self._fd, _npy_header(self.dtype, 0))

    def add(self, time: float, values: np.ndarray | None = None) -> None:
        """Buffer one row: a time, then the values."""
        row = self._block[self._rows]
        row[0] = time
        if values is not None:
            row[1:] = values
        self._rows += 1
        if self._rows == len(self._block):
            self.flush()
        if time >= self.schedule.due:
            self.schedule.flush(time)

    def flush(self) -> None:
        """Append the buffered rows to the file, then count them in its header."""
        if self._fd is None or not self._rows:
            return
        data = self._block[: self._rows].tobytes()
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]
        self.rows_written += self._rows
        self._rows = 0
        os.pwrite(self._fd, _npy_header(self.dtype, self.rows_written), 0)

    @property
    def values(self) -> int:
        """How many values the log holds (rows × columns)."""
        return (self.rows_written + self._rows) * len(self.header)

    def close(self) -> None:
        """Write the last rows and close the ``.npy`` file (safe twice)."""
        if self._fd is None:
            return
        self.flush()
        os.close(self._fd)
        self._fd = None

    def write_csv(self) -> None:
        """The CSV from the ``.npy`` file (closed first), which is then removed."""
        self.close()
        write_csv_file(self.binary, self.path)


def write_csv_file(binary: Path, csv_path: Path) -> int:
    """Write a log's rows from its ``.npy`` file as CSV, then remove the ``.npy`` file.

    Returns the number of rows. A torn last row (a killed run) is left out.
    """
    header, table, _ = read_rows(binary)
    temporary = csv_path.with_name(csv_path.name + ".tmp")
    try:
        with temporary.open("w", encoding="ascii", newline="\n") as out:
            out.write(",".join(header) + "\n")
            np.savetxt(out, table, delimiter=",", fmt="%.17g")
        os.replace(temporary, csv_path)
    except BaseException:  # an interrupt, a full disk: the .npy file stays, whole
        temporary.unlink(missing_ok=True)
        raise
    binary.unlink()
    return len(table)


def write_csv(folder: str | Path) -> list[Path]:
    """BeamNG's CSV files from the ``.npy`` logs a long (or killed) run left in ``folder``.

    Returns the CSV files written (none when the folder has no ``.npy`` log).
    """
    folder = Path(folder)
    written = []
    for name in LOG_NAMES:
        binary = binary_path(folder / name)
        if binary.is_file():
            write_csv_file(binary, folder / name)
            written.append(folder / name)
    return written


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
        schedule = FlushSchedule()
        self.send = RowLog(self.folder / SEND_LOG, ("time", *send_names), schedule=schedule)
        self.receive = RowLog(
            self.folder / RECEIVE_LOG, ("time", *receive_names), schedule=schedule
        )
        self.steps = RowLog(self.folder / STEPS_LOG, ("time",), schedule=schedule)
        self.events = RowLog(
            self.folder / EVENTS_LOG, EVENTS_HEADER, block_rows=256, schedule=schedule
        )
        self._closed = False

    @property
    def logs(self) -> tuple[RowLog, ...]:
        """The four logs, steps first."""
        return (self.steps, self.send, self.receive, self.events)

    def close(self) -> None:
        """Write the last rows, then BeamNG's CSVs, unless stopping and that would be slow.

        After Ctrl-C or SIGTERM (``vcosim.interrupts.interrupted``) CSVs of more than
        ``CSV_AT_CLOSE`` values are not written: the ``.npy`` files stay, and one line says so.
        An interrupt while the CSVs are written stops that, keeping the ``.npy`` files, and
        goes on. Safe twice.
        """
        if self._closed:
            return
        self._closed = True
        values = sum(row_log.values for row_log in self.logs)
        for row_log in self.logs:
            row_log.close()
        rows = sum(row_log.rows_written for row_log in self.logs)
        if values > CSV_AT_CLOSE and interrupted():
            log.info(
                "debug logs: %d rows kept as .npy files in %s (the program is stopping: no "
                "time to write them as CSV); vcosim analyze reads them, and "
                "vcosim.tight.debuglog.write_csv(folder) writes BeamNG's CSV files",
                rows,
                self.folder,
            )
            return
        if values > CSV_AT_CLOSE:
            log.info("debug logs: writing %d rows as CSV in %s", rows, self.folder)
        for row_log in self.logs:
            row_log.write_csv()
