"""Which way an entity moves along a trajectory, and where it is after its end, as esmini.

esmini's user guide ("Trajectory moving and driving direction") and its smoke tests
``trajectory_heading.xosc`` and ``trajectory_speed.xosc``: an entity faces along the
trajectory, or against it when the vertices' heading says so or (untimed, no heading given)
its speed is negative; it moves its speed times that along it. In a world without roads an
entity stops where its trajectory ends (esmini's default controller cannot move it along a
road). Before: a truck told -10 m/s backed off its trajectory's start (111 m off at 5.9 s).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from helpers.scenarios import car_xml, run_storyboard
from vcosim.openscenario.reader import read_scenario
from vcosim.world.paths import Paths

TRUCK = car_xml().replace('vehicleCategory="car"', 'vehicleCategory="truck"')
"""A kinematic entity (vcosim moves trucks where the storyboard says)."""


def _speed(to: float, shape: str = "step", dimension: str = "time", value: float = 0.0) -> str:
    return f"""<PrivateAction><LongitudinalAction><SpeedAction>
  <SpeedActionDynamics dynamicsShape="{shape}" value="{value}" dynamicsDimension="{dimension}"/>
  <SpeedActionTarget><AbsoluteTargetSpeed value="{to}"/></SpeedActionTarget>
</SpeedAction></LongitudinalAction></PrivateAction>"""


def _follow(points: list[tuple[float, float]], heading: str = "", offset: float = 0.0) -> str:
    vertices = "".join(
        f'<Vertex><Position><WorldPosition x="{x}" y="{y}" {heading}/></Position></Vertex>'
        for x, y in points
    )
    return f"""<PrivateAction><RoutingAction>
  <FollowTrajectoryAction initialDistanceOffset="{offset}">
  <Trajectory name="path" closed="false"><Shape><Polyline>{vertices}</Polyline></Shape>
  </Trajectory><TimeReference><None/></TimeReference>
  <TrajectoryFollowingMode followingMode="position"/>
</FollowTrajectoryAction></RoutingAction></PrivateAction>"""


def _roadless(actions: str, vehicle: str = TRUCK, at: str = 'x="0" y="0" h="0"') -> str:
    """A world without roads: one ``vehicle`` ("Truck") ``at``, Init's ``actions``, no story."""
    return f"""<?xml version="1.0" encoding="utf-8"?>
<OpenSCENARIO>
<FileHeader description="direction" author="vcosim tests" revMajor="1" revMinor="2"
  date="2026-12-07T00:00:00"/>
<ParameterDeclarations/><CatalogLocations/><RoadNetwork/>
<Entities><ScenarioObject name="Truck">{vehicle}</ScenarioObject></Entities>
<Storyboard><Init><Actions><Private entityRef="Truck">
  <PrivateAction><TeleportAction><Position><WorldPosition {at}/></Position>
  </TeleportAction></PrivateAction>{actions}</Private></Actions></Init>
<StopTrigger/></Storyboard>
</OpenSCENARIO>"""


def _where(tmp_path: Path, text: str, seconds: float) -> tuple[float, float, float]:
    """(x, y, speed) of the truck after ``seconds`` (of the physical car: a world's row)."""
    sim, _ = run_storyboard(tmp_path, "direction", text, seconds=seconds)
    if "Truck" in sim.world.names:
        p = sim.world.poses()
        row = sim.world.row("Truck")
        return float(p["x"][row]), float(p["y"][row]), float(p["speed"][row])
    others = sim.world.others()
    slot = others.names.index("Truck")
    poses = others.poses
    return float(poses["x"][slot]), float(poses["y"][slot]), float(poses["speed"][slot])


CORNER = [(0.0, 0.0), (30.0, 0.0), (30.0, 30.0)]
"""A 60 m polyline with a right-angle corner."""


def test_reversing_with_no_heading_given_runs_the_trajectory_forwards(tmp_path: Path) -> None:
    """Row 4 of esmini's table (its ``car_red``): -10 m/s, no heading: on along the path."""
    x, y, _ = _where(tmp_path, _roadless(_speed(-10.0) + _follow(CORNER)), 2.0)
    assert math.hypot(x - 20.0, y) < 0.5  # 20 m on, not 20 m back off the start


def test_without_roads_an_entity_stops_where_its_trajectory_ends(tmp_path: Path) -> None:
    """esmini's ``trajectory_heading.xosc`` at 10 s: every entity stands at its end."""
    x, y, speed = _where(tmp_path, _roadless(_speed(-10.0) + _follow(CORNER)), 8.0)
    assert math.hypot(x - 30.0, y - 30.0) < 1.0  # 60 m in 6 s; then 2 s standing
    assert speed == pytest.approx(0.0, abs=1e-6)


def test_facing_against_the_trajectory_it_moves_back_along_it(tmp_path: Path) -> None:
    """Row 9 (``car_trailer``): vertices heading against the path, +10 m/s, from its end."""
    follow = _follow([(0.0, 0.0), (60.0, 0.0)], f'h="{math.pi}"', offset=60.0)
    x, y, _ = _where(tmp_path, _roadless(_speed(10.0) + follow), 2.0)
    assert math.hypot(x - 40.0, y) < 0.5  # 20 m back from its end, (60, 0)


def test_a_speed_through_zero_turns_the_motion_along_the_trajectory(tmp_path: Path) -> None:
    """``trajectory_speed.xosc``: Init steps to 10 m/s, then ramps to -10 at 2 m/s²: the
    ramp starts from the step's 10 (before: from standing), the truck goes 25 m on, comes
    back and ends the trajectory at its start, where (no roads) it stops."""
    ramp = _speed(10.0) + _speed(-10.0, "linear", "rate", 2.0)
    line = [(0.0, 0.0), (100.0, 0.0)]
    x, _, _ = _where(tmp_path, _roadless(ramp + _follow(line)), 5.0)
    assert x == pytest.approx(25.0, abs=0.5)
    x, _, speed = _where(tmp_path, _roadless(ramp + _follow(line)), 11.0)
    assert abs(x) < 1.0
    assert speed == pytest.approx(0.0, abs=1e-6)


CAR_AT_50 = 'x="50" y="0" h="3.14159"'
"""A physical car halfway along ``WEST_FACING``, facing west."""
WEST_FACING = _follow([(0.0, 0.0), (100.0, 0.0)], f'h="{math.pi}"', offset=50.0)
"""A 100 m trajectory east whose vertices face west, followed from halfway."""


def test_a_car_facing_against_its_trajectory_drives_it_end_to_start(tmp_path: Path) -> None:
    """``traj_heading_and_interpolation.xosc``'s Car2: the physical car at 5 m/s drives the
    trajectory back towards its start (before: on towards its end, 70 m off at 7.3 s)."""
    text = _roadless(_speed(5.0) + WEST_FACING, car_xml(), CAR_AT_50)
    x, y, _ = _where(tmp_path, text, 4.0)
    assert abs(x - 30.0) < 1.5 and abs(y) < 0.5  # 20 m west


def test_esminis_ignore_heading_property_moves_it_by_its_speed_alone(tmp_path: Path) -> None:
    """``ignoreHeadingForTrajMotion="true"`` (that file's Car1, Car3, Car4): on along the
    trajectory at +5 m/s, whichever way its vertices face."""
    ignoring = car_xml().replace(
        "</Vehicle>",
        '<Properties><Property name="ignoreHeadingForTrajMotion" value="true"/></Properties>'
        "</Vehicle>",
    )
    text = _roadless(_speed(5.0) + WEST_FACING, ignoring, CAR_AT_50.replace("3.14159", "0"))
    x, _, _ = _where(tmp_path, text, 4.0)
    assert abs(x - 70.0) < 1.5  # 20 m east


def _timed(vertices: list[tuple[float, float, float]], heading: str = "") -> str:
    """A FollowTrajectoryAction along (time, x, y) vertices, timed relative to its start."""
    line = "".join(
        f'<Vertex time="{t}"><Position><WorldPosition x="{x}" y="{y}" {heading}/></Position>'
        "</Vertex>"
        for t, x, y in vertices
    )
    return f"""<PrivateAction><RoutingAction><FollowTrajectoryAction>
  <Trajectory name="timed" closed="false"><Shape><Polyline>{line}</Polyline></Shape>
  </Trajectory><TimeReference>
  <Timing domainAbsoluteRelative="relative" scale="1" offset="0"/></TimeReference>
  <TrajectoryFollowingMode followingMode="position"/>
</FollowTrajectoryAction></RoutingAction></PrivateAction>"""


def test_a_vertex_given_twice_is_a_stop_for_the_time_between(tmp_path: Path) -> None:
    """``trajectory_special_cases.xosc``'s car_red pauses 1 s at a vertex given twice (before:
    the repeat was dropped with its time, and the car drove on at once: 2.2 m ahead)."""
    timed = _timed([(0.0, 0.0, 0.0), (1.0, 10.0, 0.0), (3.0, 10.0, 0.0), (4.0, 20.0, 0.0)])
    x, _, _ = _where(tmp_path, _roadless(timed), 2.5)
    assert x == pytest.approx(10.0, abs=0.3)  # standing at the repeated vertex
    x, _, _ = _where(tmp_path, _roadless(timed), 3.5)
    assert x == pytest.approx(15.0, abs=0.3)


def test_a_car_its_schedule_reverses_moves_kinematically(tmp_path: Path) -> None:
    """Row 11 of esmini's table: timed, the vertices heading against the path: the car
    reverses along it, which vcosim's driver cannot (as a negative speed)."""
    backwards = _timed([(0.0, 0.0, 0.0), (4.0, -20.0, 0.0)], 'h="0"')
    text = _roadless(backwards, car_xml(), 'x="0" y="0" h="0"')
    path = tmp_path / "schedule.xosc"
    path.write_text(text)
    assert read_scenario(path).entities["Truck"].kinematic
    forwards = _timed([(0.0, 0.0, 0.0), (4.0, 20.0, 0.0)], 'h="0"')
    path.write_text(_roadless(forwards, car_xml(), 'x="0" y="0" h="0"'))
    assert not read_scenario(path).entities["Truck"].kinematic


def test_paths_added_to_a_world_of_none_are_where_they_were_put() -> None:
    """A world without paths of its own (kinematic entities only) and two trajectories added:
    each is its own rows (before, a phantom first start shifted every later one)."""
    paths = Paths({})
    first = paths.add("a", np.array([[0.0, 0.0], [10.0, 0.0]]))
    second = paths.add("b", np.array([[0.0, 5.0], [0.0, 15.0], [0.0, 25.0]]))
    assert paths.starts.tolist() == [0, 2] and paths.ends.tolist() == [2, 5]
    assert paths.pose_at("a", 5.0, 0.0)[:2] == pytest.approx((5.0, 0.0))
    assert paths.pose_at("b", 15.0, 0.0)[:2] == pytest.approx((0.0, 20.0))
    assert (first, second) == (0, 1)
