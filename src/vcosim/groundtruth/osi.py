"""ASAM OSI out of a run: ``osi3.GroundTruth`` and the ego's ``osi3.SensorView``.

``OsiOutput`` is a face (``sim.attach("osi", OsiOutput(...))``) that samples every vehicle at
a rate of simulated time and hands each ``SensorView`` (its ``global_ground_truth`` carrying
every vehicle) to its sinks:

- ``OsiUdp``: one serialized ``SensorView`` per datagram to a receiver (a sensor model); a
  message too large for one datagram (65,507 bytes) is counted and not sent.
- ``OsiBinaryTrace`` (``FILE.osi``): the single-channel trace of the OSI specification, each
  serialized ``SensorView`` after its length as a 4-byte little-endian unsigned integer.
- ``OsiMcapTrace`` (``FILE.mcap``): the multi-channel trace, an indexed MCAP file with the
  ``net.asam.osi.trace`` metadata record, a ``protobuf`` schema per message type (its name
  ``osi3.GroundTruth``, its data the FileDescriptorSet with every import) and a channel per
  stream (``GroundTruth``, ``SensorView``) with the channel metadata the specification asks for.

What a vehicle is in OSI (``MovingObject``): id = its row in the host + 1 (the ego's is the
``host_vehicle_id``), its name in ``source_reference`` (type ``net.vcosim.vehicle``); base =
the box (``objects.Shape``: dimension, centre, orientation) with world velocity, acceleration
and orientation rate; ``vehicle_attributes`` with ``bbcenter_to_rear`` (the rear axle's middle
from the box centre), wheel radius and count; ``vehicle_classification`` type ``TYPE_CAR`` with
the light state (indicators, head light, high beam, brake and reversing lights).

Roads and traffic lights come from elsewhere: ``parts`` are callables that add to each
``GroundTruth`` before it is sent (lanes and lane boundaries of an OpenDRIVE road, traffic
lights' states), so the OSI face does not need to know where roads come from.
"""

from __future__ import annotations

import logging
import socket
import struct
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol

from vcosim.constants import LOOPBACK
from vcosim.errors import ConfigError
from vcosim.groundtruth.objects import Objects, shapes_of
from vcosim.groundtruth.sampling import Sampler
from vcosim.reports import Report

if TYPE_CHECKING:
    from osi3.osi_groundtruth_pb2 import GroundTruth
    from osi3.osi_sensorview_pb2 import SensorView

    from vcosim.sim.simulation import Simulation

log = logging.getLogger("vcosim.osi")

OSI_PORT = 48198
"""Where ``--osi udp://HOST`` sends without a port."""
MAX_DATAGRAM = 65507
"""The largest UDP payload over IPv4: a larger message cannot go in one datagram."""
VEHICLE_REFERENCE = "net.vcosim.vehicle"
"""``ExternalReference.type`` of a moving object's vcosim name."""

GroundTruthPart = Callable[["GroundTruth", "Simulation | Any"], None]
"""Adds what the vehicles are not (lanes, traffic lights) to a frame's ground truth."""


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


class GroundTruthEncoder:
    """Builds the OSI messages of a host's vehicles, one frame at a time."""

    def __init__(self, sim: Simulation | Any, parts: Sequence[GroundTruthPart] = ()) -> None:
        from osi3.osi_groundtruth_pb2 import GroundTruth

        self.shapes = shapes_of(sim)
        self.names = list(sim.vehicles)
        self.ids = {name: row + 1 for row, name in enumerate(self.names)}
        self.ego = getattr(sim, "vehicle_name", None) or _ego_name(sim)
        self.parts = tuple(parts)
        self._version = interface_version()
        self._template = GroundTruth()  # what does not change: ids, sizes, attributes
        self._fill_static(self._template)

    def _fill_static(self, truth: GroundTruth) -> None:
        from osi3.osi_object_pb2 import MovingObject

        _version(truth.version, self._version)
        truth.host_vehicle_id.value = self.ids[self.ego]
        for name in self.names:
            shape = self.shapes[name]
            moving = truth.moving_object.add()
            moving.id.value = self.ids[name]
            moving.type = MovingObject.TYPE_VEHICLE
            reference = moving.source_reference.add()
            reference.type = VEHICLE_REFERENCE
            reference.identifier.append(name)
            dimension = moving.base.dimension
            dimension.length, dimension.width, dimension.height = (
                shape.length,
                shape.width,
                shape.height,
            )
            attributes = moving.vehicle_attributes
            rear = attributes.bbcenter_to_rear
            rear.x, rear.y, rear.z = (
                a - c for a, c in zip(shape.rear_axle, shape.centre_offset, strict=True)
            )
            attributes.radius_wheel = shape.wheel_radius
            attributes.number_wheels = 4
            moving.vehicle_classification.type = MovingObject.VehicleClassification.TYPE_CAR

    def ground_truth(self, sim: Simulation | Any, objects: Objects) -> GroundTruth:
        """The frame's ``GroundTruth``: every vehicle, then what the ``parts`` add."""
        from osi3.osi_groundtruth_pb2 import GroundTruth

        truth = GroundTruth()
        truth.CopyFrom(self._template)
        _timestamp(truth.timestamp, objects.time)
        lights = _light_states(objects)
        for row, moving in enumerate(truth.moving_object):
            base = moving.base
            _vector(base.position, objects.centre[row])
            _orientation(base.orientation, objects.orientation[row])
            _vector(base.velocity, objects.velocity[row])
            _vector(base.acceleration, objects.acceleration[row])
            _orientation(base.orientation_rate, objects.orientation_rate[row])
            state = moving.vehicle_classification.light_state
            state.indicator_state, state.head_light, state.high_beam = lights[row][:3]
            state.brake_light_state, state.reversing_light = lights[row][3:]
        for part in self.parts:
            part(truth, sim)
        return truth

    def sensor_view(self, truth: GroundTruth) -> SensorView:
        """The ego's ``SensorView`` of ``truth``: its sensor on the front bumper's middle."""
        from osi3.osi_sensorview_pb2 import SensorView

        view = SensorView()
        _version(view.version, self._version)
        view.timestamp.CopyFrom(truth.timestamp)
        view.sensor_id.value = 0
        view.host_vehicle_id.CopyFrom(truth.host_vehicle_id)
        mounting = self.mounting_position()
        view.mounting_position.position.x = mounting[0]
        view.mounting_position.position.y = mounting[1]
        view.mounting_position.position.z = mounting[2]
        view.global_ground_truth.CopyFrom(truth)
        return view

    def mounting_position(self) -> tuple[float, float, float]:
        """The ego's range sensor from its rear axle's middle (OSI's vehicle frame), in m."""
        shape = self.shapes[self.ego]
        front = shape.centre_offset[0] + shape.length / 2
        return (front - shape.rear_axle[0], 0.0, shape.centre_offset[2] - shape.rear_axle[2])


def _ego_name(sim: Simulation | Any) -> str:
    """The ego: the world's, else the lone car's name in the host."""
    world = getattr(sim, "world", None)
    return world.ego if world is not None else next(iter(sim.vehicles))


def _version(message: Any, version: tuple[int, int, int]) -> None:
    message.version_major, message.version_minor, message.version_patch = version


def _timestamp(message: Any, time: float) -> None:
    nanos = round(time * 1e9)
    message.seconds, message.nanos = divmod(nanos, 1_000_000_000)


def _vector(message: Any, values: Any) -> None:
    message.x, message.y, message.z = float(values[0]), float(values[1]), float(values[2])


def _orientation(message: Any, values: Any) -> None:
    message.roll, message.pitch, message.yaw = (
        float(values[0]),
        float(values[1]),
        float(values[2]),
    )


def _light_states(objects: Objects) -> list[tuple[int, int, int, int, int]]:
    """Each vehicle's (indicator, head light, high beam, brake light, reversing light)."""
    from osi3.osi_object_pb2 import MovingObject

    states = MovingObject.VehicleClassification.LightState
    left, right = objects.signal("signal_L") > 0.5, objects.signal("signal_R") > 0.5
    low, high = objects.signal("lowbeam") > 0.5, objects.signal("highbeam") > 0.5
    braking = objects.signal("brake") > 0.0
    reversing = (objects.signal("reverse") > 0.5) | (objects.signal("gear") < -0.5)
    on, off = states.GENERIC_LIGHT_STATE_ON, states.GENERIC_LIGHT_STATE_OFF
    out = []
    for row in range(len(objects.names)):
        if left[row] and right[row]:
            indicator = states.INDICATOR_STATE_WARNING
        elif left[row] or right[row]:
            indicator = states.INDICATOR_STATE_LEFT if left[row] else states.INDICATOR_STATE_RIGHT
        else:
            indicator = states.INDICATOR_STATE_OFF
        out.append(
            (
                indicator,
                on if low[row] or high[row] else off,
                on if high[row] else off,
                states.BRAKE_LIGHT_STATE_NORMAL if braking[row] else states.BRAKE_LIGHT_STATE_OFF,
                on if reversing[row] else off,
            )
        )
    return out


# -- sinks ---------------------------------------------------------------------------------


@dataclass
class UdpCounts(Report):
    """What went to the OSI receiver."""

    sent: int = 0
    too_large: int = 0
    send_errors: int = 0
    largest_bytes: int = 0


class OsiUdp:
    """One serialized ``SensorView`` per datagram to ``(host, port)``.

    The socket is not connected: a receiver that is not (yet) listening costs nothing but the
    datagram, and one that starts later gets the frames from then on.
    """

    def __init__(self, host: str, port: int) -> None:
        self.address = (host, port)
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._socket: socket.socket | None = socket.socket(family, socket.SOCK_DGRAM)
        self.counts = UdpCounts()

    def put(self, sensor_view: SensorView, data: bytes) -> None:
        """Send ``data``; a message over ``MAX_DATAGRAM`` bytes is counted, not sent."""
        counts = self.counts
        counts.largest_bytes = max(counts.largest_bytes, len(data))
        if len(data) > MAX_DATAGRAM:
            if not counts.too_large:
                log.warning(
                    "OSI: a SensorView of %d bytes does not fit in a datagram (%d at most): "
                    "not sent; fewer vehicles, or a trace (--osi-trace), carry it",
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

    def close(self) -> None:
        """Close the socket (safe twice)."""
        if self._socket is not None:
            self._socket.close()
            self._socket = None


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


# -- the face ------------------------------------------------------------------------------


@dataclass
class OsiReport(Report):
    """What the OSI face put out: frames, every how many steps, the UDP counts, the trace."""

    frames: int
    every_steps: int
    udp: UdpCounts | None = None
    trace: str | None = None
    destinations: list[str] = field(default_factory=list)


class OsiOutput(Sampler):
    """A face: the ego's ``SensorView`` (with every vehicle's ground truth) to OSI sinks.

    Args:
        every: Physics steps between frames (``sampling.steps_per_sample``).
        udp: ``(host, port)`` of a receiver, or None.
        trace: A ``.osi`` or ``.mcap`` file, or None.
        parts: What else each ``GroundTruth`` carries (see the module docstring).
    """

    def __init__(
        self,
        every: int,
        *,
        udp: tuple[str, int] | None = None,
        trace: str | Path | None = None,
        parts: Sequence[GroundTruthPart] = (),
    ) -> None:
        super().__init__(every)
        if trace is not None and Path(trace).suffix.lower() not in (".osi", ".mcap"):
            raise ConfigError(
                [f"--osi-trace: a .osi or .mcap file, not {Path(trace).name!r}"], "osi"
            )
        self.udp_address = udp
        self.trace_path = None if trace is None else Path(trace)
        self.parts = parts
        self._sinks: list[OsiSink] = []
        self._udp: OsiUdp | None = None
        self._encoder: GroundTruthEncoder | None = None

    def open(self, sim: Simulation | Any) -> None:
        """Read the vehicles' shapes and open the socket and the trace."""
        self._encoder = encoder = GroundTruthEncoder(sim, self.parts)
        if self.udp_address is not None:
            self._udp = OsiUdp(*self.udp_address)
            self._sinks.append(self._udp)
        if self.trace_path is not None:
            if self.trace_path.suffix.lower() == ".mcap":
                self._sinks.append(OsiMcapTrace(self.trace_path, encoder.ego))
            else:
                self._sinks.append(OsiBinaryTrace(self.trace_path))

    def sample(self, sim: Simulation | Any) -> None:
        """Encode the frame once and give it to every sink."""
        encoder = self._encoder
        if encoder is None:
            return
        truth = encoder.ground_truth(sim, Objects.of(sim, encoder.shapes))
        view = encoder.sensor_view(truth)
        data = view.SerializeToString()
        for sink in self._sinks:
            sink.put(view, data)

    def close(self) -> None:
        """Close every sink (safe twice)."""
        for sink in self._sinks:
            sink.close()

    def report(self) -> OsiReport:
        """Frames, the UDP counts and the trace file."""
        destinations = []
        if self.udp_address is not None:
            destinations.append(f"udp://{self.udp_address[0]}:{self.udp_address[1]}")
        if self.trace_path is not None:
            destinations.append(str(self.trace_path))
        return OsiReport(
            frames=self.samples,
            every_steps=self.every,
            udp=None if self._udp is None else self._udp.counts,
            trace=None if self.trace_path is None else str(self.trace_path),
            destinations=destinations,
        )


def parse_udp_url(text: str) -> tuple[str, int]:
    """``udp://HOST:PORT`` (also ``HOST:PORT``, ``:PORT``): host defaults to loopback.

    Raises:
        ConfigError: not such an address.
    """
    rest = text.strip()
    scheme, sep, tail = rest.partition("://")
    if sep:
        if scheme.lower() != "udp":
            raise ConfigError([f"--osi {text!r}: OSI goes over udp://HOST:PORT"], "osi")
        rest = tail
    host, colon, port_text = rest.rpartition(":")
    if not colon:
        host, port_text = rest, ""
    host = host.strip("[]") or LOOPBACK
    try:
        port = int(port_text) if port_text else OSI_PORT
    except ValueError:
        port = -1
    if not 0 < port < 65536 or not host or any(c.isspace() for c in host):
        raise ConfigError(
            [
                f"--osi {text!r} is not an address; give udp://HOST:PORT, e.g. udp://{LOOPBACK}:"
                f"{OSI_PORT}"
            ],
            "osi",
        )
    return host, port


# -- reading a trace back ------------------------------------------------------------------


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
