"""OSI's transports: UDP datagrams and trace files, written and read back.

(Just past 400 lines: OSI's transports (UDP, esmini's fragments, two trace formats), each writer
beside its reader, so that a round trip is checked against one file.)

- ``OsiUdp``: one serialized ``SensorView`` per datagram to a receiver (a message too large
  for one datagram, 65,507 bytes, is counted and not sent), or, framed as esmini's OSI UDP
  output, each frame's ``GroundTruth`` of any size in numbered fragments (``EsminiReceiver``
  reads them back).
- ``OsiBinaryTrace`` (``FILE.osi``): the single-channel trace of the OSI specification, each
  serialized ``SensorView`` after its length as a 4-byte little-endian unsigned integer.
- ``OsiMcapTrace`` (``FILE.mcap``): the multi-channel trace, an indexed MCAP file with the
  ``net.asam.osi.trace`` metadata record, a ``protobuf`` schema per message type (its name
  ``osi3.GroundTruth``, its data the FileDescriptorSet with every import) and a channel per
  stream (``GroundTruth``, ``SensorView``) with the channel metadata the specification asks for.
- ``read_trace`` and ``summarize_trace``: a trace read back with ASAM's ``osi3trace``.
"""

from __future__ import annotations

import logging
import socket
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol

from vcosim.errors import ConfigError
from vcosim.reports import Report

if TYPE_CHECKING:
    from osi3.osi_sensorview_pb2 import SensorView

log = logging.getLogger("vcosim.osi")

MAX_DATAGRAM = 65507
"""The largest UDP payload over IPv4: a larger message cannot go in one datagram."""
FRAGMENT_HEADER = struct.Struct("<iI")
"""esmini's OSI UDP fragment header: a counter (int32: 1, 2, ...; the last one negated) and the
size of the data after it (uint32), little-endian as esmini writes them on x86 and ARM."""
FRAGMENT_DATA = 8192
"""Bytes of a message at most in one of esmini's fragments."""
FRAMINGS = ("datagram", "esmini")
"""``datagram``: a SensorView per datagram; ``esmini``: a GroundTruth in esmini's fragments."""


class OsiSink(Protocol):
    """Where serialized OSI messages go."""

    def put(self, sensor_view: SensorView, data: bytes) -> None:
        """Take one frame: the ``SensorView`` and its serialized bytes."""

    def close(self) -> None:
        """Finish (safe twice)."""


def interface_version() -> tuple[int, int, int]:
    """The OSI version of the installed ``osi3`` bindings (major, minor, patch)."""
    from osi3 import osi_version_pb2

    options = osi_version_pb2.DESCRIPTOR.GetOptions()
    version = options.Extensions[osi_version_pb2.current_interface_version]
    return version.version_major, version.version_minor, version.version_patch


def resolve_once(host: str, port: int) -> tuple[int, tuple[Any, ...]]:
    """The address family and socket address of ``host``, resolved once, before the run.

    ``sendto`` with a name asks the resolver at every frame: a name that does not resolve
    failed every send, unreported, and a slow resolver stalled the run (issue 45, H).

    Raises:
        ConfigError: ``host`` does not resolve.
    """
    try:
        family, _, _, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_DGRAM)[0]
    except (OSError, UnicodeError, ValueError) as exc:
        shown = host if len(host) <= 80 else f"{host[:80]}... ({len(host)} characters)"
        raise ConfigError([f"--osi: host {shown!r} does not resolve ({exc})"], "osi") from None
    return family, address


@dataclass
class UdpCounts(Report):
    """What went to the OSI receiver."""

    sent: int = 0
    too_large: int = 0
    send_errors: int = 0
    largest_bytes: int = 0
    fragments: int = 0
    framing: str = "datagram"


class OsiUdp:
    """Each frame to ``(host, port)``: a ``SensorView`` per datagram, or esmini's fragments.

    With ``framing = "esmini"`` each frame's ``GroundTruth`` (what esmini sends) goes in
    fragments of at most ``FRAGMENT_DATA`` bytes, each after ``FRAGMENT_HEADER``: its counter
    (1, 2, ...; the last negated, so a one-fragment frame is -1) and its data's size. esmini's
    receivers (``osi_receiver``, ``OSIReceiver`` of its scripts) put them together again, as
    ``EsminiReceiver`` does: frames of any size.

    The socket is not connected: a receiver that is not (yet) listening costs nothing but the
    datagrams, and one that starts later gets the frames from then on.
    """

    def __init__(self, host: str, port: int, framing: str = "datagram") -> None:
        if framing not in FRAMINGS:
            raise ConfigError([f"OSI over UDP: framing {framing!r} is none of {FRAMINGS}"], "osi")
        family, self.address = resolve_once(host, port)
        self._socket: socket.socket | None = socket.socket(family, socket.SOCK_DGRAM)
        self.counts = UdpCounts(framing=framing)

    def put(self, sensor_view: SensorView, data: bytes) -> None:
        """Send the frame: ``data`` in a datagram, or its ground truth in esmini's fragments.

        In a datagram, a message over ``MAX_DATAGRAM`` bytes is counted, not sent.
        """
        if self.counts.framing == "esmini":
            self._fragments(sensor_view.global_ground_truth.SerializeToString())
            return
        counts = self.counts
        counts.largest_bytes = max(counts.largest_bytes, len(data))
        if len(data) > MAX_DATAGRAM:
            if not counts.too_large:
                log.warning(
                    "OSI: a SensorView of %d bytes does not fit in a datagram (%d at most): "
                    "not sent; esmini://HOST:PORT (fragments) or a trace (--osi-trace) carry it",
                    len(data),
                    MAX_DATAGRAM,
                )
            counts.too_large += 1
            return
        if self._socket is None:
            return
        try:
            self._socket.sendto(data, self.address)
            counts.sent += 1
        except OSError:
            counts.send_errors += 1

    def _fragments(self, message: bytes) -> None:
        """Send ``message`` in esmini's numbered fragments (a frame is sent whole or counted)."""
        counts = self.counts
        counts.largest_bytes = max(counts.largest_bytes, len(message))
        if self._socket is None:
            return
        starts = range(0, max(len(message), 1), FRAGMENT_DATA)
        last = len(starts)
        try:
            for number, start in enumerate(starts, 1):
                part = message[start : start + FRAGMENT_DATA]
                counter = -number if number == last else number
                self._socket.sendto(FRAGMENT_HEADER.pack(counter, len(part)) + part, self.address)
                counts.fragments += 1
            counts.sent += 1
        except OSError:
            counts.send_errors += 1

    def close(self) -> None:
        """Close the socket (safe twice)."""
        if self._socket is not None:
            self._socket.close()
            self._socket = None


class EsminiReceiver:
    """Receives OSI frames sent in esmini's numbered fragments (``OsiUdp`` ``esmini``, esmini).

    A frame is whole when its negated counter comes after each number before it; a fragment
    out of turn drops the frame it belonged to (counted in ``broken``), and the next counter 1
    starts the next. The socket asks for a large receive buffer (``buffer`` bytes, as far as
    the system allows: ``net.core.rmem_max``), since a frame arrives as a burst of fragments.

    Args:
        port: The UDP port to listen on (0: any free one, ``address`` says which).
        host: The address to bind (loopback unless told otherwise).
        buffer: Bytes of receive buffer to ask for.
    """

    def __init__(self, port: int, host: str = "127.0.0.1", buffer: int = 1 << 23) -> None:
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, buffer)
        self._socket.bind((host, port))
        self.address: tuple[str, int] = self._socket.getsockname()[:2]
        self.broken = 0
        """Frames dropped because a fragment of theirs was missing or out of turn."""
        self._parts: list[bytes] = []

    def receive(self, timeout: float | None = None) -> bytes:
        """The next whole frame's message (serialized ``GroundTruth``).

        Raises:
            TimeoutError: no fragment came for ``timeout`` seconds.
        """
        self._socket.settimeout(timeout)
        header = FRAGMENT_HEADER.size
        while True:
            try:
                datagram = self._socket.recv(header + FRAGMENT_DATA)
            except TimeoutError as error:
                raise TimeoutError(f"no OSI fragment for {timeout} s") from error
            if len(datagram) < header:
                continue
            counter, size = FRAGMENT_HEADER.unpack_from(datagram)
            part = datagram[header : header + size]
            number = abs(counter)
            if number == 1:
                if self._parts:
                    self.broken += 1
                self._parts = []
            elif number != len(self._parts) + 1 or not self._parts:
                self.broken += bool(self._parts)
                self._parts = []
                continue
            self._parts.append(part)
            if counter < 0:
                message, self._parts = b"".join(self._parts), []
                return message

    def close(self) -> None:
        """Close the socket (safe twice)."""
        self._socket.close()

    def __enter__(self) -> EsminiReceiver:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


class OsiBinaryTrace:
    """A ``.osi`` trace: each ``SensorView`` after its length (4 bytes, little-endian)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file: IO[bytes] | None = self.path.open("wb")

    def put(self, sensor_view: SensorView, data: bytes) -> None:
        """Append one length-prefixed message."""
        if self._file is not None:
            self._file.write(struct.pack("<I", len(data)) + data)

    def close(self) -> None:
        """Close the file (safe twice)."""
        if self._file is not None:
            self._file.close()
            self._file = None


def file_descriptor_set(message: Any) -> bytes:
    """The serialized FileDescriptorSet of ``message``'s type with every file it imports."""
    from google.protobuf.descriptor_pb2 import FileDescriptorProto, FileDescriptorSet

    files: dict[str, Any] = {}

    def visit(descriptor: Any) -> None:
        if descriptor.name in files:
            return
        for dependency in descriptor.dependencies:
            visit(dependency)
        files[descriptor.name] = descriptor

    visit(message.DESCRIPTOR.file)
    out = FileDescriptorSet()
    for descriptor in files.values():
        proto = FileDescriptorProto()
        descriptor.CopyToProto(proto)
        out.file.append(proto)
    return out.SerializeToString()


class OsiMcapTrace:
    """An OSI multi-channel trace: ``GroundTruth`` and ``SensorView`` channels in MCAP.

    Written through ``vcosim.sim.mcapfile`` (chunked, indexed, readable up to its last flush
    if the run dies); flushed once a second of wall time, like the signal recording.
    """

    FLUSH_FRAMES = 100

    def __init__(self, path: str | Path, ego: str, description: str = "") -> None:
        import google.protobuf
        from osi3.osi_groundtruth_pb2 import GroundTruth
        from osi3.osi_sensorview_pb2 import SensorView

        from vcosim.sim.mcapfile import open_writer

        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._writer: Any
        self._writer, self._file = open_writer(self.path)
        osi = ".".join(map(str, interface_version()))
        protobuf = google.protobuf.__version__
        self._writer.add_metadata(
            "net.asam.osi.trace",
            {
                "version": osi,
                "min_osi_version": osi,
                "max_osi_version": osi,
                "min_protobuf_version": protobuf,
                "max_protobuf_version": protobuf,
                "creation_time": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                "description": description or "vcosim run: every vehicle's ground truth",
                "data_sources": "vcosim",
            },
        )
        self._channels = {}
        for message, topic, text in (
            (GroundTruth, "GroundTruth", "every vehicle of the run"),
            (SensorView, "SensorView", f"the view of vehicle {ego!r} (the host vehicle)"),
        ):
            name = f"osi3.{message.DESCRIPTOR.name}"
            schema = self._writer.register_schema(name, "protobuf", file_descriptor_set(message))
            self._channels[topic] = self._writer.register_channel(
                topic,
                "protobuf",
                schema,
                {
                    "net.asam.osi.trace.channel.osi_version": osi,
                    "net.asam.osi.trace.channel.protobuf_version": protobuf,
                    "net.asam.osi.trace.channel.description": text,
                },
            )
        self._writer.flush()
        self._frames = 0

    def put(self, sensor_view: SensorView, data: bytes) -> None:
        """Append the frame's ``GroundTruth`` and ``SensorView``, at their timestamp."""
        if self._writer is None:
            return
        stamp = sensor_view.timestamp.seconds * 1_000_000_000 + sensor_view.timestamp.nanos
        truth = sensor_view.global_ground_truth.SerializeToString()
        for topic, payload in (("GroundTruth", truth), ("SensorView", data)):
            self._writer.add_message(
                self._channels[topic],
                log_time=stamp,
                data=payload,
                publish_time=stamp,
                sequence=self._frames,
            )
        self._frames += 1
        if self._frames % self.FLUSH_FRAMES == 0:
            self._writer.flush()

    def close(self) -> None:
        """Write the summary and index, then close the file (safe twice)."""
        if self._writer is None:
            return
        try:
            self._writer.finish()
        finally:
            self._file.close()
            self._writer = None


def read_trace(path: str | Path, message: str = "SensorView") -> Iterator[Any]:
    """The ``message`` frames of an OSI trace (``.osi`` or ``.mcap``), in order.

    Read with ``osi3trace`` (ASAM's reader, in the ``osi`` extra): what vcosim writes is
    read by the same code as any other tool's traces.

    Raises:
        ConfigError: no such file, or not an OSI trace.
    """
    from osi3trace.osi_trace import OSITrace

    source = Path(path)
    if not source.is_file():
        raise ConfigError([f"{source}: no such file"], "osi")
    try:
        trace = OSITrace(str(source), type_name=message)
    except (ValueError, KeyError) as error:
        raise ConfigError([f"{source}: not an OSI trace of {message} ({error})"], "osi") from None
    from google.protobuf.message import DecodeError

    try:
        yield from trace
    except DecodeError as error:
        raise ConfigError([f"{source}: not an OSI trace of {message} ({error})"], "osi") from None
    finally:
        trace.close()


@dataclass
class TraceSummary(Report):
    """An OSI trace at a glance: frames, time span, rate, vehicles."""

    path: str
    frames: int
    start: float
    end: float
    rate_hz: float
    vehicles: dict[int, str]
    host_vehicle_id: int | None


def summarize_trace(path: str | Path) -> TraceSummary:
    """Frames, time span and vehicles of an OSI trace (its ``SensorView`` stream)."""
    frames, start, end, host = 0, 0.0, 0.0, None
    vehicles: dict[int, str] = {}
    for view in read_trace(path):
        time = view.timestamp.seconds + view.timestamp.nanos * 1e-9
        start = time if frames == 0 else start
        end = time
        frames += 1
        host = view.host_vehicle_id.value
        for moving in view.global_ground_truth.moving_object:
            names = [r.identifier[0] for r in moving.source_reference if r.identifier]
            vehicles.setdefault(moving.id.value, names[0] if names else "")
    if frames == 0:
        raise ConfigError([f"{path}: no OSI SensorView in it"], "osi")
    rate = (frames - 1) / (end - start) if frames > 1 and end > start else 0.0
    return TraceSummary(str(path), frames, start, end, rate, vehicles, host)
