"""Where vehicles are on the road (road id, s, t, lane id): the tracker and the recordings."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
from scenariogeneration import xodr

from helpers.roads import network_of, xodr_bytes
from vcosim.roads.tracking import ROAD_COLUMNS, RoadTracker
from vcosim.scenarios.build import build_simulation
from vcosim.scenarios.spec import PacingSpec, RecordingSpec, RunSpec
from vcosim.world import WorldFile

LANE_WIDTH = 3.5


def straight() -> xodr.Road:
    """Road 7: 200 m straight east, two lanes each way, 3.5 m wide."""
    return xodr.create_road(xodr.Line(200), 7, left_lanes=2, right_lanes=2, lane_width=LANE_WIDTH)


def along_lane(path, lane: int = -1) -> WorldFile:
    """A car driving on lane ``lane`` of road 7 at 15 m/s from s = 20 m."""
    return WorldFile.from_dict(
        {
            "terrain": {"road": path.name},
            "paths": {"lane": {"lanes": [[7, lane]]}},
            "vehicles": [
                {
                    "name": "car",
                    "start": {"s": 20.0, "speed": 15.0},
                    "driver": {"kind": "profile", "path": "lane", "speeds": [[0, 15]]},
                }
            ],
        },
        base=path.parent,
    )


@pytest.fixture(scope="module")
def road_file(tmp_path_factory: pytest.TempPathFactory):
    path = tmp_path_factory.mktemp("road") / "straight.xodr"
    path.write_bytes(xodr_bytes(straight()))
    return path


def test_the_tracker_follows_points_from_where_they_were_and_finds_them_again():
    curve = xodr.create_road(
        [xodr.Line(50), xodr.Arc(0.01, angle=np.pi / 2)], 3, left_lanes=1, right_lanes=1
    )
    network = network_of(curve)
    road = network.road(3)
    s = np.array([10.0, 60.0, 120.0])
    x, y, _, _ = road.point(s, road.lane_t(s, -1))
    tracker = RoadTracker(network, 3)
    for ds in (0.0, 1.5, 3.0):  # moving along the lane: warm starts from the last s
        moved = road.point(s + ds, road.lane_t(s + ds, -1))
        at = tracker.update(moved[0], moved[1])
        assert list(at.road) == ["3"] * 3 and list(at.lane) == [-1] * 3
        np.testing.assert_allclose(at.s, s + ds, atol=1e-6)
        np.testing.assert_allclose(at.t, road.lane_t(s + ds, -1), atol=1e-6)
    at = tracker.update([x[0], 1e4, x[2]], [y[0], 1e4, y[2]])  # one leaves the road
    assert list(at.road) == ["3", "", "3"] and at.lane[1] == 0 and np.isnan(at.s[1])
    at = tracker.update(x, y)  # and is found again by a search
    assert list(at.road) == ["3"] * 3
    np.testing.assert_allclose(at.s, s, atol=1e-6)


@pytest.mark.parametrize("suffix", [".csv", ".mcap"])
def test_a_recording_says_where_the_car_is_on_the_road(road_file, tmp_path, suffix):
    spec = RunSpec(
        world=along_lane(road_file),
        pacing=PacingSpec(mode="fast"),
        recording=RecordingSpec(path=tmp_path / f"run{suffix}", rate=20),
    )
    sim = build_simulation(spec)
    sim.run(1.0)
    path = tmp_path / f"run.car{suffix}"
    if suffix == ".csv":
        with path.open() as handle:
            rows = list(csv.DictReader(handle))
    else:
        from mcap.reader import make_reader

        from vcosim.sim.recorder import McapRows

        with path.open("rb") as handle:  # (with the foxglove extra, the scene is there too)
            messages = make_reader(handle).iter_messages(topics=[McapRows.TOPIC])
            rows = [json.loads(m.data) for _, _, m in messages]
    assert set(ROAD_COLUMNS) <= set(rows[0]) and len(rows) == 21
    assert {str(r["road_id"]) for r in rows} == {"7"}
    assert {int(r["lane_id"]) for r in rows} == {-1}
    s = np.array([float(r["road_s"]) for r in rows])
    t = np.array([float(r["road_t"]) for r in rows])
    assert s[0] == pytest.approx(20.0, abs=0.5) and np.all(np.diff(s) > 0.5)  # 15 m/s, 50 ms
    assert s[-1] - s[0] == pytest.approx(15.0, rel=0.05)
    assert np.all(np.abs(t + LANE_WIDTH / 2) < 0.3)  # near the lane's centre line
