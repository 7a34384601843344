"""SUMO's traffic in a run built from a ``RunSpec``: the world it joins, and its face.

A spec's ``sumo`` goes into the world's file as its ``[sumo]`` section (a lone car becomes the
vehicle ``ego`` of a world of one), so SUMO joins every run the one way a world file says
(``vcosim.traffic``). The ``sumo`` face ends SUMO with the run, writes SUMO's cars beside a
recording (``run.sumo.csv``: every car at every SUMO step) and reports SUMO's share of the time.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from vcosim.errors import ConfigError
from vcosim.reports import Report
from vcosim.scenarios.spec import LONE_CAR, RunSpec
from vcosim.sim.face import Face
from vcosim.traffic.sumo import SumoTraffic
from vcosim.vehicle.terrain import TerrainSpec
from vcosim.world.spec import WorldFile
from vcosim.world.sumo_spec import SumoSpec


def world_file(spec: RunSpec) -> WorldFile | Path:
    """The world ``spec`` runs: its own, with the spec's ``sumo`` as its ``[sumo]`` section.

    Without ``spec.world`` the lone car is the vehicle ``ego`` of a world of one. A config
    file the spec names is the working folder's, not relative to a world file.
    """
    if spec.sumo is None:
        assert spec.world is not None
        return spec.world
    sumo = spec.sumo
    if sumo.config is not None:
        sumo = sumo.model_copy(update={"config": str(Path(sumo.config).resolve())})
    if spec.world is None:
        return lone_world(spec, sumo)
    world = spec.world if isinstance(spec.world, WorldFile) else WorldFile.load(spec.world)
    if world.sumo is not None:
        raise ConfigError(["sumo: the world has a [sumo] section of its own"], str(spec.world))
    data = {**world.model_dump(exclude_unset=True), "sumo": sumo.model_dump()}
    return WorldFile.from_dict(data, str(spec.world), base=world.base)


def lone_world(spec: RunSpec, sumo: SumoSpec) -> WorldFile:
    """The lone car of ``spec`` as the external vehicle ``ego`` of a world of one, with SUMO."""
    x, y, heading = spec.start.pose or (0.0, 0.0, 0.0)
    if spec.terrain is None:
        terrain = TerrainSpec()
    elif isinstance(spec.terrain, TerrainSpec):
        terrain = spec.terrain
    else:
        terrain = TerrainSpec.load(spec.terrain)
    car = {
        "name": LONE_CAR,
        "vehicle": spec.vehicle,
        "start": {"x": x, "y": y, "heading": heading, "speed": spec.start.speed},
        "gearbox": spec.gearbox,
        "engine": spec.engine,
    }
    data = {
        "ego": LONE_CAR,
        "vehicles": [car],
        "terrain": terrain.model_dump(exclude_unset=True),
        "sumo": sumo.model_dump(),
    }
    return WorldFile.from_dict(data, "run spec")


def trace_path(recording: Path) -> Path:
    """Where SUMO's cars go beside a recording: ``run.csv`` → ``run.sumo.csv`` (always CSV)."""
    return recording.with_name(f"{recording.stem}.sumo.csv")


@dataclass
class SumoReport(Report):
    """SUMO's side of a run: its steps, the wall time they took, its cars at the end."""

    steps: int
    sumo_time: float
    """Wall-clock seconds spent in SUMO's own steps."""
    vehicles: int
    trace: str | None


class SumoFace(Face):
    """Ends SUMO with the run and writes its cars beside the recording (``trace``)."""

    kind = "sumo"

    def __init__(self, traffic: SumoTraffic, trace: Path | None = None) -> None:
        self.traffic = traffic
        self.trace = trace
        if trace is not None:
            traffic.trace(trace)

    def report(self) -> SumoReport:
        """SUMO's steps and time."""
        traffic = self.traffic
        return SumoReport(
            steps=traffic.steps,
            sumo_time=round(traffic.sumo_seconds, 6),
            vehicles=len(traffic.ids),
            trace=None if self.trace is None else str(self.trace),
        )

    def close(self) -> None:
        """End SUMO (safe twice)."""
        self.traffic.close()
