"""SUMO's traffic in a vcosim world, in lock-step: SUMO's vehicles as moving boxes, ours in SUMO.

(Past 400 lines: one lock-step exchange with SUMO (start, both directions of poses, lights, the
trace, the end); its parts share SUMO's handle and the maps of ids.)

Every ``step_length`` (a whole number of physics steps) the world hands its vehicles' poses to
SUMO (``vehicle.moveToXY``: SUMO's cars brake, yield and change lanes around them), SUMO takes
one step, and its vehicles' new poses become the end of the next interval: in between, the world
sees each one where a straight line from its last pose to its new one puts it at that moment.
So SUMO runs a step ahead of the world and the boxes move smoothly between its steps.

SUMO runs in this process through ``libsumo`` (one SUMO per process: starting another closes
the one before), or elsewhere over TraCI (``host = HOST:PORT``). With the same world, SUMO
scenario and seed, a run repeats exactly.

Each SUMO vehicle keeps its *slot* while it drives (the world's row ``len(world) + slot``): a
sensor's target and a touching pair stay the same from step to step; freed slots are reused,
lowest first. Empty slots are boxes of no size parked far away, each at its own place.
"""

from __future__ import annotations

import atexit
import contextlib
import heapq
import io
import logging
import math
import shutil
import tempfile
import time
from itertools import chain
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, TextIO

import numpy as np

from vcosim.address import parse_address
from vcosim.errors import ConfigError, VcosimError
from vcosim.extras import require
from vcosim.traffic.tools import sumo_tool
from vcosim.vehicle._jit_cache import kernel
from vcosim.world.geometry import POSE_NAMES
from vcosim.world.others import Signal
from vcosim.world.sumo_spec import SumoSpec

if TYPE_CHECKING:
    from vcosim.traffic.opendrive import LaneMap
    from vcosim.world.spec import WorldFile
    from vcosim.world.world import World

# TraCI's variable ids (traci.constants), so that nothing here imports SUMO before it is needed.
VAR_POSITION, VAR_ANGLE, VAR_SPEED, VAR_ACCELERATION, VAR_SIGNALS = 0x42, 0x43, 0x40, 0x72, 0x5B
VAR_DEPARTED_VEHICLES_IDS, VAR_ARRIVED_VEHICLES_IDS = 0x74, 0x7A
VAR_DEPARTED_PERSONS_IDS, VAR_ARRIVED_PERSONS_IDS = 0x25, 0x27
VAR_TELEPORT_STARTING_VEHICLES_IDS, VAR_TELEPORT_ENDING_VEHICLES_IDS = 0x76, 0x78
TL_RED_YELLOW_GREEN_STATE = 0x20
CMD_GET_VEHICLE_VARIABLE = 0xA4
SUBSCRIBED = (VAR_POSITION, VAR_ANGLE, VAR_SPEED, VAR_ACCELERATION, VAR_SIGNALS)
"""What SUMO reports of each vehicle every step (its type once, as it enters)."""
PERSON_SUBSCRIBED = (VAR_POSITION, VAR_ANGLE, VAR_SPEED)
"""What SUMO reports of each person every step (a person has no acceleration or signals)."""
PEDESTRIAN = "pedestrian"
"""The vehicle class of SUMO's persons, as ``kind`` gives it."""
BRAKE_LIGHT = 8
"""The brake light's bit in SUMO's vehicle signals (``VEH_SIGNAL_BRAKELIGHT``)."""
PARKED = 1e9
"""m: where empty slots wait (each 1 km further along x than the one before)."""
QUIET = ("--no-step-log", "true", "--duration-log.disable", "true", "--no-warnings", "true")
SIGNAL_STATES = {"r": 0.0, "u": 1.0, "y": 1.0, "Y": 1.0, "g": 2.0, "G": 2.0, "s": 2.0}
"""SUMO's link states as bank H gives them: 0 red, 1 amber (red-amber too), 2 green; the
others (off, blinking) -1."""

SIGNAL_HEIGHT, SIGNAL_STACK = 3.0, 0.5
"""m: a lane's first signal head above the ground, and each next one above that."""

OURS_TYPE = "vcosim"
"""The SUMO vehicle type ours are copies of: one whose driver draws no random number."""
OURS_TYPE_XML = (
    "<additional>\n"
    f'    <vType id="{OURS_TYPE}" carFollowModel="IDM" sigma="0" speedDev="0" speedFactor="1"/>\n'
    "</additional>\n"
)
"""SUMO's file of ``OURS_TYPE``: IDM, because Krauss (SUMO's default) draws its dawdling from
the lane's random stream every step, even with sigma 0, and other lanes share that stream."""

MAX_STRAIGHT_ON = 50
"""Edges at most in the route of a coupled vehicle SUMO is given none for."""

_running: list[SumoTraffic] = []  # the libsumo SUMO of this process, if any
log = logging.getLogger("vcosim.traffic")
SUMO_THREAD_RNGS = 64
"""SUMO's default ``--thread-rngs``: the random streams its lanes share (lane i: stream i mod n)."""


def _libsumo() -> ModuleType:
    """libsumo, imported without the version notice it prints on stdout beside pyarrow."""
    with contextlib.redirect_stdout(io.StringIO()):
        import libsumo
    return libsumo


VEHICLE_GETTERS = ("Angle", "Speed", "")
PERSON_GETTERS = ("Angle", "Speed")
"""The values read after the position, by libsumo's getter names: a row's columns 2 on
(``SumoTraffic._fill``); a person's acceleration and signals read 0. A vehicle's
acceleration ("") is not read: SUMO's is its speed change over the step (its
``SPEED2ACCEL``), and ``_fill`` takes it from the speeds, to the bit (docs/traffic.md); its
signals are read when a face asks (``SumoTraffic.vehicle_signals``)."""


def _columns(api: ModuleType, domain: str, ids: list[str], getters: tuple[str, ...]) -> np.ndarray:
    """A row per id of libsumo's ``domain``: x, y, then ``getters``, then zeros to 6 columns.

    The SWIG wrappers (``libsumo.vehicle.getSpeed``) add a Python call per car to the C
    function under them; mapping the C functions over the ids makes the loop C's, 0.7 us
    per car for the six values against 1.0-1.3 us through the wrappers.
    """
    c_functions = api._libsumo

    def getter(name: str) -> Any:
        return getattr(c_functions, f"{domain}_get{name}")

    count = len(ids)
    table = np.zeros((count, 6))
    position = chain.from_iterable(map(getter("Position"), ids))
    table[:, :2] = np.fromiter(position, float, 2 * count).reshape(count, 2)
    for column, name in enumerate(getters, start=2):
        if name:
            table[:, column] = np.fromiter(map(getter(name), ids), float, count)
    return table


class SumoTraffic:
    """SUMO's vehicles as the world's objects (``World.add_objects``); ours in SUMO.

    Args:
        world: The world SUMO's traffic joins (not yet told: ``attach_sumo`` does both).
        spec: The ``[sumo]`` section.
        base: The folder ``spec.config`` is relative to.
        record: A CSV file to write every SUMO vehicle's pose to at every SUMO step.
    """

    ARRAYS = ("_x0", "_y0", "_yaw0", "_x1", "_y1", "_yaw1", "_speed", "_accel",
              "_half_length", "_half_width", "_height", "_signals", "_kind")  # fmt: skip
    """By slot: the pose at the start and the end of the interval, and what SUMO said; the
    size and SUMO's vehicle class (``kind``, ``pedestrian`` for a person) of its type."""
    _x0: np.ndarray
    _y0: np.ndarray
    _yaw0: np.ndarray
    _x1: np.ndarray
    _y1: np.ndarray
    _yaw1: np.ndarray
    _speed: np.ndarray
    _accel: np.ndarray
    _half_length: np.ndarray
    _half_width: np.ndarray
    _height: np.ndarray
    _signals: np.ndarray
    _kind: np.ndarray

    def __init__(
        self, world: World, spec: SumoSpec, base: Path | None = None, record: Path | None = None
    ) -> None:
        require("sumo", "a world with SUMO traffic ([sumo], --sumo)")
        self.spec = spec
        self.period_steps = spec.period_steps
        self.step_length = spec.period_steps * world.dt
        self.coupled = list(spec.vehicles if spec.vehicles is not None else world.names)
        """The world's vehicles that SUMO sees, under their own names."""
        self._keep_route = {name: 1 if name in spec.routes else 2 for name in self.coupled}
        self._coupled = set(self.coupled)
        self._local = spec.host is None and spec.radius is None  # libsumo's getters, car by car
        self._on_net: dict[str, None] = {}  # in process: SUMO's vehicles on the network, ours apart
        self._on_net_ids: list[str] = []
        self._missed = not self._local  # whether a vehicle may have gone without an event
        self._ids: list[str | None] = []
        self._slots: dict[str, int] = {}
        self._person_slots: dict[str, int] = {}  # SUMO's persons: ids of their own
        self._free: list[int] = []
        self._sizes: dict[str, tuple[float, float, float, str]] = {}
        self._t0 = self._t1 = world.time
        self._grow(16)
        self.lights: dict[str, str] = {}
        """Every traffic light's state now, as SUMO spells it (``"GrGr"``: a char per link)."""
        self._switches: list[tuple[float, str]] = []  # fixed-time lights by their next switch
        self._subscribed_lights = False
        self.signals: list[Signal] = []
        """A head per link of every traffic light (``vcosim.world.others``), by light and link."""
        self._heads: list[tuple[str, int]] = []  # each head's light and link index
        self.steps = 0
        self._signals_at = -1  # the step whose signal bits ``_signals`` holds
        self._filled: dict[int, tuple[list[str], np.ndarray]] = {}  # the last ids, their slots
        self.sumo_seconds = 0.0
        """Wall-clock seconds spent in SUMO's steps (the bench's split of the cost)."""
        self.read_seconds = 0.0
        """Wall-clock seconds spent reading SUMO's vehicles and lights after its steps."""
        self._closed = False
        self._trace: TextIO | None = None
        self.lanes: LaneMap | None = None
        """With ``road``: the map between SUMO's lanes and the OpenDRIVE road's."""
        self._folder: Path | None = None  # our vehicle type's file, the road's network
        try:
            self.api = self._connect(spec, base, world)
        except BaseException:
            if self._folder is not None:
                shutil.rmtree(self._folder, ignore_errors=True)
            raise
        try:
            self.shared_streams = self._check_streams()
            """Whether SUMO's lanes share random streams (more lanes than ``--thread-rngs``)."""
            self._add_ours(world)
            if record is not None:
                self.trace(record)
            lights = self.api.trafficlight  # SUMO's cars come with its first step
            self.lights = {tls: lights.getRedYellowGreenState(tls) for tls in lights.getIDList()}
            self._watch_lights()
            self.signals = self._signal_heads()
            # SUMO's state after a step is the one its outputs (fcd) give the time before: one
            # step now makes the world's time SUMO's, so the world sees SUMO's cars at their time
            self._step(world.time - self.step_length)
        except BaseException:
            self.close()
            raise

    # -- SUMO ---------------------------------------------------------------------------------
    def _connect(self, spec: SumoSpec, base: Path | None, world: World) -> Any:
        if spec.host is not None:
            import traci

            host, port = parse_address(spec.host, default_host=None)
            try:
                traci.init(port, host=host, numRetries=10)
            except Exception as error:  # traci raises its own FatalTraCIError, or OSError
                raise ConfigError(
                    [f"sumo: no SUMO answers at {spec.host}: {error}"], "sumo"
                ) from error
            step = traci.simulation.getDeltaT()
            if abs(step - spec.step_length) > 1e-9:
                traci.close()
                raise ConfigError(
                    [f"sumo.step_length: {spec.step_length} s, but the SUMO at {spec.host} "
                     f"steps {step} s (start it with --step-length {spec.step_length})"],
                    "sumo",
                )  # fmt: skip
            self._subscribe(traci)
            return traci
        source = self._road_network(world, base) if spec.road else self._config(base)
        options, additional = _split_additional(spec.options)
        if not spec.road:
            additional = _config_additional(Path(source[1])) + additional
        additional.append(str(self._ours_type()))
        for earlier in list(_running):
            earlier.close()
        api = _libsumo()
        command = [sumo_tool("sumo"), *source, "--additional-files", ",".join(additional),
                   "--step-length", f"{spec.step_length}", "--seed", str(spec.seed), *QUIET,
                   *options]  # fmt: skip
        config = source[1]
        try:
            api.start(command)
        except Exception as error:  # libsumo's TraCIException: SUMO refused the scenario
            raise ConfigError(
                [f"sumo: SUMO did not start with {config}: {error}"], "sumo"
            ) from error
        _running.append(self)
        self._subscribe(api)
        self._on_net = dict.fromkeys(_without(list(api.vehicle.getIDList()), self._coupled))
        self._on_net_ids = list(self._on_net)
        return api

    def _ours_type(self) -> Path:
        """Write ``OURS_TYPE_XML`` into this run's temporary folder (removed at the end)."""
        if self._folder is None:
            self._folder = Path(tempfile.mkdtemp(prefix="vcosim-sumo-"))
        path = self._folder / "vcosim.add.xml"
        path.write_text(OURS_TYPE_XML, encoding="utf-8")
        return path

    def _config(self, base: Path | None) -> list[str]:
        """SUMO's options for the section's ``.sumocfg``."""
        assert self.spec.config is not None
        config = _relative(self.spec.config, base)
        if not config.is_file():
            raise ConfigError([f"sumo.config: no file {config}"], "sumo")
        return ["-c", str(config)]

    def _road_network(self, world: World, base: Path | None) -> list[str]:
        """SUMO's options for a network netconvert makes of the world's road, with its routes."""
        from vcosim.traffic.opendrive import sumo_network

        road = world.spec.terrain.road
        assert road is not None  # the world file's check
        routes = [_relative(name, base) for name in self.spec.route_files]
        missing = [str(path) for path in routes if not path.is_file()]
        if missing:
            raise ConfigError([f"sumo.route_files: no file {', '.join(missing)}"], "sumo")
        if self._folder is None:
            self._folder = Path(tempfile.mkdtemp(prefix="vcosim-sumo-"))
        net = self._folder / "road.net.xml"
        try:
            self.lanes = sumo_network(_relative(road, base), net)
        except VcosimError as error:
            raise ConfigError([f"sumo.road: {error}"], "sumo") from error
        return ["-n", str(net), *(["-r", ",".join(map(str, routes))] if routes else [])]

    @staticmethod
    def _subscribe(api: Any) -> None:
        """Who comes and goes every step."""
        api.simulation.subscribe(
            [VAR_DEPARTED_VEHICLES_IDS, VAR_ARRIVED_VEHICLES_IDS, VAR_DEPARTED_PERSONS_IDS,
             VAR_ARRIVED_PERSONS_IDS, VAR_TELEPORT_STARTING_VEHICLES_IDS,
             VAR_TELEPORT_ENDING_VEHICLES_IDS]
        )  # fmt: skip

    def _watch_lights(self) -> None:
        """Time the switches of fixed-time lights; subscribe to the others.

        A static program changes only at its ``getNextSwitch``, so in process such a light
        is read when that time has come rather than every step (a subscription per light
        costs SUMO's step and the reading 0.1 us a car in the 1000-car grid). Actuated and
        other programs can switch at any step, and a SUMO elsewhere may have other clients
        that switch lights: those are subscribed.
        """
        lights = self.api.trafficlight
        for tls in self.lights:
            if self.spec.host is None and _fixed_time(lights, tls):
                heapq.heappush(self._switches, (lights.getNextSwitch(tls), tls))
            else:
                lights.subscribe(tls, [TL_RED_YELLOW_GREEN_STATE])
                self._subscribed_lights = True

    def _switch_lights(self) -> None:
        """Read the fixed-time lights whose switch has come (SUMO's time after its step)."""
        now = self.api.simulation.getTime()
        lights, switches = self.api.trafficlight, self._switches
        while switches and switches[0][0] <= now:
            _, tls = heapq.heappop(switches)
            self.lights[tls] = lights.getRedYellowGreenState(tls)
            # SUMO switches at the start of the step from the switch's time: one now comes next
            heapq.heappush(switches, (max(lights.getNextSwitch(tls), now + 1e-9), tls))

    def _check_streams(self) -> bool:
        """Whether lanes share SUMO's random streams; say so once (docs/traffic.md).

        A SUMO car that reacts to one of ours (brakes, changes lanes) draws differently from
        its lane's stream; a lane that shares it, anywhere in the network, then dawdles
        differently from SUMO alone. ``--thread-rngs`` of at least the lane count avoids it.
        """
        streams, words = SUMO_THREAD_RNGS, iter(self.spec.options)
        for word in words:
            name, equals, value = word.partition("=")
            if name == "--thread-rngs":
                value = value if equals else next(words, "")
                streams = int(value) if value.isdigit() else streams
        lanes = int(self.api.lane.getIDCount())
        if lanes <= streams:
            return False
        log.info(
            "SUMO: %d lanes share %d random streams: a SUMO car reacting to a vcosim car can "
            "change the dawdling of cars on far lanes; for a stream per lane give SUMO "
            "--thread-rngs %d (and the same to a baseline run)",
            lanes,
            streams,
            lanes,
        )
        return True

    def _add_ours(self, world: World) -> None:
        """Put the world's vehicles into SUMO: a type of their box's size, on their route."""
        api, p = self.api, world.vehicle_poses()
        # a SUMO elsewhere has OURS_TYPE only if it was started with its file
        ours = OURS_TYPE if OURS_TYPE in api.vehicletype.getIDList() else "DEFAULT_VEHTYPE"
        for name in self.coupled:
            row = world.row(name)
            kind = f"vcosim.{name}"
            api.vehicletype.copy(ours, kind)
            api.vehicletype.setLength(kind, 2.0 * float(p["half_length"][row]))
            api.vehicletype.setWidth(kind, 2.0 * float(p["half_width"][row]))
            _draws_nothing(api, kind)
            edges = self.spec.routes.get(name)
            if edges is None:
                edges = self._straight_on(*self._front(p, row)[:2])
            try:
                api.route.add(kind, edges)
                # a fixed departure: nothing drawn for it
                fixed = {"depart": "now", "departLane": "first", "departPos": "base"}
                api.vehicle.add(name, kind, typeID=kind, departSpeed="0", **fixed)
            except Exception as error:  # a route SUMO's network does not have
                raise ConfigError(
                    [f"sumo.routes.{name}: SUMO refused {edges}: {error}"], "sumo"
                ) from error
            api.vehicle.setSpeedMode(name, 0)  # it goes where vcosim moves it, nowhere else
            self._move(p, world, name)
            if self.spec.radius is not None:
                api.vehicle.subscribeContext(
                    name, CMD_GET_VEHICLE_VARIABLE, self.spec.radius, SUBSCRIBED
                )

    def _straight_on(self, x: float, y: float) -> list[str]:
        """The edges straight on from (x, y): a vehicle without a route follows its road.

        Its route then reaches the junctions ahead, so it sees their traffic lights (bank H).
        """
        api = self.api
        edge, _, lane = api.simulation.convertRoad(x, y)
        edges, lane_id = [edge], f"{edge}_{lane}"
        while len(edges) < MAX_STRAIGHT_ON:
            ahead = [link[0] for link in api.lane.getLinks(lane_id) if link[6] == "s"]
            if not ahead or api.lane.getEdgeID(ahead[0]) in edges:
                break
            lane_id = ahead[0]
            edges.append(api.lane.getEdgeID(lane_id))
        return edges

    def _signal_heads(self) -> list[Signal]:
        """A head per link of every traffic light, at its lane's stop line (stacked by lane)."""
        api, heads, stacked = self.api, [], dict[str, int]()
        for tls in self.lights:
            for index, links in enumerate(api.trafficlight.getControlledLinks(tls)):
                if not links:  # a link index no lane uses
                    continue
                lane, beyond, _ = links[0]
                (x0, y0), (x1, y1) = api.lane.getShape(lane)[-2:]
                ways = [link[6] for link in api.lane.getLinks(lane) if link[0] == beyond]
                k = stacked[lane] = stacked.get(lane, -1) + 1
                heads.append(
                    Signal(f"{tls}.{index}", x1, y1, SIGNAL_HEIGHT + SIGNAL_STACK * k,
                           math.atan2(y1 - y0, x1 - x0), lane, ways[0] if ways else "s")
                )  # fmt: skip
                self._heads.append((tls, index))
        return heads

    def signal_states(self) -> np.ndarray:
        """Every head's state now: 0 red, 1 amber (or red-amber), 2 green, -1 off."""
        lights = self.lights
        return np.array([SIGNAL_STATES.get(lights[tls][index], -1.0) for tls, index in self._heads])

    @staticmethod
    def _front(p: dict[str, np.ndarray], row: int) -> tuple[float, float, float]:
        """A box's front bumper (SUMO's position of a vehicle) and SUMO's angle (deg from north)."""
        yaw, reach = float(p["yaw"][row]), float(p["half_length"][row])
        x = float(p["cx"][row]) + reach * math.cos(yaw)
        y = float(p["cy"][row]) + reach * math.sin(yaw)
        return x, y, (90.0 - math.degrees(yaw)) % 360.0

    def _move(self, p: dict[str, np.ndarray], world: World, name: str) -> None:
        x, y, angle = self._front(p, world.row(name))
        self.api.vehicle.moveToXY(name, "", -1, x, y, angle, self._keep_route[name])

    def advance(self, world: World) -> None:
        """Our vehicles to SUMO as they are now; SUMO one step on; its vehicles read back.

        A SUMO elsewhere (``host``) that has gone (its connection closed: at once, whatever
        the step) ends the run with one line naming it: its traffic cannot go on without it.
        """
        p = world.vehicle_poses()
        try:
            for name in self.coupled:
                self._move(p, world, name)
            self._step(world.time)
        except Exception as error:
            gone = getattr(self.api, "FatalTraCIError", None)
            if self.spec.host is None or gone is None or not isinstance(error, gone):
                raise
            raise VcosimError(
                f"sumo: the SUMO at {self.spec.host} has gone at t = {world.time:.2f} s "
                f"({error}); the run ends: its traffic cannot go on without it"
            ) from None

    def _step(self, now: float) -> None:
        """SUMO one step on, its vehicles read back as the end of the interval from ``now``."""
        start = time.perf_counter()
        self.api.simulationStep()
        stepped = time.perf_counter()
        self.sumo_seconds += stepped - start
        self.steps += 1
        self._read(now)
        self.read_seconds += time.perf_counter() - stepped

    def _read(self, now: float) -> None:
        """SUMO's vehicles as they are after its step: the new end of the interpolation."""
        api = self.api
        events = api.simulation.getSubscriptionResults()
        for vid in events.get(VAR_ARRIVED_VEHICLES_IDS, ()):
            self._leave(vid, self._slots)
        for pid in events.get(VAR_ARRIVED_PERSONS_IDS, ()):
            self._leave(pid, self._person_slots)
        vehicles, table = self._vehicles_now(events)
        persons, person_table = self._persons_now(events)
        if self._missed:  # in process, SUMO's events say who came and went
            for vid in sorted(self._slots.keys() - set(vehicles)):  # teleported away, or gone
                self._leave(vid, self._slots)
        for pid in sorted(self._person_slots.keys() - set(persons)):
            self._leave(pid, self._person_slots)
        self._x0[:], self._y0[:], self._yaw0[:] = self._x1, self._y1, self._yaw1
        new = []  # every vehicle with a slot is read now: more read, more vehicles
        if len(vehicles) > len(self._slots):
            new = [self._enter(vid, self._slots) for vid in vehicles if vid not in self._slots]
        if len(persons) > len(self._person_slots):
            slots = self._person_slots
            new += [self._enter(pid, slots) for pid in persons if pid not in slots]
        if vehicles:
            self._fill(self._slots, vehicles, table, new if self._local else None)
        if not self._local:
            self._signals_at = self.steps
        if persons:
            self._fill(self._person_slots, persons, person_table)
        if new:  # a vehicle that just came stands at its first pose for the interval
            self._x0[new], self._y0[new], self._yaw0[new] = (
                self._x1[new], self._y1[new], self._yaw1[new],
            )  # fmt: skip
        self._t0, self._t1 = now, now + self.step_length
        if self._subscribed_lights:
            for light, values in api.trafficlight.getAllSubscriptionResults().items():
                self.lights[light] = values[TL_RED_YELLOW_GREEN_STATE]
        if self._switches:
            self._switch_lights()
        if self._trace is not None:
            self._write(self._t1)

    def _vehicles_now(self, events: dict[int, Any]) -> tuple[list[str], np.ndarray]:
        """SUMO's vehicles in the world, ours apart, and a row of SUMO's values each.

        A row: x, y (the front), angle, speed, acceleration, signals. In process, car by
        car: libsumo's getters cost less than its subscriptions, which add 3-4 us per car
        to SUMO's step and hand back a dict per car (docs/traffic.md, Speed). Over TraCI,
        where every call is a round trip, by subscription; with a ``radius``, by the
        context subscriptions around ours.
        """
        api, coupled = self.api, self._coupled
        if self.spec.radius is not None:
            results: dict[str, Any] = {}
            for around in api.vehicle.getAllContextSubscriptionResults().values():
                results.update(around)
            for name in coupled.intersection(results):
                del results[name]
        elif self.spec.host is None:
            ids = self._on_network(events)
            try:
                return ids, _columns(api, "vehicle", ids, VEHICLE_GETTERS)
            except api.TraCIException:  # an event missed: SUMO's own list, once
                self._on_net = dict.fromkeys(_without(list(api.vehicle.getIDList()), coupled))
                self._on_net_ids, self._missed = list(self._on_net), True
                return self._on_net_ids, _columns(api, "vehicle", self._on_net_ids, VEHICLE_GETTERS)
        else:
            for vid in events.get(VAR_DEPARTED_VEHICLES_IDS, ()):
                if vid not in coupled:
                    api.vehicle.subscribe(vid, SUBSCRIBED)
            results = api.vehicle.getAllSubscriptionResults()
        rows = chain.from_iterable(
            (*v[VAR_POSITION], v[VAR_ANGLE], v[VAR_SPEED], v[VAR_ACCELERATION], v[VAR_SIGNALS])
            for v in results.values()
        )
        count = len(results)
        return list(results), np.fromiter(rows, float, 6 * count).reshape(count, 6)

    def _on_network(self, events: dict[int, Any]) -> list[str]:
        """SUMO's vehicles on its network now, ours apart, kept from the step's events.

        SUMO's ``getIDList`` builds the list and a string per car every step (as dear as
        a getter more a car); who departs, arrives, starts and ends a teleport says the
        same (``test_sumo_events``): the vehicles on a road or parked.
        """
        on_net, coupled = self._on_net, self._coupled
        arrived = events.get(VAR_ARRIVED_VEHICLES_IDS, ())
        departed = events.get(VAR_DEPARTED_VEHICLES_IDS, ())
        teleported = events.get(VAR_TELEPORT_STARTING_VEHICLES_IDS, ())
        back = events.get(VAR_TELEPORT_ENDING_VEHICLES_IDS, ())
        for vid in (*arrived, *teleported):
            on_net.pop(vid, None)
        for vid in (*departed, *back):
            if vid not in coupled and vid not in arrived:
                on_net[vid] = None
        self._missed = bool(teleported)  # their slots go by ``_read``'s comparison
        if arrived or departed or teleported or back:
            self._on_net_ids = list(on_net)
        return self._on_net_ids

    def _persons_now(self, events: dict[int, Any]) -> tuple[list[str], np.ndarray]:
        """SUMO's persons and a row each as ``_vehicles_now`` (no acceleration or signals).

        None with a ``radius`` (only the vehicles around ours are read then).
        """
        api = self.api
        if self.spec.radius is not None:
            return [], np.zeros((0, 6))
        if self.spec.host is None:
            ids = list(api.person.getIDList())
            return ids, _columns(api, "person", ids, PERSON_GETTERS)
        for pid in events.get(VAR_DEPARTED_PERSONS_IDS, ()):
            api.person.subscribe(pid, PERSON_SUBSCRIBED)
        results: dict[str, Any] = {}
        if self._person_slots or events.get(VAR_DEPARTED_PERSONS_IDS):
            results = api.person.getAllSubscriptionResults()
        ids = list(results)
        rows = chain.from_iterable(
            (*v[VAR_POSITION], v[VAR_ANGLE], v[VAR_SPEED], 0.0, 0.0) for v in results.values()
        )
        return ids, np.fromiter(rows, float, 6 * len(ids)).reshape(len(ids), 6)

    def _fill(
        self,
        slots_of: dict[str, int],
        ids: list[str],
        table: np.ndarray,
        new: list[int] | None = None,
    ) -> None:
        """The end of the interval of ``ids`` from SUMO's ``table`` (a row each).

        A row: x, y, angle, speed, acceleration, signals. SUMO places a vehicle (and a
        person) by its front and its angle in degrees clockwise from north: the box's
        centre is half its length back, its yaw wrapped to (-pi, pi].

        With ``new`` (the slots that came this step) the acceleration is not in the table:
        SUMO sets it to the speed change over the step, (v' - v) / step (its
        ``SPEED2ACCEL``), so the speeds give it to the bit for a getter less per car; a
        vehicle that has just come has no speed before, and its acceleration is read.
        """
        last_ids, slots = self._filled.get(id(slots_of), ((), None))
        if slots is None or ids != last_ids:  # the same cars as before keep their slots
            slots = np.fromiter(map(slots_of.__getitem__, ids), np.int64, len(ids))
            self._filled[id(slots_of)] = (ids, slots)
        if new is not None:
            table[:, 4] = (table[:, 3] - self._speed[slots]) / self.step_length
            if new:
                read = self.api.vehicle.getAcceleration
                for row in np.flatnonzero(np.isin(slots, new)).tolist():
                    table[row, 4] = read(ids[row])
        yaw = wrap(np.radians(90.0 - table[:, 2]))
        back = self._half_length[slots]
        self._x1[slots] = table[:, 0] - back * np.cos(yaw)
        self._y1[slots] = table[:, 1] - back * np.sin(yaw)
        self._yaw1[slots] = yaw
        self._speed[slots], self._accel[slots] = table[:, 3], table[:, 4]
        if new is None:  # read with the rest (subscriptions; persons have none)
            self._signals[slots] = table[:, 5].astype(np.int64)

    def _enter(self, vid: str, slots_of: dict[str, int]) -> int:
        person = slots_of is self._person_slots
        kind = (self.api.person if person else self.api.vehicle).getTypeID(vid)
        if not self._free:
            self._grow(2 * len(self._ids))
        slot = heapq.heappop(self._free)
        self._ids[slot], slots_of[vid] = vid, slot
        self._filled.clear()
        if kind not in self._sizes:
            types = self.api.vehicletype
            self._sizes[kind] = (
                types.getLength(kind), types.getWidth(kind), types.getHeight(kind),
                PEDESTRIAN if person else types.getVehicleClass(kind),
            )  # fmt: skip
        length, width, height, vclass = self._sizes[kind]
        self._half_length[slot], self._half_width[slot] = length / 2.0, width / 2.0
        self._height[slot], self._kind[slot] = height, vclass
        return slot

    def _leave(self, vid: str, slots_of: dict[str, int]) -> None:
        slot = slots_of.pop(vid, None)
        if slot is None:
            return
        self._ids[slot] = None
        self._filled.clear()
        self._park(np.array([slot]))
        heapq.heappush(self._free, slot)

    def _grow(self, capacity: int) -> None:
        """Room for ``capacity`` vehicles (a world keeps the slots it had)."""
        old = len(self._ids)
        for name in self.ARRAYS:
            kind = {"_signals": np.int64, "_kind": object}.get(name, float)
            grown = np.zeros(capacity, dtype=kind)
            if old:
                grown[:old] = getattr(self, name)
            setattr(self, name, grown)
        self._ids.extend([None] * (capacity - old))
        fresh = np.arange(old, capacity)
        self._park(fresh)
        for slot in fresh.tolist():
            heapq.heappush(self._free, slot)

    def _park(self, slots: np.ndarray) -> None:
        for x in (self._x0, self._x1):
            x[slots] = PARKED + 1000.0 * slots
        for column in (self._y0, self._y1, self._yaw0, self._yaw1, self._speed, self._accel,
                       self._half_length, self._half_width, self._height,
                       self._signals):  # fmt: skip
            column[slots] = 0
        self._kind[slots] = ""

    def trace(self, path: Path | str) -> None:
        """From now on write every SUMO vehicle's pose at every SUMO step to CSV ``path``.

        The first rows are the vehicles as they are now (SUMO's last step).

        A row per vehicle and step, by id: the time of the pose, id, box centre (m), yaw
        (rad), speed (m/s), acceleration (m/s2) and SUMO's signal bits (8: brake light).
        """
        if self._trace is not None:
            self._trace.close()
        self._trace = open(path, "w", encoding="utf-8")  # noqa: SIM115 (closed by close())
        self._trace.write("time,id,x,y,yaw,speed,acceleration,signals\n")
        if self._slots:  # the vehicles as the world sees them now, at SUMO's last step
            self._write(self._t1)

    def _write(self, now: float) -> None:
        assert self._trace is not None
        self.vehicle_signals()
        rows = sorted(self._slots.items())
        self._trace.writelines(
            f"{now:.4f},{vid},{self._x1[s]:.4f},{self._y1[s]:.4f},{self._yaw1[s]:.6f},"
            f"{self._speed[s]:.4f},{self._accel[s]:.4f},{self._signals[s]}\n"
            for vid, s in rows
        )

    # -- what the world asks --------------------------------------------------------------------
    def poses(self, now: float, lights: bool = False) -> dict[str, np.ndarray]:
        """Every slot at ``now``: on the straight line from the last SUMO pose to the next.

        Velocity and acceleration are SUMO's speed and acceleration along the heading (not
        the line's, which jumps sideways at a lane change and is 0 in a car's first
        interval). Beyond the world's pose columns: each box's ``height``, ``kind`` (SUMO's
        vehicle class; ``pedestrian`` for a person) and, with ``lights``, SUMO's
        ``signals`` bits (read when asked: only the faces show them).
        """
        f = min(max((now - self._t0) / self.step_length, 0.0), 1.0)
        table = interpolated_poses(
            f, self.step_length, self._x0, self._y0, self._yaw0, self._x1, self._y1,
            self._yaw1, self._speed, self._accel,
        )  # fmt: skip
        poses = dict(zip(POSE_NAMES, table, strict=True))
        poses.update(half_length=self._half_length, half_width=self._half_width,
                     height=self._height, kind=self._kind)  # fmt: skip
        if lights:
            poses["signals"] = self.vehicle_signals()
        return poses

    def vehicle_signals(self) -> np.ndarray:
        """SUMO's signal bits of every slot after its last step (8: brake light; persons 0).

        In process they are read when asked, not every step: a getter per car and step less.
        """
        if self._signals_at != self.steps:
            self._signals_at = self.steps
            ids = list(self._slots)
            slots = np.fromiter(map(self._slots.__getitem__, ids), np.int64, len(ids))
            read = self.api._libsumo.vehicle_getSignals
            self._signals[slots] = np.fromiter(map(read, ids), np.int64, len(ids))
        return self._signals

    def position(self, slot: int, now: float) -> tuple[float, float]:
        """The centre (x, y) of the box in ``slot`` at ``now`` (as ``poses`` puts it)."""
        f = min(max((now - self._t0) / self.step_length, 0.0), 1.0)
        x0, y0 = self._x0[slot], self._y0[slot]
        return float(x0 + f * (self._x1[slot] - x0)), float(y0 + f * (self._y1[slot] - y0))

    def name(self, slot: int) -> str:
        """The SUMO id of the vehicle in ``slot`` (``""`` for an empty one)."""
        return self._ids[slot] or ""

    def slot(self, name: str) -> int | None:
        """The slot of SUMO vehicle (else person) ``name``, None when it is not in the network."""
        slot = self._slots.get(name)
        return self._person_slots.get(name) if slot is None else slot

    @property
    def ids(self) -> list[str]:
        """SUMO's vehicles in the world now, by slot (persons apart: ``persons``)."""
        slots = self._slots
        return [vid for slot, vid in enumerate(self._ids) if vid and slots.get(vid) == slot]

    @property
    def vehicle_count(self) -> int:
        """How many SUMO vehicles are in the world now (``len(ids)`` without the list)."""
        return len(self._slots)

    @property
    def persons(self) -> list[str]:
        """SUMO's persons in the world now, by slot."""
        slots = self._person_slots
        return [pid for slot, pid in enumerate(self._ids) if pid and slots.get(pid) == slot]

    def state(self, vid: str) -> dict[str, float]:
        """What SUMO said of vehicle ``vid`` at its last step: speed, acceleration, brake light."""
        slot = self._slots[vid]
        return {
            "speed": float(self._speed[slot]),
            "acceleration": float(self._accel[slot]),
            "brake_light": float(bool(self.vehicle_signals()[slot] & BRAKE_LIGHT)),
        }

    def next_signal(self, name: str) -> tuple[float, float] | None:
        """The next traffic light on the route of our vehicle ``name``: (distance m, state).

        State as in bank H: 0 red, 1 amber, 2 green, -1 off; None when no light is ahead.
        """
        if name not in self._keep_route:  # not in SUMO
            return None
        try:
            ahead = self.api.vehicle.getNextTLS(name)
        except self.api.TraCIException:  # not on the road yet (before SUMO's first step)
            return None
        if not ahead:
            return None
        _, _, distance, state = ahead[0]
        return float(distance), SIGNAL_STATES.get(state, -1.0)

    # -- the end --------------------------------------------------------------------------------
    def close(self) -> None:
        """End SUMO (or leave the remote one) and close the trace; safe twice."""
        if self._closed:
            return
        self._closed = True
        if self._trace is not None:
            self._trace.close()
        if self in _running:
            _running.remove(self)
        with contextlib.suppress(Exception):  # SUMO gone already (closed by another start)
            self.api.close()
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)

    def __enter__(self) -> SumoTraffic:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def _without(ids: list[str], names: set[str]) -> list[str]:
    """``ids`` without ``names``, in order: a few taken out by C's scans, many by a filter."""
    if len(names) > 8:
        return [vid for vid in ids if vid not in names]
    for name in names:
        with contextlib.suppress(ValueError):
            ids.remove(name)
    return ids


def _fixed_time(lights: Any, tls: str) -> bool:
    """Whether light ``tls`` runs a static program (SUMO's type 0: fixed phase times)."""
    program = lights.getProgram(tls)
    logics = [logic for logic in lights.getAllProgramLogics(tls) if logic.programID == program]
    return bool(logics) and logics[0].type == 0


@kernel
def interpolated_poses(
    f, step_length, x0, y0, yaw0, x1, y1, yaw1, speed, accel
) -> np.ndarray:  # fmt: skip
    """Rows ``POSE_NAMES`` of every slot the share ``f`` of the way from pose 0 to pose 1.

    On the straight line between the two positions, the heading turned by the same share of
    the (wrapped) turn; velocity and acceleration along the heading. One pass over the slots.
    """
    n = x0.shape[0]
    out = np.empty((len(POSE_NAMES), n))
    for k in range(n):
        turn = math.pi - (math.pi - (yaw1[k] - yaw0[k])) % (2.0 * math.pi)
        yaw = math.pi - (math.pi - (yaw0[k] + f * turn)) % (2.0 * math.pi)
        c, s = math.cos(yaw), math.sin(yaw)
        x = x0[k] + f * (x1[k] - x0[k])
        y = y0[k] + f * (y1[k] - y0[k])
        out[0, k], out[1, k], out[2, k] = x, y, yaw
        out[3, k], out[4, k], out[5, k] = speed[k] * c, speed[k] * s, speed[k]
        out[6, k], out[7, k] = accel[k] * c, accel[k] * s
        out[8, k] = turn / step_length
        out[9, k], out[10, k] = x, y
    return out


def wrap(angle: np.ndarray) -> np.ndarray:
    """Angles (rad) wrapped to (-pi, pi], as OSI and the world give a yaw."""
    return math.pi - np.mod(math.pi - angle, 2.0 * math.pi)


def _draws_nothing(api: Any, kind: str) -> None:
    """Make a type of ours take nothing from SUMO's random streams (docs/traffic.md).

    A vehicle's speed factor is drawn from the stream that also draws the demand's speed
    factors and random departures when its type has a speed deviation: 0 here (also for a
    remote SUMO without ``OURS_TYPE``, where Krauss still dawdles from the lane's stream).
    """
    api.vehicletype.setSpeedDeviation(kind, 0.0)
    api.vehicletype.setSpeedFactor(kind, 1.0)
    api.vehicletype.setImperfection(kind, 0.0)


def _split_additional(options: list[str]) -> tuple[list[str], list[str]]:
    """The section's options without its additional files, and those files.

    SUMO takes one ``--additional-files`` (the last given wins), so vcosim joins every one
    into a single list with its own type's file.
    """
    rest: list[str] = []
    files: list[str] = []
    words = iter(options)
    for word in words:
        name, equals, value = word.partition("=")
        if name in ("-a", "--additional-files"):
            value = value if equals else next(words, "")
            files.extend(f for f in value.split(",") if f)
        else:
            rest.append(word)
    return rest, files


def _config_additional(config: Path) -> list[str]:
    """The additional files a ``.sumocfg`` names, relative to its folder as SUMO reads them."""
    import xml.etree.ElementTree as ElementTree

    try:
        root = ElementTree.parse(config).getroot()
    except (ElementTree.ParseError, OSError):
        return []  # SUMO itself reports what is wrong with the file when it starts
    files = []
    for element in root.iter("additional-files"):
        for name in (element.get("value") or "").split(","):
            name = name.strip()
            if name:
                path = Path(name)
                files.append(str(path if path.is_absolute() else config.parent / path))
    return files


def _relative(name: str, base: Path | None) -> Path:
    """A file the world file names: relative to its folder."""
    path = Path(name)
    return base / path if base is not None and not path.is_absolute() else path


def sumo_world(world: World | WorldFile | Path) -> World:
    """The world of a world file, with its ``[sumo]`` traffic attached (close it after).

    ``build_simulation`` does this for a run; here for a world stepped on its own.
    """
    from vcosim.world.world import World

    world = world if isinstance(world, World) else World(world)
    if world.spec.sumo is not None:
        attach_sumo(world, world.spec.sumo, world.spec.base)
    return world


def attach_sumo(
    world: World, spec: SumoSpec, base: Path | None = None, record: Path | None = None
) -> SumoTraffic:
    """Start SUMO for ``spec`` and let its traffic into ``world``; close what it returns."""
    traffic = SumoTraffic(world, spec, base, record)
    world.add_objects(traffic)
    return traffic


@atexit.register
def _close_running() -> None:
    for traffic in list(_running):
        traffic.close()
