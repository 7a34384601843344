"""A world's vehicles on the bus: ``BusWorld``, module 22, announces them and publishes poses.

``vcosim sim --world FILE --bus HOST:PORT`` attaches it beside a ``BusVehicle`` per externally
driven vehicle (the ego as module 16, the others as ``64 + row``). It speaks for every vehicle
of ``sim.vehicles`` (a lone car too, as row 0):

- WorldVehicle (row, name, box length and width, ego 0/1, box offset) for each vehicle at the
  start and again every ``announce_period`` simulated seconds, so a viewer or logger that
  joins late learns the names within a second;
- WorldPose (row, x, y, z, roll, pitch, yaw, speed, rpm, gear) for each vehicle every
  ``1 / rate`` simulated seconds (20 Hz);
- on an OpenDRIVE road, RoadPosition (row, road id, s, t, lane id) after each vehicle's
  WorldPose (``vcosim.roads.tracking``: each vehicle looked for from where it was last).

A world's objects (SUMO's cars, docs/traffic.md) follow in the rows after its vehicles
(``len(world) + slot``), as boxes on the ground (no box offset, z, roll, pitch, rpm or gear);
a row that a new car took is announced again before its first pose. Their traffic lights'
heads (``World.others``) go as WorldSignal with the announcements, and each again when its
state changes.

Both go to the visualisation (18) and, like every message, as copies to monitors (the
logger). One datagram per vehicle: a message is at most 256 bytes and a pose takes up to
~230 (floats cross the wire exactly), so batching vehicles would need a second framing of the
codec for no gain: 100 vehicles at 20 Hz are 2,000 datagrams/s, a twentieth of what the router
routes.

The face publishes from ``on_frame``, not after every physics step, so a world keeps stepping
in long kernel calls: a pose is published at the first frame at or past each period (with a
frame rate of at least ``rate``, every period; the default 60 Hz frame is). Its client follows
the bus's liveness rules: a Shutdown ends the run, a router silent for 10 s ends it with
``RouterLost`` (exit code 1).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from vcosim.bus.catalogue import (
    WORLD_VEHICLE_BASE,
    ModuleId,
    WorldPose,
    WorldSignal,
    WorldVehicle,
)
from vcosim.bus.client import DEFAULT_PORT
from vcosim.bus.codec import Codec
from vcosim.bus.face import BusFace, BusReport
from vcosim.bus.vehicle_module import GEAR, POSE, RPM, BusVehicle, road_positions
from vcosim.errors import ProtocolError

if TYPE_CHECKING:
    from vcosim.roads import RoadNetwork
    from vcosim.roads.tracking import RoadTracker
    from vcosim.sim.simulation import Simulation
    from vcosim.vehicle import VehicleView

log = logging.getLogger("vcosim.bus")


def vehicle_module_id(row: int, ego: bool) -> int:
    """The bus id of a world's externally driven vehicle: 16 for the ego, else 64 + its row."""
    return int(ModuleId.VEHICLE) if ego else WORLD_VEHICLE_BASE + row


def attach_world_bus(
    sim: Simulation, host: str, port: int, road: RoadNetwork | None = None
) -> list[str]:
    """Put a world on the bus: BusWorld, and a BusVehicle for each externally driven vehicle.

    The ego joins as the vehicle module (16), so the input module, sound and viewer serve it
    unchanged; the others join as ``64 + row`` and speak only to their driver (their poses go
    out as WorldPose). Returns what joins, a line each, for the command to say.
    """
    world = sim.world
    external = () if world is None else world.external
    sim.attach("bus_world", BusWorld(host, port, road=road))
    lines = [
        f"bus: module {int(ModuleId.WORLD)} publishes the poses of {len(sim.vehicles)} vehicles"
    ]
    for row, (name, vehicle) in enumerate(sim.vehicles.items()):
        if name not in external:
            continue
        ego = vehicle is sim.vehicle
        module_id = vehicle_module_id(row, ego)
        quiet: dict[str, Any] = (
            {} if ego else {"input_id": None, "visualisation_id": None, "sound_id": None}
        )
        sim.attach(
            f"bus:{name}", BusVehicle(host, port, module_id=module_id, **quiet), vehicle=name
        )
        lines.append(f"bus: {name} is module {module_id}" + (" (the ego)" if ego else ""))
    return lines


@dataclass(frozen=True)
class Entry:
    """One vehicle as the bus knows it."""

    row: int
    name: str
    vehicle: VehicleView
    length: float
    width: float
    offset: float
    ego: bool


def entries(sim: Simulation) -> list[Entry]:
    """Every vehicle of the simulation with its row, box and ego flag (a lone car: row 0)."""
    world = sim.world
    result = []
    for row, (name, vehicle) in enumerate(sim.vehicles.items()):
        if world is not None:
            g = world.geometry
            half_length, half_width = g["half_length"][row], g["half_width"][row]
            offset = g["box_offset"][row]
        else:  # the same box as a world's (docs/worlds.md: collisions)
            p = vehicle.params.pack()[0]
            half_length = (p["a"] + p["b"]) / 2 + vehicle.params.wheels.radius
            half_width, offset = vehicle.params.body.track / 2, (p["a"] - p["b"]) / 2
        result.append(
            Entry(
                row,
                name,
                vehicle,
                2 * float(half_length),
                2 * float(half_width),
                float(offset),
                vehicle is sim.vehicle,
            )
        )
    return result


@dataclass
class BusWorldReport(BusReport):
    """The world module's counters: the vehicles it speaks for, what it published."""

    vehicles: int
    poses: int
    announcements: int


class BusWorld(BusFace):
    """Every vehicle of a simulation announced and its pose published on a bus (a face).

    Args:
        host, port: the router's handshake address.
        module_id: this module's id (22).
        to: where the messages go (the visualisation, 18); monitors get copies anyway.
        rate: pose publications per simulated second (20).
        announce_period: simulated seconds between announcements of the vehicles (1).
        codec: message symbols and maximum length (the router's).
        connect_timeout: seconds to wait for the router's answer at start.
        road: the run's OpenDRIVE road: a RoadPosition for each vehicle with its pose.
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = DEFAULT_PORT,
        *,
        module_id: int = ModuleId.WORLD,
        to: int = ModuleId.VISUALISATION,
        rate: float = 20.0,
        announce_period: float = 1.0,
        codec: Codec | None = None,
        connect_timeout: float = 5.0,
        road: RoadNetwork | None = None,
    ) -> None:
        if not rate > 0 or not announce_period > 0:
            raise ProtocolError(
                f"rate and announce_period must be positive, got {rate} and {announce_period}"
            )
        super().__init__(module_id, host, port, codec, connect_timeout)
        self.to = int(to)
        self.rate = rate
        self.announce_period = announce_period
        self.entries: list[Entry] = []
        self.announce_every = 1
        self._next_pose = 0
        self._next_announce = 0
        self.poses = 0  # publications (a WorldPose for each vehicle)
        self.announcements = 0
        self._world: Any = None  # a world with objects (SUMO's cars) publishes them too
        self._announced: dict[int, str] = {}  # object rows announced, with whose name
        self._road = road
        self._tracker: RoadTracker | None = None
        self.road_positions = 0  # RoadPosition messages sent
        self._signal_states: dict[int, int] = {}  # traffic lights' heads: the state last sent

    # -- hooks ------------------------------------------------------------------------------
    def start(self, sim: Simulation) -> None:
        """Join the bus, learn the vehicles, announce them and publish their first poses."""
        self.join()
        self.entries = entries(sim)
        self._world = sim.world
        if self._road is not None:
            from vcosim.roads.tracking import RoadTracker

            self._tracker = RoadTracker(self._road, len(self.entries))
        self.every = max(1, round(1.0 / (self.rate * sim.dt)))
        self.announce_every = max(self.every, round(self.announce_period / sim.dt))
        self._next_pose = self._next_announce = sim.body.step_index
        log.info(
            "bus world: module %d on the bus at %s:%d, %d vehicle(s), poses every %d steps",
            self.client.module_id,
            *self.client.router_address,
            len(self.entries),
            self.every,
        )
        self.on_frame(sim)

    def on_frame(self, sim: Simulation) -> None:
        """Take what has arrived; announce and publish when their periods are due."""
        client = self.client
        client.poll()
        while (message := client.next_message()) is not None:
            self.received_shutdown(sim, message)
        if self.shutdown:
            return
        step = sim.body.step_index
        if step >= self._next_announce:
            self._next_announce = _next(step, self.announce_every)
            self.announce()
        if step >= self._next_pose:
            self._next_pose = _next(step, self.every)
            self.publish()

    # -- publishing -------------------------------------------------------------------------
    def announce(self) -> None:
        """A WorldVehicle for every vehicle."""
        for e in self.entries:
            for name in (e.name, f"#{e.row}"):  # a name the bus cannot carry: its row then
                try:
                    self.client.send(
                        WorldVehicle(
                            e.row, name, e.length, e.width, int(e.ego), e.offset, to=self.to
                        )
                    )
                    break
                except ProtocolError as exc:
                    self._send_error(exc)
        for row, name, p, slot in self._objects():
            self._announce_object(row, name, p, slot)
        self._signals(every=True)
        self.announcements += 1

    def _signals(self, every: bool) -> None:
        """A WorldSignal for every traffic light's head (``every``), or those that changed."""
        world = self._world
        if world is None or world.objects is None:
            return
        others = world.others()
        for index, (head, value) in enumerate(zip(others.signals, others.states, strict=True)):
            state = int(value)
            if not every and self._signal_states.get(index) == state:
                continue
            try:
                self.client.send(
                    WorldSignal(index, head.name, head.x, head.y, head.z, head.yaw, state,
                                to=self.to)
                )  # fmt: skip
                self._signal_states[index] = state
            except ProtocolError as exc:
                self._send_error(exc)

    def _objects(self) -> Iterator[tuple[int, str, dict[str, Any], int]]:
        """The world's objects (SUMO's cars) now: row, name, the pose arrays and their slot."""
        world = self._world
        if world is None or world.objects is None:
            return
        others = world.others()
        for slot, name in others.cars():
            yield others.first_row + slot, name, others.poses, slot

    def _announce_object(self, row: int, name: str, p: dict[str, Any], slot: int) -> None:
        length, width = 2 * float(p["half_length"][slot]), 2 * float(p["half_width"][slot])
        try:
            self.client.send(WorldVehicle(row, name, length, width, 0, 0.0, to=self.to))
            self._announced[row] = name
        except ProtocolError as exc:
            self._send_error(exc)

    def publish(self) -> None:
        """A WorldPose (and on a road a RoadPosition) for every vehicle, from its outputs now."""
        places = (
            None
            if self._tracker is None
            else road_positions(
                self._tracker,
                [e.vehicle.outputs for e in self.entries],
                [e.row for e in self.entries],
                self.to,
            )
        )
        for k, e in enumerate(self.entries):
            out = e.vehicle.outputs
            x, y, z, roll, pitch, yaw, speed = (float(out[i]) for i in POSE)
            rpm, gear = float(out[RPM]), float(out[GEAR])  # the gear: a whole number
            try:
                if not math.isfinite(gear):
                    raise ProtocolError(f"WorldPose.gear: {gear} is not a whole number")
                pose = (x, y, z, roll, pitch, yaw, speed, rpm, round(gear))
                self.client.send(WorldPose(e.row, *pose, to=self.to))
                if places is not None:
                    self.client.send(places[k])
                    self.road_positions += 1
            except ProtocolError as exc:  # a non-finite state: said once, counted
                self._send_error(exc)
        for row, name, p, slot in self._objects():  # boxes on the ground, no engine
            if self._announced.get(row) != name:  # a new one in this row: who it is first
                self._announce_object(row, name, p, slot)
            x, y, yaw, speed = (float(p[key][slot]) for key in ("cx", "cy", "yaw", "speed"))
            try:
                self.client.send(
                    WorldPose(row, x, y, 0.0, 0.0, 0.0, yaw, speed, 0.0, 0, to=self.to)
                )
            except ProtocolError as exc:
                self._send_error(exc)
        self._signals(every=False)
        self.poses += 1

    def _send_error(self, exc: ProtocolError) -> None:
        self.publish_errors += 1
        if self.publish_errors == 1:
            log.warning("bus world: cannot publish (further ones are only counted): %s", exc)

    # -- end --------------------------------------------------------------------------------
    def report(self) -> BusWorldReport:
        """What the module published and received."""
        return BusWorldReport(
            **asdict(self.counters()),
            vehicles=len(self.entries),
            poses=self.poses,
            announcements=self.announcements,
        )


def _next(step: int, every: int) -> int:
    """The first multiple of ``every`` after ``step``: periods stay on the simulated clock."""
    return (step // every + 1) * every
