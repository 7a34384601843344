"""The ACC example and a slower car cutting in front of it (in-process, the sweep's metrics).

``examples/worlds/cut-in-slow.toml``: the ego at 25 m/s, a slower car in the left lane changes
into the ego's lane once the ego is ``gap`` metres behind it. The sweep
``examples/sweeps/cut-in.toml`` runs the grid; these are two of its runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from vcosim.config import read_toml
from vcosim.controllers.acc import Acc
from vcosim.sim import Pacer, Simulation
from vcosim.sweep.world import WorldProbe
from vcosim.tight.config import CouplingConfig
from vcosim.tight.controller import Responder
from vcosim.tight.endpoint import SimulatorEndpoint
from vcosim.tight.inprocess import InProcessLink
from vcosim.tight.views import Controls, SimulatorMessage
from vcosim.world import World, WorldFile
from vcosim.world.bank_h import fill_range_slots

CUT_IN = Path("examples/worlds/cut-in-slow.toml")


@dataclass
class Recorder:
    """The ACC, with what it commanded at each step: (dt, acceleration, emergency)."""

    acc: Acc
    steps: list[tuple[float, float, bool]] = field(default_factory=list)

    def __call__(self, msg: SimulatorMessage) -> Controls:
        controls = self.acc(msg)
        self.steps.append((msg.dt, self.acc.command, self.acc.emergency))
        return controls

    def jerks(self) -> tuple[np.ndarray, np.ndarray]:
        """The commanded jerk of each step (m/s3), and whether collision avoidance braked."""
        dt, command, emergency = (np.array(column) for column in zip(*self.steps, strict=True))
        return np.abs(np.diff(command)) / dt[1:], emergency[1:] | emergency[:-1]


def cut_in(gap: float, cutter_speed: float, duration: float) -> tuple[Recorder, WorldProbe, bool]:
    """Run the cut-in world with the ACC (25 m/s, 1.8 s) on the ego, as the sweep does."""
    data = read_toml(CUT_IN)
    (cutter,) = (v for v in data["vehicles"] if v["name"] == "cutter")
    cutter["driver"]["speeds"][0][1] = cutter_speed
    cutter["driver"]["lane_change"]["gap"] = gap
    world = World(WorldFile.from_dict(data, str(CUT_IN), base=CUT_IN.parent))
    sim = Simulation(world, Pacer("fast"))
    config = CouplingConfig(ext_time=0.01)
    recorder = Recorder(Acc(speed=25.0, time_gap=1.8))
    link = InProcessLink(
        Responder(recorder, config.schedule(sim.dt).controller_step(sim.dt), False),
        lambda: world.step_index,
    )
    endpoint = SimulatorEndpoint(config, link=link, fill_custom=fill_range_slots)
    sim.attach("coupling", endpoint, vehicle="ego")
    probe = sim.attach("probe", WorldProbe(world))
    report = sim.run(duration)
    collided = any("ego" in hit.vehicles for hit in report.world.collisions)
    return recorder, probe, collided


def test_a_hard_cut_in_is_braked_for_in_time_and_no_harder_than_needed() -> None:
    # The cutter (10 m/s) moves over 24 m ahead of the ego closing in at 15 m/s: stopping the
    # closing needs 4.7 m/s2 at once, more than the ACC's 3.5 once it has seen the move.
    recorder, probe, collided = cut_in(gap=30.0, cutter_speed=10.0, duration=10.0)

    assert not collided
    assert min(probe.gaps) > 1.0  # m between the boxes, at the closest
    jerk, emergency = recorder.jerks()
    assert emergency.any()  # collision avoidance had to brake beyond the ACC's comfort
    assert jerk.max() <= recorder.acc.emergency_jerk + 1e-6
    comfortable = np.array([-c <= recorder.acc.comfort_deceleration for _, c, _ in recorder.steps])
    ordinary = ~emergency & comfortable[1:] & comfortable[:-1]
    assert jerk[ordinary].max() <= recorder.acc.comfort_jerk + 1e-6
    final_speed = probe.world.vehicles["ego"].signal("groundspeed")
    assert 7.0 < final_speed < 11.0  # it settles behind the cutter, not to a stop


def test_a_mild_cut_in_is_taken_within_comfort() -> None:
    # The cutter (15 m/s) moves over 26 m ahead, closing at 10 m/s: 1.9 m/s2 would do.
    recorder, probe, collided = cut_in(gap=30.0, cutter_speed=15.0, duration=10.0)

    assert not collided
    jerk, emergency = recorder.jerks()
    assert not emergency.any()
    assert min(c for _, c, _ in recorder.steps) >= -recorder.acc.comfort_deceleration
    assert jerk.max() <= recorder.acc.comfort_jerk + 1e-6
    # What the car did, as the sweep measures it (10 ms samples), after the start's settling:
    # without the jerk limit, its braking reached ~400 m/s3.
    measured = np.abs(np.diff(probe.acceleration[50:])) / 0.01
    assert measured.max() < 15.0
    assert min(probe.gaps) > 2.0
