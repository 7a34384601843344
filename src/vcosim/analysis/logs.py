"""Reading and checking the coupling debug logs (vcosim's or BeamNG's).

(Past 400 lines: the four CSV files' columns, how each is read and the checks across them belong
to one format; split, a column would be defined apart from its check.)

A run folder holds BeamNG's three CSV files, same names and columns whoever wrote them, and,
from vcosim, a fourth one (optional: BeamNG and older vcosim versions do not write it):

| file | one row per | columns |
| --- | --- | --- |
| ``simulinkSendLog.csv`` | sent message | 112: time, then the 111 values (id first) |
| ``simulinkReceiveLog.csv`` | applied reply | 65: time, then the 64 values (id first) |
| ``simulinkPhysicsStepsLog.csv`` | physics step | 1: the time the step began |
| ``vcosimCouplingEvents.csv`` | reply not applied, timeout | time, event, id, largest, blocking |

Times are seconds (vcosim: from the start of the run), one clock for all files. The events
log exists because the receive log holds only *applied* replies: it shows what the simulator
dropped and when it gave up. Event codes (``EVENT_CODES``): 1 stale reply dropped (id below
the largest applied), 2 duplicate reply dropped (id equal to the largest applied, > 0),
3 start-up reply not applied (id ≤ 0 while nothing was applied yet; in a blocking receive it
lets the next message go out), 4 timeout (a blocking receive gave up; the simulator reset its
send counter and largest applied id; ``id`` is the last id sent, ``largest`` the largest
applied before the reset). ``blocking`` is 1 for a reply taken by a blocking receive.

Reading rules:

- **Header.** A file may start with a header row or not (vcosim writes names, BeamNG may write
  none or its own names). The first non-blank row is a header if it does not parse as numbers.
  Its names are kept (``Table.header``) and usable as column names; a header with the wrong
  number of names is a problem like a data row with the wrong number of columns.
- Blank lines are skipped; Windows line ends (CRLF), a UTF-8 byte-order mark and one trailing
  comma per row are accepted; ``nan``, ``-nan``, ``nan(ind)`` (Lua/C on Windows) read as NaN.
- **Problems** are collected over all files, not stopped at the first: a missing file
  ("…/simulinkSendLog.csv: file not found"), a row with the wrong number of columns
  ("simulinkSendLog.csv line 57: 40 columns, expected 112"), a value that is not a number,
  a time that goes backwards, a non-finite time or id, a steps log without
  rows, an unknown event code. They are raised together as one ``vcosim.errors.ConfigError``
  whose ``source`` is the file (or the run folder when several files have problems). A
  missing events log is not a problem.

- **A run cut short.** A final line without an end of line — a writer stopped mid-row, e.g. a
  crash — is left out with a note (``Table.notes``, also logged as a warning): "line 1203: torn
  last row left out".
- **Binary logs.** vcosim writes each log as a NumPy ``.npy`` file while the run goes
  (``simulinkSendLog.npy``: one record per row, fields named as the columns) and turns it into
  the CSV when the run ends, unless the run is long (see ``vcosim.tight.debuglog``). A folder
  without a log's CSV is read from its ``.npy`` file: its rows are counted from the file's size
  (a killed run's header may count fewer), a torn last row is left out with a note; the names
  in its header set the columns as a CSV header does. Older versions left ``….csv.part`` files
  (raw rows, no names) when killed: those are read too, as rows of the standard layout.

``read_logs(folder)`` returns the logs as ``Table`` objects (named numpy columns) in a
``RunLogs`` tuple; ``events`` is None when the folder has no events log.

    >>> steps, sends, receives, events = read_logs("runs/coupled")
    >>> sends.time, sends.id, sends.values          # 1-D, 1-D, 2-D (111 columns, id first)
    >>> sends["groundspeed"], receives["throttle"]  # one column by its vcosim name
    >>> steps.time, events["event"], events.id, events["blocking"]
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np

from vcosim.errors import ConfigError
from vcosim.tight.debuglog import RECEIVE_LOG, SEND_LOG, STEPS_LOG, binary_path, read_rows
from vcosim.tight.protocol import CONTROLLER_SLOT_NAMES, SIM_SLOT_NAMES

SEND_NAMES: tuple[str, ...] = ("time", *SIM_SLOT_NAMES)  # 112
RECEIVE_NAMES: tuple[str, ...] = ("time", *CONTROLLER_SLOT_NAMES)  # 65
STEPS_NAMES: tuple[str, ...] = ("time",)
LOGS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (STEPS_LOG, STEPS_NAMES),
    (SEND_LOG, SEND_NAMES),
    (RECEIVE_LOG, RECEIVE_NAMES),
)
# Named here rather than imported from vcosim.tight.debuglog: analysis must read the files
# whatever version of the simulator wrote them (a test checks that the two names agree).
EVENTS_LOG = "vcosimCouplingEvents.csv"
EVENTS_NAMES: tuple[str, ...] = ("time", "event", "id", "largest", "blocking")
STALE, DUPLICATE, STARTUP, TIMEOUT = 1, 2, 3, 4
EVENT_CODES: dict[int, str] = {
    STALE: "stale reply dropped",
    DUPLICATE: "duplicate reply dropped",
    STARTUP: "start-up reply not applied",
    TIMEOUT: "timeout",
}
MAX_PROBLEMS_PER_FILE = 20  # further ones are counted, not listed
log = logging.getLogger("vcosim.analysis")
_NAN_SPELLINGS = ("-nan(ind)", "nan(ind)", "-1.#IND", "1.#QNAN", "-1.#QNAN")


@dataclass(frozen=True)
class Table:
    """One debug log as named numpy columns.

    Attributes:
        path: The file read.
        names: vcosim's names of the columns: ``"time"``, then the message's slot names
            (``"id"``, ``"throttle"``, ``"groundspeed"``, …; see ``vcosim.tight.protocol``).
        data: All columns, a 2-D float array (rows × columns).
        header: The file's own header names, or None if it had no header row.
        lines: The line number in the file of each row (for messages about a row; in a
            binary log, the row number).
        notes: What was left out or guessed in reading (a torn last row), one line each.
    """

    path: Path
    names: tuple[str, ...]
    data: np.ndarray
    header: tuple[str, ...] | None = None
    lines: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    notes: tuple[str, ...] = ()

    @property
    def time(self) -> np.ndarray:
        """Column 0: when the row was written (s)."""
        return self.data[:, 0]

    @property
    def values(self) -> np.ndarray:
        """The message: every column after the time (2-D; column 0 is the id)."""
        return self.data[:, 1:]

    @property
    def id(self) -> np.ndarray:
        """The message id of each row (send, receive and events logs)."""
        if "id" not in self.names:
            raise AttributeError(f"{self.path.name} has no id column")
        return self.data[:, self.names.index("id")]

    def __len__(self) -> int:
        return self.data.shape[0]

    def __getitem__(self, name: str) -> np.ndarray:
        """A column by vcosim's name, or by the name the file's header gives it."""
        if name in self.names:
            return self.data[:, self.names.index(name)]
        if self.header is not None and name in self.header:
            return self.data[:, self.header.index(name)]
        from vcosim.errors import UnknownNameError

        raise UnknownNameError(f"column of {self.path.name}", name, self.names)

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)


def _is_number_row(fields: list[str]) -> bool:
    try:
        for text in fields:
            float(text)
    except ValueError:
        return False
    return True


def _fields(line: str) -> list[str]:
    if line.endswith(","):
        line = line[:-1]
    return line.split(",")


class _Problems:
    """The problems of one file: the first few listed, the rest counted."""

    def __init__(self, name: str, unit: str = "line") -> None:
        self.name = name
        self.unit = unit
        self.items: list[str] = []
        self.more = 0

    def add(self, line: int | None, text: str) -> None:
        if len(self.items) >= MAX_PROBLEMS_PER_FILE:
            self.more += 1
            return
        where = f"{self.name} {self.unit} {line}" if line is not None else self.name
        self.items.append(f"{where}: {text}")

    def all(self) -> list[str]:
        if self.more:
            return [*self.items, f"{self.name}: … and {self.more} more problem(s)"]
        return list(self.items)

    def __bool__(self) -> bool:
        return bool(self.items)


def read_table(
    path: Path, names: tuple[str, ...], *, any_width: bool = False
) -> tuple[Table | None, list[str]]:
    """Read one debug CSV expecting ``len(names)`` columns; return it and its problems.

    With ``any_width``, a header that starts with ``time,id`` sets the columns instead: the
    send and receive logs of a run with a BeamNG interface CSV carry its signals.
    The table is None when the file has problems (each names the file and the line).
    """
    path = Path(path)
    problems = _Problems(path.name)
    expected = len(names)
    if not path.is_file():
        return None, [f"{path}: file not found" if not path.exists() else f"{path}: not a file"]
    raw = path.read_bytes()
    text = raw.decode("utf-8-sig", errors="replace")
    for spelling in _NAN_SPELLINGS:
        text = text.replace(spelling, "nan")
    lines = text.split("\n")
    truncated_at = None
    if lines and lines[-1] == "":
        lines.pop()  # the file ends with a newline, as it should
    elif lines:
        truncated_at = len(lines)  # no end of line after the last row: a partial row
    header: tuple[str, ...] | None = None
    rows: list[str] = []
    row_lines: list[int] = []
    notes: list[str] = []
    first = True  # the first non-blank line may be a header
    for number, line in enumerate(lines, start=1):
        line = line.rstrip("\r").strip()
        if not line:
            continue
        if number == truncated_at:
            notes.append(
                f"{path.name} line {number}: torn last row left out (the file ends without an "
                "end of line: its writer stopped mid-row)"
            )
            continue
        fields = _fields(line)
        is_first, first = first, False
        if is_first and not _is_number_row(fields):
            header = tuple(name.strip().strip('"') for name in fields)
            if (
                any_width
                and header[:2] == ("time", "id")
                and _next_width(lines, number) == len(header)
            ):
                names, expected = header, len(header)
            if len(header) != expected:
                problems.add(number, f"header of {len(header)} names, expected {expected}")
            continue
        if len(fields) != expected:
            problems.add(
                number,
                f"{len(fields)} column{'s' if len(fields) != 1 else ''}, expected {expected}",
            )
            continue
        rows.append(line[:-1] if line.endswith(",") else line)
        row_lines.append(number)
    data = np.zeros((0, expected))
    if rows:
        try:
            data = np.loadtxt(rows, delimiter=",", ndmin=2, dtype=np.float64)
        except ValueError:  # find the offending values (the slow path, only on error)
            for number, line in zip(row_lines, rows, strict=True):
                for column, value in enumerate(line.split(","), start=1):
                    try:
                        float(value)
                    except ValueError:
                        problems.add(number, f"column {column}: {value.strip()!r} is not a number")
                        break
    return _checked(
        path, names, data, header, np.asarray(row_lines, dtype=np.int64), notes, problems
    )


def _checked(
    path: Path,
    names: tuple[str, ...],
    data: np.ndarray,
    header: tuple[str, ...] | None,
    lines: np.ndarray,
    notes: list[str],
    problems: _Problems,
) -> tuple[Table | None, list[str]]:
    """The table once its values are checked, or its problems; notes are logged."""
    if not problems and len(data):
        _check_values(data, lines, names, problems)
    if not problems and names == STEPS_NAMES and len(data) == 0:
        problems.add(None, "no physics steps (the file has no rows)")
    if problems:
        return None, problems.all()
    for note in notes:
        log.warning("%s", note)
    return Table(path, names, data, header, lines, tuple(notes)), []


def read_binary_table(
    path: Path, names: tuple[str, ...], *, any_width: bool = False
) -> tuple[Table | None, list[str]]:
    """Read one debug log from vcosim's ``.npy`` file (or an older ``.csv.part``).

    The same checks and results as ``read_table``; rows are numbered from 1 in messages.
    """
    path = Path(path)
    problems = _Problems(path.name, unit="row")
    notes: list[str] = []
    header: tuple[str, ...] | None = None
    if path.suffix == ".part":  # raw rows, no names: the standard layout
        size, width = path.stat().st_size, len(names)
        whole = size // (8 * width)
        data = np.fromfile(path, dtype="<f8", count=whole * width).reshape(whole, width)
        torn = size - whole * 8 * width
        notes.append(f"{path.name}: raw rows ({width} columns), as an older vcosim left them")
    else:
        try:
            header, data, torn = read_rows(path)
        except (ValueError, OSError) as exc:
            return None, [f"{path}: not a readable .npy debug log ({exc})"]
        if any_width and header[:2] == ("time", "id"):
            names = header
        if len(header) != len(names):
            problems.add(None, f"rows of {len(header)} columns, expected {len(names)}")
            return None, problems.all()
    if torn:
        notes.append(f"{path.name}: torn last row left out ({torn} bytes: the run was killed)")
    lines = np.arange(1, len(data) + 1, dtype=np.int64)
    return _checked(path, names, data, header, lines, notes, problems)


def find_log(folder: Path, name: str) -> Path | None:
    """The file holding a log: its CSV, else vcosim's ``.npy``, else an older ``.csv.part``."""
    for candidate in (folder / name, binary_path(folder / name), folder / f"{name}.part"):
        if candidate.is_file():
            return candidate
    return None


def vehicle_folders(folder: Path) -> list[Path]:
    """The per-vehicle sub-folders of a world's run (``sim --world --debug-log``), if it is one.

    A folder with logs of its own is a run, whatever it holds besides.
    """
    if any(find_log(folder, name) for name, _ in LOGS):
        return []
    return sorted(
        sub for sub in folder.iterdir() if sub.is_dir() and any(find_log(sub, n) for n, _ in LOGS)
    )


def _next_width(lines: list[str], after: int) -> int | None:
    """The number of fields of the first non-blank line after line ``after`` (1-based)."""
    for line in lines[after:]:
        if line.strip():
            return len(_fields(line.rstrip("\r").strip()))
    return None


def _check_values(
    data: np.ndarray, lines: np.ndarray, names: tuple[str, ...], problems: _Problems
) -> None:
    """Times finite and never going backwards; ids finite; event codes known."""
    time = data[:, 0]
    for row in np.flatnonzero(~np.isfinite(time))[:MAX_PROBLEMS_PER_FILE]:
        problems.add(int(lines[row]), f"time {time[row]} is not a finite number")
    checked = ("id",) if names != EVENTS_NAMES else EVENTS_NAMES[1:]
    for name in checked:
        if name not in names:
            continue
        column = data[:, names.index(name)]
        for row in np.flatnonzero(~np.isfinite(column))[:MAX_PROBLEMS_PER_FILE]:
            problems.add(int(lines[row]), f"{name} {column[row]} is not a finite number")
    if names == EVENTS_NAMES and not problems:
        codes = data[:, 1]
        for row in np.flatnonzero(~np.isin(codes, list(EVENT_CODES)))[:MAX_PROBLEMS_PER_FILE]:
            problems.add(
                int(lines[row]),
                f"event {codes[row]:g} is not a known event code "
                f"({', '.join(map(str, EVENT_CODES))})",
            )
    if problems:
        return
    for row in np.flatnonzero(np.diff(time) < 0)[:MAX_PROBLEMS_PER_FILE]:
        problems.add(
            int(lines[row + 1]),
            f"time goes backwards ({time[row + 1]:.9g} s after "
            f"{time[row]:.9g} s on line {int(lines[row])})",
        )


class RunLogs(NamedTuple):
    """The logs of one run folder; ``events`` is None when it has no events log."""

    steps: Table
    sends: Table
    receives: Table
    events: Table | None

    @property
    def notes(self) -> tuple[str, ...]:
        """What reading left out (torn last rows), over all the logs."""
        return tuple(note for table in self if table is not None for note in table.notes)


def read_logs(folder: str | Path) -> RunLogs:
    """The steps, send, receive and (if present) events logs of a run folder, checked.

    Raises:
        ConfigError: every problem of every file, each naming its file and line; ``source``
            is the file when only one file has problems, else the folder.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise ConfigError(
            [
                f"{folder}: run folder not found"
                if not folder.exists()
                else f"{folder}: not a folder"
            ],
            source=str(folder),
        )
    vehicles = vehicle_folders(folder)
    if vehicles:
        raise ConfigError(
            [
                f"{folder} holds the logs of a world's coupled vehicles, a folder each: "
                f"analyse one of them ({', '.join(str(v) for v in vehicles)})"
            ],
            source=str(folder),
        )
    tables: list[Table] = []
    problems: list[str] = []
    bad_files: list[Path] = []
    logs = LOGS
    if find_log(folder, EVENTS_LOG):  # optional: BeamNG and older vcosim do not write it
        logs = (*LOGS, (EVENTS_LOG, EVENTS_NAMES))
    for name, names in logs:
        path = find_log(folder, name) or folder / name
        read = read_table if path.suffix == ".csv" else read_binary_table
        table, found = read(path, names, any_width=name in (SEND_LOG, RECEIVE_LOG))
        if found:
            problems.extend(found)
            bad_files.append(folder / name)
        elif table is not None:
            tables.append(table)
    if problems:
        source = str(bad_files[0]) if len(bad_files) == 1 else str(folder)
        raise ConfigError(problems, source=source)
    steps, sends, receives = tables[:3]
    return RunLogs(steps, sends, receives, tables[3] if len(tables) > 3 else None)
