"""The web viewer's server: page, websocket, bus bridge and terrain, without a browser."""

from __future__ import annotations

import json
import time
import urllib.request
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

pytest.importorskip(
    "starlette", reason="the viewer extra is not installed (pip install -e '.[viewer]')"
)
pytest.importorskip("uvicorn", reason="the viewer extra is not installed")
websockets_sync = pytest.importorskip(
    "websockets.sync.client", reason="the viewer extra is not installed"
)

from helpers.forks import vcosim_command  # noqa: E402
from helpers.pages import recv_until, wait_for, ws_url  # noqa: E402
from vcosim.bus.catalogue import FMLM, FMVM, IMFM, VMFM, IMVMCamera, Shutdown, SoundOnce  # noqa: E402
from vcosim.bus.client import BusClient  # noqa: E402
from vcosim.bus.router import Router  # noqa: E402
from vcosim.modules.viewer import Viewer, terrain_json  # noqa: E402
from vcosim.vehicle.terrain import Terrain  # noqa: E402


def message_until(bus: BusClient, kind: type, timeout: float = 5.0) -> Any:
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        copy = bus.next_copy(timeout=left)
        if copy is not None and isinstance(copy.message, kind):
            return copy.message
    raise AssertionError(f"no {kind.__name__} on the bus in time")


def get(viewer: Viewer, path: str) -> tuple[int, bytes, str]:
    with urllib.request.urlopen(viewer.url + path, timeout=5) as r:
        return r.status, r.read(), r.headers.get("content-type", "")


def test_page_script_and_three_are_served_on_loopback(viewer: Viewer):
    assert viewer.address[0] == "127.0.0.1"
    status, body, _ = get(viewer, "")
    assert status == 200 and b'src="viewer.js"' in body
    status, body, kind = get(viewer, "viewer.js")
    assert status == 200 and b"three.module.js" in body and "javascript" in kind
    status, body, _ = get(viewer, "vendor/three.module.js")
    assert status == 200 and b"three.core.js" in body
    status, body, _ = get(viewer, "config.json")
    config = json.loads(body)
    assert config["geometry"]["radius"] == 0.25 and config["rate"] == 60.0


def test_pose_from_the_bus_reaches_the_page(viewer: Viewer, client):
    vehicle = client(16)
    with websockets_sync.connect(ws_url(viewer)) as ws:
        assert recv_until(ws, lambda f: f["type"] == "hello")["module"] == 18
        vehicle.send(FMVM(12.5, -3.0, 0.7, 0.01, -0.02, 0.5, 8.0, to=18))
        vehicle.send(FMLM(200, 22050, 0, 22050, to=19))  # seen as a monitor: 1000 rpm
        frame = recv_until(ws, lambda f: f["type"] == "state" and f["rpm"] > 0)
    assert (frame["x"], frame["y"], frame["z"]) == (12.5, -3.0, 0.7)
    assert (frame["roll"], frame["pitch"], frame["yaw"], frame["speed"]) == (0.01, -0.02, 0.5, 8.0)
    assert frame["rpm"] == pytest.approx(1000.0)


def test_state_is_pushed_at_most_at_the_rate(viewer_factory, client):
    """Judged by the viewer's own stamps, so a late test thread cannot make it pass or fail.

    The pusher keeps a schedule of due times one period apart and pushes no earlier than
    each; a push comes before the next due time (or the schedule restarts later). So n
    pushed frames span more than n - 2 periods, however late anyone ran.
    """
    rate = 20.0
    viewer = viewer_factory(rate=rate)
    vehicle = client(16)
    with websockets_sync.connect(ws_url(viewer)) as ws:
        recv_until(ws, lambda f: f["type"] == "state")  # the greeting, sent off the schedule
        for i in range(200):  # far more than 20 per second, each taken in before the next
            vehicle.send(FMVM(float(i), 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, to=18))
            wait_for(lambda i=i: viewer.state.poses > i)
        frames = [recv_until(ws, lambda f: f["type"] == "state")]
        while frames[-1]["x"] != 199.0:
            frames.append(recv_until(ws, lambda f: f["type"] == "state"))
    stamps = [f["t"] for f in frames]
    span = stamps[-1] - stamps[0]
    assert (len(stamps) - 2) / rate < span + 1e-3  # 1 ms: wall stamps, monotonic schedule


def test_keys_on_the_page_become_imfm_on_the_bus(viewer: Viewer, client):
    monitor = client(20, monitor=True)
    with websockets_sync.connect(ws_url(viewer)) as ws:
        recv_until(ws, lambda f: f["type"] == "hello")
        ws.send(
            json.dumps({"type": "input", "throttle": 255, "brake": 0, "steering": 0, "shift": 0})
        )
        imfm = message_until(monitor, IMFM)
        assert imfm == IMFM(255, 0, 0, 0, to=16)
        ws.send(
            json.dumps({"type": "input", "throttle": 0, "brake": 0, "steering": 128, "shift": 1})
        )
        shift = message_until(monitor, IMFM)
        assert shift.shift == 1 and shift.enqueue  # a shift must not be replaced
        ws.send(json.dumps({"type": "horn"}))
        assert message_until(monitor, SoundOnce) == SoundOnce("horn.wav", 255, to=19)
        # the dashboard sees the driver's inputs too
        frame = recv_until(ws, lambda f: f["type"] == "state" and f["steering"] == 0.0)
        assert frame["throttle"] == 0.0


def test_camera_key_goes_round_the_bus_and_back(viewer: Viewer, client):
    monitor = client(20, monitor=True)
    other = client(17)
    with websockets_sync.connect(ws_url(viewer)) as ws:
        recv_until(ws, lambda f: f["type"] == "hello")
        ws.send(json.dumps({"type": "camera"}))
        assert message_until(monitor, IMVMCamera).to == 18
        recv_until(ws, lambda f: f["type"] == "camera")
        other.send(IMVMCamera(to=18))  # an input module's camera button works the same
        recv_until(ws, lambda f: f["type"] == "camera")


def test_a_bad_command_is_answered_not_fatal(viewer: Viewer, client):
    monitor = client(20, monitor=True)
    with websockets_sync.connect(ws_url(viewer)) as ws:
        ws.send(json.dumps({"type": "input", "throttle": 300, "brake": 0, "steering": 128}))
        error = recv_until(ws, lambda f: f["type"] == "error")
        assert error["error"] == "throttle 300 is out of range 0..255"
        ws.send(json.dumps({"type": "fly"}))
        assert (
            "unknown command type 'fly'" in recv_until(ws, lambda f: f["type"] == "error")["error"]
        )
        ws.send(json.dumps({"type": "input", "throttle": 10, "brake": 0, "steering": 128}))
        assert message_until(monitor, IMFM).throttle == 10
    assert viewer.stats.bad_commands == 2


def test_ground_from_the_page_becomes_vmfm_when_asked(viewer_factory, client):
    viewer = viewer_factory(send_ground=True)
    monitor = client(20, monitor=True)
    with websockets_sync.connect(ws_url(viewer)) as ws:
        recv_until(ws, lambda f: f["type"] == "hello" and f["send_ground"])
        ws.send(
            json.dumps(
                {"type": "ground", "height": [0.1, 0.2, 0.3, 0.4], "friction": [1.0, 0.9, 0.8, 0.7]}
            )
        )
        assert message_until(monitor, VMFM) == VMFM(0.1, 0.2, 0.3, 0.4, 1.0, 0.9, 0.8, 0.7, to=16)


def test_shutdown_ends_the_viewer_and_tells_the_page(viewer: Viewer, client):
    other = client(17)
    with websockets_sync.connect(ws_url(viewer)) as ws:
        recv_until(ws, lambda f: f["type"] == "hello")
        other.send(Shutdown(to=18))
        recv_until(ws, lambda f: f["type"] == "shutdown")
    assert viewer.stopped.wait(5.0)


# -- terrain: the page's ground is the vehicle's ---------------------------------------------
def _axis(coord: float, origin: float, cell: float, n: int) -> tuple[int, int, float]:
    """Mirror of the page's axis() in viewer.js (which mirrors the vehicle's)."""
    if n < 2:
        return 0, 0, 0.0
    f = (coord - origin) / cell
    if not f >= 0:
        return 0, 1, 0.0
    if f > n - 1:
        return n - 2, n - 1, 1.0
    i0 = min(int(np.floor(f)), n - 2)
    return i0, i0 + 1, f - i0


def page_sample(t: dict, x: float, y: float) -> tuple[float, float]:
    """The page's sampleTerrain() in Python, over the JSON the page receives."""
    i0, i1, tx = _axis(x, t["origin"][0], t["cell"], t["nx"])
    j0, j1, ty = _axis(y, t["origin"][1], t["cell"], t["ny"])
    nx = t["nx"]

    def bl(a: list[float]) -> float:
        v00, v01 = a[j0 * nx + i0], a[j0 * nx + i1]
        v10, v11 = a[j1 * nx + i0], a[j1 * nx + i1]
        return (1 - ty) * ((1 - tx) * v00 + tx * v01) + ty * ((1 - tx) * v10 + tx * v11)

    return bl(t["height"]), bl(t["friction"])


def hilly_terrain(folder: Path) -> Terrain:
    """Hills of 12 m and a road on a 64 x 48 px map, 200 m wide."""
    yy, xx = np.mgrid[0:48, 0:64]
    blue = 127 + 120 * np.sin(xx / 7.0) * np.cos(yy / 5.0)
    heights = np.zeros((48, 64, 3), np.uint8)
    heights[:, :, 2] = blue.astype(np.uint8)
    road = np.zeros((48, 64), np.uint8)
    road[20:28, :] = 255
    Image.fromarray(heights).save(folder / "height.png")
    Image.fromarray(road).save(folder / "road.png")
    return Terrain.from_images(
        folder / "height.png", folder / "road.png", hill_height=12.0, size=200.0
    )


def test_terrain_json_matches_the_vehicles_terrain_within_1_cm(tmp_path: Path):
    terrain = hilly_terrain(tmp_path)
    page = json.loads(json.dumps(terrain_json(terrain)))
    rng = np.random.default_rng(9)
    points = [(0.0, 0.0), (2.1, 1.0), (2.1, -1.0), (-1.9, 1.0), (-1.9, -1.0), (150.0, -90.0)]
    points += [tuple(p) for p in rng.uniform(-110, 110, size=(200, 2))]
    for x, y in points:
        h, mu = terrain.sample(x, y)
        ph, pmu = page_sample(page, x, y)
        assert abs(ph - h) < 0.01, (x, y, h, ph)
        assert abs(pmu - mu) < 1e-3
    assert max(page["height"]) > 10.0  # it is hilly


def test_terrain_is_served_as_the_viewer_was_given(viewer_factory, tmp_path: Path):
    terrain = hilly_terrain(tmp_path)
    viewer = viewer_factory(terrain=terrain)
    _, body, kind = get(viewer, "terrain.json")
    assert "json" in kind and json.loads(body) == json.loads(json.dumps(terrain_json(terrain)))
    flat = terrain_json(Terrain.flat())
    assert (flat["nx"], flat["ny"], flat["height"], flat["road"]) == (1, 1, [0.0], None)


def test_a_taken_port_is_a_clear_error(viewer: Viewer, router: Router):
    from vcosim.errors import ConfigError

    with pytest.raises(ConfigError, match=r"cannot serve the page on 127\.0\.0\.1:\d+"):
        Viewer("127.0.0.1", router.address[1], port=viewer.address[1], module_id=30)


def test_vcosim_view_serves_until_shutdown(router: Router, client):
    import subprocess

    proc = subprocess.Popen(
        [
            *vcosim_command(),
            "view",
            "--port",
            "0",
            "--bus-port",
            str(router.address[1]),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()  # type: ignore[union-attr]
        assert line.startswith("vcosim viewer: open http://127.0.0.1:"), line
        url = line.split()[-4]
        with urllib.request.urlopen(url, timeout=5) as r:
            assert r.status == 200
        client(17).send(Shutdown(to=18))
        assert proc.wait(timeout=10) == 0
    finally:
        proc.kill()
        proc.wait()


def test_ctrl_c_as_the_viewer_starts_ends_it_quietly(router: Router):
    """An interrupt right after the URL is printed, before the event loop owns the signals."""
    import signal
    import subprocess

    command = [*vcosim_command(), "view", "--listen", "127.0.0.1:0"]
    proc = subprocess.Popen(
        [*command, "--bus", f"127.0.0.1:{router.address[1]}"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        line = proc.stdout.readline()  # type: ignore[union-attr]
        assert "open http://127.0.0.1:" in line, line
        proc.send_signal(signal.SIGINT)
        said, _ = proc.communicate(timeout=30)
        assert proc.returncode == 130, said
        assert "Traceback" not in said and "never awaited" not in said
    finally:
        proc.kill()
        proc.wait()


def test_engine_status_from_the_vehicle_reaches_the_page(viewer: Viewer, client):
    from vcosim.bus.catalogue import EngineStatus

    vehicle = client(16)
    with websockets_sync.connect(ws_url(viewer)) as ws:
        first = recv_until(ws, lambda f: f["type"] == "state")
        assert first["gear"] is None and first["rtf"] is None and not first["connected"]
        vehicle.send(EngineStatus(-1, 0.98, -1, 0, 1, to=18))  # reverse, no coupling
        frame = recv_until(ws, lambda f: f["type"] == "state" and f["gear"] is not None)
        assert (frame["gear"], frame["rtf"], frame["latency_ms"], frame["connected"]) == (
            -1,
            0.98,
            None,
            False,
        )
        vehicle.send(EngineStatus(3, 1.0, 2.5, 1, 1, to=18))
        frame = recv_until(ws, lambda f: f["type"] == "state" and f["gear"] == 3)
        assert (frame["rtf"], frame["latency_ms"], frame["connected"]) == (1.0, 2.5, True)


def test_a_bus_vehicle_tells_the_page_its_gear_and_rtf(viewer: Viewer, router: Router):
    from vcosim.bus.vehicle_module import BusVehicle
    from vcosim.sim.pacing import Pacer
    from vcosim.sim.simulation import Simulation
    from vcosim.vehicle import Vehicle

    car = Vehicle(engine_running=True)
    car.step(automatic=1, gear=1)
    sim = Simulation(car, Pacer("fast", dt=car.dt))
    sim.attach("bus", BusVehicle(port=router.address[1]))
    with websockets_sync.connect(ws_url(viewer)) as ws:
        recv_until(ws, lambda f: f["type"] == "hello")
        sim.run(0.5)
        assert sim.faces["bus"].statuses == 5  # 10 Hz
        frame = recv_until(ws, lambda f: f["type"] == "state" and f["rtf"] is not None)
    assert frame["gear"] in (0, 1)  # N until the automatic has engaged first gear
    assert frame["rtf"] > 0 and frame["latency_ms"] is None and not frame["connected"]


def test_page_commands_become_messages_or_clear_errors():
    from vcosim.modules.viewer import page_command

    def command(cmd: dict, send_ground: bool = False):
        return page_command(cmd, viewer_id=18, send_ground=send_ground)

    assert command({"type": "input", "throttle": 9.6, "brake": 0, "steering": 255}) == IMFM(
        10, 0, 255, 0, to=16
    )
    assert command({"type": "camera"}) == IMVMCamera(to=18)
    assert command({"type": "ground", "height": [0] * 4, "friction": [1] * 4}) is None
    for bad, error in [
        ({"type": "input", "throttle": True, "brake": 0, "steering": 0}, "throttle must be"),
        ({"type": "input", "throttle": 0, "brake": float("nan"), "steering": 0}, "brake must"),
        ({"type": "input", "throttle": 0, "brake": 0, "steering": 0, "shift": 2}, "shift 2 is"),
        ({"type": "ground", "height": [0], "friction": [1] * 4}, "four heights"),
        ({"type": "input", "throttle": 0}, "input needs brake, steering"),
        ({"type": "horn", "volume": 3}, "horn has no field 'volume'"),
        ({"type": 7}, "unknown command type 7"),
    ]:
        with pytest.raises(ValueError, match=error):
            command(bad, send_ground=True)


def test_run_serves_for_its_duration_and_reports(router: Router):
    viewer = Viewer("127.0.0.1", router.address[1], port=0)
    report = viewer.run(duration=0.2)
    assert viewer.stopped.is_set() and not viewer.client.connected
    assert router.wait_until(lambda: 18 not in router.modules, 2.0)
    assert list(report.to_dict()) == [
        "url",
        "pages",
        "frames",
        "commands",
        "bad_commands",
        "malformed",
        "refused_hosts",
        "refused_origins",
        "refused_pages",
        "releases",
        "received",
        "poses",
        "bus_malformed",
        "world_vehicles",
        "world_poses",
        "world_frames",
        "evicted_pages",
        "http_errors",
        "closed_connections",
    ]
    assert report.url == viewer.url and report.pages == 0
    with pytest.raises(OSError):  # the page's port is free again
        urllib.request.urlopen(viewer.url, timeout=2)
