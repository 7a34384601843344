"""The logging module: records every bus message to MCAP, exports CSV, replays onto the bus.

Recording (``vcosim log OUT.mcap``). The logger joins the bus as a monitor (id 20 unless told
otherwise), so the router sends it a copy of every valid message with the sender's id, and
writes each with its arrival time (``log_time``, ns since the Unix epoch) and arrival order
(``sequence``). Each message type is one MCAP channel, topic ``/bus/<Name>`` (``/bus/IMFM``),
whose schema is a JSON Schema derived from the catalogue; messages are JSON objects
``{"sender", "to", "enqueue", <parameters by name>}``. Foxglove Studio and PlotJuggler open
such files as they are. The file is flushed every second and finished on Shutdown, Ctrl-C or
SIGTERM; a file cut short by a crash still reads up to its last flush.

Replay (``vcosim replay FILE``) joins as an ordinary module (id 21) and sends each recorded
message to its recorded destination, in recorded order, at the recorded pace or faster.
The router names the replayer as the sender: a module cannot speak in another's name.
"""

from __future__ import annotations

import csv
import json
import logging
import time
from collections import Counter
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from vcosim.bus.catalogue import CATALOGUE, Message, ModuleId, Shutdown, lookup
from vcosim.bus.client import DEFAULT_PORT, BusClient
from vcosim.bus.codec import Codec
from vcosim.errors import ConfigError, ProtocolError

log = logging.getLogger("vcosim.bus")

TOPIC_PREFIX = "/bus/"
SCHEMA_PREFIX = "vcosim.bus."


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
        from mcap.writer import CompressionType, Writer

        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file: IO[bytes] = open(self.path, "wb")  # noqa: SIM115 (closed in close())
        self._writer = Writer(self._file, compression=CompressionType.ZSTD)
        self._writer.start(profile="", library="vcosim")
        if metadata:
            self._writer.add_metadata("vcosim.bus", metadata)
        self._channels: dict[int, int] = {}
        self.count = 0
        self.by_type: Counter[str] = Counter()
        self._closed = False

    def write(self, record: Recorded) -> None:
        """Append one message (channels and schemas are registered on first use)."""
        message = record.message
        channel = self._channels.get(message.type_id)
        if channel is None:
            channel = self._channels[message.type_id] = self._register(type(message))
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

    def _register(self, cls: type[Message]) -> int:
        schema = self._writer.register_schema(
            name=f"{SCHEMA_PREFIX}{cls.__name__}",
            encoding="jsonschema",
            data=json.dumps(json_schema(cls)).encode(),
        )
        return self._writer.register_channel(
            topic=f"{TOPIC_PREFIX}{cls.__name__}",
            message_encoding="json",
            schema_id=schema,
            metadata={"type_id": str(cls.type_id)},
        )

    def flush(self) -> None:
        """Write what is buffered, so a crash loses at most what came after."""
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
                name = channel.topic.removeprefix(TOPIC_PREFIX)
                cls = lookup(name)
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


class Logger:
    """The logging module: joins the bus as a monitor and records until Shutdown or ``stop``.

    Args:
        path: the MCAP file to write.
        host, port: the router's handshake address.
        module_id: the logger's id on the bus.
        codec: message symbols and maximum length (the router's).
        flush_interval: seconds between flushes of the file.
    """

    def __init__(
        self,
        path: str | Path,
        host: str = "127.0.0.1",
        port: int = DEFAULT_PORT,
        *,
        module_id: int = ModuleId.LOGGING,
        codec: Codec | None = None,
        flush_interval: float = 1.0,
    ) -> None:
        self.path = Path(path)
        self.client = BusClient(module_id, host, port, monitor=True, codec=codec)
        self.flush_interval = flush_interval
        self.connected = False
        self.shutdown = False
        self._stopping = False
        self.recorder: McapRecorder | None = None

    def connect(self, timeout: float = 5.0) -> None:
        """Join the bus (``run`` does it if needed)."""
        self.client.connect(timeout)
        self.connected = True

    def run(self, duration: float | None = None) -> dict[str, Any]:
        """Record until Shutdown, ``stop()``, ``duration`` seconds or Ctrl-C; returns a summary."""
        client = self.client
        try:
            if not self.connected:
                self.connect()
            codec, (host, port) = client.codec, client.router_address
            self.recorder = recorder = McapRecorder(
                self.path,
                {
                    "router": f"{host}:{port}",
                    "logger_id": str(client.module_id),
                    "symbols": codec.start + codec.separator + codec.common_end + codec.end,
                    "max_length": str(codec.max_length),
                },
            )
            end = None if duration is None else time.monotonic() + duration
            next_flush = time.monotonic() + self.flush_interval
            while True:
                stopping = self._stopping  # what has arrived before a stop is still recorded
                client.wait(0.0 if stopping else 0.2)
                while (copy := client.next_copy()) is not None:
                    recorder.write(Recorded(copy.time_ns, copy.sender, copy.message))
                while (message := client.next_message()) is not None:
                    if isinstance(message, Shutdown):
                        self.shutdown = self._stopping = True
                if stopping:
                    break
                now = time.monotonic()
                if now >= next_flush:
                    recorder.flush()
                    next_flush = now + self.flush_interval
                if end is not None and now >= end:
                    break
        finally:
            self.close()
        return self.report()

    def stop(self) -> None:
        """Ask ``run`` to finish (from another thread) once it has recorded what has arrived."""
        self._stopping = True

    def report(self) -> dict[str, Any]:
        """What was recorded."""
        recorder = self.recorder
        return {
            "path": str(self.path),
            "messages": recorder.count if recorder else 0,
            "by_type": dict(recorder.by_type) if recorder else {},
            "shutdown_received": self.shutdown,
            "malformed": self.client.stats.malformed,
        }

    def close(self) -> None:
        """Finish the file and leave the bus; safe twice."""
        try:
            if self.recorder is not None:
                self.recorder.close()
        finally:
            self.client.close()


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


def replay(
    path: str | Path,
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    *,
    module_id: int = ModuleId.REPLAY,
    speed: float = 1.0,
    only: Collection[str] = (),
    skip: Collection[str] = (),
    codec: Codec | None = None,
    connect_timeout: float = 5.0,
) -> dict[str, Any]:
    """Send a recording onto the bus, each message to its recorded destination.

    Args:
        path: the MCAP recording.
        host: the router's host.
        port: the router's handshake port.
        module_id: the replayer's id on the bus.
        speed: 1 keeps the recorded pace, 2 is twice as fast, 0 as fast as possible.
        only: message type names to send exclusively (e.g. IMFM, to drive a live vehicle
            with a recorded driver).
        skip: message type names to leave out (e.g. Shutdown).
        codec: message symbols and maximum length (the router's).
        connect_timeout: seconds to wait for the router's answer.

    Stops early after replaying a Shutdown to the router (it ends every module) and on a
    Shutdown addressed to the replayer. Returns what was sent.
    """
    wanted = {lookup(n).__name__ for n in only}
    unwanted = {lookup(n).__name__ for n in skip}
    sent: Counter[str] = Counter()
    client = BusClient(module_id, host, port, codec=codec)
    try:
        client.connect(connect_timeout)
        start = time.perf_counter()
        first: int | None = None
        interrupted_by_shutdown = False
        for record in read_recording(path):
            name = type(record.message).__name__
            if (wanted and name not in wanted) or name in unwanted:
                continue
            first = record.time_ns if first is None else first
            if speed > 0:
                delay = start + (record.time_ns - first) / 1e9 / speed - time.perf_counter()
                if delay > 0:
                    time.sleep(delay)  # pacing, not synchronisation
            client.send(record.message)
            sent[name] += 1
            message = record.message
            if (isinstance(message, Shutdown) and message.to == client.router_id) or isinstance(
                client.next_message(), Shutdown
            ):
                interrupted_by_shutdown = True  # everyone, the replayer too, is shutting down
                break
        wall = time.perf_counter() - start
    finally:
        client.close()
    return {
        "path": str(path),
        "sent": sum(sent.values()),
        "by_type": dict(sent),
        "wall_time": wall,
        "stopped_by_shutdown": interrupted_by_shutdown,
    }
