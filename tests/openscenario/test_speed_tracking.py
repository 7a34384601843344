"""How closely a storyboard's physical car follows the speeds its storyboard asks for.

The car follows a kinematic reference (its "ghost": the commanded speed integrated into a
distance, as esmini moves an entity): a launch the car can make is followed within a metre
of where esmini would put the car; a demand beyond the car (8 m/s2 from standstill) leaves
the ghost re-anchored a leash ahead, and the car does not race to make up the distance.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from helpers.scenarios import car_xml, lane, placed, write_road
from vcosim.openscenario import speed_profile
from vcosim.openscenario.model import SpeedProfileAction as Profile
from vcosim.openscenario.storyboard import scenario_run
from vcosim.scenarios import PacingSpec, RunSpec, build_simulation
from vcosim.sim.face import Face
from vcosim.sim.simulation import Simulation
from vcosim.vehicle.params import VehicleParams
from vcosim.world.drivers import CATCH_UP, GHOST_LEASH
from vcosim.world.pedal_map import THROTTLES, pedal_map

CAR = car_xml()

LAUNCH = """<Private entityRef="Car"><PrivateAction><LongitudinalAction>
  <SpeedProfileAction followingMode="position">
    <SpeedProfileEntry speed="0.0" time="0.0"/>
    <SpeedProfileEntry speed="10.0" time="5.0"/>
    <SpeedProfileEntry speed="10.0" time="5.0"/>
  </SpeedProfileAction></LongitudinalAction></PrivateAction></Private>"""
"""esmini's rising_edge.xosc in shape: 2 m/s2 from standstill to 10 m/s, then held."""

BEYOND = """<Private entityRef="Car"><PrivateAction><LongitudinalAction><SpeedAction>
  <SpeedActionDynamics dynamicsShape="linear" value="8" dynamicsDimension="rate"/>
  <SpeedActionTarget><AbsoluteTargetSpeed value="30"/></SpeedActionTarget>
</SpeedAction></LongitudinalAction></PrivateAction></Private>"""
"""8 m/s2 from standstill to 30 m/s: about twice what the default car's engine gives."""


def scenario(action: str, seconds: float, car: str = CAR) -> str:
    return f"""<?xml version="1.0" encoding="utf-8"?>
<OpenSCENARIO>
<FileHeader description="speed tracking" author="vcosim tests" revMajor="1" revMinor="2"
  date="2026-12-07T00:00:00"/>
<ParameterDeclarations/>
<CatalogLocations/>
<RoadNetwork><LogicFile filepath="straight.xodr"/></RoadNetwork>
<Entities><ScenarioObject name="Car">{car}</ScenarioObject></Entities>
<Storyboard>
<Init><Actions>{placed("Car", lane(50.0), 0.0)}{action}</Actions></Init>
<StopTrigger><ConditionGroup><Condition name="end" delay="0" conditionEdge="none">
  <ByValueCondition><SimulationTimeCondition value="{seconds}" rule="greaterOrEqual"/>
  </ByValueCondition></Condition></ConditionGroup></StopTrigger>
</Storyboard>
</OpenSCENARIO>
"""


class Trace(Face):
    """The car's x, speed and ghost gap every 0.1 s."""

    kind = "trace"

    def __init__(self) -> None:
        self.rows: list[tuple[float, float, float, float]] = []

    def after_step(self, sim: Simulation) -> None:
        world = sim.world
        assert world is not None
        if world.step_index % 200:
            return
        row = world.row("Car")
        poses = world.poses()
        gap = float(world.drivers.ghost[world.drivers.position[row]])
        self.rows.append((world.time, float(poses["x"][row]), float(poses["speed"][row]), gap))


def traced(
    folder: Path, action: str, seconds: float, car: str = CAR
) -> list[tuple[float, float, float, float]]:
    """Run the storyboard with ``action`` in Init fast for ``seconds``: the car's trace."""
    write_road(folder)
    path = folder / "tracking.xosc"
    path.write_text(scenario(action, seconds, car))
    face, world = scenario_run(path)
    sim = build_simulation(RunSpec(world=world, pacing=PacingSpec(mode="fast"), faces=[face]))
    trace = Trace()
    sim.attach("trace", trace)
    sim.run(seconds + 0.5)
    return trace.rows


def at(rows: list[tuple[float, float, float, float]], time: float) -> tuple[float, ...]:
    return min(rows, key=lambda row: abs(row[0] - time))


def test_a_launch_the_car_can_make_is_followed_within_a_metre_of_the_kinematic_position(
    tmp_path: Path,
) -> None:
    rows = traced(tmp_path, LAUNCH, 12.0)
    for time in (1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 12.0):
        kinematic = 50.0 + (time**2 if time <= 5.0 else 25.0 + 10.0 * (time - 5.0))
        assert at(rows, time)[1] == pytest.approx(kinematic, abs=1.0), time


def test_a_car_that_cannot_follow_re_anchors_its_ghost_instead_of_racing(tmp_path: Path) -> None:
    rows = traced(tmp_path, BEYOND, 15.0)
    assert max(abs(gap) for *_, gap in rows) <= GHOST_LEASH + 1e-9
    assert max(speed for _, _, speed, _ in rows) <= 30.0 + CATCH_UP
    time, x, speed, gap = at(rows, 15.0)
    assert speed == pytest.approx(30.0, abs=0.3)
    assert abs(gap) < 0.3  # caught up with its (re-anchored) ghost
    kinematic = 50.0 + 30.0**2 / (2 * 8.0) + 30.0 * (time - 30.0 / 8.0)
    assert x < kinematic - GHOST_LEASH  # the distance lost while it could not follow stays lost


def test_a_speed_action_is_held_within_the_vehicle_s_performance_as_esmini_holds_it(
    tmp_path: Path,
) -> None:
    slow = CAR.replace('maxAcceleration="8"', 'maxAcceleration="2"')
    rows = traced(tmp_path, BEYOND, 6.0, slow)  # 8 m/s2 asked, 2 allowed: 12 m/s at 6 s
    time, x, speed, gap = at(rows, 6.0)
    assert speed == pytest.approx(2.0 * time, abs=0.3)
    assert x == pytest.approx(50.0 + time**2, abs=1.0)  # where esmini's entity is
    assert abs(gap) < 1.0


def profile(*entries: tuple[float, float | None], following: str = "position") -> Profile:
    """A profile with speed-profile_test.xosc's constraints."""
    return Profile(entries, None, 5.0, 10.0, following, 4.0, 3.0)


def test_a_position_profile_starts_at_its_first_entry_s_speed_a_follow_one_at_the_car_s() -> None:
    entries = ((50 / 3.6, 0.0), (100 / 3.6, 4.0), (50 / 3.6, 4.0))  # condition_delay.xosc's
    position = speed_profile.plan(profile(*entries), 1.0, 0.0, 0.0, 0.0)
    assert speed_profile.at(position, 1.0) == pytest.approx((50 / 3.6, 50 / 3.6 / 4.0))
    assert speed_profile.at(position, 5.0)[0] == pytest.approx(100 / 3.6)
    follow = speed_profile.plan(profile(*entries, following="follow"), 1.0, 0.0, 0.0, 0.0)
    assert speed_profile.at(follow, 1.0)[0] == pytest.approx(0.0)


def test_an_entry_too_steep_is_reached_at_the_limit_later() -> None:
    pieces = speed_profile.plan(profile((0.0, 0.0), (20.0, 2.0)), 0.0, 0.0, 0.0, 0.0)
    assert speed_profile.at(pieces, 2.0) == pytest.approx((10.0, 5.0))  # 5 m/s2, not 10
    assert speed_profile.at(pieces, 4.0)[0] == pytest.approx(20.0)


def test_a_follow_profile_bends_at_its_rates_and_one_entry_arrives_on_time() -> None:
    pieces = speed_profile.plan(
        profile((0.0, 0.0), (10.0, 4.0), (4.0, 4.0), (8.0, 2.0), following="follow"),
        0.0, 0.0, 0.0, 0.0,
    )  # fmt: skip
    times = [0.01 * n for n in range(1500)]
    rates = [speed_profile.at(pieces, t)[1] for t in times]
    jerks = [(b - a) / 0.01 for a, b in zip(rates, rates[1:], strict=False)]
    assert max(jerks) <= 4.0 + 1e-6 and min(jerks) >= -3.0 - 1e-6
    assert speed_profile.at(pieces, 15.0) == pytest.approx((8.0, 0.0))
    one = speed_profile.plan(profile((15.0, 5.0), following="follow"), 10.0, 8.0, 0.0, 0.0)
    assert speed_profile.at(one, 15.0) == pytest.approx((15.0, 0.0))
    assert speed_profile.at(one, 14.9)[0] < 15.0  # the speed arrives at the entry's time


def test_the_pedal_map_is_the_vehicle_s_own() -> None:
    params = VehicleParams.preset("nightrider")
    found = pedal_map(params)
    assert found.net.shape[1] == len(THROTTLES)
    assert (found.net[:, 1:] >= found.net[:, :-1]).all()  # more throttle, more acceleration
    assert 3.5 < found.net[0, -1] < 6.0  # a full-throttle launch
    assert found.net[30, 0] < -0.5  # coasting at 30 m/s: drag and rolling resistance
    mass = params.body.chassis_mass + params.body.engine_mass + params.engine.fuel_tank_mass
    brakes = 2 * (params.wheels.brake_torque_front + params.wheels.brake_torque_rear)
    assert found.brake_gain == pytest.approx(brakes / params.wheels.radius / mass)
    assert np.isfinite(found.net).all()
