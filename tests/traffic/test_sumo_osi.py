"""SUMO's cars in ASAM OSI ground truth: a trace read back has every car where the world had it."""

from __future__ import annotations

import csv
import math
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytest.importorskip("libsumo")
pytest.importorskip("osi3trace")

from helpers.sumo_city import build_corridor  # noqa: E402
from vcosim.groundtruth.osi import OBJECT_REFERENCE, SUMO_VEHICLE_IDS, OsiOutput  # noqa: E402
from vcosim.groundtruth.osi_io import read_trace  # noqa: E402
from vcosim.sim import Pacer, Simulation  # noqa: E402
from vcosim.traffic.sumo import SumoTraffic, attach_sumo, sumo_world  # noqa: E402
from vcosim.world import World, WorldFile  # noqa: E402
from vcosim.world.sumo_spec import SumoSpec  # noqa: E402

JUNCTION = Path(__file__).parents[2] / "examples" / "worlds" / "sumo-junction.toml"


def test_an_osi_trace_has_every_sumo_car_at_the_pose_of_sumos_trace(tmp_path: Path) -> None:
    world = sumo_world(JUNCTION)
    traffic = world.objects
    assert isinstance(traffic, SumoTraffic)
    try:
        traffic.trace(tmp_path / "sumo.csv")
        sim = Simulation(world, Pacer("fast"))
        sim.attach("osi", OsiOutput(200, trace=tmp_path / "run.osi"))  # 10 Hz
        sim.run(3.0)
    finally:
        traffic.close()
    with (tmp_path / "sumo.csv").open() as file:
        sumo = {(row["time"], row["id"]): row for row in csv.DictReader(file)}
    compared = 0
    for view in read_trace(tmp_path / "run.osi"):
        truth = view.global_ground_truth
        time = f"{truth.timestamp.seconds + truth.timestamp.nanos * 1e-9:.4f}"
        cars = [m for m in truth.moving_object if m.source_reference[0].type == OBJECT_REFERENCE]
        ids = [m.id.value for m in truth.moving_object]
        assert ids[:2] == [1, 2] and len(set(ids)) == len(ids)  # the world's cars first
        for car in cars:
            name = car.source_reference[0].identifier[0]
            row = sumo[(time, name)]
            assert car.base.position.x == pytest.approx(float(row["x"]), abs=1e-4)
            assert car.base.position.y == pytest.approx(float(row["y"]), abs=1e-4)
            assert car.base.orientation.yaw == pytest.approx(float(row["yaw"]), abs=1e-6)
            compared += 1
    assert compared > 30  # 30 frames, with two SUMO cars or more in most


@pytest.fixture(scope="module")
def corridor_trace(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """60 s of four busy roads where hundreds of vehicles enter and leave: an OSI trace at
    10 Hz and SUMO's own fcd output (every vehicle and person at every step), with an ego on
    the first road."""
    folder = tmp_path_factory.mktemp("corridor")
    config = build_corridor(folder, end=60.0)
    ego = {"name": "ego", "start": {"x": 20.0, "y": -4.8, "speed": 5.0},
           "driver": {"kind": "profile", "path": "road", "speeds": [[0, 5]]}}  # fmt: skip
    road = {"road": {"points": [[0.0, -4.8], [400.0, -4.8]]}}
    world = World(WorldFile.from_dict({"paths": road, "vehicles": [ego]}))
    fcd = ["--fcd-output", str(folder / "fcd.xml"), "--precision", "6"]
    spec = SumoSpec(
        config=str(config), step_length=0.1, seed=1, routes={"ego": ["R0"]}, options=fcd
    )
    traffic = attach_sumo(world, spec)
    try:
        traffic.trace(folder / "sumo.csv")
        sim = Simulation(world, Pacer("fast"))
        sim.attach("osi", OsiOutput(200, trace=folder / "corridor.osi"))
        sim.run(60.0)
    finally:
        traffic.close()
    return folder / "corridor.osi", folder / "fcd.xml"


def test_no_osi_id_names_two_objects_while_hundreds_of_cars_come_and_go(corridor_trace) -> None:
    osi, _ = corridor_trace
    named: dict[int, str] = {}
    seen_in: dict[str, set[int]] = {}
    reused = frames = 0
    for view in read_trace(osi):
        frames += 1
        ids = [m.id.value for m in view.global_ground_truth.moving_object]
        assert len(set(ids)) == len(ids)
        for car in view.global_ground_truth.moving_object:
            name = car.source_reference[0].identifier[0]
            reused += named.setdefault(car.id.value, name) != name
            seen_in.setdefault(name, set()).add(car.id.value)
    assert frames == 601
    assert reused == 0  # no id went on to another car
    assert all(len(ids) == 1 for ids in seen_in.values())  # nor a car to another id
    left = len(seen_in) - len(view.global_ground_truth.moving_object)
    assert len(seen_in) > 300 and left > 150  # hundreds came, half of them left again
    sumo = {m.id.value for m in view.global_ground_truth.moving_object} - {1}
    assert min(sumo) >= SUMO_VEHICLE_IDS


def sumo_fcd(path: Path) -> dict[tuple[int, str], dict[str, float]]:
    """(ms, id) -> SUMO's x, y (front), angle (deg from north), speed of every vehicle and
    person in an fcd file; ``person`` 1.0 for a person."""
    out = {}
    for _, element in ET.iterparse(path):
        if element.tag == "timestep":
            ms = round(float(element.get("time", "nan")) * 1000)
            for item in element:
                values = {k: float(item.get(k, "nan")) for k in ("x", "y", "angle", "speed")}
                values["person"] = float(item.tag == "person")
                out[(ms, item.get("id", ""))] = values
            element.clear()
    return out


def test_osi_motion_is_sumos_own_at_sumos_time(corridor_trace) -> None:
    from osi3.osi_object_pb2 import MovingObject

    osi, fcd_path = corridor_trace
    fcd = sumo_fcd(fcd_path)
    kinds = MovingObject.VehicleClassification.Type
    compared = off = firsts = 0
    seen: set[str] = set()
    sizes: dict[str, tuple[int, int, float]] = {}  # by kind: type, class, height
    for view in read_trace(osi):
        truth = view.global_ground_truth
        ms = round((truth.timestamp.seconds + truth.timestamp.nanos * 1e-9) * 1000)
        for car in truth.moving_object:
            reference = car.source_reference[0]
            if reference.type != OBJECT_REFERENCE:
                continue
            name = reference.identifier[0]
            sumo = fcd[(ms, name)]  # at the same time: no lag behind SUMO's clock
            base = car.base
            yaw = base.orientation.yaw
            assert -math.pi < yaw <= math.pi
            heading = math.radians(90.0 - sumo["angle"])
            back = base.dimension.length / 2  # SUMO places by the front
            assert base.position.x == pytest.approx(sumo["x"] - back * math.cos(heading), abs=1e-4)
            assert base.position.y == pytest.approx(sumo["y"] - back * math.sin(heading), abs=1e-4)
            along = (sumo["speed"] * math.cos(heading), sumo["speed"] * math.sin(heading))
            error = math.hypot(base.velocity.x - along[0], base.velocity.y - along[1])
            off += error >= 0.1
            compared += 1
            if name not in seen:
                seen.add(name)
                firsts += 1
                assert error < 0.1 and (sumo["speed"] == 0 or base.velocity.x != 0)
            kind = name.rstrip("0123456789.")
            sizes[kind] = (car.type, car.vehicle_classification.type, base.dimension.height)
    assert compared > 10_000 and firsts > 500
    assert off <= compared // 1000  # |velocity - SUMO's speed along its heading| < 0.1 m/s
    vehicle = MovingObject.TYPE_VEHICLE
    assert sizes["bus"] == (vehicle, kinds.TYPE_BUS, pytest.approx(3.4))
    assert sizes["truck"][:2] == (vehicle, kinds.TYPE_HEAVY_TRUCK)
    assert sizes["motorcycle"][:2] == (vehicle, kinds.TYPE_MOTORBIKE)
    assert sizes["bicycle"][:2] == (vehicle, kinds.TYPE_BICYCLE)
    assert sizes["car"][:2] == (vehicle, kinds.TYPE_CAR)
    assert sizes["walker"][0] == MovingObject.TYPE_PEDESTRIAN
