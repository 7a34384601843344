"""Recording every vehicle signal: in memory (``SignalRecorder``) or to a file (``SignalLog``).

Attach one to a ``Simulation`` (``sim.attach("signals", SignalRecorder())``): it records one
row of ``sim.vehicle.outputs`` when the run starts and then every ``every`` physics steps
(default 20 = 10 ms). Code that steps a vehicle itself calls ``record(vehicle.outputs)``.
Rows are copied into a block-allocated array, so recording costs a counter per step and a
row copy per sample. ``write_csv`` writes ``time`` first, then every other signal.

``SignalLog`` (``vcosim sim --record FILE``) writes its rows to CSV or MCAP at least every
second, so a long run does not grow in memory, an interrupted run's file is complete up to its
last row, and a killed run's file reads (CSV whole rows, MCAP with the ``mcap`` package's
default readers) up to its last write. ``WorldSignalLog`` (``vcosim sim --world W --record
FILE``) writes one such file per vehicle of a world, ``FILE.NAME.csv``. On an OpenDRIVE road
both add where the vehicle is on it, at each row (``vcosim.roads.tracking.ROAD_COLUMNS``).
"""

from __future__ import annotations

import io
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Protocol

import numpy as np

from vcosim.arrays import FloatArray
from vcosim.errors import ConfigError
from vcosim.reports import Report
from vcosim.roads.tracking import ROAD_COLUMNS, RoadTracker
from vcosim.sim.face import Face
from vcosim.sim.mcapfile import open_writer
from vcosim.vehicle import SIGNAL_NAMES

if TYPE_CHECKING:
    from mcap.writer import Writer

    from vcosim.roads import RoadNetwork
    from vcosim.sim.simulation import Simulation

RoadPlace = tuple[str, float, float, int]
"""Where a row's vehicle is on the road: road id ("" off the roads), s, t, lane id."""

BLOCK_ROWS = 4096
_X, _Y = SIGNAL_NAMES.index("posX"), SIGNAL_NAMES.index("posY")


def csv_header() -> list[str]:
    """``time`` first, then every other signal in ``SIGNAL_NAMES`` order."""
    return ["time", *(n for n in SIGNAL_NAMES if n != "time")]


def write_csv(path: str | Path, rows: FloatArray) -> None:
    """Recorded rows (columns in ``SIGNAL_NAMES`` order) as a CSV with ``csv_header()``."""
    header = csv_header()
    order = [SIGNAL_NAMES.index(n) for n in header]
    np.savetxt(
        path, rows[:, order], delimiter=",", header=",".join(header), comments="", fmt="%.9g"
    )


class SignalRecorder(Face):
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

    def record(self, outputs: FloatArray) -> None:
        """Append one row (a copy of ``outputs``, ordered as ``SIGNAL_NAMES``)."""
        if self._n == len(self._buffer):
            grown = np.empty((len(self._buffer) + BLOCK_ROWS, self._buffer.shape[1]))
            grown[: self._n] = self._buffer
            self._buffer = grown
        self._buffer[self._n] = outputs
        self._n += 1

    @property
    def rows(self) -> FloatArray:
        """The rows recorded so far, one per sample, columns as ``SIGNAL_NAMES`` (a view)."""
        return self._buffer[: self._n]

    def column(self, name: str) -> FloatArray:
        """One signal of the recorded rows."""
        return self.rows[:, SIGNAL_NAMES.index(name)]

    def write_csv(self, path: str | Path) -> None:
        """Write the rows as CSV: ``time`` first, then every other signal."""
        write_csv(path, self.rows)

    def report(self) -> RecordingReport:
        """How many rows were recorded, and how often."""
        return RecordingReport(rows=self._n, every_steps=self.every)


@dataclass
class RecordingReport(Report):
    """How many rows of signals were recorded, every how many physics steps, and where."""

    rows: int
    every_steps: int
    path: str | None = None


class RowWriter(Protocol):
    """Where a ``SignalLog`` puts its blocks of rows (columns in ``SIGNAL_NAMES`` order)."""

    def write(self, rows: FloatArray, places: list[RoadPlace] | None = None) -> None:
        """Append rows (and, on a road, where each row's vehicle is on it)."""

    def flush(self) -> None:
        """Put what was written on disk: a crash after this loses nothing before it."""

    def close(self) -> None:
        """Finish the file."""


class CsvRows:
    """Rows as CSV, ``time`` first, each block formatted whole and written in one write.

    A crash leaves whole rows (a kill during the write itself may cut the last one).
    """

    def __init__(self, path: Path, road: bool = False) -> None:
        self._file: IO[bytes] = path.open("wb", buffering=0)  # closed in close()
        header = csv_header()
        self._order = [SIGNAL_NAMES.index(n) for n in header]
        columns = [*header, *ROAD_COLUMNS] if road else header
        self._file.write((",".join(columns) + "\n").encode())

    def write(self, rows: FloatArray, places: list[RoadPlace] | None = None) -> None:
        """Append rows (with their road columns after the signals, given ``places``)."""
        text = io.StringIO()
        np.savetxt(text, rows[:, self._order], delimiter=",", fmt="%.9g")
        lines = text.getvalue()
        if places is not None:
            lines = "".join(
                f"{line},{road},{s:.9g},{t:.9g},{lane}\n"
                for line, (road, s, t, lane) in zip(lines.splitlines(), places, strict=True)
            )
        self._file.write(lines.encode())

    def flush(self) -> None:
        """Nothing held: every block is written whole."""

    def close(self) -> None:
        """Close the file."""
        self._file.close()


class McapRows:
    """Rows as MCAP for Foxglove Studio and PlotJuggler.

    One channel ``/vehicle/signals``, one JSON message per row, logged at its simulated time.
    Each flush closes a chunk and leaves a file the ``mcap`` package's default readers read
    (``vcosim.sim.mcapfile``), so a crash loses only what came after the last flush.
    """

    TOPIC = "/vehicle/signals"

    def __init__(self, path: Path, road: bool = False) -> None:
        self._writer, self._file = open_writer(path)
        properties: dict[str, dict[str, str]] = {name: {"type": "number"} for name in SIGNAL_NAMES}
        if road:
            kinds = ("string", "number", "number", "integer")
            properties.update({c: {"type": k} for c, k in zip(ROAD_COLUMNS, kinds, strict=True)})
        schema = {"title": "vcosim.vehicle.signals", "type": "object", "properties": properties}
        schema_id = self._writer.register_schema(
            name="vcosim.vehicle.signals", encoding="jsonschema", data=json.dumps(schema).encode()
        )
        self._channel = self._writer.register_channel(
            topic=self.TOPIC, message_encoding="json", schema_id=schema_id
        )
        self._writer.flush()
        self._time = SIGNAL_NAMES.index("time")
        self._sequence = 0

    def write(self, rows: FloatArray, places: list[RoadPlace] | None = None) -> None:
        """Append one message per row (on disk at the next flush)."""
        for k, row in enumerate(rows):
            stamp = round(float(row[self._time]) * 1e9)
            values: dict[str, object] = dict(zip(SIGNAL_NAMES, row.tolist(), strict=True))
            if places is not None:
                values.update(zip(ROAD_COLUMNS, places[k], strict=True))
            data = json.dumps(values).encode()
            self._writer.add_message(
                self._channel,
                log_time=stamp,
                data=data,
                publish_time=stamp,
                sequence=self._sequence,
            )
            self._sequence += 1

    @property
    def writer(self) -> Writer:
        """The open ``mcap`` writer: other faces may add channels to the same file."""
        return self._writer

    def flush(self) -> None:
        """Close the chunk and put it on disk."""
        self._writer.flush()

    def close(self) -> None:
        """Write the summary and index, then close the file."""
        try:
            self._writer.finish()
        finally:
            self._file.close()


class SignalLog(SignalRecorder):
    """Every vehicle signal, one row per ``every`` steps, written to ``path`` as the run goes.

    ``.csv`` or ``.mcap`` (the ``logging`` extra). ``close()`` writes the last rows, so an
    interrupted run's file ends at its last sample. Given the run's OpenDRIVE ``road``, each
    row also says where the vehicle is on it (``ROAD_COLUMNS``, after the signals).
    """

    FLUSH_ROWS = 1024
    FLUSH_SECONDS = 1.0  # of wall time: a crash loses at most this much

    def __init__(self, path: str | Path, every: int = 20, road: RoadNetwork | None = None) -> None:
        super().__init__(every)
        self.tracker = None if road is None else RoadTracker(road)
        self._places: list[RoadPlace] = []
        self.path = Path(path)
        suffix = self.path.suffix.lower()
        if suffix not in (".csv", ".mcap"):
            raise ConfigError(
                [f"--record: a .csv or .mcap file, not {self.path.name!r}"], "recording"
            )
        self._writer: RowWriter | None = None
        self._written = 0
        self._kind: type[CsvRows] | type[McapRows] = CsvRows if suffix == ".csv" else McapRows
        self._flush_at = 0.0

    def start(self, sim: Simulation) -> None:
        """Open the file, then record the first row."""
        self.open()
        super().start(sim)

    def open(self) -> None:
        """Create the file (and its folder): rows go to it from here."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._writer = self._kind(self.path, road=self.tracker is not None)
        self._flush_at = time.monotonic() + self.FLUSH_SECONDS

    @property
    def mcap_writer(self) -> Writer | None:
        """The open file's ``mcap`` writer (None: CSV, or not open) for more channels."""
        return self._writer.writer if isinstance(self._writer, McapRows) else None

    def record(self, outputs: FloatArray, place: RoadPlace | None = None) -> None:
        """Append one row; a full block, or a second's worth, goes to the file.

        On a road, ``place`` is where the vehicle is (else the log's tracker finds it).
        """
        super().record(outputs)
        if self.tracker is not None:
            if place is None:
                at = self.tracker.update(outputs[_X], outputs[_Y])
                place = at.road[0], at.s[0], at.t[0], int(at.lane[0])
            self._places.append(place)
        if self._n >= self.FLUSH_ROWS or time.monotonic() >= self._flush_at:
            self._flush()

    def _flush(self) -> None:
        if self._writer is not None and self._n:
            places = self._places if self.tracker is not None else None
            self._writer.write(self._buffer[: self._n], places)
            self._places = []
            self._writer.flush()
            self._written += self._n
            self._n = 0  # the rows are in the file: the buffer starts again
        self._flush_at = time.monotonic() + self.FLUSH_SECONDS

    def close(self) -> None:
        """Write the last rows and close the file (safe twice)."""
        if self._writer is not None:
            self._flush()
            self._writer.close()
            self._writer = None

    def report(self) -> RecordingReport:
        """Rows written, how often, and the file."""
        return RecordingReport(rows=self._written, every_steps=self.every, path=str(self.path))


def vehicle_path(path: str | Path, vehicle: str) -> Path:
    """A world's recording of one vehicle: ``run.csv`` → ``run.NAME.csv`` beside it."""
    path = Path(path)
    return path.with_name(f"{path.stem}.{vehicle}{path.suffix}")


@dataclass
class WorldRecordingReport(Report):
    """Rows written per vehicle, how often, and each vehicle's file."""

    rows: int
    every_steps: int
    files: dict[str, str]


class WorldSignalLog(Face):
    """Every signal of every vehicle of a world, one file per vehicle (``vehicle_path``).

    A file per vehicle keeps each one what ``SignalLog`` writes for a lone car (the same
    columns, read by the same tools); one face counts the steps for all of them, and on a
    road one tracker finds every vehicle's road position at once.
    """

    def __init__(
        self,
        path: str | Path,
        vehicles: list[str],
        every: int = 20,
        road: RoadNetwork | None = None,
    ) -> None:
        self.every = every
        self.logs = {name: SignalLog(vehicle_path(path, name), every, road) for name in vehicles}
        self.tracker = None if road is None else RoadTracker(road, len(vehicles))
        self._countdown = every

    def start(self, sim: Simulation) -> None:
        """Open every file with its vehicle's first row."""
        for log in self.logs.values():
            log.open()
        self._record(sim)
        self._countdown = self.every

    def after_step(self, sim: Simulation) -> None:
        """Count the step; every ``every`` steps a row for each vehicle."""
        self._countdown -= 1
        if self._countdown == 0:
            self._countdown = self.every
            self._record(sim)

    def _record(self, sim: Simulation) -> None:
        outputs = [sim.vehicles[name].outputs for name in self.logs]
        places: list[RoadPlace | None] = [None] * len(outputs)
        if self.tracker is not None:
            at = self.tracker.update([y[_X] for y in outputs], [y[_Y] for y in outputs])
            places = [(at.road[k], at.s[k], at.t[k], int(at.lane[k])) for k in range(len(outputs))]
        for log, y, place in zip(self.logs.values(), outputs, places, strict=True):
            log.record(y, place)

    def close(self) -> None:
        """Write the last rows and close every file (safe twice)."""
        for log in self.logs.values():
            log.close()

    def report(self) -> WorldRecordingReport:
        """Rows written per vehicle (the same for all), how often, and the files."""
        first = next(iter(self.logs.values()), None)  # None: a world of objects only
        return WorldRecordingReport(
            rows=0 if first is None else first.report().rows,
            every_steps=self.every,
            files={name: str(log.path) for name, log in self.logs.items()},
        )
