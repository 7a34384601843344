"""MCAP files that stay readable by the ``mcap`` package's default readers if the writer dies.

A default reader (``mcap.reader.make_reader(f).iter_messages()``) reads a file's footer from
its last bytes first: a file cut short by ``kill -9`` has none, and reads as an error with no
message. ``CrashSafeFile`` is the stream an ``mcap.writer.Writer`` writes into: it holds the
bytes until ``flush`` (the writer's ``flush()`` closes its chunk and calls it), then puts them
on disk so that the file ends, between any two of its writes, in a valid footer:

1. a footer without summary (``summary_start`` 0) goes where the new bytes will end;
2. the new bytes go over the previous footer;
3. on ``close`` (after ``Writer.finish``) the real footer, with the index, replaces it.

A footer without summary makes the default readers read the file from the start, chunk by
chunk, to that footer: everything up to the last flush. Only a kill during step 2 itself (the
kernel may stop a write of several pages between two pages: microseconds once a second) leaves
a torn chunk they refuse. ``recover`` rewrites such a file, or one an older vcosim left, as a
complete, indexed one.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, cast

from vcosim.errors import ConfigError
from vcosim.extras import install_command
from vcosim.reports import Report

if TYPE_CHECKING:
    from mcap.writer import CompressionType, Writer

MAGIC = b"\x89MCAP0\r\n"
FOOTER_OPCODE = 0x02
# A footer without summary (start, summary offsets and CRC all 0), then the closing magic.
OPEN_TAIL = struct.pack("<BQQQI", FOOTER_OPCODE, 20, 0, 0, 0) + MAGIC
TAIL_BYTES = len(OPEN_TAIL)  # 37


def _pwrite_all(fd: int, data: bytes, offset: int) -> None:
    view = memoryview(data)
    while view:
        written = os.pwrite(fd, view, offset)
        view, offset = view[written:], offset + written


class CrashSafeFile:
    """A binary file for ``mcap.writer.Writer`` that ends in a valid footer after every flush.

    Only what the writer puts here is written; ``tell`` is the writer's own position (the
    temporary footer on disk is not counted: the next bytes go over it).
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._fd: int | None = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
        self._on_disk = 0  # bytes written before the temporary footer
        self._pending = bytearray()

    def write(self, data: bytes) -> int:
        """Hold ``data`` until the next flush."""
        self._pending += data
        return len(data)

    def tell(self) -> int:
        """The position the writer has reached."""
        return self._on_disk + len(self._pending)

    def flush(self) -> None:
        """Put the held bytes on disk, the file ending in a footer without summary."""
        self._put(final=False)

    def _put(self, *, final: bool) -> None:
        fd = self._fd
        if fd is None or not self._pending:
            return
        data = bytes(self._pending)
        self._pending.clear()
        body, tail = (data[:-TAIL_BYTES], data[-TAIL_BYTES:]) if final else (data, OPEN_TAIL)
        at = self._on_disk
        if len(body) < TAIL_BYTES:  # would cut the old footer before covering it: one write
            _pwrite_all(fd, body + tail, at)
        else:
            _pwrite_all(fd, OPEN_TAIL, at + len(body))  # (1) the file ends in a footer
            _pwrite_all(fd, body, at)  # (2) the new bytes replace the old footer
            if final:
                _pwrite_all(fd, tail, at + len(body))  # (3) the footer with the index
        self._on_disk = at + len(body)
        os.ftruncate(fd, self._on_disk + TAIL_BYTES)

    def close(self) -> None:
        """Write what the writer finished (its footer last) and close (safe twice).

        Call after ``Writer.finish()``; without it, the file keeps its summary-less footer.
        """
        if self._fd is None:
            return
        finished = self._pending[-len(MAGIC) :] == MAGIC and len(self._pending) >= TAIL_BYTES
        try:
            self._put(final=finished)
        finally:
            os.close(self._fd)
            self._fd = None

    def as_stream(self) -> IO[bytes]:
        """The file, typed as the stream ``mcap.writer.Writer`` takes."""
        return cast(IO[bytes], self)


def open_writer(
    path: str | Path, compression: CompressionType | None = None
) -> tuple[Writer, CrashSafeFile]:
    """An ``mcap.writer.Writer`` on a ``CrashSafeFile``, started and flushed (a valid file).

    Raises:
        ConfigError: the ``mcap`` package (the ``logging`` extra) is not installed.
    """
    try:
        from mcap.writer import Writer
    except ImportError:
        raise ConfigError(
            [f"MCAP needs the `logging` extra: {install_command('logging')}"], str(path)
        ) from None
    file = CrashSafeFile(path)
    stream = file.as_stream()
    writer = Writer(stream) if compression is None else Writer(stream, compression=compression)
    writer.start(profile="", library="vcosim")
    file.flush()
    return writer, file


@dataclass
class RecoverReport(Report):
    """What ``recover`` kept of a recording: messages, and the bytes after the last whole one."""

    path: str
    messages: int
    dropped_bytes: int
    was_complete: bool


def recover(path: str | Path, out: str | Path | None = None) -> RecoverReport:
    """Rewrite an MCAP file cut short (a crash, ``kill -9``) as a complete, indexed one.

    Every schema, channel, metadata record, attachment and message up to the first record
    that cannot be read is kept; ``out`` defaults to ``path`` itself (replaced only once the
    new file is complete).

    Raises:
        ConfigError: no such file, or not an MCAP file (its first bytes are not MCAP's magic).
    """
    from mcap.records import Attachment, Channel, Footer, Message, Metadata, Schema
    from mcap.stream_reader import StreamReader

    source = Path(path)
    target = Path(out) if out is not None else source
    if not source.is_file():
        raise ConfigError([f"{source}: no such file"], "recover")
    size = source.stat().st_size
    with source.open("rb") as stream:
        if stream.read(len(MAGIC)) != MAGIC:
            raise ConfigError([f"{source}: not an MCAP file"], "recover")
        stream.seek(0)
        temporary = target.with_name(target.name + ".recovering")
        writer, file = open_writer(temporary)
        schemas: dict[int, int] = {}
        channels: dict[int, int] = {}
        messages, read_to, complete = 0, 0, False
        records = StreamReader(stream, record_size_limit=size).records
        try:
            for record in records:
                if isinstance(record, Schema) and record.id not in schemas:
                    schemas[record.id] = writer.register_schema(
                        record.name, record.encoding, record.data
                    )
                elif isinstance(record, Channel) and record.id not in channels:
                    channels[record.id] = writer.register_channel(
                        record.topic,
                        record.message_encoding,
                        schemas.get(record.schema_id, 0),
                        record.metadata,
                    )
                elif isinstance(record, Message) and record.channel_id in channels:
                    writer.add_message(
                        channels[record.channel_id],
                        record.log_time,
                        record.data,
                        record.publish_time,
                        record.sequence,
                    )
                    messages += 1
                elif isinstance(record, Metadata):
                    writer.add_metadata(record.name, record.metadata)
                elif isinstance(record, Attachment):
                    writer.add_attachment(
                        record.create_time,
                        record.log_time,
                        record.name,
                        record.media_type,
                        record.data,
                    )
                complete = isinstance(record, Footer)
                read_to = stream.tell()
        except Exception:  # noqa: BLE001 (a torn end raises whatever its codec does: zstd, lz4)
            pass  # everything before the torn end is kept
        writer.finish()
        file.close()
    os.replace(temporary, target)
    return RecoverReport(
        path=str(target),
        messages=messages,
        dropped_bytes=0 if complete else max(0, size - read_to),
        was_complete=complete,
    )
