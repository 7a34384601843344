"""Foxglove out of a run: live over a websocket (``foxglove-sdk``), and in the MCAP recording.

(Past 400 lines: the scene encoder and its two outputs, live and recorded, share one set of topics
and messages; split, the live and the recorded layout could drift apart.)

Both carry the same topics, so one layout (``examples/foxglove/vcosim.json``) shows either:

- ``/scene`` (``foxglove.SceneUpdate``): every vehicle as its box (``objects.Shape``) in the
  ``world`` frame, named, the ego in another colour; with a world, a line from the ego to the
  vehicle its range sensor sees, and the world's objects (``World.others``): SUMO's cars as
  boxes (entity ``traffic``) and its traffic lights' heads as balls of their state's colour
  (entity ``signals``).
- ``/tf`` (``foxglove.FrameTransforms``): ``world`` → each vehicle's name, at its centre of
  gravity, so a 3-D panel can follow a car.
- ``/vehicle/signals`` (JSON, the recording's schema ``vcosim.vehicle.signals``): every signal
  of the ego (the lone car), each a number a Plot panel plots (``/vehicle/signals.speed``);
  with a world the others' on ``/vehicles/NAME/signals`` (live; a world's recording has a
  file per vehicle).

Messages carry simulated time (ns from 0), live and recorded, and the live server advertises
it (the ``time`` capability), so the app's clock is the run's in every pacing.

``FoxgloveLive`` serves the run through ``foxglove-sdk``'s server, which checks no ``Origin``:
it binds a private loopback port and ``gate.OriginGate`` listens on the address the user
gives, admitting a handshake only if its ``Host`` names this server and its ``Origin`` is none
(a program), this server's own, Foxglove's web app, or one the user allows. The server offers
no capability that takes data from a client. ``layout.layout`` makes the layout that shows it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from vcosim.constants import FOXGLOVE_PORT, LOOPBACK
from vcosim.errors import ConfigError
from vcosim.groundtruth.gate import SUBPROTOCOL as SUBPROTOCOL  # where clients look for it
from vcosim.groundtruth.gate import OriginGate
from vcosim.groundtruth.objects import Objects, quaternion, shapes_of
from vcosim.groundtruth.sampling import Sampler
from vcosim.reports import Report
from vcosim.vehicle import SIGNAL_NAMES
from vcosim.world.others import AMBER, GREEN, OFF, RED

if TYPE_CHECKING:
    from vcosim.sim.simulation import Simulation

log = logging.getLogger("vcosim.foxglove")

FOXGLOVE_APP = "https://app.foxglove.dev"
"""Foxglove's web app: a page from there may open the stream."""
WORLD_FRAME = "world"
SCENE_TOPIC, TF_TOPIC, SIGNALS_TOPIC = "/scene", "/tf", "/vehicle/signals"
SIGNALS_SCHEMA = {
    "title": "vcosim.vehicle.signals",
    "type": "object",
    "properties": {name: {"type": "number"} for name in SIGNAL_NAMES},
}
"""The JSON schema of the signals, as the recording writes them (``sim.recorder.McapRows``)."""
EGO_COLOUR = (0.95, 0.55, 0.1, 0.9)
OTHER_COLOUR = (0.3, 0.55, 0.9, 0.8)
OBJECT_HEIGHT = 1.5
"""m: a world object's box (a SUMO car) when the world gives no height, as OSI's."""
SIGNAL_SIZE = 0.5  # m: a traffic light's head, a ball
SIGNAL_COLOURS = {RED: (0.9, 0.2, 0.2), AMBER: (1.0, 0.7, 0.0), GREEN: (0.25, 0.65, 0.3),
                  OFF: (0.4, 0.4, 0.4)}  # fmt: skip


def vehicle_topic(name: str) -> str:
    """Where a world vehicle's signals go live (the ego's on ``SIGNALS_TOPIC``)."""
    return f"/vehicles/{name}/signals"


class SceneEncoder:
    """Every vehicle as ``foxglove`` messages (``SceneUpdate``, ``FrameTransforms``)."""

    def __init__(self, sim: Simulation) -> None:
        self.shapes = shapes_of(sim)
        world = sim.world
        self.world = world
        self.ego = world.ego if world is not None else next(iter(sim.vehicles))

    def scene(self, objects: Objects) -> Any:
        """The ``SceneUpdate``: a box and a label per vehicle, and the ego's range target."""
        from foxglove.messages import (
            Color,
            CubePrimitive,
            Duration,
            SceneEntity,
            SceneUpdate,
            TextPrimitive,
        )

        stamp = _timestamp(objects.time)
        entities = []
        for row, name in enumerate(objects.names):
            shape = objects.shapes[row]
            pose = _pose(objects.centre[row], objects.orientation[row])
            r, g, b, a = EGO_COLOUR if name == self.ego else OTHER_COLOUR
            label = _pose(objects.centre[row] + (0.0, 0.0, shape.height), (0.0, 0.0, 0.0))
            entities.append(
                SceneEntity(
                    timestamp=stamp,
                    frame_id=WORLD_FRAME,
                    id=name,
                    lifetime=Duration(sec=0, nsec=0),
                    cubes=[
                        CubePrimitive(
                            pose=pose,
                            size=_vector3((shape.length, shape.width, shape.height)),
                            color=Color(r=r, g=g, b=b, a=a),
                        )
                    ],
                    texts=[
                        TextPrimitive(
                            pose=label,
                            billboard=True,
                            font_size=14.0,
                            scale_invariant=True,
                            color=Color(r=1.0, g=1.0, b=1.0, a=1.0),
                            text=name,
                        )
                    ],
                )
            )
        if self.world is not None:
            entities.extend(self._others(stamp))
        target = self._range_line(objects, stamp)
        if target is not None:
            entities.append(target)
        return SceneUpdate(entities=entities)

    def _others(self, stamp: Any) -> list[Any]:
        """The world's objects (``World.others``): SUMO's cars and traffic lights' heads.

        An entity of the cars, each a box of its size on the ground, and one of the heads, a
        ball each in its state's colour (one entity each: a car that left is gone next time).
        """
        assert self.world is not None
        from foxglove.messages import Color, CubePrimitive, Duration, SceneEntity, SpherePrimitive

        others = self.world.others()
        if not others.names and not others.signals:
            return []
        p = others.poses
        heights = p.get("height")  # SUMO's types' heights, where the objects give them
        tall = [
            float(heights[slot]) if heights is not None and heights[slot] > 0 else OBJECT_HEIGHT
            for slot, _ in others.cars()
        ]
        r, g, b, a = OTHER_COLOUR
        cubes = [
            CubePrimitive(
                pose=_pose((p["cx"][slot], p["cy"][slot], h / 2), (0.0, 0.0, p["yaw"][slot])),
                size=_vector3((2 * p["half_length"][slot], 2 * p["half_width"][slot], h)),
                color=Color(r=r, g=g, b=b, a=a),
            )
            for (slot, _), h in zip(others.cars(), tall, strict=True)
        ]
        balls = []
        for head, state in zip(others.signals, others.states.tolist(), strict=True):
            r, g, b = SIGNAL_COLOURS.get(state, SIGNAL_COLOURS[OFF])
            balls.append(
                SpherePrimitive(
                    pose=_pose((head.x, head.y, head.z), (0.0, 0.0, head.yaw)),
                    size=_vector3((SIGNAL_SIZE,) * 3),
                    color=Color(r=r, g=g, b=b, a=1.0),
                )
            )
        forever = Duration(sec=0, nsec=0)
        return [
            SceneEntity(timestamp=stamp, frame_id=WORLD_FRAME, id="traffic", lifetime=forever,
                        cubes=cubes),
            SceneEntity(timestamp=stamp, frame_id=WORLD_FRAME, id="signals", lifetime=forever,
                        spheres=balls),
        ]  # fmt: skip

    def _range_line(self, objects: Objects, stamp: Any) -> Any:
        """The line from the ego to what its range sensor sees (a world's), else None."""
        if self.world is None:
            return None
        from foxglove.messages import Color, LinePrimitive, LinePrimitiveLineType, SceneEntity

        reading = self.world.sense(self.ego)
        points = []
        if reading.target is not None and reading.target in objects.names:
            ego, seen = objects.names.index(self.ego), objects.names.index(reading.target)
            points = [_point(objects.centre[ego]), _point(objects.centre[seen])]
        elif reading.target is not None:  # one of the world's objects (a SUMO car)
            there = self.world.object_position(reading.target)
            if there is not None:
                ego = objects.names.index(self.ego)
                points = [_point(objects.centre[ego]), _point((*there[:2], OBJECT_HEIGHT / 2))]
        return SceneEntity(
            timestamp=stamp,
            frame_id=WORLD_FRAME,
            id="range",
            lines=[
                LinePrimitive(
                    type=LinePrimitiveLineType.LineStrip,
                    thickness=0.15,
                    color=Color(r=1.0, g=0.2, b=0.2, a=1.0),
                    points=points,
                )
            ],
        )

    def transforms(self, objects: Objects) -> Any:
        """``world`` → each vehicle's frame, at its centre of gravity."""
        from foxglove.messages import FrameTransform, FrameTransforms

        stamp = _timestamp(objects.time)
        return FrameTransforms(
            transforms=[
                FrameTransform(
                    timestamp=stamp,
                    parent_frame_id=WORLD_FRAME,
                    child_frame_id=name,
                    translation=_vector3(objects.cog[row]),
                    rotation=_quaternion(objects.orientation[row]),
                )
                for row, name in enumerate(objects.names)
            ]
        )


def _timestamp(time: float) -> Any:
    from foxglove.messages import Timestamp

    seconds, nanos = divmod(round(time * 1e9), 1_000_000_000)
    return Timestamp(sec=seconds, nsec=nanos)


def _vector3(values: Any) -> Any:
    from foxglove.messages import Vector3

    return Vector3(x=float(values[0]), y=float(values[1]), z=float(values[2]))


def _point(values: Any) -> Any:
    from foxglove.messages import Point3

    return Point3(x=float(values[0]), y=float(values[1]), z=float(values[2]))


def _quaternion(attitude: Any) -> Any:
    from foxglove.messages import Quaternion

    x, y, z, w = quaternion(float(attitude[0]), float(attitude[1]), float(attitude[2]))
    return Quaternion(x=x, y=y, z=z, w=w)


def _pose(position: Any, attitude: Any) -> Any:
    from foxglove.messages import Pose

    return Pose(position=_vector3(position), orientation=_quaternion(attitude))


def signals_json(row: Any) -> dict[str, float]:
    """One vehicle's outputs as the signals message (name → value)."""
    return dict(zip(SIGNAL_NAMES, row.tolist(), strict=True))


# -- live ----------------------------------------------------------------------------------


@dataclass
class FoxgloveReport(Report):
    """What the live Foxglove face served."""

    address: str
    samples: int
    every_steps: int
    clients: int = 0
    refused: dict[str, int] = field(default_factory=dict)


class FoxgloveLive(Sampler):
    """A face: the run live to the Foxglove app (``--foxglove [HOST:]PORT``).

    Args:
        every: Physics steps between samples.
        host: The address the gate listens on (loopback unless told otherwise).
        port: Its port (0: any free one, see ``address`` once started).
        allow: More origins (or hosts) whose pages may connect, as the viewer's ``--allow``.
    """

    def __init__(
        self, every: int, host: str = LOOPBACK, port: int = FOXGLOVE_PORT, allow: Iterable[str] = ()
    ) -> None:
        super().__init__(every)
        self.host, self.port = host, port
        self.allow = (FOXGLOVE_APP, *allow)
        self._server: Any = None
        self._context: Any = None
        self._gate: OriginGate | None = None
        self._encoder: SceneEncoder | None = None
        self._channels: dict[str, Any] = {}

    @property
    def address(self) -> tuple[str, int]:
        """Where the Foxglove app connects (``ws://HOST:PORT``)."""
        return (self.host, self._gate.port if self._gate is not None else self.port)

    def listen(self) -> tuple[str, int]:
        """Start foxglove-sdk's server on a private port and the gate on the public one.

        Called by ``open`` if not before: a caller that wants the address (or a refusal to
        bind) before the run starts calls it first. Returns ``address``.

        Raises:
            ConfigError: the gate cannot listen on the address.
        """
        if self._server is not None:
            return self.address
        import foxglove
        from foxglove.websocket import Capability

        from vcosim.modules.viewer.gate import Gate

        logging.getLogger("foxglove").setLevel(logging.WARNING)  # its private port: not news
        self._context = foxglove.Context()
        self._server = foxglove.start_server(
            name="vcosim",
            host=LOOPBACK,
            port=0,
            capabilities=[Capability.Time],
            context=self._context,
        )
        gate = OriginGate(self.host, self.port, self._server.port)
        try:
            gate.gate = Gate.serving(self.host, (self.host, gate.bind()), self.allow)
        except ConfigError:
            self.close()  # the server, started first, goes too
            gate.close()
            raise
        self._gate = gate
        return self.address

    def open(self, sim: Simulation) -> None:
        """Listen (if not yet), then a channel per topic."""
        import foxglove
        from foxglove.channels import FrameTransformsChannel, SceneUpdateChannel

        self.listen()
        context = self._context
        self._encoder = encoder = SceneEncoder(sim)
        self._channels = {
            SCENE_TOPIC: SceneUpdateChannel(SCENE_TOPIC, context=context),
            TF_TOPIC: FrameTransformsChannel(TF_TOPIC, context=context),
            SIGNALS_TOPIC: foxglove.Channel(SIGNALS_TOPIC, schema=SIGNALS_SCHEMA, context=context),
        }
        for name in sim.vehicles:
            if name != encoder.ego:
                topic = vehicle_topic(name)
                self._channels[topic] = foxglove.Channel(
                    topic, schema=SIGNALS_SCHEMA, context=context
                )

    def sample(self, sim: Simulation) -> None:
        """Publish the scene, the transforms and the signals, if anyone listens."""
        encoder, channels = self._encoder, self._channels
        if encoder is None or self._server is None:
            return
        stamp = round(sim.time * 1e9)
        self._server.broadcast_time(stamp)
        wanted = {topic for topic, channel in channels.items() if channel.has_sinks()}
        if not wanted:
            return
        objects = Objects.of(sim, encoder.shapes)
        if SCENE_TOPIC in wanted:
            channels[SCENE_TOPIC].log(encoder.scene(objects), log_time=stamp)
        if TF_TOPIC in wanted:
            channels[TF_TOPIC].log(encoder.transforms(objects), log_time=stamp)
        for row, name in enumerate(objects.names):
            topic = SIGNALS_TOPIC if name == encoder.ego else vehicle_topic(name)
            if topic in wanted:
                channels[topic].log(signals_json(objects.signals[row]), log_time=stamp)

    def close(self) -> None:
        """Stop the gate and the server (safe twice)."""
        if self._gate is not None:
            self._gate.close()
        if self._server is not None:
            self._server.stop()
            self._server = None

    def report(self) -> FoxgloveReport:
        """Where it served, how often, whom it refused."""
        gate = self._gate
        return FoxgloveReport(
            address=f"ws://{self.address[0]}:{self.address[1]}",
            samples=self.samples,
            every_steps=self.every,
            clients=0 if gate is None else gate.clients,
            refused={} if gate is None else dict(gate.refused),
        )


# -- recorded ------------------------------------------------------------------------------


@dataclass
class FoxgloveRecordingReport(Report):
    """The scene messages written into the recording."""

    samples: int
    every_steps: int
    file: str | None


class FoxgloveRecording(Sampler):
    """A face: ``/scene`` and ``/tf`` into the MCAP file ``--record`` writes (the ego's).

    ``writer_of(sim)`` gives the recording's open ``mcap`` writer (None: not an MCAP file);
    attach this face after the recording, which opens its file when the run starts.
    """

    def __init__(self, every: int, writer_of: Any, file: str | None = None) -> None:
        super().__init__(every)
        self.writer_of = writer_of
        self.file = file
        self._writer: Any = None
        self._encoder: SceneEncoder | None = None
        self._channels: dict[str, int] = {}

    def open(self, sim: Simulation) -> None:
        """Register the Foxglove schemas and channels in the recording."""
        from foxglove.messages import FrameTransforms, SceneUpdate

        self._writer = writer = self.writer_of(sim)
        if writer is None:
            return
        self._encoder = SceneEncoder(sim)
        for topic, kind in ((SCENE_TOPIC, SceneUpdate), (TF_TOPIC, FrameTransforms)):
            schema = kind.get_schema()
            schema_id = writer.register_schema(schema.name, schema.encoding, schema.data)
            self._channels[topic] = writer.register_channel(topic, "protobuf", schema_id)

    def sample(self, sim: Simulation) -> None:
        """Append the scene and the transforms at the simulated time."""
        writer, encoder = self._writer, self._encoder
        if writer is None or encoder is None:
            return
        objects = Objects.of(sim, encoder.shapes)
        stamp = round(objects.time * 1e9)
        for topic, message in (
            (SCENE_TOPIC, encoder.scene(objects)),
            (TF_TOPIC, encoder.transforms(objects)),
        ):
            writer.add_message(
                self._channels[topic], log_time=stamp, data=message.encode(), publish_time=stamp
            )

    def close(self) -> None:
        """Nothing of its own: the recording closes the file."""
        self._writer = None

    def report(self) -> FoxgloveRecordingReport:
        """How many scenes went into which file."""
        return FoxgloveRecordingReport(self.samples, self.every, self.file)
