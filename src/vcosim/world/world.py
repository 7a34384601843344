"""A world: many vehicles on one terrain, stepped together by one batch-kernel call.

(Past 400 lines on purpose: the world's stacked arrays, its step (drivers, sensors, collisions
between batch-kernel calls) and its report share one layout of rows; split, a row index would be
defined apart from its use.)

Every vehicle's state, inputs and outputs are rows of three stacked arrays, so one
``advance_each`` call (each vehicle with its own parameter record) steps them all, while each
``sim.vehicles[name]`` is a ``VehicleView`` of its rows: faces read its outputs and set its
inputs as they do with a lone car, and it has no stepping of its own. ``stepper`` makes that
call (on one thread or numba's).

Collisions are caught within the physics step of first overlap without checking the boxes
after every step: before each run of steps the world computes how long no two boxes can
possibly touch (gap against the fastest closing speed and acceleration, "conservative
advancement"), runs at most that long in one call, and steps one by one only while vehicles
are close enough to touch.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from vcosim.constants import PHYSICS_DT
from vcosim.errors import ConfigError, UnknownNameError
from vcosim.reports import Report
from vcosim.roads import RoadNetwork, load_road
from vcosim.vehicle import Terrain, Vehicle, VehicleParams, VehicleView
from vcosim.vehicle import layout as L
from vcosim.vehicle.inputs import CATALOGUE as INPUTS
from vcosim.world.drivers import Drivers
from vcosim.world.geometry import (
    N_RANGE,
    POSE_NAMES,
    R_AHEAD,
    R_BLOCK,
    R_DISTANCE,
    R_LATERAL,
    R_LATERAL_SPEED,
    R_LEFT,
    R_RELATIVE_ACCELERATION,
    R_RELATIVE_SPEED,
    R_RIGHT,
    R_TARGET,
    box_overlap,
    overlapping_pairs,
    pose_table,
    range_readings,
    safe_horizon,
)
from vcosim.world.others import Others, Signal
from vcosim.world.paths import Paths
from vcosim.world.spec import ExternalDriver, Gearbox, WorldFile
from vcosim.world.stepper import PARALLEL_FROM as PARALLEL_FROM  # where it was defined
from vcosim.world.stepper import Stepper

log = logging.getLogger("vcosim.world")

ACCELERATION_BOUND = 25.0
"""m/s2: no point of a vehicle body accelerates faster (tyres give ~10; margin for slopes)."""
LONGEST_HORIZON = 0.05
"""s: the furthest ahead a collision horizon looks (further adds pairs for little gain)."""


@dataclass
class Collision(Report):
    """Two vehicles' boxes began to overlap."""

    time: float  # s, the end of the physics step of first overlap
    vehicles: tuple[str, str]
    relative_speed: float  # m/s, |v_a - v_b| at that moment
    overlap: float  # m, how deep the boxes overlap (the smallest push that parts them)


@dataclass
class RangeReading(Report):
    """What a vehicle's ideal forward range sensor sees (see ``docs/worlds.md``)."""

    target: str | None  # the nearest vehicle ahead, None when nothing is in sight
    distance: float  # m, bumper gap along the heading (inf with no target)
    relative_speed: float  # m/s, target minus own along the heading; negative: closing in
    relative_acceleration: float  # m/s2, target minus own along the heading
    lateral_offset: float  # m, the target's centre left of the predicted own path
    lateral_speed: float = 0.0  # m/s, target minus own velocity across the heading, left positive


LANES = {"ahead": R_AHEAD, "left": R_LEFT, "right": R_RIGHT}
"""Where a range sensor looks: its lane (and cone), and the neighbouring lane on each side."""


class Objects(Protocol):
    """Boxes that move in the world without its physics (a traffic simulation's, ``add_objects``).

    The world's range sensors and collision checks see them after its own vehicles (row
    ``len(world) + slot``); every ``period_steps`` physics steps the world lets them
    ``advance`` to the end of the next period, and in between asks for their ``poses`` at its
    time, which they interpolate.
    """

    period_steps: int

    def advance(self, world: World) -> None:
        """Take the world's vehicles as they are now and move on to the next period's end."""

    def poses(self, now: float, lights: bool = False) -> dict[str, np.ndarray]:
        """``POSE_NAMES``, ``half_length`` and ``half_width`` of every slot at time ``now``.

        ``lights``: also what the faces show and the physics does not need (the vehicles'
        signal bits), which may cost a read.
        """
        ...

    def name(self, slot: int) -> str:
        """The name of the object in ``slot``."""
        ...

    def slot(self, name: str) -> int | None:
        """The slot of object ``name``, None when there is none such."""
        ...

    def position(self, slot: int, now: float) -> tuple[float, float]:
        """The centre (x, y) of the object in ``slot`` at time ``now``."""
        ...

    def next_signal(self, name: str) -> tuple[float, float] | None:
        """The next traffic light ahead of vehicle ``name``: (distance m, state); None: none."""
        ...

    signals: list[Signal]
    """Traffic lights' heads (``vcosim.world.others``), fixed from the start."""

    def signal_states(self) -> np.ndarray:
        """The state of every one of ``signals`` now (``others.RED`` ... ``others.OFF``)."""
        ...


@dataclass
class WorldReport(Report):
    """A world's run: its vehicles, the collisions and who was in one."""

    vehicles: int
    collisions: list[Collision] = field(default_factory=list)
    collided: list[str] = field(default_factory=list)
    stopped_at_collision: bool = False


class World:
    """N vehicles stepping together at 0.5 ms; the host (``Simulation``) paces and hooks it."""

    dt: float = PHYSICS_DT

    def __init__(self, spec: WorldFile | str | Path, terrain: Terrain | None = None) -> None:
        self.spec = spec if isinstance(spec, WorldFile) else WorldFile.load(spec)
        base = self.spec.base
        self.terrain = terrain if terrain is not None else self.spec.terrain.build(base)
        entries = self.spec.all_vehicles()
        self.names = [entry.name for entry in entries]
        self.index = {name: i for i, name in enumerate(self.names)}
        templates: dict[tuple[str, bool], Vehicle] = {}  # settled once per kind of car
        packed: dict[tuple[str, bool], np.ndarray] = {}
        keys = [(_where(entry.vehicle, base), entry.engine) for entry in entries]
        for key in keys:
            if key not in templates:
                templates[key] = Vehicle(key[0], self.terrain, engine_running=key[1])
                packed[key] = templates[key].params.pack()
        firsts = [templates[key] for key in keys]
        shape = Vehicle(terrain=self.terrain) if not firsts else firsts[0]  # the rows' layout
        self.states = (
            np.stack([t.state for t in firsts]) if firsts else np.zeros((0, shape.state.size))
        )
        self.inputs = np.array([t.input_array for t in firsts]).reshape(
            len(firsts), shape.input_array.size
        )
        self.outputs = np.array([t.outputs for t in firsts]).reshape(
            len(firsts), shape.outputs.size
        )
        self.params = (
            np.concatenate([packed[key] for key in keys]) if keys else shape.params.pack()[:0]
        )
        self._terrain = (self.terrain.height, self.terrain.friction, self.terrain.grid)
        self._clock = self.states[0] if firsts else np.zeros(shape.state.size)
        """A state row whose step count is the world's time (without vehicles, its own)."""
        self._stepper: Stepper | _Clock = Stepper(self._arrays()) if firsts else _Clock(self)
        self.geometry = _geometry([t.params for t in firsts], self.params)
        self.paths = Paths(self.spec.paths, _road_network(self.spec))
        self.vehicles: dict[str, VehicleView] = {}
        """Each vehicle by name: a view of its rows (it reads, takes inputs and teleports; it
        steps only with the world)."""
        for row, (entry, template) in enumerate(zip(entries, firsts, strict=True)):
            car = template.view(self.states[row], self.inputs[row], self.outputs[row])
            self.vehicles[entry.name] = car
            start = entry.start
            if start.s is not None:
                driver: Any = entry.driver
                x, y, heading = self.paths.pose_at(driver.path, start.s, driver.offset)
            else:
                x, y, heading = start.x or 0.0, start.y or 0.0, start.heading
            if entry.gearbox is Gearbox.automatic:
                car.set_inputs(automatic=1, gear=1)
            car.teleport(x, y, heading, speed=start.speed)  # in gear, in D with the engine on
        driven = [i for i, e in enumerate(entries) if not isinstance(e.driver, ExternalDriver)]
        self.drivers = Drivers(
            [entries[i] for i in driven], driven, self.paths, self.geometry, self.names,
            [firsts[i].params for i in driven],
        )  # fmt: skip
        self.external = {
            e.name: e.coupling for e in entries if isinstance(e.driver, ExternalDriver)
        }
        """The externally driven vehicles, in order, with the coupling ports their file gives."""
        self.ego = self.spec.ego or next(
            (e.name for e in entries if isinstance(e.driver, ExternalDriver)),
            self.names[0] if self.names else "",
        )
        """The ego's name ("" in a world of kinematic objects only)."""
        self.driver_steps = round(self.spec.driver_period / self.dt)
        self.collisions: list[Collision] = []
        self.collided = np.zeros(len(entries), dtype=np.bool_)
        self._touching: set[tuple[int, int]] = set()
        self.stop_requested = False
        self._safe_until = 0
        self.readings = np.zeros((len(entries), N_RANGE))
        self.friction_factor = 1.0
        """The terrain's friction is multiplied by this (OpenSCENARIO's road condition)."""
        self.overrides: dict[int, dict[int, float]] = {}
        """Inputs forced over drivers and controllers (OpenSCENARIO's overrides): row ->
        input index -> value."""
        self.objects: Objects | None = None
        self._objects_at = -1  # the step the objects last advanced at
        self._poses = self.poses()
        self._decide()  # SUMO's traffic ([sumo]) joins later: the builder attaches it

    # -- the host's interface (as a Vehicle's) --------------------------------------------
    @property
    def vehicle(self) -> VehicleView:
        """The ego vehicle: the one single-vehicle faces attach to."""
        if not self.ego:
            raise ConfigError(
                ["the world has no vehicle (every entity moves kinematically): a face that "
                 "serves one (a coupling, a recorder, the bus) has none to serve"],
                "world",
            )  # fmt: skip
        return self.vehicles[self.ego]

    @property
    def step_index(self) -> int:
        """Physics steps since time 0 (every vehicle counts the same)."""
        return int(self._clock[L.X_STEP])

    @property
    def time(self) -> float:
        """Simulation time (s) from the step index."""
        return self.step_index * self.dt

    def __len__(self) -> int:
        return len(self.names)

    def step(self) -> None:
        """One physics step of every vehicle."""
        self.run(1)

    def run(self, n_steps: int) -> None:
        """Advance every vehicle ``n_steps`` steps (fewer if a collision stops the world).

        Each kernel call runs as far as the next driver decision and the collision horizon
        allow: within the horizon no two boxes can touch, so they are checked only at its
        end, which comes every step while vehicles are close.
        """
        left = int(n_steps)
        objects = self.objects
        while left > 0 and not self.stop_requested:
            step = self.step_index
            to_objects = left
            if objects is not None:
                to_objects = objects.period_steps - step % objects.period_steps
                if to_objects == objects.period_steps and step != self._objects_at:
                    objects.advance(self)
                    self._objects_at = step
                    self.teleported()  # they may have jumped (a lane change, a new one)
            if step >= self._safe_until:
                self._safe_until = step + self._safe_steps()
            to_decision = self.driver_steps - step % self.driver_steps
            n = min(left, to_decision, self._safe_until - step, to_objects)
            if self.overrides:
                self._force()
            self._stepper(self._arrays(), n)
            left -= n
            step += n
            fresh = False
            if step >= self._safe_until:
                self._poses, fresh = self.poses(), True
                self._check_collisions()
            if step % self.driver_steps == 0:
                if not fresh:
                    self._poses = self.poses()
                self._decide()

    def _arrays(self) -> tuple[np.ndarray, ...]:
        """What the kernel steps: states, inputs, parameters, outputs and the terrain."""
        return (self.states, self.inputs, self.params, self.outputs, *self._terrain)

    # -- geometry -------------------------------------------------------------------------
    def add_objects(self, objects: Objects) -> None:
        """Let ``objects`` (SUMO's traffic) in: from now on sensors and collisions see them."""
        self.objects = objects
        self._objects_at = -1
        self.teleported()
        self._decide()

    def poses(self) -> dict[str, np.ndarray]:
        """Every vehicle's position, heading, velocity, acceleration and box (arrays by row).

        The objects' (if any) follow the vehicles'.
        """
        poses = self.vehicle_poses()
        if self.objects is not None:
            more = self.objects.poses(self.time)
            poses = {key: np.concatenate((column, more[key])) for key, column in poses.items()}
        return poses

    def vehicle_poses(self) -> dict[str, np.ndarray]:
        """``poses`` of the world's own vehicles only (what SUMO is told of them)."""
        g = self.geometry
        table = pose_table(self.outputs, g["box_offset"])
        poses = dict(zip(POSE_NAMES, table, strict=True))
        poses["half_length"], poses["half_width"] = g["half_length"], g["half_width"]
        return poses

    def _safe_steps(self) -> int:
        """Whole steps (at least 1) from now in which no two boxes can meet.

        Holds whatever the drivers do (the bound is on what a car can physically do), but
        not across a teleport: ``teleported()`` says one happened.
        """
        wanted = round(LONGEST_HORIZON / self.dt)
        p = self._poses
        if len(p["cx"]) < 2:
            return wanted
        radius = (
            self.geometry["radius"]
            if self.objects is None
            else np.hypot(p["half_length"], p["half_width"])
        )
        spin = np.abs(p["yaw_rate"]) * radius  # a box corner's speed from turning
        horizon = safe_horizon(
            p["cx"], p["cy"], p["yaw"], p["vx"], p["vy"], spin, p["half_length"],
            p["half_width"], ACCELERATION_BOUND, wanted * self.dt, self._touching_array(),
            len(self),
        )  # fmt: skip
        return max(1, min(wanted, math.floor(horizon / self.dt + 1e-9)))

    def _touching_array(self) -> np.ndarray:
        return np.array(sorted(self._touching), dtype=np.int64).reshape(-1, 2)

    def _check_collisions(self) -> None:
        p = self._poses
        pairs, depth = overlapping_pairs(
            p["cx"], p["cy"], p["yaw"], p["half_length"], p["half_width"], len(self)
        )
        now = {(int(a), int(b)) for a, b in pairs}
        for (a, b), overlap in zip(map(tuple, pairs.tolist()), depth.tolist(), strict=True):
            if (a, b) in self._touching:
                continue
            dv = math.hypot(p["vx"][a] - p["vx"][b], p["vy"][a] - p["vy"][b])
            event = Collision(self.time, (self.name_of(a), self.name_of(b)), dv, overlap)
            self.collisions.append(event)
            self.collided[[r for r in (a, b) if r < len(self)]] = True
            log.warning(
                "collision at t = %.4f s: %s and %s, relative speed %.2f m/s, overlap %.3f m",
                event.time, *event.vehicles, dv, overlap,
            )  # fmt: skip
            if self.spec.stop_at_collision:
                self.stop_requested = True
        self._touching = now

    def _decide(self) -> None:
        """The sensors read and the built-in drivers decide (every driver period)."""
        if not self.names:  # objects only: no sensor, no driver
            return
        p = self._poses
        sensor = self.spec.sensor
        self.readings = range_readings(
            p["cx"], p["cy"], p["yaw"], p["vx"], p["vy"], p["ax"], p["ay"], p["yaw_rate"],
            p["half_length"], sensor.range, sensor.lane_width / 2, math.radians(sensor.cone),
            len(self),
        )  # fmt: skip
        self.drivers.decide(self.time, self.spec.driver_period, p, self.readings, self.inputs)

    def override(self, name: str, values: dict[str, tuple[float, bool]]) -> None:
        """Force inputs of vehicle ``name`` over its driver or controller.

        ``values``: input name -> (value, active); an inactive one is no longer forced.
        """
        index = {i.name: i.index for i in INPUTS}
        row = self.row(name)
        forced = self.overrides.setdefault(row, {})
        for key, (value, active) in values.items():
            if key == "steering":  # given as a road-wheel angle (rad)
                value = value / float(self.geometry["max_steer"][row])
            if active:
                forced[index[key]] = value
            else:
                forced.pop(index[key], None)
        if not forced:
            del self.overrides[row]

    def _force(self) -> None:
        """The overridden inputs, over whatever drivers and controllers wrote."""
        for row, forced in self.overrides.items():
            for index, value in forced.items():
                self.inputs[row, index] = value

    def scale_friction(self, factor: float) -> None:
        """Every tyre's road friction from now: the terrain's times ``factor`` (the weather)."""
        height, _, grid = self._terrain
        self._terrain = (height, self.terrain.friction * factor, grid)
        self.friction_factor = factor

    def teleported(self) -> None:
        """After moving a vehicle by hand: look at the collision horizon afresh."""
        self._poses = self.poses()
        self._safe_until = self.step_index

    # -- reading --------------------------------------------------------------------------
    def others(self) -> Others:
        """The world's objects now, SUMO's cars and traffic lights: what every face reads."""
        objects = self.objects
        if objects is None:
            return Others(self.time, len(self))
        p = objects.poses(self.time, lights=True)
        names = [objects.name(slot) for slot in range(len(p["cx"]))]
        return Others(
            self.time, len(self), names, p, list(objects.signals), objects.signal_states()
        )

    def object_position(self, name: str) -> tuple[float, float, float] | None:
        """Where object ``name`` (a SUMO car) is now: its box's centre on the ground.

        None when there is none such (it has not come, or has left).
        """
        slot = None if self.objects is None else self.objects.slot(name)
        if slot is None or self.objects is None:
            return None
        x, y = self.objects.position(slot, self.time)
        return x, y, 0.0

    def row(self, name: str) -> int:
        """The row of vehicle ``name`` in the stacked arrays."""
        if name not in self.index:
            raise UnknownNameError("vehicle", name, tuple(self.names))
        return self.index[name]

    def name_of(self, row: int) -> str:
        """The name of the vehicle, or of the object after them, in ``row``."""
        if row < len(self) or self.objects is None:
            return self.names[row]
        return self.objects.name(row - len(self))

    def target_row(self, name: str) -> int:
        """The row of a vehicle or an object a sensor saw (as bank H gives it)."""
        slot = None if self.objects is None or name in self.index else self.objects.slot(name)
        return self.row(name) if slot is None else len(self) + slot

    def sense(self, name: str, lane: str = "ahead") -> RangeReading:
        """The range sensor of ``name`` now (computed afresh, not from the last decision).

        ``lane``: ``"ahead"``, the nearest vehicle in its lane or cone; ``"left"`` or
        ``"right"``, the nearest ahead in the neighbouring lane on that side.
        """
        if lane not in LANES:
            raise UnknownNameError("lane", lane, tuple(LANES))
        return self.sense_lanes(name)[lane]

    def sense_lanes(self, name: str) -> dict[str, RangeReading]:
        """The range sensor of ``name`` in each of ``LANES``, from one look."""
        p = self.poses()
        sensor = self.spec.sensor
        row = range_readings(
            p["cx"], p["cy"], p["yaw"], p["vx"], p["vy"], p["ax"], p["ay"], p["yaw_rate"],
            p["half_length"], sensor.range, sensor.lane_width / 2, math.radians(sensor.cone),
            len(self),
        )[self.row(name)]  # fmt: skip
        return {lane: self._reading(row[first : first + R_BLOCK]) for lane, first in LANES.items()}

    def _reading(self, block: np.ndarray) -> RangeReading:
        """A ``RangeReading`` of one block of a range reading row."""
        target = int(block[R_TARGET])
        seen = target >= 0
        return RangeReading(
            target=self.name_of(target) if seen else None,
            distance=float(block[R_DISTANCE]),
            relative_speed=float(block[R_RELATIVE_SPEED]) if seen else 0.0,
            relative_acceleration=float(block[R_RELATIVE_ACCELERATION]) if seen else 0.0,
            lateral_offset=float(block[R_LATERAL]) if seen else 0.0,
            lateral_speed=float(block[R_LATERAL_SPEED]) if seen else 0.0,
        )

    def overlap(self, a: str, b: str) -> float:
        """How deep the boxes of ``a`` and ``b`` overlap now (m; zero or less: apart)."""
        p = self.poses()
        return float(
            box_overlap(
                p["cx"], p["cy"], p["yaw"], p["half_length"], p["half_width"],
                self.target_row(a), self.target_row(b),
            )
        )  # fmt: skip

    def report(self) -> WorldReport:
        """The collisions so far and who was in one."""
        return WorldReport(
            vehicles=len(self),
            collisions=list(self.collisions),
            collided=[n for n, hit in zip(self.names, self.collided.tolist(), strict=True) if hit],
            stopped_at_collision=self.stop_requested,
        )


class _Clock:
    """The kernel of a world without vehicles: only its time goes on (its objects move)."""

    def __init__(self, world: World) -> None:
        self.clock = world._clock

    def __call__(self, arrays: tuple[np.ndarray, ...], n: int) -> None:
        self.clock[L.X_STEP] += n


def _road_network(spec: WorldFile) -> RoadNetwork | None:
    """The terrain's road, when a path follows its lanes."""
    road = spec.terrain.road
    if road is None or all(path.lanes is None for path in spec.paths.values()):
        return None
    base = spec.base
    return load_road(base / road if base is not None else road)


def _where(vehicle: str, base: Path | None) -> str:
    """A parameter file relative to the world file's folder; a preset name as it is."""
    if base is not None and vehicle.endswith(".toml") and not Path(vehicle).is_absolute():
        return str(base / vehicle)
    return vehicle


def _geometry(params: list[VehicleParams], packed: np.ndarray) -> dict[str, np.ndarray]:
    """Per-vehicle dimensions: the box is the plate between the axles plus a wheel radius."""
    a, b = packed["a"].astype(float), packed["b"].astype(float)
    radius = np.array([p.wheels.radius for p in params])
    half_length = (a + b) / 2 + radius
    half_width = np.array([p.body.track / 2 for p in params])
    return {
        "half_length": half_length,
        "half_width": half_width,
        "radius": np.hypot(half_length, half_width),
        "box_offset": (a - b) / 2,
        "rear": b,
        "wheelbase": a + b,
        "max_steer": packed["max_steer"].astype(float),
    }
