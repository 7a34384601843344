"""SUMO's cars and lights on the bus: BusWorld announces and publishes them after the world's
vehicles, and the viewer's world state takes them in."""

from __future__ import annotations

from pathlib import Path

import pytest

from vcosim.bus.catalogue import WorldPose, WorldSignal, WorldVehicle
from vcosim.bus.router import Router
from vcosim.bus.world_module import BusWorld
from vcosim.modules.viewer.state import WorldState
from vcosim.sim.pacing import Pacer
from vcosim.sim.simulation import Simulation

pytest.importorskip("libsumo")

from vcosim.traffic.sumo import sumo_world  # noqa: E402

JUNCTION = Path(__file__).parents[2] / "examples" / "worlds" / "sumo-junction.toml"


def of(copies, kind):
    return [c.message for c in copies if isinstance(c.message, kind)]


def last_states(copies) -> list[int]:
    """The state each traffic light's head was last said to have, by index."""
    last = {m.index: m.state for m in of(copies, WorldSignal)}
    return [last[i] for i in sorted(last)]


def last_frame_has(copies, rows) -> bool:
    """The poses of the last frame (4 s: row 0's 81st) came for ``rows`` too, after row 0's."""
    poses = of(copies, WorldPose)
    starts = [i for i, m in enumerate(poses) if m.row == 0]
    return len(starts) >= 81 and set(rows) <= {m.row for m in poses[starts[80] :]}


def test_sumo_cars_are_announced_and_published_after_the_vehicles(router: Router, connect, collect):
    monitor = collect(connect(30, monitor=True))
    world = sumo_world(JUNCTION)
    traffic = world.objects
    try:
        sim = Simulation(world, Pacer("fast", frame_rate=20))
        sim.attach("bus_world", BusWorld(port=router.address[1]))
        sim.run(4.0)  # east.0 and east.1 are in by then
        p = traffic.poses(world.time)
        rows = {name: world.target_row(name) for name in traffic.ids}
        heads = world.others()
        assert monitor.wait_for(
            lambda c: (
                {m.row for m in of(c, WorldPose)} >= set(rows.values())
                and sum(m.row == 0 for m in of(c, WorldPose)) >= 81  # 0, 0.05, ..., 4 s
                and last_states(c) == heads.states.astype(int).tolist()
                and last_frame_has(c, rows.values())
            )
        )
        copies = monitor.stop()
    finally:
        traffic.close()
    announced = {m.row: m for m in of(copies, WorldVehicle)}
    for name, row in rows.items():
        assert row >= len(world) and announced[row].name == name and announced[row].ego == 0
        assert announced[row].length == pytest.approx(5.0)  # SUMO's default car
    last = {m.row: m for m in of(copies, WorldPose)}
    row = rows["east.0"]
    slot = row - len(world)
    assert (last[row].x, last[row].y, last[row].yaw) == pytest.approx(
        (p["cx"][slot], p["cy"][slot], p["yaw"][slot])
    )
    assert last[row].speed > 5.0
    signals = {m.index: m for m in of(copies, WorldSignal)}  # the last of each head
    assert [signals[i].name for i in range(12)] == [h.name for h in heads.signals]
    assert [signals[i].state for i in range(12)] == heads.states.astype(int).tolist()
    assert (signals[9].x, signals[9].y, signals[9].z) == pytest.approx(
        (heads.signals[9].x, heads.signals[9].y, heads.signals[9].z)
    )
    view = WorldState()
    for message in (c.message for c in copies):
        view.apply(message)
    frame = view.frame()
    assert {v["name"] for v in frame["vehicles"]} >= set(rows)
    assert [h["state"] for h in frame["signals"]] == heads.states.astype(int).tolist()
