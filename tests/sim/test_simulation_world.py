"""The host runs a world as it runs a vehicle: same hooks, pacing and report, plus the world's."""

from __future__ import annotations

import pytest

from vcosim.errors import UnknownNameError
from vcosim.sim import Pacer, Simulation
from vcosim.sim.face import Face
from vcosim.vehicle import Vehicle
from vcosim.world import World, WorldFile

PLATOON = "examples/worlds/platoon.toml"


class Seen(Face):
    """A face recording which vehicle it is handed and at which step."""

    def __init__(self) -> None:
        self.vehicles: set[int] = set()
        self.steps: list[int] = []

    def start(self, sim: Simulation) -> None:
        self.vehicles.add(id(sim.vehicle))

    def after_step(self, sim: Simulation) -> None:
        self.vehicles.add(id(sim.vehicle))
        self.steps.append(sim.vehicle.step_index)


def test_a_lone_vehicle_is_the_ego_of_a_one_car_host() -> None:
    car = Vehicle()
    sim = Simulation(car)
    assert sim.vehicle is car and sim.vehicles == {"ego": car} and sim.world is None
    assert "world" not in sim.run(0.01).to_dict()


def test_a_world_steps_under_the_host_with_hooks_per_vehicle() -> None:
    world = World(WorldFile.load(PLATOON))
    sim = Simulation(world, Pacer("fast"))
    assert sim.vehicle is world.vehicles["leader"]  # no external car: the first is the ego
    assert set(sim.vehicles) == {"leader", "second", "third"}
    default = sim.attach("default", Seen())
    third = sim.attach("third", Seen(), vehicle="third")
    report = sim.run(0.05)
    assert default.vehicles == {id(world.vehicles["leader"])}
    assert third.vehicles == {id(world.vehicles["third"])}
    assert third.steps == list(range(1, 101))
    assert report.steps == 100 and world.time == pytest.approx(0.05)
    assert report.to_dict()["world"] == {
        "vehicles": 3,
        "collisions": [],
        "collided": [],
        "stopped_at_collision": False,
    }
    with pytest.raises(UnknownNameError):
        sim.attach("nobody", Seen(), vehicle="fourth")


def test_a_collision_can_stop_the_run() -> None:
    spec = WorldFile.from_dict(
        {
            "stop_at_collision": True,
            "paths": {"road": {"points": [[-100, 0], [500, 0]]}},
            "vehicles": [
                {"name": "standing", "start": {"x": 12, "y": 0}},
                {
                    "name": "runner",
                    "start": {"x": 0, "y": 0, "speed": 8},
                    "driver": {"kind": "profile", "path": "road", "speeds": [[0, 8]]},
                },
            ],
        }
    )
    report = Simulation(World(spec), Pacer("fast")).run(5.0)
    collision = report.world.collisions[0]
    assert report.world.stopped_at_collision
    assert report.sim_time == pytest.approx(collision.time, abs=1e-9)
    assert tuple(report.to_dict()["world"]["collisions"][0]["vehicles"]) == ("standing", "runner")


def test_realtime_pacing_holds_a_world_to_the_wall_clock() -> None:
    world = World(WorldFile.load(PLATOON))
    report = Simulation(world, Pacer("realtime")).run(0.3)
    assert report.steps == 600
    assert report.realtime_factor <= 1.05  # never ahead of the wall clock (behind: a busy machine)
    assert report.frames["frames"] == 18
