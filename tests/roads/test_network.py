"""Lanes, junctions and routes of a road network read from OpenDRIVE; refused files."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scenariogeneration import xodr

from helpers.roads import network_of
from vcosim.errors import ConfigError
from vcosim.roads import read_xodr


@pytest.fixture(scope="module")
def crossing():
    """Three arms into a junction: road 1 from the west, 2 from the south, 3 from the east."""
    junction = xodr.CommonJunctionCreator(100, "T", startnum=100)
    arms = []
    for rid, angle in ((1, 0.0), (2, math.pi / 2), (3, math.pi)):
        arm = xodr.create_road(xodr.Line(50), rid, left_lanes=1, right_lanes=1)
        junction.add_incoming_road_circular_geometry(arm, 20, angle, "successor")
        arms.append(arm)
    junction.add_connection(1, 2)
    junction.add_connection(1, 3)
    junction.add_connection(2, 3)
    return network_of(*arms, junctions=(junction,))


def test_a_junctions_lane_links_lead_a_driver_through_it(crossing):
    """West arm, right lane -> a connecting road -> the south arm, driving away from the junction.

    The route's centre line is continuous (no gap over 1 cm, so no jump at either joint), it
    keeps to the lane centres (1.5 m right of each reference line in driving direction) and
    it ends where the south arm starts, 1.5 m to the west of its reference line.
    """
    ahead = crossing.next_lanes(1, -1)
    into_south = [(r, lane) for r, lane in ahead if crossing.next_lanes(r, lane) == [("2", 1)]]
    assert len(ahead) == 2 and len(into_south) == 1
    route = [("1", -1), into_south[0], ("2", 1)]
    path = crossing.route_path(route, step=0.5)
    gaps = np.hypot(*np.diff(path[:, :2], axis=0).T)
    assert gaps.max() < 0.51
    assert path[0, :2] == pytest.approx((0.0, -1.5))
    south = crossing.road(2)
    sx, sy, _, heading = south.point(0.0)
    left = np.array([-math.sin(heading[0]), math.cos(heading[0])])
    assert path[-1, :2] == pytest.approx(np.array([sx[0], sy[0]]) + 1.5 * left, abs=1e-3)
    located = crossing.locate(path[::10, 0], path[::10, 1])
    assert set(located.road) <= {"1", "2", into_south[0][0]}
    assert np.all(np.abs(np.abs(located.t) - 1.5) < 1e-6)

    with pytest.raises(ConfigError, match="does not lead to"):
        crossing.route_path([("1", -1), ("2", 1)])
    assert crossing.next_lanes(1, 1) == []  # lane 1 runs west, away from the junction


def test_lane_sections_widths_and_the_lane_under_a_point():
    """A road widening from 3 to 4 m lanes, with a second section where a lane is added."""
    road = xodr.Road(
        7,
        xodr.PlanView(0, 0, 0),
        xodr.Lanes(),
    )
    road.planview.add_geometry(xodr.Line(100))
    for s, right in ((0.0, 1), (60.0, 2)):
        section = xodr.LaneSection(s, xodr.Lane())
        section.add_left_lane(xodr.Lane(a=3.0, b=1.0 / 60 if s == 0 else 0.0))
        for _ in range(right):
            section.add_right_lane(xodr.Lane(a=3.5))
        road.lanes.add_lanesection(section)
    network = network_of(road)
    seven = network.road(7)
    assert seven.lane_t(30.0, 1)[0] == pytest.approx(1.75)  # half of 3 + 30 / 60
    assert seven.lane_t(80.0, -2)[0] == pytest.approx(-5.25)
    assert list(seven.lane_at([10.0, 10.0, 10.0, 70.0, 70.0], [1.0, -1.0, -5.0, -5.0, 4.5])) == [
        1,
        -1,
        0,
        -2,
        0,
    ]
    s, points = seven.lane_centre(-2, section=1, step=5.0)
    assert s[0] == 60.0 and s[-1] == 100.0
    assert np.all(points[:, 1] == pytest.approx(-5.25))


BROKEN = b"""<?xml version="1.0"?>
<OpenDRIVE>
  <header revMajor="1" revMinor="6"/>
  <road id="1" length="10" junction="-1">
    <link><successor elementType="road" elementId="9" contactPoint="start"/></link>
    <planView>
      <geometry s="0" x="0" y="0" hdg="0" length="12"><line/></geometry>
      <geometry s="12" x="12" y="0" hdg="zero" length="5"><clothoid/></geometry>
    </planView>
    <lanes><laneSection s="0"><right><lane id="-2" type="driving"/></right></laneSection></lanes>
  </road>
  <road id="1" length="5" junction="-1"><planView/></road>
</OpenDRIVE>
"""


def test_a_broken_file_is_refused_with_every_problem_named():
    with pytest.raises(ConfigError) as refused:
        read_xodr(BROKEN)
    text = str(refused.value)
    for problem in (
        "<geometry hdg='zero'> is not a finite number",
        "unknown geometry <clothoid>",
        "right lane ids [-2] do not count outwards",
        "road '1': no <planView> geometry",
        "its geometry is 12.0000 m long, its length says 10",
    ):
        assert problem in text
    with pytest.raises(ConfigError, match="not <OpenDRIVE>"):
        read_xodr(b"<OpenSCENARIO/>")
    with pytest.raises(ConfigError, match="links to the missing road '9'"):
        read_xodr(DANGLING)


DANGLING = b"""<OpenDRIVE><header revMajor="1" revMinor="8"/>
  <road id="1" length="5" junction="-1">
    <link><successor elementType="road" elementId="9" contactPoint="start"/></link>
    <planView><geometry s="0" x="0" y="0" hdg="0" length="5"><line/></geometry></planView>
    <lanes><laneSection s="0"><right><lane id="-1"><width sOffset="0" a="3"/></lane></right>
    </laneSection></lanes>
  </road>
</OpenDRIVE>"""


def test_road_marks_run_along_their_lanes_outer_borders(crossing):
    lines = crossing.road(1).mark_lines(step=5.0)
    assert sorted(lane for lane, _, _ in lines) == [-1, 0, 1]
    for lane, mark, points in lines:
        assert mark.type in ("solid", "broken")
        assert points[0, 0] == 0.0 and points[-1, 0] == 50.0
        assert np.all(points[:, 1] == pytest.approx(3.0 * np.sign(lane)))


def test_a_road_with_lanes_on_one_side_only():
    one_sided = read_xodr(DANGLING.replace(b'<successor elementType="road" elementId="9"', b"<x"))
    road = one_sided.road(1)
    assert [float(v[0]) for v in road.t_range(2.0)] == [-3.0, 0.0]
    assert one_sided.bounds() == pytest.approx((0.0, -3.0, 5.0, 0.0))
    assert list(road.lane_at([2.0, 2.0], [-1.0, 1.0])) == [-1, 0]
