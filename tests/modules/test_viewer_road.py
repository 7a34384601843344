"""An OpenDRIVE road for the page: lanes and marks cut from the road surface, served once."""

from __future__ import annotations

import json
import math
import urllib.request
from pathlib import Path

import numpy as np
import pytest

from vcosim.modules.viewer.road import DASH, road_json
from vcosim.roads import read_xodr
from vcosim.vehicle.terrain import TerrainSpec

PHI = 0.06  # rad of superelevation
GRADE = 0.04
CLIMB = f"""<?xml version="1.0" encoding="utf-8"?>
<OpenDRIVE>
  <header revMajor="1" revMinor="6"/>
  <road id="1" length="100" junction="-1">
    <planView><geometry s="0" x="0" y="0" hdg="0" length="100"><line/></geometry></planView>
    <elevationProfile><elevation s="0" a="0" b="{GRADE}" c="0" d="0"/></elevationProfile>
    <lateralProfile><superelevation s="0" a="{PHI}" b="0" c="0" d="0"/></lateralProfile>
    <lanes>
      <laneSection s="0">
        <left><lane id="1" type="driving"><width sOffset="0" a="3.5"/></lane></left>
        <center><lane id="0" type="none"><roadMark sOffset="0" type="solid"/></lane></center>
        <right>
          <lane id="-1" type="driving"><width sOffset="0" a="3.5"/>
            <roadMark sOffset="0" type="broken"/></lane>
          <lane id="-2" type="shoulder"><width sOffset="0" a="1.0"/>
            <roadMark sOffset="0" type="solid solid" width="0.15"/>
            <roadMark sOffset="50" type="curb"/></lane>
        </right>
      </laneSection>
    </lanes>
  </road>
</OpenDRIVE>
""".encode()


def cross_sections(strip: list[float]) -> np.ndarray:
    """(n, 2, 3): each cross section's left and right point."""
    return np.asarray(strip).reshape(-1, 2, 3)


def surface(x: np.ndarray, t: float) -> tuple[np.ndarray, np.ndarray]:
    """(y, z) of the road surface at t on the climbing, rolled road (closed form)."""
    return np.full_like(x, t * math.cos(PHI)), GRADE * x + t * math.sin(PHI)


@pytest.fixture(scope="module")
def climb() -> dict:
    return json.loads(json.dumps(road_json(read_xodr(CLIMB))))


def test_lanes_are_strips_on_the_road_surface_with_elevation_and_superelevation(climb):
    lanes = {lane["lane"]: lane for lane in climb["lanes"]}
    assert sorted(lanes) == [-2, -1, 1]  # the centre lane has no surface
    assert lanes[-2]["type"] == "shoulder"
    for lane, (left, right) in {1: (3.5, 0.0), -1: (0.0, -3.5), -2: (-3.5, -4.5)}.items():
        points = cross_sections(lanes[lane]["strip"])
        x = points[:, 0, 0]
        assert x[0] == 0.0 and x[-1] == 100.0 and np.diff(x).max() <= 1.0 + 1e-9
        for side, t in ((0, left), (1, right)):
            y, z = surface(points[:, side, 0], t)
            assert points[:, side, 1] == pytest.approx(y, abs=1e-3)
            assert points[:, side, 2] == pytest.approx(z, abs=1e-3)


def test_marks_are_painted_on_the_border_solid_broken_and_double(climb):
    marks = {(m["lane"], m["type"]): m for m in climb["marks"]}
    assert sorted(marks) == [(-2, "solid solid"), (-1, "broken"), (0, "solid")]  # no curb
    painted, gap = DASH
    dashes = [cross_sections(s) for s in marks[(-1, "broken")]["strips"]]
    assert len(dashes) == 9  # 0-3, 12-15, ... 96-99 m
    for k, dash in enumerate(dashes):
        assert dash[[0, -1], 0, 0] == pytest.approx([k * (painted + gap), k * (painted + gap) + 3])
        y, z = surface(dash[:, 0, 0], -3.5 + 0.06)  # the default width: 0.12 m
        assert dash[:, 0, 1] == pytest.approx(y, abs=1e-3)
        assert dash[:, 0, 2] == pytest.approx(z, abs=1e-3)
    (centre,) = marks[(0, "solid")]["strips"]
    assert cross_sections(centre)[-1, :, 0] == pytest.approx([100.0, 100.0])
    lines = {(lane, mark.type): xyz for lane, mark, xyz in read_xodr(CLIMB).road(1).mark_lines()}
    assert cross_sections(centre).mean(axis=1) == pytest.approx(lines[(0, "solid")], abs=1e-3)
    inner, outer = (cross_sections(s) for s in marks[(-2, "solid solid")]["strips"])
    for line, t in ((inner, -4.5 + 0.15), (outer, -4.5 - 0.15)):  # a line's width apart
        middle = line[:, :, 1].mean(axis=1) / math.cos(PHI)
        assert middle == pytest.approx(np.full(len(line), t), abs=1e-3)
        assert line[-1, 0, 0] == 50.0  # up to where the curb begins


def test_the_road_is_served_once_as_json_and_null_without_one(viewer_factory):
    pytest.importorskip("uvicorn", reason="the viewer extra is not installed")
    network = read_xodr(CLIMB)
    for road, expected, module in ((network, road_json(network), 18), (None, None, 30)):
        viewer = viewer_factory(road=road, module_id=module)
        with urllib.request.urlopen(viewer.url + "road.json", timeout=5) as r:
            assert json.loads(r.read()) == json.loads(json.dumps(expected))


def test_a_terrain_file_names_the_road_to_draw(tmp_path: Path):
    (tmp_path / "roads").mkdir()
    (tmp_path / "roads" / "climb.xodr").write_bytes(CLIMB)
    (tmp_path / "ground.toml").write_text('road = "roads/climb.xodr"\n')
    road = TerrainSpec.load(tmp_path / "ground.toml").read_road()
    assert road is not None and list(road.roads) == ["1"]
    assert TerrainSpec.load(tmp_path / "roads" / "climb.xodr").read_road() is not None
    assert TerrainSpec().read_road() is None
