"""Any recorded run as signals over time, each with its unit: what ``vcosim plot`` draws.

A run is what vcosim writes:

- ``vcosim sim --record FILE.csv`` or ``.mcap`` (and the demo's ``signals.csv``, found in its
  run folder): every signal of the vehicle, on the simulated time;
- a world's recording, one such file per vehicle (``run.NAME.csv``), named by its ``run.csv``;
- the bus logger's MCAP (``vcosim log``) or its CSV export: each message type's parameters
  (``FMVM.speed``), each world vehicle's pose by the vehicle's name (``lead.speed``), on the
  time since the first message;
- ``vcosim connect --record FILE.csv``: every port of a contract client, on its local time.

Each is a list of *sources* (the car; each vehicle of a world; each message type or world
vehicle of a bus log; the client) with named numeric columns over a time axis. A signal is
asked for by its column name, which selects it in every source that has it (``speed``: every
vehicle's), or as ``SOURCE.name`` in one; a name a face gives the same quantity
(``vehicleGroundSpeed``, ``applied.throttle``) is understood too. Units come from the
catalogues: the vehicle's (``vcosim.vehicle.signals``), the bus's (``vcosim.bus.catalogue``),
the contract properties'.
"""

from __future__ import annotations

import csv
import json
import re
import warnings
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from vcosim.errors import ConfigError, UnknownNameError

SIMULATED = "simulated time (s)"
PREFERRED = ("groundspeed", "speed", "throttle", "brake", "steering", "rpm", "gear")
"""What is drawn when no signal is named: those of these the run has (at most six)."""
LISTED_AT_MOST = 30  # an unknown name lists the run's signals when there are no more


@dataclass
class Source:
    """Named numeric columns over one time axis: a vehicle, a message type, a client."""

    name: str  # "" for the run's only source
    time: np.ndarray
    columns: dict[str, np.ndarray]
    units: dict[str, str] = field(default_factory=dict)

    def label(self, column: str) -> str:
        """``column``, or ``SOURCE.column`` in a run of several sources."""
        return f"{self.name}.{column}" if self.name else column


@dataclass(frozen=True)
class Trace:
    """One line to draw: a signal of one source."""

    signal: str  # what was asked for, or its column: one axes per signal
    label: str  # the source's name for it (``lead.groundspeed``)
    unit: str  # "" when no catalogue knows it
    time: np.ndarray
    values: np.ndarray


@dataclass
class Recording:
    """A recorded run: where it is, what kind it is, its sources and their time axis."""

    path: Path
    kind: str
    sources: list[Source]
    time_axis: str = SIMULATED

    def names(self) -> list[str]:
        """Every signal it holds: the plain names, then the ``SOURCE.name`` ones."""
        plain = dict.fromkeys(c for s in self.sources for c in s.columns)
        qualified = dict.fromkeys(s.label(c) for s in self.sources if s.name for c in s.columns)
        return [*plain, *(q for q in qualified if q not in plain)]

    def default_signals(self) -> list[str]:
        """What to draw when nothing is named: the preferred names it has, else its first."""
        have = {c for s in self.sources for c in s.columns}
        chosen = [n for n in PREFERRED if n in have]
        if "groundspeed" in chosen and "speed" in chosen:
            chosen.remove("speed")  # the same thing, signed
        plain = [n for n in self.names() if "." not in n and n != "time"]
        return (chosen or plain)[:6]

    def select(self, wanted: Iterable[str]) -> list[list[Trace]]:
        """The traces of each signal asked for, one list per signal (in the order asked).

        Raises:
            UnknownNameError: a name the run does not hold (the closest is suggested).
        """
        return [self._traces(name) for name in wanted]

    def _traces(self, name: str) -> list[Trace]:
        found = self._find(name)
        if not found:  # another face's name for a vehicle signal: vehicleGroundSpeed
            for alias in _aliases(name):
                found = self._find(alias)
                if found:
                    name = alias
                    break
        if not found:
            names = self.names()
            listing = (
                f"the run has {len(names)}; vcosim plot {self.path} --list lists them"
                if len(names) > LISTED_AT_MOST
                else None
            )
            raise UnknownNameError(f"signal of {self.path.name}", name, names, where_listed=listing)
        return [
            Trace(name, source.label(column), source.units.get(column, ""), source.time, values)
            for source, column, values in found
        ]

    def _find(self, name: str) -> list[tuple[Source, str, np.ndarray]]:
        plain = [(s, name, s.columns[name]) for s in self.sources if name in s.columns]
        if plain:
            return plain
        return [
            (s, c, v)
            for s in self.sources
            for c, v in s.columns.items()
            if s.name and s.label(c) == name
        ]


def _aliases(name: str) -> list[str]:
    """The vcosim names of a signal another face names ``name`` (none if it is no signal)."""
    from vcosim.analysis.signals import resolve

    try:
        return [row.signal.name for row in resolve(name) if row.way != "input"]
    except UnknownNameError:
        return []


# -- units ----------------------------------------------------------------------------------
_META_UNITS = {
    "time": "s",
    "receive_time_offset": "s",
    "ping_results": "s",
    "serial_number": "1",
    "connection_status": "1",
    "step_index": "1",
}


def unit_of(column: str) -> str:
    """The unit of a recorded column, from the catalogues; "" when none knows it.

    Understands a contract port's column (``Vehicle_B.rpm``, ``DISTANCE(Origin)``,
    ``wheel_speed[2]``, ``time#2``) and a bus export's (``FMVM.speed``).
    """
    from vcosim.bus.catalogue import BY_NAME as MESSAGES
    from vcosim.contracts.objects import FUNCTIONS, VEHICLE_READABLE
    from vcosim.vehicle.signals import BY_NAME, INPUT_BY_NAME

    name = re.sub(r"(#\d+)?(\[\d+\])?$", "", column)
    owner, _, name = name.rpartition(".")
    if owner in MESSAGES:
        units = {p.name: p.unit for p in MESSAGES[owner].params}
        return units.get(name, "")
    name = re.sub(r"\(.*\)$", "", name)
    if name in FUNCTIONS:
        return "m"
    known = BY_NAME.get(name) or INPUT_BY_NAME.get(name)
    if known is not None:
        return known.unit
    if name in VEHICLE_READABLE:  # a vector property: its components' unit
        return BY_NAME[VEHICLE_READABLE[name][0]].unit
    return _META_UNITS.get(name, "")


# -- reading --------------------------------------------------------------------------------
def read_run(path: str | Path) -> Recording:
    """The recorded run at ``path``; ``ConfigError`` (exit 2) if it is none vcosim reads."""
    path = Path(path)
    if path.is_dir():
        inside = path / "signals.csv"
        if inside.is_file():
            return read_run(inside)
        found = sorted(p.name for p in path.iterdir() if p.suffix in (".csv", ".mcap"))
        raise ConfigError(
            [f"{path} holds no signals.csv; name the recording ({', '.join(found) or 'none'})"],
            str(path),
        )
    if not path.exists():
        parts = sorted(path.parent.glob(f"{_glob_escape(path.stem)}.*{path.suffix}"))
        if not parts:
            raise ConfigError(
                [f"{path}: no such file (nor a world's {path.stem}.NAME{path.suffix})"],
                str(path),
            )
        return _world(path, parts)
    if path.suffix == ".mcap":
        return _read_mcap(path)
    if path.suffix == ".csv":
        return _read_csv(path)
    raise ConfigError(
        [f"{path}: a .csv or .mcap recording, not {path.suffix or 'a file without suffix'}"],
        str(path),
    )


def _glob_escape(text: str) -> str:
    """``text`` with the glob's special characters taken literally."""
    return re.sub(r"([*?\[])", r"[\1]", text)


def _world(path: Path, parts: list[Path]) -> Recording:
    """A world's recording: ``run.NAME.csv`` per vehicle, each a source named NAME."""
    sources = []
    for part in parts:
        one = read_run(part)
        for source in one.sources:
            source.name = part.name[len(path.stem) + 1 : -len(path.suffix)]
            sources.append(source)
    return Recording(path, f"world of {len(sources)} vehicles", sources)


def _rows(path: Path, header: list[str]) -> np.ndarray:
    """The rows of a numeric CSV (a last row cut short by a kill is left out)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # genfromtxt warns of the rows it leaves out
        rows = np.genfromtxt(
            path, delimiter=",", skip_header=1, dtype=float, invalid_raise=False, ndmin=2
        )
    return rows if rows.size else np.empty((0, len(header)))


def _read_csv(path: Path) -> Recording:
    with open(path, encoding="utf-8") as handle:
        header = next(csv.reader(handle), [])
    if not header:
        raise ConfigError([f"{path} is empty"], str(path))
    if {"log_time_ns", "type", "name"} <= set(header):
        return _read_bus_csv(path)
    rows = _rows(path, header)
    if "time" not in header:
        raise ConfigError(
            [f"{path} has no time column: not a recording vcosim plot reads"], str(path)
        )
    columns = {name: rows[:, i] for i, name in enumerate(header) if name != "time"}
    source = Source("", rows[:, header.index("time")], columns, {c: unit_of(c) for c in columns})
    if header[1:2] == ["connection_status"]:
        return Recording(path, "contract client", [source], "the client's local time (s)")
    return Recording(path, "vehicle signals", [source])


def _by_type(
    rows: Iterable[tuple[float, str, dict[str, object]]],
) -> list[Source]:
    """Sources of bus messages: (time, source name, parameters) each, in time order."""
    times: dict[str, list[float]] = defaultdict(list)
    values: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for t, name, params in rows:
        numbers = {
            k: float(v)
            for k, v in params.items()
            if isinstance(v, (int, float)) and not isinstance(v, bool)
        }
        times[name].append(t)
        for key in [*values[name], *(k for k in numbers if k not in values[name])]:
            column = values[name][key]
            column.extend([np.nan] * (len(times[name]) - 1 - len(column)))
            column.append(numbers.get(key, np.nan))
    return [
        Source(name, np.array(times[name]), {k: np.array(v) for k, v in values[name].items()})
        for name in times
    ]


def _bus_units(source: Source, message: str) -> None:
    """Give a bus source's columns the units of its message type's parameters."""
    from vcosim.bus.catalogue import BY_NAME

    cls = BY_NAME.get(message)
    units = {p.name: p.unit for p in cls.params} if cls is not None else {}
    source.units = {c: units.get(c, "") for c in source.columns}


def _read_bus_csv(path: Path) -> Recording:
    """``vcosim log --csv`` / ``replay --to-csv``: a row per message, its type's columns."""
    rows: list[tuple[float, str, dict[str, object]]] = []
    with open(path, encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            kind = row.get("name", "")
            params: dict[str, object] = {
                k.split(".", 1)[1]: _number(v)
                for k, v in row.items()
                if k and k.startswith(f"{kind}.") and v not in ("", None)
            }
            rows.append((_number(row.get("time", "")), kind, params))
    sources = _by_type(rows)
    for source in sources:
        _bus_units(source, source.name)
    return Recording(path, "bus log (CSV)", sources, "time since the first message (s)")


def _number(text: str | None) -> float:
    try:
        return float(text or "nan")
    except ValueError:
        return float("nan")


def _read_mcap(path: Path) -> Recording:
    """A vehicle's MCAP (``/vehicle/signals``) or the bus logger's (a topic per type)."""
    try:
        from mcap.exceptions import EndOfFile, McapError
        from mcap.reader import NonSeekingReader
    except ImportError:
        raise ConfigError(
            ['reading MCAP needs the logging extra: pip install -e ".[logging]"'], str(path)
        ) from None
    from vcosim.modules.recording import TOPIC_PREFIX, WORLD_POSE_TOPIC
    from vcosim.sim.recorder import McapRows

    vehicle_rows: list[dict[str, float]] = []
    bus: list[tuple[float, str, dict[str, object]]] = []
    types: dict[str, str] = {}
    pose = re.compile("^" + re.escape(WORLD_POSE_TOPIC).replace(r"\{name\}", "(.+)") + "$")
    first: int | None = None
    with open(path, "rb") as stream:
        try:
            for _, channel, message in NonSeekingReader(stream).iter_messages(log_time_order=False):
                if channel.message_encoding != "json":  # a Foxglove scene (protobuf): not signals
                    continue
                data = json.loads(message.data)
                if channel.topic == McapRows.TOPIC:
                    vehicle_rows.append(data)
                    continue
                first = message.log_time if first is None else first
                named = pose.match(channel.topic)
                name = named.group(1) if named else channel.topic.removeprefix(TOPIC_PREFIX)
                types[name] = "WorldPose" if named else name
                params = {k: v for k, v in data.items() if k not in ("sender", "to", "enqueue")}
                bus.append(((message.log_time - first) / 1e9, name, params))
        except EndOfFile:
            pass  # a file its writer did not finish: what is there
        except (McapError, ValueError) as exc:
            raise ConfigError(
                [f"{path} is not a readable MCAP recording: {exc}"], str(path)
            ) from None
    if vehicle_rows:
        from vcosim.vehicle.signals import BY_NAME

        names = [n for n in vehicle_rows[0] if n != "time"]
        columns = {n: np.array([row.get(n, np.nan) for row in vehicle_rows]) for n in names}
        time = np.array([row["time"] for row in vehicle_rows])
        units = {n: BY_NAME[n].unit if n in BY_NAME else "" for n in names}
        return Recording(path, "vehicle signals (MCAP)", [Source("", time, columns, units)])
    if not bus:
        raise ConfigError([f"{path} holds no messages"], str(path))
    sources = _by_type(bus)
    for source in sources:
        _bus_units(source, types[source.name])
    return Recording(path, "bus log (MCAP)", sources, "time since the first message (s)")
