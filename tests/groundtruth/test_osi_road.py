"""An OpenDRIVE road in OSI's ground truth: lanes, their boundaries and where they came from."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

pytest.importorskip("osi3")
from osi3.osi_lane_pb2 import Lane, LaneBoundary  # noqa: E402

from vcosim.app import app  # noqa: E402
from vcosim.groundtruth.osi_io import read_trace  # noqa: E402
from vcosim.groundtruth.osi_road import OPENDRIVE_REFERENCE, road_ground_truth  # noqa: E402
from vcosim.roads import read_xodr  # noqa: E402

GRADE, PHI = 0.04, 0.06
ROAD = f"""<?xml version="1.0" encoding="utf-8"?>
<OpenDRIVE>
  <header revMajor="1" revMinor="6"/>
  <road id="7" length="60" junction="-1">
    <planView><geometry s="0" x="0" y="0" hdg="0" length="60"><line/></geometry></planView>
    <elevationProfile><elevation s="0" a="0" b="{GRADE}" c="0" d="0"/></elevationProfile>
    <lateralProfile><superelevation s="0" a="{PHI}" b="0" c="0" d="0"/></lateralProfile>
    <lanes>
      <laneSection s="0">
        <left><lane id="1" type="driving"><width sOffset="0" a="3.5"/>
          <roadMark sOffset="0" type="solid" color="yellow"/></lane></left>
        <center><lane id="0" type="none"><roadMark sOffset="0" type="broken"/></lane></center>
        <right>
          <lane id="-1" type="driving"><width sOffset="0" a="3.5"/>
            <roadMark sOffset="0" type="solid"/></lane>
          <lane id="-2" type="shoulder"><width sOffset="0" a="1.0"/></lane>
        </right>
      </laneSection>
    </lanes>
  </road>
</OpenDRIVE>
"""


@pytest.fixture(scope="module")
def truth():
    return road_ground_truth(read_xodr(ROAD.encode()))


def by_lane(messages) -> dict[int, object]:
    """Lanes or boundaries by their OpenDRIVE lane id (the reference's third identifier)."""
    return {int(m.source_reference[0].identifier[2]): m for m in messages}


def test_each_lane_is_an_osi_lane_on_the_road_surface(truth) -> None:
    lanes = by_lane(truth.lane)
    assert sorted(lanes) == [-2, -1, 1]
    kinds = {k: Lane.Classification.Type.Name(v.classification.type) for k, v in lanes.items()}
    assert kinds == {1: "TYPE_DRIVING", -1: "TYPE_DRIVING", -2: "TYPE_NONDRIVING"}
    for lane_id, t in ((1, 1.75), (-1, -1.75), (-2, -4.0)):
        line = np.array([(p.x, p.y, p.z) for p in lanes[lane_id].classification.centerline])
        assert line[0, 0] == 0.0 and line[-1, 0] == 60.0 and np.diff(line[:, 0]).max() <= 1.0
        assert line[:, 1] == pytest.approx(t * math.cos(PHI), abs=1e-9)
        assert line[:, 2] == pytest.approx(GRADE * line[:, 0] + t * math.sin(PHI), abs=1e-9)
    reference = lanes[-1].source_reference[0]
    assert reference.type == OPENDRIVE_REFERENCE and list(reference.identifier) == ["7", "0", "-1"]
    assert lanes[-1].classification.centerline_is_driving_direction  # right-hand traffic
    assert not lanes[1].classification.centerline_is_driving_direction


def test_lanes_name_their_boundaries_and_neighbours(truth) -> None:
    lanes, boundaries = by_lane(truth.lane), by_lane(truth.lane_boundary)
    assert sorted(boundaries) == [-2, -1, 0, 1]  # each lane's outer border, and the centre
    ids = {k: b.id.value for k, b in boundaries.items()}
    sides = {
        k: ([b.value for b in c.left_lane_boundary_id], [b.value for b in c.right_lane_boundary_id])
        for k, c in ((k, lane.classification) for k, lane in lanes.items())
    }
    # left and right in the direction of the centre line (the road's s)
    assert sides == {1: ([ids[1]], [ids[0]]), -1: ([ids[0]], [ids[-1]]), -2: ([ids[-1]], [ids[-2]])}
    lane_ids = {k: lane.id.value for k, lane in lanes.items()}
    adjacent = {
        k: ([a.value for a in c.left_adjacent_lane_id], [a.value for a in c.right_adjacent_lane_id])
        for k, c in ((k, lane.classification) for k, lane in lanes.items())
    }
    assert adjacent == {
        1: ([], [lane_ids[-1]]),
        -1: ([lane_ids[1]], [lane_ids[-2]]),
        -2: ([lane_ids[-1]], []),
    }
    type_name = LaneBoundary.Classification.Type.Name
    colour = LaneBoundary.Classification.Color.Name
    looks = {
        k: (type_name(b.classification.type), colour(b.classification.color))
        for k, b in boundaries.items()
    }
    assert looks == {
        1: ("TYPE_SOLID_LINE", "COLOR_YELLOW"),
        0: ("TYPE_DASHED_LINE", "COLOR_WHITE"),
        -1: ("TYPE_SOLID_LINE", "COLOR_WHITE"),
        -2: ("TYPE_NO_LINE", "COLOR_NONE"),
    }
    outer = np.array([(p.position.y, p.position.z) for p in boundaries[-2].boundary_line])
    assert outer[:, 0] == pytest.approx(-4.5 * math.cos(PHI), abs=1e-9)


def test_a_run_on_the_road_sends_its_lanes_in_every_frame(tmp_path: Path) -> None:
    road, trace = tmp_path / "road.xodr", tmp_path / "trace.osi"
    road.write_text(ROAD)
    result = CliRunner().invoke(
        app,
        ["sim", "--no-coupling", "--pacing", "fast", "--duration", "0.1", "--terrain", str(road),
         "--osi-trace", str(trace), "--osi-rate", "50"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "with the lanes of 1 road" in result.output
    views = list(read_trace(trace))
    assert len(views) == 6
    for view in views:
        truth = view.global_ground_truth
        assert len(truth.lane) == 3 and len(truth.lane_boundary) == 4
        assert len(truth.moving_object) == 1
