"""SUMO's own traffic is the same with and without vcosim's cars, unless they meet.

The network and demand are made here with SUMO's tools: a netgenerate grid of signalled
junctions, a road of its own 4 km away joined in by netconvert, and randomTrips' trips
routed by duarouter, with random departure places and speeds (so the demand draws from
SUMO's random streams). SUMO alone writes its fcd; the same demand beside an ego on the far
road must give the same positions for every car at every step; an ego in the grid must not.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytest.importorskip("libsumo")

from helpers.sumo_city import FAR_ROAD, build_city  # noqa: E402
from vcosim.traffic.sumo import QUIET, _libsumo, attach_sumo, sumo_tool  # noqa: E402
from vcosim.world import World, WorldFile  # noqa: E402
from vcosim.world.sumo_spec import SumoSpec  # noqa: E402

STEPS = 1000  # SUMO steps of 10 ms: 10 s
FCD = ["--precision", "6", "--fcd-output.attributes", "x,y"]
FAR = FAR_ROAD  # on the far road's lane, 3.6 km from the grid
AMONG = (75.0, -1.6)  # on the grid's first eastbound edge


@pytest.fixture(scope="module")
def city(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 4 x 4 grid of traffic lights, a far road, 100 cars in 10 s: its .sumocfg."""
    return build_city(tmp_path_factory.mktemp("city"), end=10.0, period=0.1)


def positions(fcd: Path) -> dict[tuple[str, str], tuple[float, float]]:
    """(time, id) -> (x, y) of every SUMO car in an fcd file (vcosim's cars left out)."""
    out = {}
    for _, element in ET.iterparse(fcd):
        if element.tag == "timestep":
            time = element.get("time", "")
            for car in element:
                if not car.get("id", "").startswith("ego"):
                    out[(time, car.get("id", ""))] = (
                        float(car.get("x", "nan")),
                        float(car.get("y", "nan")),
                    )
            element.clear()
    return out


def sumo_alone(config: Path, fcd: Path) -> dict[tuple[str, str], tuple[float, float]]:
    api = _libsumo()
    api.start([sumo_tool("sumo"), "-c", str(config), "--step-length", "0.01", "--seed", "1",
               *QUIET, "--fcd-output", str(fcd), *FCD])  # fmt: skip
    try:
        for _ in range(STEPS):
            api.simulationStep()
    finally:
        api.close()
    return positions(fcd)


def beside_egos(
    config: Path, fcd: Path, *places: tuple[float, float]
) -> dict[tuple[str, str], tuple[float, float]]:
    """The same demand beside vcosim cars driving east at 5 m/s from ``places``."""
    vehicles = [
        {"name": f"ego{i}" if i else "ego", "start": {"x": x, "y": y, "speed": 5.0},
         "driver": {"kind": "profile", "path": f"p{i}", "speeds": [[0, 5]]}}
        for i, (x, y) in enumerate(places)
    ]  # fmt: skip
    paths = {f"p{i}": {"points": [[x - 100, y], [x + 300, y]]} for i, (x, y) in enumerate(places)}
    world = World(WorldFile.from_dict({"paths": paths, "vehicles": vehicles}))
    spec = SumoSpec(
        config=str(config), step_length=0.01, seed=1, options=["--fcd-output", str(fcd), *FCD]
    )
    traffic = attach_sumo(world, spec)
    try:
        world.run((STEPS - 1) * traffic.period_steps)  # SUMO steps once as it starts
    finally:
        traffic.close()
    return positions(fcd)


def difference(
    a: dict[tuple[str, str], tuple[float, float]], b: dict[tuple[str, str], tuple[float, float]]
) -> tuple[float, int]:
    """The largest position difference (m) and how many car-steps differ at all."""
    worst, differ = 0.0, 0
    for key, (x, y) in a.items():
        x2, y2 = b[key]
        gap = max(abs(x - x2), abs(y - y2))
        worst, differ = max(worst, gap), differ + (gap > 1e-6)
    return worst, differ


def test_a_far_ego_leaves_sumos_traffic_exactly_as_sumo_alone(city: Path, tmp_path: Path) -> None:
    alone = sumo_alone(city, tmp_path / "alone.xml")
    far = beside_egos(city, tmp_path / "far.xml", FAR)
    assert len({vid for _, vid in alone}) > 50  # cars enter and leave throughout
    assert far.keys() == alone.keys()  # the same cars at the same steps
    worst, differ = difference(alone, far)
    assert (worst, differ) == (0.0, 0)
    three = beside_egos(
        city, tmp_path / "three.xml", FAR, (FAR[0] + 100, FAR[1]), (FAR[0] + 200, FAR[1])
    )
    assert three.keys() == alone.keys() and difference(alone, three) == (0.0, 0)
    # the egos reach SUMO: with one among the cars, SUMO's cars react to it
    among = beside_egos(city, tmp_path / "among.xml", AMONG, FAR)
    shared = {key: among[key] for key in alone.keys() & among.keys()}
    worst, differ = difference({key: alone[key] for key in shared}, shared)
    assert worst > 1.0 and differ > 100


def test_the_configs_and_sections_additional_files_and_ours_all_reach_sumo(
    city: Path, tmp_path: Path
) -> None:
    # SUMO takes one --additional-files: vcosim joins the .sumocfg's, the section's and its own
    (city.parent / "slow.add.xml").write_text('<additional><vType id="slow"/></additional>')
    config = city.parent / "with-additional.sumocfg"
    config.write_text(
        city.read_text().replace("</input>", '<additional-files value="slow.add.xml"/></input>')
    )
    other = tmp_path / "fast.add.xml"
    other.write_text('<additional><vType id="fast"/></additional>')
    world = World(
        WorldFile.from_dict({"vehicles": [{"name": "ego", "start": {"x": 4100.0, "y": -1.6}}]})
    )
    traffic = attach_sumo(world, SumoSpec(config=str(config), options=["-a", str(other)]))
    try:
        kinds = set(traffic.api.vehicletype.getIDList())
        assert {"slow", "fast", "vcosim", "vcosim.ego"} <= kinds
        assert traffic.api.vehicletype.getSpeedDeviation("vcosim.ego") == 0.0
    finally:
        traffic.close()


def test_whether_lanes_share_sumos_random_streams_is_known(city: Path) -> None:
    start = {"x": FAR[0], "y": FAR[1]}
    for options, shared in (([], True), (["--thread-rngs", "5000"], False)):
        world = World(WorldFile.from_dict({"vehicles": [{"name": "ego", "start": start}]}))
        traffic = attach_sumo(world, SumoSpec(config=str(city), options=options))
        try:
            assert traffic.api.lane.getIDCount() > 64  # SUMO's default --thread-rngs
            assert traffic.shared_streams is shared
        finally:
            traffic.close()
