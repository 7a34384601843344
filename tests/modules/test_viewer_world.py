"""The viewer and a world: every vehicle in one websocket frame, the ego flagged, at most 20 Hz."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the viewer extra is not installed")
pytest.importorskip("uvicorn", reason="the viewer extra is not installed")
websockets_sync = pytest.importorskip(
    "websockets.sync.client", reason="the viewer extra is not installed"
)

from helpers.pages import recv_until, wait_for, ws_url  # noqa: E402
from vcosim.bus.catalogue import WorldPose, WorldVehicle  # noqa: E402
from vcosim.bus.router import Router  # noqa: E402
from vcosim.bus.vehicle_module import POSE  # noqa: E402
from vcosim.bus.world_module import BusWorld  # noqa: E402
from vcosim.modules.viewer import Viewer  # noqa: E402
from vcosim.modules.viewer.state import WORLD_RATE  # noqa: E402

FOLLOW = Path(__file__).parents[2] / "examples" / "worlds" / "follow.toml"


def test_the_page_gets_every_vehicle_of_a_world_with_the_ego_flagged(
    viewer: Viewer, router: Router
):
    from vcosim.sim.pacing import Pacer
    from vcosim.sim.simulation import Simulation
    from vcosim.world import World

    world = World(FOLLOW)
    sim = Simulation(world, Pacer("fast", frame_rate=20))
    sim.attach("bus_world", BusWorld(port=router.address[1]))
    with websockets_sync.connect(ws_url(viewer)) as ws:
        recv_until(ws, lambda f: f["type"] == "hello")
        sim.run(0.5)
        end = {
            name: tuple(round(float(v.outputs[i]), 3) for i in POSE[:3])
            for name, v in sim.vehicles.items()
        }
        dials = {  # a built-in driver's vehicle has no module of its own: its pose says them
            name: (round(v.signal("rpm")), round(v.signal("gear")))
            for name, v in sim.vehicles.items()
        }

        def at_the_end(frame: dict) -> bool:
            return (
                frame["type"] == "world"
                and {v["name"]: (v["x"], v["y"], v["z"]) for v in frame["vehicles"]} == end
            )

        frame = recv_until(ws, at_the_end)
    lead, ego = frame["vehicles"]
    assert {v["name"]: (v["rpm"], v["gear"]) for v in frame["vehicles"]} == dials
    assert lead["rpm"] > 500 and lead["gear"] >= 1  # driving: not the zeros of no message
    assert (lead["row"], lead["name"], lead["ego"]) == (0, "lead", False)
    assert (ego["row"], ego["name"], ego["ego"]) == (1, "ego", True)
    g = world.geometry
    assert ego["length"] == pytest.approx(2 * g["half_length"][1])
    assert ego["width"] == pytest.approx(2 * g["half_width"][1])
    assert viewer.report().world_vehicles == 2


def test_a_hundred_vehicles_go_to_the_page_as_one_frame_at_most_20_times_a_second(
    viewer: Viewer, client
):
    """Judged by the viewer's own stamps, as the state's rate (tests/modules/test_viewer.py)."""
    world = client(22)
    n = 100
    for row in range(n):
        world.send(WorldVehicle(row, f"car{row:03d}", 4.5, 1.8, int(row == 7), 0.1, to=18))
    with websockets_sync.connect(ws_url(viewer)) as ws:
        recv_until(ws, lambda f: f["type"] == "hello")
        for k in range(30):  # 3000 poses, each round taken in before the next
            for row in range(n):
                world.send(
                    WorldPose(row, 10.0 * row + k, 0.0, 0.0, 0.0, 0.0, 0.0, 15.0, 2100.4, 3, to=18)
                )
            wait_for(lambda k=k: viewer.world.poses >= n * (k + 1))
        final = [10.0 * row + 29 for row in range(n)]
        frames = [recv_until(ws, lambda f: f["type"] == "world")]
        while [v["x"] for v in frames[-1]["vehicles"]] != final:  # frames may catch a round half in
            frames.append(recv_until(ws, lambda f: f["type"] == "world"))
    last = frames[-1]["vehicles"]
    assert [v["row"] for v in last] == list(range(n))
    assert [v["name"] for v in last if v["ego"]] == ["car007"]
    assert last[42] == {
        "row": 42, "name": "car042", "ego": False, "length": 4.5, "width": 1.8,
        "offset": 0.1, "x": 449.0, "y": 0.0, "z": 0.0, "roll": 0.0, "pitch": 0.0,
        "yaw": 0.0, "speed": 15.0, "rpm": 2100, "gear": 3,
    }  # fmt: skip
    assert len(json.dumps(frames[-1])) < 20_000  # mm and mrad: ~150 bytes a vehicle
    stamps = [f["t"] for f in frames]
    assert (len(stamps) - 2) / WORLD_RATE < stamps[-1] - stamps[0] + 1e-3
    assert viewer.report().world_poses == 30 * n


def test_a_world_frame_greets_a_page_that_joins_late(viewer: Viewer, client):
    world = client(22)
    world.send(WorldVehicle(0, "lead", 4.5, 1.8, 0, 0.0, to=18))
    world.send(WorldPose(0, 1.0, 2.0, 0.3, 0.0, 0.0, 0.5, 3.0, 900.0, 1, to=18))
    wait_for(lambda: viewer.world.poses == 1)
    deadline = time.monotonic() + 5
    with websockets_sync.connect(ws_url(viewer)) as ws:
        frame = recv_until(ws, lambda f: f["type"] == "world")
    assert time.monotonic() < deadline
    assert frame["vehicles"][0]["name"] == "lead" and frame["vehicles"][0]["yaw"] == 0.5
