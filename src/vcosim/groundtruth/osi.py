"""ASAM OSI out of a run: ``osi3.GroundTruth`` and the ego's ``osi3.SensorView``.

(Past 400 lines: the encoder of GroundTruth and SensorView and the face that samples the run share
one map of object ids and one static part; the transports already live in ``osi_io``.)

``OsiOutput`` is a face (``sim.attach("osi", OsiOutput(...))``) that samples every vehicle at
a rate of simulated time and hands each ``SensorView`` (its ``global_ground_truth`` carrying
every vehicle) to its sinks (``osi_io``): a UDP receiver, a ``.osi`` or an MCAP trace.

What a vehicle is in OSI (``MovingObject``): id = its row in the host + 1 (the ego's is the
``host_vehicle_id``), its name in ``source_reference`` (type ``net.vcosim.vehicle``); base =
the box (``objects.Shape``: dimension, centre, orientation) with world velocity, acceleration
and orientation rate; ``vehicle_attributes`` with ``bbcenter_to_rear`` (the rear axle's middle
from the box centre), wheel radius and count; ``vehicle_classification`` type ``TYPE_CAR`` with
the light state (indicators, head light, high beam, brake and reversing lights).

A world's objects (SUMO's cars) follow its vehicles (``world_objects``). Roads and traffic
lights come from elsewhere: ``parts`` are callables that add to each
``GroundTruth`` before it is sent (lanes and lane boundaries of an OpenDRIVE road, traffic
lights' states), so the OSI face does not need to know where roads come from.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vcosim.address import AddressError, parse_address
from vcosim.constants import LOOPBACK, OSI_PORT
from vcosim.errors import ConfigError
from vcosim.groundtruth.objects import Objects, shapes_of
from vcosim.groundtruth.osi_io import (
    OsiBinaryTrace,
    OsiMcapTrace,
    OsiSink,
    OsiUdp,
    UdpCounts,
    interface_version,
    resolve_once,
)
from vcosim.groundtruth.sampling import Sampler
from vcosim.reports import Report
from vcosim.world.others import AMBER, GREEN, RED, Others

if TYPE_CHECKING:
    from osi3.osi_groundtruth_pb2 import GroundTruth
    from osi3.osi_sensorview_pb2 import SensorView

    from vcosim.sim.simulation import Simulation

VEHICLE_REFERENCE = "net.vcosim.vehicle"
"""``ExternalReference.type`` of a moving object's vcosim name."""
OBJECT_REFERENCE = "net.vcosim.object"
"""``ExternalReference.type`` of a world object's name (a SUMO car's id, docs/traffic.md)."""
SUMO_VEHICLE_IDS = 1 << 24
"""The OSI ids of a world's objects (SUMO's vehicles) count from here, in the order they first
come; the world's own vehicles are their row + 1, below it."""
PEDESTRIAN_IDS = 1 << 30
"""The OSI ids of a world's pedestrians (SUMO's persons) count from here."""
TRAFFIC_LIGHT_IDS = 1 << 31
"""The OSI id of a world's traffic-light head ``i`` is this + ``i``; lanes and lane boundaries
count from 2^32 (``osi_road.FIRST_ID``): the kinds' ranges are disjoint."""
OSI_COLOURS = {RED: "COLOR_RED", AMBER: "COLOR_YELLOW", GREEN: "COLOR_GREEN"}
"""OSI's colour of a head's state (bank H's codes); an unlit head is ``MODE_OFF``."""
OBJECT_HEIGHT = 1.5
"""m: the height of a world object's box when the world gives none."""
PEDESTRIAN_CLASS = "pedestrian"
"""The ``kind`` (SUMO's vehicle class) of a SUMO person."""
OSI_VEHICLE_TYPES = {
    "bus": "TYPE_BUS", "coach": "TYPE_BUS", "truck": "TYPE_HEAVY_TRUCK",
    "trailer": "TYPE_SEMITRACTOR", "delivery": "TYPE_DELIVERY_VAN",
    "motorcycle": "TYPE_MOTORBIKE", "moped": "TYPE_MOTORBIKE", "bicycle": "TYPE_BICYCLE",
    "scooter": "TYPE_STANDUP_SCOOTER", "wheelchair": "TYPE_WHEELCHAIR", "tram": "TYPE_TRAM",
    "rail_urban": "TYPE_TRAIN", "rail": "TYPE_TRAIN", "rail_electric": "TYPE_TRAIN",
    "rail_fast": "TYPE_TRAIN", "subway": "TYPE_TRAIN",
}  # fmt: skip
"""OSI's vehicle type of SUMO's vehicle classes; every other class (passenger, taxi, ...) is
``TYPE_CAR``, as vcosim's own cars."""
SUMO_BLINKER_RIGHT, SUMO_BLINKER_LEFT, SUMO_BLINKER_EMERGENCY = 1, 2, 4
SUMO_BRAKE_LIGHT, SUMO_FRONT_LIGHT, SUMO_HIGH_BEAM, SUMO_BACKDRIVE = 8, 16, 64, 128
"""The bits of SUMO's vehicle signals (``VEH_SIGNAL_*``) that OSI's light state has."""

GroundTruthPart = Callable[["GroundTruth", "Simulation"], None]
"""Adds what the vehicles are not (lanes, traffic lights) to a frame's ground truth."""


class ObjectIds:
    """OSI ids that name one object for a whole trace: the next free one of its kind's range.

    OSI asks that an identifier name one object for the whole trace, so a SUMO car that
    leaves keeps its id (a slot of the world, which the next car takes, would lend it on).
    """

    def __init__(self) -> None:
        self._ids: dict[tuple[int, str], int] = {}
        self._taken: dict[int, int] = {}

    def __call__(self, first: int, name: str) -> int:
        """The id of object ``name`` in the range that starts at ``first``."""
        key = (first, name)
        found = self._ids.get(key)
        if found is None:
            taken = self._taken.get(first, 0)
            found = self._ids[key] = first + taken
            self._taken[first] = taken + 1
        return found

    def __len__(self) -> int:
        return len(self._ids)


class GroundTruthEncoder:
    """Builds the OSI messages of a host's vehicles, one frame at a time."""

    def __init__(self, sim: Simulation, parts: Sequence[GroundTruthPart] = ()) -> None:
        from osi3.osi_groundtruth_pb2 import GroundTruth

        self.shapes = shapes_of(sim)
        self.names = list(sim.vehicles)
        self.ids = {name: row + 1 for row, name in enumerate(self.names)}
        self.ego = sim.vehicle_name or _ego_name(sim)
        self.parts = tuple(parts)
        self.object_ids = ObjectIds()
        """The ids of the world's objects, kept for the whole trace."""
        self._version = interface_version()
        self._template = GroundTruth()  # what does not change: ids, sizes, attributes
        self._fill_static(self._template)

    def _fill_static(self, truth: GroundTruth) -> None:
        from osi3.osi_object_pb2 import MovingObject

        _version(truth.version, self._version)
        if self.ego in self.ids:  # a world of objects only has no host vehicle
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

    def ground_truth(self, sim: Simulation, objects: Objects) -> GroundTruth:
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
        world_objects(truth, sim, self.object_ids)
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
        if truth.HasField("host_vehicle_id"):  # none in a world of objects only
            view.host_vehicle_id.CopyFrom(truth.host_vehicle_id)
        mounting = self.mounting_position()
        view.mounting_position.position.x = mounting[0]
        view.mounting_position.position.y = mounting[1]
        view.mounting_position.position.z = mounting[2]
        view.global_ground_truth.CopyFrom(truth)
        return view

    def mounting_position(self) -> tuple[float, float, float]:
        """The ego's range sensor from its rear axle's middle (OSI's vehicle frame), in m."""
        if self.ego not in self.shapes:  # no host vehicle: the sensor at the world's origin
            return (0.0, 0.0, 0.0)
        shape = self.shapes[self.ego]
        front = shape.centre_offset[0] + shape.length / 2
        return (front - shape.rear_axle[0], 0.0, shape.centre_offset[2] - shape.rear_axle[2])


def world_objects(truth: GroundTruth, sim: Simulation, ids: ObjectIds | None = None) -> None:
    """The world's objects (SUMO's vehicles and persons) after its vehicles, as it sees them.

    Each is a box on flat ground of its SUMO type's size (``OBJECT_HEIGHT`` tall when the
    world gives no height): its id from ``ids`` (vehicles from ``SUMO_VEHICLE_IDS``, persons
    from ``PEDESTRIAN_IDS``, each its own for the whole trace: pass the same ``ids`` every
    frame), its name in ``source_reference`` (type ``net.vcosim.object``), centre, yaw,
    velocity, acceleration and yaw rate (the world's interpolation between SUMO's steps). A
    vehicle has SUMO's vehicle class as OSI's (``OSI_VEHICLE_TYPES``) and its lights from
    SUMO's signal bits; a person is a ``TYPE_PEDESTRIAN``.
    """
    world = sim.world
    if world is None or world.objects is None:
        return
    from osi3.osi_object_pb2 import MovingObject

    ids = ObjectIds() if ids is None else ids
    others = world.others()
    p = others.poses
    heights = p.get("height")
    kinds = p.get("kind")
    signals = p.get("signals")
    classes = MovingObject.VehicleClassification
    for slot, name in others.cars():
        kind = "passenger" if kinds is None else str(kinds[slot])
        height = float(heights[slot]) if heights is not None else 0.0
        height = height if height > 0.0 else OBJECT_HEIGHT
        moving = truth.moving_object.add()
        pedestrian = kind == PEDESTRIAN_CLASS
        moving.id.value = ids(PEDESTRIAN_IDS if pedestrian else SUMO_VEHICLE_IDS, name)
        moving.type = MovingObject.TYPE_PEDESTRIAN if pedestrian else MovingObject.TYPE_VEHICLE
        reference = moving.source_reference.add()
        reference.type = OBJECT_REFERENCE
        reference.identifier.append(name)
        base = moving.base
        base.dimension.length = 2.0 * float(p["half_length"][slot])
        base.dimension.width = 2.0 * float(p["half_width"][slot])
        base.dimension.height = height
        _vector(base.position, (p["cx"][slot], p["cy"][slot], height / 2))
        _orientation(base.orientation, (0.0, 0.0, p["yaw"][slot]))
        _vector(base.velocity, (p["vx"][slot], p["vy"][slot], 0.0))
        _vector(base.acceleration, (p["ax"][slot], p["ay"][slot], 0.0))
        _orientation(base.orientation_rate, (0.0, 0.0, p["yaw_rate"][slot]))
        if pedestrian:
            continue
        classification = moving.vehicle_classification
        classification.type = classes.Type.Value(OSI_VEHICLE_TYPES.get(kind, "TYPE_CAR"))
        if signals is not None:
            _sumo_lights(classification.light_state, int(signals[slot]))
    traffic_lights(truth, others)


def _sumo_lights(state: Any, bits: int) -> None:
    """OSI's light state of SUMO's signal bits (blinkers, brake, front and high beam, back)."""
    from osi3.osi_object_pb2 import MovingObject

    states = MovingObject.VehicleClassification.LightState
    on, off = states.GENERIC_LIGHT_STATE_ON, states.GENERIC_LIGHT_STATE_OFF
    right, left = bits & SUMO_BLINKER_RIGHT, bits & SUMO_BLINKER_LEFT
    if bits & SUMO_BLINKER_EMERGENCY or (left and right):
        state.indicator_state = states.INDICATOR_STATE_WARNING
    elif left or right:
        state.indicator_state = (
            states.INDICATOR_STATE_LEFT if left else states.INDICATOR_STATE_RIGHT
        )
    else:
        state.indicator_state = states.INDICATOR_STATE_OFF
    braking = bits & SUMO_BRAKE_LIGHT
    state.brake_light_state = (
        states.BRAKE_LIGHT_STATE_NORMAL if braking else states.BRAKE_LIGHT_STATE_OFF
    )
    state.head_light = on if bits & (SUMO_FRONT_LIGHT | SUMO_HIGH_BEAM) else off
    state.high_beam = on if bits & SUMO_HIGH_BEAM else off
    state.reversing_light = on if bits & SUMO_BACKDRIVE else off


def traffic_lights(truth: GroundTruth, others: Others) -> None:
    """Each head of the world's traffic lights: a lit lamp at its stop line, in its colour.

    A head shows one link's state (SUMO's), so its colour is that state's and its mode
    constant (off: ``MODE_OFF``); its name (``C.3``) is its ``source_reference``.
    """
    from osi3.osi_trafficlight_pb2 import TrafficLight

    classes = TrafficLight.Classification
    for index, (head, state) in enumerate(zip(others.signals, others.states, strict=True)):
        light = truth.traffic_light.add()
        light.id.value = TRAFFIC_LIGHT_IDS + index
        reference = light.source_reference.add()
        reference.type = OBJECT_REFERENCE
        reference.identifier.append(head.name)
        _vector(light.base.position, (head.x, head.y, head.z))
        _orientation(light.base.orientation, (0.0, 0.0, head.yaw))
        light.base.dimension.length = light.base.dimension.width = 0.3
        light.base.dimension.height = 0.3
        colour = OSI_COLOURS.get(float(state))
        classification = light.classification
        classification.color = classes.Color.Value(colour or "COLOR_OTHER")
        classification.icon = classes.ICON_NONE
        classification.mode = classes.MODE_CONSTANT if colour else classes.MODE_OFF


def _ego_name(sim: Simulation) -> str:
    """The ego: the world's, else the lone car's name in the host."""
    world = sim.world
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


# -- the face ------------------------------------------------------------------------------


@dataclass
class OsiReport(Report):
    """What the OSI face put out: frames, every how many steps, the UDP counts, the trace."""

    frames: int
    every_steps: int
    udp: UdpCounts | None = None
    trace: str | None = None
    destinations: list[str] = field(default_factory=list)
    udp_largest_bytes: int | None = None  # the summary's lines of ``udp``: its largest frame,
    udp_dropped: int | None = None  # frames not sent (too large for a datagram, or failed)
    udp_sent: int | None = None  # and those sent (datagrams, or frames in esmini's fragments)
    sent_to: str = ""  # the destinations in one line, for the summary


class OsiOutput(Sampler):
    """A face: the ego's ``SensorView`` (with every vehicle's ground truth) to OSI sinks.

    Args:
        every: Physics steps between frames (``sampling.steps_per_sample``).
        udp: ``(host, port)`` of a receiver, or None.
        trace: A ``.osi`` or ``.mcap`` file, or None.
        parts: What else each ``GroundTruth`` carries (see the module docstring).
        udp_framing: ``datagram`` (a ``SensorView`` per datagram, at most 64 kB) or
            ``esmini`` (the ``GroundTruth`` in esmini's numbered fragments, any size).
    """

    def __init__(
        self,
        every: int,
        *,
        udp: tuple[str, int] | None = None,
        trace: str | Path | None = None,
        parts: Sequence[GroundTruthPart] = (),
        udp_framing: str = "datagram",
    ) -> None:
        super().__init__(every)
        if trace is not None and Path(trace).suffix.lower() not in (".osi", ".mcap"):
            raise ConfigError(
                [f"--osi-trace: a .osi or .mcap file, not {Path(trace).name!r}"], "osi"
            )
        self.udp_address = udp
        self.udp_framing = udp_framing
        self.trace_path = None if trace is None else Path(trace)
        self.parts = parts
        self._sinks: list[OsiSink] = []
        self._udp: OsiUdp | None = None
        self._encoder: GroundTruthEncoder | None = None

    def open(self, sim: Simulation) -> None:
        """Read the vehicles' shapes and open the socket and the trace."""
        self._encoder = encoder = GroundTruthEncoder(sim, self.parts)
        if self.udp_address is not None:
            self._udp = OsiUdp(*self.udp_address, framing=self.udp_framing)
            self._sinks.append(self._udp)
        if self.trace_path is not None:
            if self.trace_path.suffix.lower() == ".mcap":
                self._sinks.append(OsiMcapTrace(self.trace_path, encoder.ego))
            else:
                self._sinks.append(OsiBinaryTrace(self.trace_path))

    def sample(self, sim: Simulation) -> None:
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
            scheme = "esmini" if self.udp_framing == "esmini" else "udp"
            destinations.append(f"{scheme}://{self.udp_address[0]}:{self.udp_address[1]}")
        if self.trace_path is not None:
            destinations.append(str(self.trace_path))
        udp = None if self._udp is None else self._udp.counts
        return OsiReport(
            frames=self.samples,
            every_steps=self.every,
            udp=udp,
            trace=None if self.trace_path is None else str(self.trace_path),
            destinations=destinations,
            udp_largest_bytes=None if udp is None else udp.largest_bytes,
            udp_dropped=None if udp is None else udp.too_large + udp.send_errors,
            udp_sent=None if udp is None else udp.sent,
            sent_to=", ".join(destinations),
        )


UDP_SCHEMES = {"udp": "datagram", "esmini": "esmini"}
"""``--osi``'s schemes and their framing (``osi_io.OsiUdp``)."""


def udp_framing(text: str) -> str:
    """The framing ``--osi``'s address asks for: ``esmini://`` esmini's, else ``datagram``."""
    scheme, sep, _ = text.strip().partition("://")
    return UDP_SCHEMES.get(scheme.lower(), "datagram") if sep else "datagram"


def parse_udp_url(text: str) -> tuple[str, int]:
    """``udp://HOST:PORT`` or ``esmini://HOST:PORT`` (also ``HOST:PORT``, ``:PORT``).

    The host defaults to loopback, the port to OSI's 48198.

    Raises:
        ConfigError: not such an address.
    """
    rest = text.strip()
    scheme, sep, tail = rest.partition("://")
    if sep:
        if scheme.lower() not in UDP_SCHEMES:
            raise ConfigError(
                [f"--osi {text!r}: OSI goes over udp://HOST:PORT or esmini://HOST:PORT"], "osi"
            )
        rest = tail
    try:
        at = parse_address(rest, default_port=OSI_PORT, check_host=False)
    except AddressError:
        raise ConfigError(
            [
                f"--osi {text!r} is not an address; give udp://HOST:PORT, e.g. udp://{LOOPBACK}:"
                f"{OSI_PORT}"
            ],
            "osi",
        ) from None
    host, port = at.host.strip("[]") or LOOPBACK, at.port
    resolve_once(host, port)  # a name that does not resolve is refused before the run
    return host, port
