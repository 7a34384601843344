"""The world file: vehicles, their drivers, the paths they follow and the terrain, in TOML.

(Just past 400 lines: one pydantic model of the world file, every section beside its checks, so
a reader sees the whole file format in one place.)

One pydantic model, so a file with several mistakes is refused before anything starts with
every problem listed by its key path (``vehicles.1.driver.speeds``). See ``docs/worlds.md``.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import AfterValidator, Field, PrivateAttr, ValidationError, model_validator

from vcosim.address import AddressError, parse_address
from vcosim.config import (
    Options,
    read_toml,
    validation_problems,
    with_number_problems,
)
from vcosim.constants import PHYSICS_DT
from vcosim.errors import ConfigError
from vcosim.vehicle.gearbox import Gearbox
from vcosim.vehicle.terrain import TerrainSpec
from vcosim.world.sumo_spec import FROM_FILE, SumoSpec

if TYPE_CHECKING:
    from vcosim.roads import RoadNetwork

Finite = Annotated[float, Field(allow_inf_nan=False)]
Positive = Annotated[float, Field(gt=0, allow_inf_nan=False)]
NonNegative = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Point = tuple[Finite, Finite]


class PathSpec(Options):
    """A lane centre line: a polyline through ``points``, a ``circle`` or a route of ``lanes``.

    A ``circle`` is (centre x, centre y, radius); ``lanes`` are ``[[road, lane], ...]`` of the
    world's OpenDRIVE road (``terrain.road``), linked through its junctions.
    """

    points: list[Point] | None = Field(default=None, min_length=2)
    closed: bool = False
    circle: tuple[Finite, Finite, Positive] | None = None
    lanes: list[tuple[str | int, int]] | None = Field(default=None, min_length=1)

    @model_validator(mode="after")
    def _one_shape(self) -> PathSpec:
        if sum(shape is not None for shape in (self.points, self.circle, self.lanes)) != 1:
            raise ValueError(
                "give one of points, circle = [x, y, radius] or lanes = [[road, lane], ...]"
            )
        if self.points is not None and any(
            a == b for a, b in zip(self.points, self.points[1:], strict=False)
        ):
            raise ValueError("points: two consecutive points are the same")
        return self

    @property
    def is_loop(self) -> bool:
        """True for a circle or a closed polyline: driving on, one comes round again."""
        return self.closed or self.circle is not None

    def polyline(self, network: RoadNetwork | None = None) -> list[tuple[float, float]]:
        """The points, closed loops ending where they start (circles as 1 m chords or finer).

        A route of ``lanes`` is their centre line on ``network`` (the terrain's road).
        """
        if self.lanes is not None:
            if network is None:
                raise ValueError("a path of lanes needs the world's road (terrain.road)")
            path = network.route_path([(str(road), lane) for road, lane in self.lanes])
            route = [(float(x), float(y)) for x, y in path[:, :2]]
            return [*route, route[0]] if self.closed and route[0] != route[-1] else route
        if self.circle is not None:
            x, y, r = self.circle
            n = max(64, math.ceil(2 * math.pi * r))
            ring = [
                (x + r * math.cos(2 * math.pi * k / n), y + r * math.sin(2 * math.pi * k / n))
                for k in range(n)
            ]
            return [*ring, ring[0]]
        assert self.points is not None
        points = [tuple(p) for p in self.points]
        if self.closed and points[0] != points[-1]:
            points.append(points[0])
        return points  # type: ignore[return-value]


class LaneChange(Options):
    """Move to another lane offset over ``duration`` seconds, at time ``at`` or on a cue.

    The cue of a cut-in: ``ahead_of`` names a vehicle, and the change starts the moment this
    vehicle's bumper gap ahead of it passes ``gap`` metres (from either side).
    """

    offset: Finite
    duration: Positive = 3.0
    at: NonNegative | None = None
    ahead_of: str | None = None
    gap: Finite = 10.0

    @model_validator(mode="after")
    def _one_cue(self) -> LaneChange:
        if (self.at is None) == (self.ahead_of is None):
            raise ValueError("give either at = TIME or ahead_of = VEHICLE (with gap)")
        return self


class PathDriver(Options):
    """A built-in driver steering along a path at a lane offset (m, left of the path)."""

    path: str
    offset: Finite = 0.0
    lane_change: LaneChange | None = None


class ExternalDriver(Options):
    """Nobody drives it in the world: a face (coupling, contracts, bus, Python) does."""

    kind: Literal["external"] = "external"


class ProfileDriver(PathDriver):
    """A speed profile along a path: (time s, speed m/s) points, linear between, held after."""

    kind: Literal["profile"]
    speeds: list[tuple[NonNegative, NonNegative]] = Field(min_length=1)

    @model_validator(mode="after")
    def _times_rise(self) -> ProfileDriver:
        times = [t for t, _ in self.speeds]
        if any(b <= a for a, b in zip(times, times[1:], strict=False)):
            raise ValueError("speeds: times must rise")
        return self


class IdmDriver(PathDriver):
    """Car following by the Intelligent Driver Model (Treiber, Hennecke, Helbing 2000)."""

    kind: Literal["idm"]
    speed: NonNegative = 25.0  # desired speed v0 (m/s)
    time_gap: Positive = 1.5  # T (s)
    min_gap: NonNegative = 2.0  # s0 (m)
    max_acceleration: Positive = 1.5  # a (m/s2)
    comfortable_deceleration: Positive = 2.0  # b (m/s2)
    stop_at_end: bool = False
    """Stop at the path's end, as behind a standing car there (a route driven to its end)."""


Driver = Annotated[ExternalDriver | ProfileDriver | IdmDriver, Field(discriminator="kind")]


class Start(Options):
    """Where a vehicle starts: a pose (x, y, heading in degrees), or ``s`` metres along its path."""

    x: Finite | None = None
    y: Finite | None = None
    heading: Finite = 0.0
    s: NonNegative | None = None
    speed: NonNegative = 0.0

    @model_validator(mode="after")
    def _where(self) -> Start:
        if self.s is None and (self.x is None or self.y is None):
            raise ValueError("give x and y, or s (metres along the driver's path)")
        if self.s is not None and self.x is not None:
            raise ValueError("give x and y, or s, not both")
        return self


def _address(text: str) -> str:
    """``HOST:PORT`` (a port alone means loopback): checked here, split by ``split_address``."""
    try:
        parse_address(text, lowest_port=0)
    except AddressError as exc:
        said = repr(text) if len(text) <= 80 else f"{text[:77]!r}..."
        raise ValueError(
            exc.host_problem or f"{said} is not an address; give HOST:PORT, e.g. 127.0.0.1:64891"
        ) from None
    return text.strip()


Address = Annotated[str, AfterValidator(_address)]


def split_address(text: str) -> tuple[str, int]:
    """(host, port) of a checked ``HOST:PORT`` (no host: loopback)."""
    return parse_address(text, lowest_port=0)


class CouplingPorts(Options):
    """Where an external vehicle's coupling endpoint listens and where its controller is.

    Either left out is allocated in order: the n-th external vehicle (from 0) gets the
    command line's (or the default) port plus 2 n.
    """

    listen: Address | None = None
    controller: Address | None = None


class VehicleEntry(Options):
    """One vehicle of the world."""

    name: str = Field(min_length=1)
    vehicle: str = "nightrider"  # preset name or parameter file (relative to the world file)
    start: Start = Field(default_factory=lambda: Start(x=0.0, y=0.0))
    gearbox: Gearbox = Gearbox.automatic
    engine: bool = True
    driver: Driver = Field(default_factory=ExternalDriver)
    coupling: CouplingPorts | None = None  # its tight-coupling ports (external vehicles)


class Traffic(Options):
    """``count`` vehicles named ``NAME000``… placed along their driver's path ``spacing`` apart."""

    name: str = Field(min_length=1)
    count: int = Field(ge=1, le=100_000)
    vehicle: str = "nightrider"
    first: NonNegative = 0.0  # s of the first vehicle (m along the path)
    spacing: Positive = 25.0
    speed: NonNegative = 0.0
    driver: Annotated[ProfileDriver | IdmDriver, Field(discriminator="kind")]

    def entries(self) -> list[VehicleEntry]:
        """The vehicles it stands for, as if each had its own ``[[vehicles]]`` table."""
        width = max(3, len(str(self.count - 1)))
        return [
            VehicleEntry(
                name=f"{self.name}{k:0{width}d}",
                vehicle=self.vehicle,
                start=Start(s=self.first + k * self.spacing, speed=self.speed),
                driver=self.driver,
            )
            for k in range(self.count)
        ]


class Sensor(Options):
    """The ideal forward range sensor every vehicle carries."""

    range: Positive = 150.0  # m
    lane_width: Positive = 3.5  # m: what counts as "in its lane"
    cone: Annotated[float, Field(gt=0, lt=90)] = 5.0  # half-angle (degrees)


class WorldFile(Options):
    """A world: vehicles (listed, or as traffic), the paths they follow, terrain, options."""

    vehicles: list[VehicleEntry] = Field(default_factory=list)
    traffic: list[Traffic] = Field(default_factory=list)
    paths: dict[str, PathSpec] = Field(default_factory=dict)
    terrain: TerrainSpec = Field(default_factory=TerrainSpec)
    sensor: Sensor = Field(default_factory=Sensor)
    ego: str | None = None  # the vehicle single-vehicle faces attach to
    driver_period: Positive = 0.01  # s between built-in drivers' decisions
    stop_at_collision: bool = False
    sumo: SumoSpec | None = None  # SUMO's traffic in lock-step (docs/traffic.md)
    objects_only: bool = False  # no vehicle: a face moves objects (OpenSCENARIO's bicycles)
    _base: Path | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _consistent(self) -> WorldFile:
        problems = []
        entries = self.all_vehicles()
        if not entries and not self.objects_only:
            problems.append("vehicles: a world needs at least one vehicle")
        for index, entry in enumerate(entries):
            where = f"vehicles.{index} ({entry.name})"
            driver = entry.driver
            path = driver.path if isinstance(driver, PathDriver) else None
            if path is not None and entry.gearbox is Gearbox.manual:
                problems.append(f"{where}.gearbox: built-in drivers drive an automatic only")
            if path is not None and entry.coupling is not None:
                problems.append(f"{where}.coupling: only an external vehicle is coupled")
            if path is None and entry.start.s is not None:
                problems.append(f"{where}.start.s: only a vehicle on a path can start at s")
        references: list[Reference] = [
            (
                entry.name,
                driver.path,
                None if (change := driver.lane_change) is None else change.ahead_of,
            )
            if isinstance(driver := entry.driver, PathDriver)
            else (entry.name, None, None)
            for entry in entries
        ]
        problems.extend(reference_problems(references, set(self.paths), self.ego))
        if self.terrain.road is None:
            problems.extend(
                f"paths.{name}.lanes: a path of lanes needs a road: give terrain.road = FILE.xodr"
                for name, path in self.paths.items()
                if path.lanes is not None
            )
        steps = self.driver_period / PHYSICS_DT
        if abs(steps - round(steps)) > 1e-6:
            problems.append(f"driver_period: must be a whole number of {PHYSICS_DT} s steps")
        if self.sumo is not None and self.sumo.road and self.terrain.road is None:
            problems.append("sumo.road: SUMO's network of the road needs terrain.road = FILE.xodr")
        if self.sumo is not None:
            names = {entry.name for entry in entries}
            named = [*(self.sumo.vehicles or ()), *self.sumo.routes]
            problems.extend(
                f"sumo: no vehicle {name!r} in this world" for name in named if name not in names
            )
        if problems:
            raise ValueError("; ".join(problems))
        return self

    def all_vehicles(self) -> list[VehicleEntry]:
        """Listed vehicles first, then every traffic group's."""
        return [*self.vehicles, *(e for group in self.traffic for e in group.entries())]

    @classmethod
    def load(cls, path: str | Path) -> WorldFile:
        """Read a world file; vehicle files and terrain pictures become relative to its folder.

        Every problem is one ``ConfigError`` naming the file. Parsed once while the file stays
        as it is: the parts of a run that need it share the parse (each gets its own copy).
        """
        from vcosim.filecache import read_once

        return read_once(cls._read, path).model_copy(deep=True)  # each its own to change

    @classmethod
    def _read(cls, path: Path) -> WorldFile:
        """The world file parsed (``load``, uncached)."""
        source = f"world {path}"
        data = read_toml(path, source, numbers=False)
        return with_number_problems(
            data, source, lambda d: cls.from_dict(d, source, base=path.parent, from_file=True)
        )

    @classmethod
    def from_dict(
        cls,
        data: dict[str, Any],
        source: str = "world",
        base: Path | None = None,
        from_file: bool = False,
    ) -> WorldFile:
        """Validate a world given as a dict (as the TOML reads); ``base`` anchors file names.

        ``from_file``: the dict is a file's, which is data (SUMO's options limited).
        """
        try:
            world = cls.model_validate(data, context=FROM_FILE if from_file else None)
        except ValidationError as exc:
            problems = _split(validation_problems(exc))
            # pydantic checks the names only once every field is valid: check them here too
            more = reference_problems(*_raw_references(data))
            problems.extend(p for p in more if p not in problems)
            raise ConfigError(problems, source) from None
        world._base = base
        return world

    @property
    def base(self) -> Path | None:
        """The folder relative file names are taken from (the world file's)."""
        return self._base


Reference = tuple[str, str | None, str | None]
"""A vehicle's name, the path its driver follows and the vehicle its lane change cues on."""


def reference_problems(vehicles: list[Reference], paths: set[str], ego: str | None) -> list[str]:
    """Names used twice and names that point nowhere: vehicles, paths, cues and the ego."""
    problems = []
    names = {name for name, _, _ in vehicles}
    seen: set[str] = set()
    for index, (name, path, cue) in enumerate(vehicles):
        where = f"vehicles.{index} ({name})"
        if name in seen:
            problems.append(f"{where}: name used twice")
        seen.add(name)
        if path is not None and path not in paths:
            problems.append(f"{where}.driver.path: no path named {path!r}")
        if cue is not None and (cue not in names or cue == name):
            problems.append(f"{where}.driver.lane_change.ahead_of: no other vehicle named {cue!r}")
    if ego is not None and ego not in names:
        problems.append(f"ego: no vehicle named {ego!r}")
    return problems


def _raw_references(data: Any) -> tuple[list[Reference], set[str], str | None]:
    """What ``reference_problems`` checks, read from a file that failed validation.

    Only what can be read for sure: listed vehicles with a string name (traffic groups,
    whose names come from a valid count, are left to the full check).
    """
    data = _table(data)
    vehicles: list[Reference] = []
    listed = data.get("vehicles")
    for entry in listed if isinstance(listed, list) else []:
        driver = _table(_table(entry).get("driver"))
        name = _text(_table(entry).get("name"))
        if name is None or data.get("traffic"):
            return [], set(_table(data.get("paths"))), None  # the rows would not line up
        cue = _text(_table(driver.get("lane_change")).get("ahead_of"))
        vehicles.append((name, _text(driver.get("path")), cue))
    return vehicles, set(_table(data.get("paths"))), _text(data.get("ego"))


def _table(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _split(problems: list[str]) -> list[str]:
    """The whole-file check joins its problems (each with its place) with '; ': split them."""
    out = []
    for line in problems:
        loc, _, message = line.partition(": ")
        if loc == "(top level)":
            out.extend(message.split("; "))
        else:
            out.append(line)
    return out
