"""A world on the bus: BusWorld announces every vehicle and publishes poses that match them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from vcosim.bus.catalogue import IMFM, Shutdown, WorldPose, WorldVehicle
from vcosim.bus.router import Router
from vcosim.bus.vehicle_module import POSE
from vcosim.bus.world_module import BusWorld, attach_world_bus, vehicle_module_id
from vcosim.sim.face import Face
from vcosim.sim.pacing import Pacer
from vcosim.sim.simulation import Simulation
from vcosim.vehicle import Vehicle
from vcosim.world import World

FOLLOW = Path(__file__).parents[2] / "examples" / "worlds" / "follow.toml"


def of(copies, kind):
    return [c.message for c in copies if isinstance(c.message, kind)]


def test_every_vehicle_is_announced_and_its_poses_match_the_simulation(
    router: Router, connect, collect
):
    monitor = collect(connect(30, monitor=True))
    world = World(FOLLOW)
    sim = Simulation(world, Pacer("fast", frame_rate=20))
    face = sim.attach("bus_world", BusWorld(port=router.address[1]))
    report = sim.run(1.0)  # poses at 0, 50, ..., 1000 ms; announcements at 0 and 1 s

    n = len(world)
    assert monitor.wait_for(
        lambda c: len(of(c, WorldPose)) >= 21 * n and len(of(c, WorldVehicle)) >= 2 * n
    )
    copies = monitor.stop()
    assert {c.sender for c in copies} == {22}
    announced = of(copies, WorldVehicle)
    assert {(m.row, m.name, m.ego) for m in announced} == {(0, "lead", 0), (1, "ego", 1)}
    g = world.geometry
    for m in announced:
        assert m.to == 18
        assert m.length == pytest.approx(2 * g["half_length"][m.row])
        assert m.width == pytest.approx(2 * g["half_width"][m.row]) and m.width > 1.0
        assert m.offset == pytest.approx(g["box_offset"][m.row])

    poses = of(copies, WorldPose)
    assert [sum(p.row == row for p in poses) for row in range(n)] == [21] * n
    last = {p.row: p for p in poses}  # the last frame (t = 1 s) published these
    for row, name in enumerate(world.names):
        y = sim.vehicles[name].outputs
        assert (last[row].x, last[row].y, last[row].z, last[row].roll, last[row].pitch,
                last[row].yaw, last[row].speed) == tuple(float(y[i]) for i in POSE)  # fmt: skip
    assert last[0].x > last[1].x + 20  # the lead is ahead of the ego, both moving
    assert last[0].speed > 5 and last[1].speed > 5

    bus = report.faces["bus_world"]
    assert bus["vehicles"] == n and bus["poses"] == 21 and bus["announcements"] == 2
    assert bus["publish_errors"] == 0 and face.every == 100


def test_a_lone_car_is_row_0_and_the_ego(router: Router, connect, collect):
    monitor = collect(connect(30, monitor=True))
    sim = Simulation(Vehicle(), Pacer("fast", frame_rate=20))
    sim.attach("bus_world", BusWorld(port=router.address[1], rate=10))
    sim.run(0.2)
    assert monitor.wait_for(lambda c: len(of(c, WorldPose)) >= 3)
    copies = monitor.stop()
    (vehicle,) = of(copies, WorldVehicle)
    assert (vehicle.row, vehicle.name, vehicle.ego) == (0, "ego", 1)
    assert 3.0 < vehicle.length < 6.0 and 1.0 < vehicle.width < 2.5


def test_a_shutdown_ends_the_run(router: Router, connect):
    boss = connect(30)
    sim = Simulation(World(FOLLOW), Pacer("fast", frame_rate=20))
    face = sim.attach("bus_world", BusWorld(port=router.address[1]))

    class Stopper(Face):  # sends Shutdown to 22 once, at 0.5 s, and waits until it is routed
        def on_frame(self, sim: Simulation) -> None:
            if sim.time >= 0.5 and not boss.stats.sent:
                routed = router.stats.routed
                boss.send(Shutdown(to=22))
                assert router.wait_until(lambda: router.stats.routed > routed, 2.0)

    sim.attach("stopper", Stopper())
    report = sim.run(30.0)
    assert report.sim_time < 1.0 and face.shutdown
    assert report.faces["bus_world"]["received"] == {"Shutdown": 1}


def test_vehicle_ids():
    assert vehicle_module_id(1, ego=True) == 16
    assert vehicle_module_id(0, ego=False) == 64 and vehicle_module_id(5, ego=False) == 69


def test_a_bad_rate_is_refused():
    with pytest.raises(Exception, match="must be positive"):
        BusWorld(rate=0)


THREE_CARS = """
ego = "ego"
[paths.road]
points = [[-100, 0], [5000, 0]]
[[vehicles]]
name = "lead"
start = { x = 40, y = 0, speed = 10 }
driver = { kind = "profile", path = "road", speeds = [[0, 10]] }
[[vehicles]]
name = "ego"
start = { x = 0, y = 0, speed = 10 }
[[vehicles]]
name = "side"
start = { x = 0, y = 6, speed = 10 }
"""


def test_external_vehicles_join_the_ego_as_16_the_others_as_64_plus_row(
    router: Router, connect, collect, tmp_path: Path
):
    path = tmp_path / "three.toml"
    path.write_text(THREE_CARS)
    monitor = collect(connect(30, monitor=True))
    driver = connect(17)
    sim = Simulation(World(path), Pacer("fast", frame_rate=100))
    lines = attach_world_bus(sim, "127.0.0.1", router.address[1])
    assert lines[1:] == ["bus: ego is module 16 (the ego)", "bus: side is module 66"]

    class Brake(Face):  # the side car's driver brakes hard once it has joined (row 2: id 66)
        def on_frame(self, sim: Simulation) -> None:
            if not driver.stats.sent and 66 in router.modules:
                routed = router.stats.routed
                driver.send(IMFM(0, 255, 128, 0, to=66))
                assert router.wait_until(lambda: router.stats.routed > routed, 2.0)

    sim.attach("brake", Brake())
    report = sim.run(1.0)
    speeds = {name: v.signal("groundspeed") for name, v in sim.vehicles.items()}
    assert speeds["side"] < speeds["ego"] - 3  # braked by its own driver, the ego coasts
    assert report.faces["bus:side"]["received"] == {"IMFM": 1}
    assert report.faces["bus:side"]["published"] == 0 == report.faces["bus:side"]["sent"]
    assert report.faces["bus:ego"]["module_id"] == 16 and report.faces["bus:ego"]["received"] == {}

    assert monitor.wait_for(lambda c: any(isinstance(x.message, WorldPose) for x in c))
    copies = monitor.stop()
    senders = {type(c.message).__name__: set() for c in copies}
    for c in copies:
        senders[type(c.message).__name__].add(c.sender)
    assert senders["FMVM"] == {16} and senders["FMLM"] == {16}  # only the ego speaks to 18, 19
    assert senders["WorldPose"] == {22} and senders["IMFM"] == {17}


def test_vcosim_sim_world_bus_attaches_the_world_and_its_external_vehicles(
    router: Router, tmp_path: Path
):
    from typer.testing import CliRunner

    from vcosim.app import app

    path, out = tmp_path / "three.toml", tmp_path / "run.json"
    path.write_text(THREE_CARS)
    bus = f"127.0.0.1:{router.address[1]}"
    args = ["sim", "--world", str(path), "--bus", bus, "--no-coupling", "--pacing", "fast"]
    result = CliRunner().invoke(app, [*args, "--duration", "0.5", "--json-out", str(out)])
    assert result.exit_code == 0, result.output
    assert "side is module 66" in result.output
    report = json.loads(out.read_text())
    assert report["bus_world"]["vehicles"] == 3 and report["bus_world"]["poses"] >= 10
    assert report["bus:ego"]["module_id"] == 16 and report["bus:side"]["module_id"] == 66
    assert "bus:lead" not in report and "bus" not in report


def test_a_router_gone_for_good_ends_the_run_with_router_lost():
    from vcosim.bus.client import Liveness, RouterLost

    router = Router("127.0.0.1", 0).start()
    sim = Simulation(World(FOLLOW), Pacer("realtime", frame_rate=50))
    face = sim.attach("bus_world", BusWorld(port=router.address[1]))
    face.client.liveness = Liveness(ping_after=0.1, lost_after=0.3, give_up_after=0.6)

    class Killer(Face):  # the router dies once the world is on the bus
        def on_frame(self, sim: Simulation) -> None:
            if not router.stopped.is_set():
                router.stop()

    sim.attach("killer", Killer())
    with pytest.raises(RouterLost, match="bus module 22: no sign of the bus router"):
        sim.run(30.0)
    assert face.client.stats.losses == 1 and sim.time < 10.0


def test_on_a_road_every_pose_comes_with_the_road_position(
    router: Router, connect, collect, tmp_path
):
    from scenariogeneration import xodr

    from helpers.roads import xodr_bytes
    from vcosim.bus.catalogue import RoadPosition
    from vcosim.roads import read_xodr
    from vcosim.world import WorldFile

    monitor = collect(connect(30, monitor=True))
    path = tmp_path / "straight.xodr"
    path.write_bytes(xodr_bytes(xodr.create_road(xodr.Line(200), 7, 1, 1, lane_width=3.5)))
    car = {"name": "car", "start": {"s": 20.0, "speed": 15.0}}
    car["driver"] = {"kind": "profile", "path": "lane", "speeds": [[0, 15]]}
    world = WorldFile.from_dict(
        {
            "terrain": {"road": path.name},
            "paths": {"lane": {"lanes": [[7, -1]]}},
            "vehicles": [car],
        },
        base=tmp_path,
    )
    sim = Simulation(World(world), Pacer("fast", frame_rate=20))
    face = sim.attach("bus_world", BusWorld(port=router.address[1], road=read_xodr(path)))
    sim.run(0.5)  # poses at 0, 50, ..., 500 ms
    assert monitor.wait_for(lambda c: len(of(c, RoadPosition)) >= 11)
    places = of(monitor.stop(), RoadPosition)
    assert {(p.row, p.road, p.lane) for p in places} == {(0, "7", -1)}
    s = [p.s for p in places]
    assert s[0] == pytest.approx(20.0, abs=0.5) and all(np.diff(s) > 0.5)
    assert all(abs(p.t + 1.75) < 0.3 for p in places) and face.road_positions == 11


def test_a_lone_car_on_a_road_sends_its_road_position_as_row_0(
    router: Router, connect, collect, tmp_path
):
    from scenariogeneration import xodr

    from helpers.roads import xodr_bytes
    from vcosim.bus.catalogue import RoadPosition
    from vcosim.bus.vehicle_module import BusVehicle
    from vcosim.roads import read_xodr
    from vcosim.vehicle.terrain import load_terrain

    monitor = collect(connect(30, monitor=True))
    path = tmp_path / "straight.xodr"
    path.write_bytes(xodr_bytes(xodr.create_road(xodr.Line(200), 7, 1, 1, lane_width=3.5)))
    car = Vehicle(terrain=load_terrain(path))
    car.set_inputs(automatic=1, gear=1)
    car.teleport(20.0, -1.75, 0.0, speed=15.0)
    sim = Simulation(car, Pacer("fast", frame_rate=100))
    face = sim.attach("bus", BusVehicle(port=router.address[1], road=read_xodr(path)))
    sim.run(0.3)  # road positions at 50, 100, ..., 300 ms
    assert monitor.wait_for(lambda c: len(of(c, RoadPosition)) >= 6)
    places = of(monitor.stop(), RoadPosition)
    assert {(p.row, p.road, p.lane) for p in places} == {(0, "7", -1)}
    assert np.all(np.diff([p.s for p in places]) > 0.5) and face.road_positions == len(places)
