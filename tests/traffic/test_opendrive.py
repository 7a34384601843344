"""One road for both: netconvert makes SUMO's network of an OpenDRIVE road, lane for lane."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sumo")

from scenariogeneration import xodr  # noqa: E402

from vcosim.roads import read_xodr  # noqa: E402
from vcosim.traffic.opendrive import LaneMap, sumo_network  # noqa: E402


@pytest.fixture(scope="module")
def converted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, LaneMap]:
    folder = tmp_path_factory.mktemp("opendrive")
    road = xodr.create_road(
        [xodr.Line(120), xodr.Arc(1 / 80, angle=np.pi / 3), xodr.Line(60)],
        id=7, left_lanes=2, right_lanes=2,
    )  # fmt: skip
    drive = xodr.OpenDrive("bend")
    drive.add_road(road)
    drive.adjust_roads_and_lanes()
    path = folder / "bend.xodr"
    drive.write_xml(str(path))
    net = folder / "bend.net.xml"
    return path, net, sumo_network(path, net)


def test_every_driving_lane_maps_both_ways(converted) -> None:
    _, _, lanes = converted
    assert set(lanes.to_sumo) == {("7", -2), ("7", -1), ("7", 1), ("7", 2)}
    for key, sumo_lanes in lanes.to_sumo.items():
        assert all(lanes.to_opendrive[lane] == key for lane in sumo_lanes)
    # a route of OpenDRIVE lanes is one of SUMO edges: the right-hand lanes drive along s
    assert lanes.edges([("7", -1)]) == lanes.edges([(7, -2)]) == ["-7"]
    assert lanes.edges([("7", 1)]) == ["7"]


def test_sumo_lanes_lie_on_the_opendrive_lane_centres(converted) -> None:
    path, net, lanes = converted
    road = read_xodr(path).road("7")
    shapes = {
        lane.get("id"): np.array(
            [[float(v) for v in point.split(",")] for point in lane.get("shape", "").split()]
        )
        for lane in ET.parse(net).getroot().iter("lane")
    }
    for (_, lane_id), sumo_lanes in lanes.to_sumo.items():
        _, centre = road.lane_centre(lane_id, step=0.05)
        for sumo_lane in sumo_lanes:
            shape = shapes[sumo_lane]
            gaps = np.hypot(
                shape[:, None, 0] - centre[None, :, 0], shape[:, None, 1] - centre[None, :, 1]
            ).min(axis=1)
            assert gaps.max() < 0.05, (sumo_lane, gaps.max())


def test_a_world_on_the_road_has_sumo_traffic_on_the_same_lanes(converted) -> None:
    pytest.importorskip("libsumo")
    from vcosim.traffic.sumo import SumoTraffic, sumo_world
    from vcosim.world import WorldFile

    path, _, _ = converted
    routes = path.with_name("bend.rou.xml")
    routes.write_text(
        '<routes><flow id="f" from="-7" to="-7" begin="0" end="4" period="1" '
        'departLane="random" departSpeed="max"/></routes>',
        encoding="utf-8",
    )
    spec = WorldFile.from_dict(
        {
            "terrain": {"road": path.name},
            "sumo": {"road": True, "route_files": [routes.name], "seed": 2},
            "paths": {"stand": {"points": [[30.0, 1.5], [0.0, 1.5]]}},
            "vehicles": [
                {
                    "name": "ego",
                    "start": {"x": 30.0, "y": 1.5, "heading": 180.0},
                    "driver": {"kind": "profile", "path": "stand", "speeds": [[0, 0]]},
                },
            ],
        },  # fmt: skip
        base=path.parent,
    )
    world = sumo_world(spec)
    traffic = world.objects
    assert isinstance(traffic, SumoTraffic)
    try:
        world.run(8_000)  # 4 s: four cars on their way along the right-hand lanes
        ids = traffic.ids
        rows = [world.target_row(vid) for vid in ids]
        p = world.poses()
        on = read_xodr(path).locate(p["cx"][rows], p["cy"][rows])
        assert traffic.lanes is not None and traffic.lanes.edges([("7", -1)]) == ["-7"]
    finally:
        traffic.close()
    assert len(ids) == 4
    assert set(on.road) == {"7"} and set(on.lane) <= {-1, -2}  # on the road's right-hand lanes
    assert traffic._folder is not None and not traffic._folder.exists()  # the net is gone
