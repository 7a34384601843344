"""Face kinds are a registry: each kind its spec class and the function that attaches it.

The builder looks a face's kind up instead of walking an ``isinstance`` ladder, so a kind
registered from outside attaches like vcosim's own; a spec of no registered kind is refused
with the kinds there are. The world knows no traffic source: SUMO joins it through the builder.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import pytest

from vcosim.config import Options
from vcosim.errors import ConfigError
from vcosim.roads import RoadNetwork
from vcosim.scenarios import RunSpec, build_simulation, faces
from vcosim.scenarios.faces import attach_face, face_kinds, register_face_kind
from vcosim.sim.face import Face
from vcosim.sim.simulation import Simulation
from vcosim.world import World

SUMO_JUNCTION = Path(__file__).parents[2] / "examples" / "worlds" / "sumo-junction.toml"


class Counter(Face):
    """Counts physics steps."""

    kind = "counter"

    def __init__(self, every: int) -> None:
        self.every, self.steps = every, 0

    def after_step(self, sim: Simulation) -> None:
        self.steps += 1


class CounterSpec(Options):
    kind: Literal["counter"] = "counter"
    every: int = 1


class Unregistered(Options):
    kind: Literal["radio"] = "radio"


def test_vcosims_kinds_are_registered_by_name() -> None:
    assert list(face_kinds()) == [
        "coupling", "contracts", "bus", "osi", "foxglove", "storyboard", "user",
    ]  # fmt: skip


def test_a_kind_registered_from_outside_attaches_as_vcosims_do(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(faces, "_KINDS", dict(faces._KINDS))  # registered for this test only
    said: list[str] = []

    def attach(sim: Simulation, spec: CounterSpec, say: object, road: RoadNetwork | None) -> None:
        sim.attach(spec.kind, Counter(spec.every))
        said.append(f"counter every {spec.every}")

    register_face_kind(CounterSpec, attach)
    sim = build_simulation(RunSpec(pacing={"mode": "fast"}))
    attach_face(sim, CounterSpec(every=3))
    sim.run(0.01)
    counter = sim.faces["counter"]
    assert isinstance(counter, Counter) and counter.steps == 20 and said == ["counter every 3"]
    assert face_kinds()["counter"] is CounterSpec


def test_a_spec_of_no_registered_kind_is_refused_with_the_kinds_there_are() -> None:
    sim = build_simulation(RunSpec(pacing={"mode": "fast"}))
    with pytest.raises(ConfigError) as caught:
        attach_face(sim, Unregistered())
    (problem,) = caught.value.problems
    assert problem.startswith("faces: Unregistered is no registered face kind (registered: ")
    assert "coupling, contracts, bus, osi, foxglove, storyboard, user" in problem


def test_a_world_alone_starts_no_traffic() -> None:
    world = World(SUMO_JUNCTION)  # its file has a [sumo] section: the builder would start SUMO
    assert world.spec.sumo is not None and world.objects is None
