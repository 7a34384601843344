"""A world on the bus: BusWorld announces every vehicle and publishes poses that match them."""

from __future__ import annotations

from pathlib import Path

import pytest

from vcosim.bus.catalogue import Shutdown, WorldPose, WorldVehicle
from vcosim.bus.router import Router
from vcosim.bus.vehicle_module import POSE
from vcosim.bus.world_module import BusWorld, vehicle_module_id
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

    class Stopper:  # sends Shutdown to 22 once, at 0.5 s, and waits until it is routed
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
