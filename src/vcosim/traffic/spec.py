"""The ``[sumo]`` section of a world file: which SUMO scenario runs beside the world, and how.

A leaf module (pydantic only), so a world file is checked without SUMO installed.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, field_validator, model_validator

from vcosim.config import Options, host_problem
from vcosim.constants import PHYSICS_DT


class SumoSpec(Options):
    """SUMO in lock-step with the world: its scenario, step, seed and the vehicles it sees.

    ``config`` is a ``.sumocfg`` (relative to the world file); ``host`` (``HOST:PORT``)
    instead reaches a SUMO already running with ``--remote-port`` over TraCI; ``road``
    instead makes SUMO's network of the world's OpenDRIVE road (``terrain.road``, converted
    by netconvert, ``vcosim.traffic.opendrive``), its traffic from ``route_files``.
    """

    config: str | None = None
    step_length: Annotated[float, Field(gt=0, le=1.0)] = 0.01  # s, a whole number of steps
    seed: int = Field(default=0, ge=0)
    host: str | None = None
    road: bool = False  # SUMO's network made of the world's OpenDRIVE road
    route_files: list[str] = Field(default_factory=list)  # SUMO's traffic on that network
    vehicles: list[str] | None = None  # world vehicles SUMO sees (None: every one)
    radius: Annotated[float, Field(gt=0)] | None = None  # m: only SUMO's cars this near ours
    routes: dict[str, list[str]] = Field(default_factory=dict)  # a world vehicle's SUMO edges
    options: list[str] = Field(default_factory=list)  # more of SUMO's command-line options

    @field_validator("step_length")
    @classmethod
    def _whole_steps(cls, value: float) -> float:
        steps = value / PHYSICS_DT
        if abs(steps - round(steps)) > 1e-6:
            raise ValueError(f"must be a whole number of {PHYSICS_DT} s physics steps")
        return value

    @field_validator("host")
    @classmethod
    def _host_port(cls, value: str | None) -> str | None:
        if value is not None:
            host, _, port = value.rpartition(":")
            if not host or not port.isdigit() or not 0 < int(port) < 65536:
                raise ValueError("give HOST:PORT of a SUMO started with --remote-port")
            problem = host_problem(host)
            if problem is not None:
                raise ValueError(problem)
        return value

    @model_validator(mode="after")
    def _one_source(self) -> SumoSpec:
        """A scenario comes from somewhere: a file here, the world's road, or a SUMO elsewhere."""
        if sum((self.config is not None, self.host is not None, self.road)) != 1:
            raise ValueError("give one of config = FILE.sumocfg, host = HOST:PORT or road = true")
        if self.route_files and not self.road:
            raise ValueError("route_files go with road = true (a .sumocfg names its own)")
        return self

    @property
    def period_steps(self) -> int:
        """Physics steps per SUMO step."""
        return round(self.step_length / PHYSICS_DT)
