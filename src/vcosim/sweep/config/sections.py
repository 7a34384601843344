"""The sweep file's sections: one pydantic model per concept, defaults and key types only.

Rules across keys (a speed needs the automatic gearbox, a parameter path must name a key) live
beside the parameters and the runs (``parameters.py``, ``runs.py``): these models only say
what each key is.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from vcosim.config import Duration
from vcosim.tight.config import CouplingConfig, CouplingTiming
from vcosim.vehicle.gearbox import Gearbox
from vcosim.vehicle.terrain import TerrainSpec

Positive = Annotated[float, Field(gt=0)]
NonNegative = Annotated[float, Field(ge=0)]
Scalar = bool | int | float | str

SECTIONS = ("scenario", "vehicle", "terrain", "controller", "coupling", "metrics", "world")
"""Sections of a sweep file that parameters may vary (``sweep``, ``output``, ``backend`` not)."""

DERIVED_SIGNALS = {"yaw_deg": "yaw, unwrapped, in degrees"}
"""Metric signals computed from a vehicle signal."""

DEFAULT_SIGNALS = ("groundspeed", "accY", "yaw", "throttle", "brake", "steering", "gear", "rpm")
"""The signals ``[output] signals`` keeps unless ``signal_names`` says otherwise."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Manoeuvre(BaseModel):
    """A timed change of held vehicle inputs: ``{time = 3.0, steering = 0.1}``."""

    model_config = ConfigDict(extra="allow")

    time: Annotated[float, Field(ge=0)]

    @property
    def inputs(self) -> dict[str, Any]:
        """The vehicle inputs this event sets."""
        return dict(self.model_extra or {})


class ScenarioSection(_Strict):
    """What is simulated: how long, from which speed, with which gearbox, which manoeuvre."""

    name: str = "sweep"
    duration: Duration = 10.0
    initial_speed: NonNegative = 0.0
    start: Literal["teleport", "drive_up"] = "teleport"
    gearbox: Gearbox = Gearbox.automatic
    manoeuvre: list[Manoeuvre] = Field(default_factory=list)


class VehicleSection(BaseModel):
    """``base``: a preset name or parameter TOML; any other key overrides a parameter."""

    model_config = ConfigDict(extra="allow")

    base: str = "nightrider"

    @property
    def overrides(self) -> dict[str, Any]:
        """The parameter overrides (nested sections as in a vehicle parameter file)."""
        return dict(self.model_extra or {})


TerrainSection = TerrainSpec  # the sweep file's [terrain] is the terrain file's model


class ControllerSection(BaseModel):
    """The controller and its parameters.

    ``name``: an example controller, a ``module:attr`` factory called with the parameters, or
    ``none`` (no coupling: only the manoeuvre drives).
    """

    model_config = ConfigDict(extra="allow")

    name: str = "cruise"

    @property
    def params(self) -> dict[str, Any]:
        """Keyword arguments for the controller's factory."""
        return dict(self.model_extra or {})


class CouplingSection(CouplingTiming):
    """The tight coupling's timing, the controller's computation time and the transport.

    The timing keys (``ext_time``, ``ping_time``, ``window``, ``send_skips``, ``send_offset``,
    ``timeout``) are the simulator's own (``CouplingTiming``). ``compute_time``: a number
    simulates that computation time (replies land after it in ``timing = "realtime"``, and
    ``min_realtime_factor`` follows from it); ``"measured"`` uses the step function's measured
    time for both; unset, replies land after ``ping_time`` alone and ``min_realtime_factor``
    uses the measured time, so it reflects the controller that ran rather than an assumed
    instant one.
    """

    memory: bool = False
    timing: Literal["lockstep", "realtime"] = "lockstep"
    compute_time: NonNegative | Literal["measured"] | None = None
    busy_time: NonNegative = 0.0
    transport: Literal["in-process", "udp"] = "in-process"

    @property
    def simulated_compute_time(self) -> float:
        """The computation time replies are delayed by when it is not measured (s)."""
        return self.compute_time if isinstance(self.compute_time, float | int) else 0.0

    def endpoint_config(self, **options: Any) -> CouplingConfig:
        """The simulator side's configuration: this timing, with ``options`` (ports, spin)."""
        timing = self.model_dump(include=set(CouplingTiming.model_fields))
        return CouplingConfig(**timing, **options)


class MetricsSection(_Strict):
    """Which signal the tracking metrics follow, its target, the settling band and windows."""

    signal: str | None = None
    target: float | str | None = None
    band: Annotated[float, Field(gt=0, lt=1)] = 0.02
    band_min: NonNegative = 0.1
    steady_window: Positive = 2.0


class WorldSection(BaseModel):
    """A world of vehicles instead of the lone car; the controller drives its ego.

    ``file``: a world file (``docs/worlds.md``), relative to the sweep file. Every other key
    overrides the file's: a vehicle's name changes that vehicle (``cutter.driver.gap``), any
    other a top-level key (``sensor.range``); list items are named by index
    (``cutter.driver.speeds.0.1``). The vehicle, terrain and initial speed of the lone car do
    not apply: the world file gives each vehicle's.
    """

    model_config = ConfigDict(extra="allow")

    file: str | None = None

    @property
    def overrides(self) -> dict[str, Any]:
        """The keys that override the world file's."""
        return dict(self.model_extra or {})


class Scenario(_Strict):
    """One complete scenario: everything a run needs except the varied parameters."""

    scenario: ScenarioSection = Field(default_factory=ScenarioSection)
    vehicle: VehicleSection = Field(default_factory=VehicleSection)
    terrain: TerrainSection = Field(default_factory=TerrainSection)
    controller: ControllerSection = Field(default_factory=ControllerSection)
    coupling: CouplingSection = Field(default_factory=CouplingSection)
    metrics: MetricsSection = Field(default_factory=MetricsSection)
    world: WorldSection = Field(default_factory=WorldSection)


MAX_RUNS = 100_000


class SweepSection(_Strict):
    """How parameters vary.

    ``grid``: every combination; ``list``: the i-th value of each parameter together;
    ``random``: ``samples`` draws from a generator seeded with ``seed``.
    """

    mode: Literal["grid", "list", "random"] = "grid"
    seed: int = 0
    samples: Annotated[int, Field(ge=1)] | None = None
    max_runs: Annotated[int, Field(ge=1)] = MAX_RUNS
    """A sweep that would make more runs is refused before any is built (a typo in ``num``
    must not fill the memory); raise it for a sweep that really is that large."""
    parameters: dict[str, Any] = Field(default_factory=dict)
    distribution: str | None = None
    """An OpenSCENARIO ``ParameterValueDistribution`` file: each of its variations is run
    (with every run of ``parameters``); its scenario is the world (``world.file``)."""


class OutputSection(_Strict):
    """Where results go and what is saved beside the metrics."""

    dir: str | None = None
    signals: bool = False
    signal_names: list[str] = Field(default_factory=lambda: list(DEFAULT_SIGNALS))
    signals_every: Annotated[int, Field(ge=1)] = 20
    worst: Annotated[int, Field(ge=1)] = 5


class BackendSection(_Strict):
    """Where the runs execute; ``vcosim sweep``'s ``--workers``/``--ray`` override it.

    ``workers``: local worker processes (unset: one per core; 0: this process, one run after
    another). ``ray``: run on Ray instead, joining ``ray_address`` if given.
    """

    workers: Annotated[int, Field(ge=0)] | None = None
    ray: bool = False
    ray_address: str | None = None

    @property
    def uses_ray(self) -> bool:
        """True when the runs go to Ray (an address implies it)."""
        return self.ray or self.ray_address is not None


class SweepFile(Scenario):
    """A whole sweep file: the scenario's sections, ``[sweep]``, ``[output]``, ``[backend]``."""

    sweep: SweepSection = Field(default_factory=SweepSection)
    output: OutputSection = Field(default_factory=OutputSection)
    backend: BackendSection = Field(default_factory=BackendSection)
