"""``RunSpec``: one typed description of a run, from which ``build_simulation`` makes it.

(Past 400 lines: every face kind's spec sits beside RunSpec, which checks them together;
split apart, the cross-field rules would read across modules.)

What ``vcosim sim`` takes as options, a sweep as a scenario and the Python API as keywords is
the same thing: the vehicle (or a world of them), how it starts, the terrain, the pacing, the
faces attached (tight coupling, contracts, the bus, a user's own) and the recording. A spec
is validated once, every problem listed with its key path (``faces.0.ext_time: ...``), and
reads from and writes to TOML, so any run can be saved and repeated: ``vcosim sim --spec
run.toml``, and every ``vcosim sim`` run with a recording leaves its spec beside it.

The faces are a list of tables told apart by ``kind``::

    [[faces]]
    kind = "coupling"        # every CouplingConfig field: ext_time, window, listen_port, ...
    ext_time = 0.01

    [[faces]]
    kind = "contracts"       # every ServerOptions field: port, wait_for_clients, ...
    wait_for_clients = 1

A field reference is in docs/cli.md ("A run as a file").
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Literal

import tomli_w
from pydantic import Field, JsonValue, ValidationError, field_validator, model_validator

from vcosim.config import (
    Duration,
    FrameRate,
    Host,
    Options,
    TimeDilation,
    read_toml,
    validation_problems,
)
from vcosim.constants import (
    BUS_PORT,
    FOXGLOVE_PORT,
    FRAME_RATE,
    LOOPBACK,
    OSI_PORT,
    PHYSICS_DT,
    RECORD_RATE,
)
from vcosim.contracts.options import ServerOptions
from vcosim.errors import ConfigError
from vcosim.groundtruth.sampling import steps_per_sample
from vcosim.sim.pacing import OnLate, PacingMode
from vcosim.tight.config import CouplingConfig
from vcosim.vehicle.gearbox import Gearbox
from vcosim.vehicle.params import VehicleParams
from vcosim.vehicle.terrain import WORLD_LIMIT, TerrainSpec
from vcosim.world.spec import WorldFile
from vcosim.world.sumo_spec import FROM_FILE, SumoSpec

Positive = Annotated[float, Field(gt=0, allow_inf_nan=False)]
Port = Annotated[int, Field(ge=0, le=65535)]
NonNegative = Annotated[float, Field(ge=0, allow_inf_nan=False)]

StartHow = Literal["teleport", "drive_up"]
"""``teleport``: placed rolling at the speed (in the gear it would hold); ``drive_up``: a PI
on the pedals drives from rest until the speed holds for a second (up to 120 s)."""


class RoadStart(Options):
    """A start on an OpenDRIVE road: road, lane, s (None: the first driving lane, its start)."""

    road: str | None = None
    lane: int | None = None
    s: NonNegative | None = None


class StartSpec(Options):
    """Where and how the vehicle starts: pose (x, y m; heading deg from east), speed (m/s).

    ``road`` instead of ``pose``: a road position, on the run's OpenDRIVE road. On such a road
    with neither, the car starts on the first driving lane of the first road, at its start.
    """

    pose: tuple[float, float, float] | None = None
    road: RoadStart | None = None
    speed: NonNegative = 0.0
    how: StartHow = "teleport"

    @field_validator("pose")
    @classmethod
    def _on_the_map(
        cls, pose: tuple[float, float, float] | None
    ) -> tuple[float, float, float] | None:
        if pose is None:
            return pose
        if not all(math.isfinite(v) for v in pose):
            raise ValueError(f"{pose} is not finite")
        if max(abs(pose[0]), abs(pose[1])) > WORLD_LIMIT:
            raise ValueError(f"more than {WORLD_LIMIT / 1e3:,.0f} km from the origin")
        return pose


class PacingSpec(Options):
    """How simulated time follows the wall clock (``vcosim.sim.pacing``)."""

    mode: PacingMode = PacingMode.realtime
    time_dilation: TimeDilation = 1.0
    frame_rate: FrameRate = FRAME_RATE
    on_late: OnLate = OnLate.slow
    """What a frame that ends after the next was due does: ``slow`` (today's), ``skip`` the
    frame slots it overran, or ``stop`` the run (exit 1)."""


class RecordingSpec(Options):
    """Every vehicle signal to a ``.csv`` or ``.mcap`` file, ``rate`` rows per simulated second."""

    path: Path
    rate: Positive = RECORD_RATE

    @field_validator("path")
    @classmethod
    def _csv_or_mcap(cls, path: Path) -> Path:
        if path.suffix.lower() not in (".csv", ".mcap"):
            raise ValueError(f"a .csv or .mcap file, not {path.name!r}")
        return path

    @property
    def every(self) -> int:
        """Physics steps between two rows."""
        return max(1, round(1.0 / (self.rate * PHYSICS_DT)))


class CouplingFaceSpec(CouplingConfig):
    """The BeamNG-compatible tight-coupling endpoint (one per external vehicle of a world).

    Every ``CouplingConfig`` field, and ``custom_hooks``: ``FILE.py:NAME`` or
    ``module:NAME`` with ``fill_custom(sim, bank_h)`` and/or ``on_custom(sim, values)``.
    """

    kind: Literal["coupling"] = "coupling"
    custom_hooks: str | None = None

    def config(self) -> CouplingConfig:
        """The endpoint's config; an interface CSV fills what the spec does not say."""
        given = self.model_dump(include=self.model_fields_set - {"kind", "custom_hooks"})
        if self.interface is not None:
            given.pop("interface", None)
            return CouplingConfig.for_interface(self.interface, **given)
        return CouplingConfig(**given)


class ContractsFaceSpec(ServerOptions):
    """The VS Connect-style contract server: every ``ServerOptions`` field."""

    kind: Literal["contracts"] = "contracts"

    def options(self) -> ServerOptions:
        """The server's options."""
        return ServerOptions(**self.model_dump(exclude={"kind"}, exclude_unset=True))


class BusFaceSpec(Options):
    """Join a NightRider bus router: the vehicle as module 16 (a world: every vehicle)."""

    kind: Literal["bus"] = "bus"
    host: Host = LOOPBACK
    port: Annotated[int, Field(ge=1, le=65535)] = BUS_PORT


def _sample_rate(rate: float) -> float:
    """A rate the physics steps divide a whole number of times (``ValueError`` otherwise)."""
    try:
        steps_per_sample(rate, "rate")
    except ConfigError as exc:
        raise ValueError(exc.problems[0].removeprefix(f"rate {rate:g}: ")) from None
    return rate


class OsiFaceSpec(Options):
    """ASAM OSI ground truth of the run: SensorViews over UDP and/or to a trace file.

    ``udp_host`` (None: not over UDP) and ``udp_port`` are where a receiver listens;
    ``framing`` ``esmini`` sends esmini's GroundTruth fragments instead of one SensorView per
    datagram; ``trace`` a ``.osi`` or ``.mcap`` file; ``rate`` samples per simulated second.
    """

    kind: Literal["osi"] = "osi"
    udp_host: Host | None = None
    udp_port: Annotated[int, Field(ge=1, le=65535)] = OSI_PORT
    framing: Literal["datagram", "esmini"] = "datagram"
    trace: Path | None = None
    rate: Positive = 100.0

    _rate = field_validator("rate")(_sample_rate)

    @field_validator("trace")
    @classmethod
    def _osi_or_mcap(cls, trace: Path | None) -> Path | None:
        if trace is not None and trace.suffix.lower() not in (".osi", ".mcap"):
            raise ValueError(f"a .osi or .mcap file, not {trace.name!r}")
        return trace

    @model_validator(mode="after")
    def _somewhere(self) -> OsiFaceSpec:
        if self.udp_host is None and self.trace is None:
            raise ValueError("OSI goes somewhere: udp_host, trace or both")
        return self

    @property
    def udp(self) -> tuple[str, int] | None:
        """Where the SensorViews go over UDP (None: not over UDP)."""
        return None if self.udp_host is None else (self.udp_host, self.udp_port)


class FoxgloveFaceSpec(Options):
    """The run live in the Foxglove app: a websocket server on ``host``:``port`` (0: any).

    ``allow``: the hosts besides loopback that may connect; ``rate``: updates per simulated
    second.
    """

    kind: Literal["foxglove"] = "foxglove"
    host: Host = LOOPBACK
    port: Port = FOXGLOVE_PORT
    allow: tuple[str, ...] = ()
    rate: Positive = 50.0

    _rate = field_validator("rate")(_sample_rate)


class StoryboardFaceSpec(Options):
    """An OpenSCENARIO storyboard played on the run's world (the scenario's own world).

    ``parameters`` override the file's declared values (a sweep's variation). The file is
    parsed once per run: the world built from it and the storyboard share the parsed model.
    """

    kind: Literal["storyboard"] = "storyboard"
    scenario: Path
    parameters: dict[str, str] = Field(default_factory=dict)


FACES = {"storyboard": "vcosim.openscenario.storyboard:Storyboard"}
"""vcosim's own user faces a run file may name (an OpenSCENARIO run's storyboard)."""
PLUGINS = "vcosim.faces"
"""The entry-point group of installed packages' faces: a run file may name them too."""


def registered_faces() -> list[str]:
    """The entry points a run file may name without ``--allow-code``: vcosim's and plugins'.

    Installing a package is the user's own decision to trust its code; a file is not.
    """
    from importlib.metadata import entry_points

    plugins = [point.value for point in entry_points(group=PLUGINS)]
    return sorted({*FACES.values(), *plugins})


class UserFaceSpec(Options):
    """A face of your own: ``entry_point`` (``module:Class``, a Face) called with ``options``.

    A spec read from a file (:meth:`RunSpec.from_toml`) may name only a registered face
    (:func:`registered_faces`) or one the user allows (``vcosim sim --allow-code``).
    """

    kind: Literal["user"] = "user"
    name: Annotated[str, Field(min_length=1)]
    entry_point: Annotated[str, Field(pattern=r"^[\w.]+:[\w.]+$")]
    options: dict[str, JsonValue] = Field(default_factory=dict)


FaceSpec = Annotated[
    CouplingFaceSpec
    | ContractsFaceSpec
    | BusFaceSpec
    | OsiFaceSpec
    | FoxgloveFaceSpec
    | StoryboardFaceSpec
    | UserFaceSpec,
    Field(discriminator="kind"),
]
GROUND_TRUTH = ("osi", "foxglove")
"""Face kinds that attach after the recording (Foxglove's scene joins its open file)."""

LONE_CAR = "ego"
"""The lone car's name in a world of one (with SUMO's traffic it is a world's vehicle)."""

WORLD_SAYS = ("vehicle", "terrain", "start", "gearbox", "engine")
"""What a world file gives for each of its vehicles: a spec with a world may not say it."""


class RunSpec(Options):
    """One run: the vehicle or the world, its start, terrain, pacing, faces and recording.

    Attributes:
        vehicle: A preset name, a parameter TOML, or the parameters themselves.
        world: A world file (or its contents): many vehicles, each with its start and
            terrain; ``vehicle``, ``terrain``, ``start``, ``gearbox`` and ``engine`` then
            stay unsaid.
        terrain: A terrain file, or a terrain table; None: flat ground.
        start: Pose, speed and how the speed is reached.
        gearbox: ``automatic`` (selector in D: pedals and steering drive) or ``manual``.
        engine: Start with the engine idling.
        duration: Simulated seconds (None: until interrupted or a face ends the run).
        pacing: Real time, fast or lock-step, and the frame rate.
        recording: Every vehicle signal to a file (None: no recording).
        faces: What the run talks to, each a table with its ``kind``.
        sumo: SUMO's traffic in lock-step (docs/traffic.md): the world's ``[sumo]``, or,
            for a lone car, SUMO around it as the vehicle ``ego`` of a world of one.
    """

    vehicle: str | VehicleParams = "nightrider"
    world: Path | WorldFile | None = None
    terrain: Path | TerrainSpec | None = None
    start: StartSpec = Field(default_factory=StartSpec)
    gearbox: Gearbox = Gearbox.automatic
    engine: bool = True
    duration: Duration | None = None
    pacing: PacingSpec = Field(default_factory=PacingSpec)
    recording: RecordingSpec | None = None
    faces: list[FaceSpec] = Field(default_factory=list)
    sumo: SumoSpec | None = None

    @classmethod
    def checked(
        cls, data: dict[str, JsonValue], source: str = "run spec", from_file: bool = False
    ) -> RunSpec:
        """A spec from plain data; every problem (types and rules across keys) at once.

        Raises ``ConfigError`` listing each problem with its key path. ``from_file``: the
        data is a file's (SUMO's options limited to those a file may give).
        """
        try:
            spec = cls.model_validate(data, context=FROM_FILE if from_file else None)
        except ValidationError as exc:
            raise ConfigError(validation_problems(exc), source) from None
        problems = spec.problems()
        if problems:
            raise ConfigError(problems, source)
        return spec

    def problems(self) -> list[str]:
        """Rules across keys the fields' types cannot say, one line each with its key path."""
        out = []
        if self.world is not None:
            out += [
                f"{key}: a world's file says it for each of its vehicles"
                for key in WORLD_SAYS
                if key in self.model_fields_set
            ]
        if self.sumo is not None:
            out += self._sumo_problems()
        if self.start.how == "drive_up" and self.start.speed > 0 and self.gearbox != "automatic":
            out.append("start.how: driving up to a speed needs gearbox = 'automatic'")
        if self.start.how == "drive_up" and self.start.pose is not None:
            out.append("start.pose: a vehicle driving up starts where it stands (no pose)")
        if self.start.pose is not None and self.start.road is not None:
            out.append("start.road: a start is a pose or a road position, not both")
        seen: dict[str, int] = {}
        for i, face in enumerate(self.faces):
            name = face.name if isinstance(face, UserFaceSpec) else face.kind
            if name in seen:
                out.append(f"faces.{i}: a second {name!r} face (the first is faces.{seen[name]})")
            seen.setdefault(name, i)
        return out

    def _sumo_problems(self) -> list[str]:
        """What SUMO's traffic cannot go with: a world's own section, a lone car it cannot carry."""
        if isinstance(self.world, WorldFile) and self.world.sumo is not None:
            return ["sumo: the world has a [sumo] section of its own"]
        if self.world is not None:
            return []
        out = []
        if not isinstance(self.vehicle, str):  # the lone car becomes a world's ``ego``
            out.append("sumo: a lone car in SUMO's traffic is a preset or a parameter file")
        if self.start.how == "drive_up":
            out.append("sumo: a lone car in SUMO's traffic starts by teleport")
        if self.sumo is not None:
            out += [
                f"sumo: no vehicle {name!r} (the lone car is 'ego')"
                for name in [*(self.sumo.vehicles or ()), *self.sumo.routes]
                if name != LONE_CAR
            ]
        return out

    def face(self, kind: str) -> FaceSpec | None:
        """The face of this kind, if the spec has one (user faces: the first)."""
        return next((face for face in self.faces if face.kind == kind), None)

    def code(self) -> list[tuple[str, str]]:
        """The code this spec would import and run: (key path, entry point or hooks)."""
        out = []
        for i, face in enumerate(self.faces):
            if isinstance(face, UserFaceSpec):
                out.append((f"faces.{i}.entry_point", face.entry_point))
            elif isinstance(face, CouplingFaceSpec) and face.custom_hooks:
                out.append((f"faces.{i}.custom_hooks", face.custom_hooks))
        return out

    def code_problems(self, allow_code: Iterable[str] = ()) -> list[str]:
        """The code this spec names that is neither registered nor allowed, one line each."""
        allowed = {*registered_faces(), *allow_code}
        return [
            f"{key}: {name!r} is code, and a run file is data: give --allow-code {name} "
            "to run it (registered faces run without: "
            f"{', '.join(registered_faces())})"
            for key, name in self.code()
            if name not in allowed
        ]

    @classmethod
    def from_toml(cls, path: str | Path, allow_code: Iterable[str] = ()) -> RunSpec:
        """A spec from a TOML file (``ConfigError`` listing every problem).

        The file is data: a user face or custom hooks it names must be registered or in
        ``allow_code``, checked before anything is imported.
        """
        spec = cls.checked(read_toml(path), str(path), from_file=True)
        problems = spec.code_problems(allow_code)
        if problems:
            raise ConfigError(problems, str(path))
        return spec

    def with_faces(self, faces: Iterable[FaceSpec]) -> RunSpec:
        """The spec with ``faces`` too, each replacing the spec's face of its kind."""
        faces = list(faces)
        kinds = {face.kind for face in faces if not isinstance(face, UserFaceSpec)}
        kept = [face for face in self.faces if face.kind not in kinds]
        return self.model_copy(update={"faces": [*kept, *faces]})

    def to_toml(self, resolved: bool = False) -> str:
        """The spec as TOML text; ``from_toml`` of it gives the same spec.

        Only what was said is written, but every face keeps its ``kind``; ``resolved``: the
        spec as it is used, every default written out (what a recorded run leaves beside
        it). A world's spec stays without what its file says for each vehicle.
        """
        data = self.model_dump(mode="json", exclude_none=True, exclude_unset=not resolved)
        if resolved and self.world is not None:
            data = {key: value for key, value in data.items() if key not in WORLD_SAYS}
        if self.faces:
            data["faces"] = [
                {"kind": face.kind, **said}
                for face, said in zip(self.faces, data.get("faces", []), strict=True)
            ]
        return tomli_w.dumps(data)

    def save(self, path: str | Path, resolved: bool = False) -> Path:
        """Write the spec to ``path`` (its folder made) and return the path.

        ``resolved``: with every default written out (``to_toml``).
        """
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.to_toml(resolved), encoding="utf-8")
        return path
