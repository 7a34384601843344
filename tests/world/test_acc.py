"""The ACC example drives the ego car of a world behind a stop-and-go lead car (in-process)."""

from __future__ import annotations

from vcosim.controllers.acc import Acc
from vcosim.sim import Pacer, Simulation
from vcosim.sim.face import Face
from vcosim.tight.config import CouplingConfig
from vcosim.tight.controller import Responder
from vcosim.tight.endpoint import SimulatorEndpoint
from vcosim.tight.inprocess import InProcessLink
from vcosim.world import World, WorldFile
from vcosim.world.bank_h import fill_range_slots


class GapProbe(Face):
    """Records the ego's bumper gap and speed every frame."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.samples: list[tuple[float, float]] = []

    def on_frame(self, sim: Simulation) -> None:
        reading = self.world.sense("ego")
        self.samples.append((reading.distance, self.world.vehicles["ego"].signal("groundspeed")))


def test_acc_follows_a_stop_and_go_lead_with_a_time_gap_of_at_least_1_s() -> None:
    world = World(WorldFile.load("examples/worlds/follow.toml"))
    sim = Simulation(world, Pacer("fast"))
    config = CouplingConfig()
    step = config.schedule(sim.dt).controller_step(sim.dt)
    link = InProcessLink(
        Responder(Acc(time_gap=1.8, speed=20.0), step, False), lambda: world.step_index
    )
    endpoint = SimulatorEndpoint(config, link=link, fill_custom=fill_range_slots)
    sim.attach("coupling", endpoint, vehicle="ego")
    probe = sim.attach("probe", GapProbe(world))
    report = sim.run(45.0)

    assert report.world.collisions == []
    gaps = [distance / speed for distance, speed in probe.samples if speed > 1.0]
    assert min(gaps) >= 1.0
    lead = world.vehicles["lead"].signal("groundspeed")
    assert lead > 8.0  # the lead stopped twice and drives again: so does the ego
    assert world.vehicles["ego"].signal("groundspeed") > 5.0
    speeds = [speed for _, speed in probe.samples]
    assert min(speeds[len(speeds) // 4 :]) < 1.5  # it slowed almost to a stop behind it
