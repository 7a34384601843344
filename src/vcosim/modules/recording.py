"""Recordings of the bus: MCAP files with a channel and a JSON schema per message type.

Each message type is one MCAP channel, topic ``/bus/<Name>`` (``/bus/IMFM``), whose schema is
a JSON Schema derived from the catalogue; messages are JSON objects ``{"sender", "to",
"enqueue", <parameters by name>}`` logged at their arrival time (``log_time``, ns since the
Unix epoch) in arrival order (``sequence``). Foxglove Studio and PlotJuggler open such files
as they are; ``export_csv`` writes one for spreadsheets. No bus here: only the file format.

A world's poses (WorldPose) go to a topic per vehicle, ``/world/<name>/pose``, once a
WorldVehicle has named the row (before that, to ``/bus/WorldPose``): in Foxglove a vehicle is
then one topic to plot or inspect (``/world/lead/pose.x``), found by its name, with no filter
on a row number. Each channel's metadata carries its message type (``type_id``), which is how
a reader knows a topic's messages.

The file is flushed a chunk at a time and ends in a valid footer after every flush
(``vcosim.sim.mcapfile``): after ``kill -9`` the ``mcap`` package's default readers read it to
its last flush; ``recover`` rewrites such a file (or one cut short by an older vcosim) complete,
with its index.
"""

from __future__ import annotations

import csv
import json
import logging
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vcosim.bus.catalogue import CATALOGUE, Message, WorldPose, WorldVehicle, lookup
from vcosim.errors import ConfigError, ProtocolError
from vcosim.sim.mcapfile import RecoverReport, open_writer, recover

log = logging.getLogger("vcosim.bus")

TOPIC_PREFIX = "/bus/"
SCHEMA_PREFIX = "vcosim.bus."
WORLD_POSE_TOPIC = "/world/{name}/pose"
"""The topic of a world vehicle's poses, by its name."""


def json_schema(cls: type[Message]) -> dict[str, Any]:
    """The JSON Schema of one message type's recorded form."""
    properties: dict[str, Any] = {
        "sender": {"type": "integer", "description": "id of the sending module"},
        "to": {"type": "integer", "description": "id of the receiving module"},
        "enqueue": {"type": "boolean", "description": "queue (true) or latest value wins"},
    }
    properties.update({p.name: p.json_schema() for p in cls.params})
    return {
        "title": f"{SCHEMA_PREFIX}{cls.__name__}",
        "description": f"NightRider bus message type {cls.type_id}: {cls.__doc__}",
        "type": "object",
        "properties": properties,
        "required": list(properties),
    }


@dataclass(frozen=True, slots=True)
class Recorded:
    """One message of a recording: arrival time (ns, epoch), sender's id, the message."""

    time_ns: int
    sender: int
    message: Message


class McapRecorder:
    """Writes bus messages to an MCAP file, a channel and a JSON schema per message type."""

    def __init__(self, path: str | Path, metadata: dict[str, str] | None = None) -> None:
        from mcap.writer import CompressionType

        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._writer, self._file = open_writer(self.path, compression=CompressionType.ZSTD)
        if metadata:
            self._writer.add_metadata("vcosim.bus", metadata)
            self._writer.flush()
        self._channels: dict[str, int] = {}  # by topic
        self._schemas: dict[int, int] = {}  # by message type
        self._names: dict[int, str] = {}  # a world's vehicles by row, from WorldVehicle
        self.count = 0
        self.by_type: Counter[str] = Counter()
        self._closed = False

    def write(self, record: Recorded) -> None:
        """Append one message (channels and schemas are registered on first use)."""
        message = record.message
        topic = self.topic(message)
        channel = self._channels.get(topic)
        if channel is None:
            channel = self._channels[topic] = self._register(type(message), topic)
        data = {
            "sender": record.sender,
            "to": message.to,
            "enqueue": message.enqueue,
            **{p.name: getattr(message, p.name) for p in message.params},
        }
        self._writer.add_message(
            channel,
            log_time=record.time_ns,
            publish_time=record.time_ns,
            sequence=self.count % (1 << 32),
            data=json.dumps(data).encode(),
        )
        self.count += 1
        self.by_type[type(message).__name__] += 1

    def topic(self, message: Message) -> str:
        """Where a message is recorded: its type's topic, or a named world vehicle's."""
        if isinstance(message, WorldVehicle):
            self._names[message.row] = message.name
        elif isinstance(message, WorldPose) and message.row in self._names:
            return WORLD_POSE_TOPIC.format(name=self._names[message.row])
        return f"{TOPIC_PREFIX}{type(message).__name__}"

    def _register(self, cls: type[Message], topic: str) -> int:
        schema = self._schemas.get(cls.type_id)
        if schema is None:
            schema = self._schemas[cls.type_id] = self._writer.register_schema(
                name=f"{SCHEMA_PREFIX}{cls.__name__}",
                encoding="jsonschema",
                data=json.dumps(json_schema(cls)).encode(),
            )
        return self._writer.register_channel(
            topic=topic,
            message_encoding="json",
            schema_id=schema,
            metadata={"type_id": str(cls.type_id)},
        )

    def flush(self) -> None:
        """Write what is buffered as a chunk; after a crash the file reads to here."""
        self._writer.flush()

    def close(self) -> None:
        """Finish the file (indexes, summary) and close it; safe twice."""
        if self._closed:
            return
        self._closed = True
        try:
            self._writer.finish()
        finally:
            self._file.close()

    def __enter__(self) -> McapRecorder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_recording(path: str | Path) -> Iterator[Recorded]:
    """The messages of a recording in recorded order (a file cut short reads to its end)."""
    from mcap.exceptions import EndOfFile, McapError
    from mcap.reader import NonSeekingReader

    path = Path(path)
    if not path.is_file():
        raise ConfigError([f"{path}: no such file"], "recording")
    with open(path, "rb") as stream:
        reader = NonSeekingReader(stream)
        try:
            for _, channel, record in reader.iter_messages(log_time_order=False):
                cls = _message_class(channel.topic, channel.metadata)
                name = cls.__name__
                data = json.loads(record.data)
                try:
                    message = cls(
                        *(data[p.name] for p in cls.params), to=data["to"], enqueue=data["enqueue"]
                    )
                except KeyError as exc:
                    raise ProtocolError(f"{path}: a {name} record lacks {exc}") from None
                yield Recorded(record.log_time, int(data["sender"]), message)
        except EndOfFile:
            log.warning("%s ends early (the logger did not finish it); read what is there", path)
        except McapError as exc:
            raise ProtocolError(f"{path} is not a readable MCAP recording: {exc}") from None


def _message_class(topic: str, metadata: dict[str, str]) -> type[Message]:
    """A channel's message type: from its metadata, else (older files) from its topic."""
    type_id = metadata.get("type_id", "")
    if type_id.isdigit() and int(type_id) in CATALOGUE:
        return CATALOGUE[int(type_id)]
    return lookup(topic.removeprefix(TOPIC_PREFIX))


def export_csv(recording: str | Path, csv_path: str | Path) -> int:
    """Write a recording as CSV, one row per message; returns the number of rows.

    Columns: ``time`` (s since the first message), ``log_time_ns``, ``sender``, ``to``,
    ``type``, ``name``, ``enqueue``, then ``<Name>.<parameter>`` for every message type in the
    recording; a row fills only its own type's columns (spreadsheets and PlotJuggler read it).
    """
    names = {r.message.type_id for r in read_recording(recording)}
    columns = [
        f"{cls.__name__}.{p.name}"
        for t, cls in sorted(CATALOGUE.items())
        if t in names
        for p in cls.params
    ]
    csv_path = Path(csv_path)
    csv_path.parent.mkdir(parents=True, exist_ok=True)
    rows = 0
    with open(csv_path, "w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(
            ["time", "log_time_ns", "sender", "to", "type", "name", "enqueue", *columns]
        )
        index = {c: i for i, c in enumerate(columns)}
        first: int | None = None
        for record in read_recording(recording):
            message = record.message
            first = record.time_ns if first is None else first
            cells: list[Any] = [""] * len(columns)
            for p in message.params:
                cells[index[f"{type(message).__name__}.{p.name}"]] = getattr(message, p.name)
            writer.writerow(
                [
                    f"{(record.time_ns - first) / 1e9:.6f}",
                    record.time_ns,
                    record.sender,
                    message.to,
                    message.type_id,
                    type(message).__name__,
                    int(message.enqueue),
                    *cells,
                ]
            )
            rows += 1
    return rows


__all__ = [
    "SCHEMA_PREFIX",
    "TOPIC_PREFIX",
    "WORLD_POSE_TOPIC",
    "McapRecorder",
    "RecoverReport",
    "Recorded",
    "export_csv",
    "json_schema",
    "read_recording",
    "recover",
]
