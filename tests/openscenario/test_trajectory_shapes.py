"""Trajectory shapes esmini's files use: a clothoid spline whose later segment says where it
starts (``lane-change_clothoid_spline_based_trajectory.xosc``, refused before)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from helpers.scenarios import car_xml, lane, placed
from vcosim.openscenario import model as m
from vcosim.openscenario.place import layout
from vcosim.openscenario.reader import read_scenario


def test_a_later_segment_starts_where_it_says_with_its_heading_offset() -> None:
    """Two straight 10 m segments; the second starts at (12, 5) heading north (pi/2), turned
    a further 0.5 rad by its hOffset (esmini adds the offset to the position's heading)."""
    spline = m.ClothoidSpline(
        ((0.0, 0.0, 10.0, 0.0), (0.0, 0.0, 10.0, 0.5)),
        m.WorldPosition(0.0, 0.0, 0.0),
        restarts=(m.WorldPosition(12.0, 5.0, math.pi / 2),),
    )
    points, _ = layout(m.Trajectory("jump", spline, 0), None)
    np.testing.assert_allclose(points[0], [0.0, 0.0], atol=1e-9)
    assert any(np.allclose(p, [10.0, 0.0], atol=1e-6) for p in points)  # the first one's end
    assert any(np.allclose(p, [12.0, 5.0], atol=1e-6) for p in points)  # the restart
    heading = math.pi / 2 + 0.5
    end = [12.0 + 10.0 * math.cos(heading), 5.0 + 10.0 * math.sin(heading)]
    np.testing.assert_allclose(points[-1], end, atol=1e-3)


def test_a_file_with_a_restarting_segment_is_read(tmp_path: Path) -> None:
    """The reader keeps each later segment's PositionStart (before: refused by name)."""
    follow = """<PrivateAction><RoutingAction><FollowTrajectoryAction>
  <Trajectory name="spline" closed="false"><Shape><ClothoidSpline>
    <ClothoidSplineSegment curvatureStart="0" curvatureEnd="0" length="10"/>
    <ClothoidSplineSegment curvatureStart="0" curvatureEnd="0" length="10" hOffset="0.1">
      <PositionStart><WorldPosition x="30" y="-1.75" h="0"/></PositionStart>
    </ClothoidSplineSegment>
  </ClothoidSpline></Shape></Trajectory>
  <TimeReference><None/></TimeReference><TrajectoryFollowingMode followingMode="position"/>
</FollowTrajectoryAction></RoutingAction></PrivateAction>"""
    text = f"""<?xml version="1.0" encoding="utf-8"?>
<OpenSCENARIO><FileHeader description="spline" author="vcosim tests" revMajor="1"
  revMinor="2" date="2026-12-07T00:00:00"/><ParameterDeclarations/><CatalogLocations/>
<RoadNetwork/><Entities><ScenarioObject name="Car">{car_xml()}</ScenarioObject></Entities>
<Storyboard><Init><Actions>{
        placed("Car", lane(10.0), 5.0).replace("</Private>", follow + "</Private>")
    }</Actions></Init><StopTrigger/></Storyboard></OpenSCENARIO>"""
    path = tmp_path / "spline.xosc"
    path.write_text(text.replace(lane(10.0), '<WorldPosition x="0" y="-1.75" h="0"/>'))
    scenario = read_scenario(path)
    (follow_action,) = [a.action for _, a in scenario.init_actions]
    assert isinstance(follow_action, m.FollowTrajectoryAction)
    shape = follow_action.trajectory.shape
    assert isinstance(shape, m.ClothoidSpline)
    assert shape.start is None
    assert shape.restarts == (m.WorldPosition(30.0, -1.75, 0.0),)


def test_follow_mode_drives_each_segment_at_one_acceleration() -> None:
    """esmini's ``brake_by_trajectory_100-0.xosc``: 100 km/h to 50 at -10 m/s², to 0 at -6,
    then standing 1 s at its last vertex (given twice). In ``follow`` mode esmini drives each
    segment at the one acceleration that covers it in its time, from the speed it has (before:
    each segment's mean speed at once, 20.8 then 6.9 m/s, and on past the end at 6.9)."""
    from vcosim.openscenario.trajectory import follow_speed, follow_speeds

    v1, v2 = 100 / 3.6, 50 / 3.6
    t1, t2 = (v2 - v1) / -10.0, v2 / 6.0
    d1, d2 = v1 * t1 - 5.0 * t1**2, v2 * t2 - 3.0 * t2**2
    cum = np.array([0.0, d1, d1 + d2, d1 + d2])
    times = np.array([0.0, t1, t1 + t2, t1 + t2 + 1.0])
    speeds = follow_speeds(cum, times, v1)
    np.testing.assert_allclose(speeds, [v1, v2, 0.0, 0.0], atol=1e-9)
    speed, rate = follow_speed(times, speeds, t1 / 2)
    assert (speed, rate) == (pytest.approx((v1 + v2) / 2), pytest.approx(-10.0))
    standing = follow_speed(times, speeds, t1 + t2 + 0.5)  # at the end, for its second
    assert standing == (pytest.approx(0.0, abs=1e-9), pytest.approx(0.0, abs=1e-9))
