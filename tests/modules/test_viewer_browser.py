"""The viewer's page in a real browser: Debian's chromium, headless, WebGL via SwiftShader."""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the viewer extra is not installed")
pytest.importorskip("uvicorn", reason="the viewer extra is not installed")
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="playwright is not installed (pip install playwright)"
)

from modules.test_viewer import hilly_terrain  # noqa: E402
from vcosim.bus.catalogue import FMVM, IMFM, VMFM, EngineStatus, Shutdown  # noqa: E402
from vcosim.bus.client import BusClient  # noqa: E402
from vcosim.bus.router import Router  # noqa: E402
from vcosim.bus.vehicle_module import BusVehicle  # noqa: E402
from vcosim.modules.viewer import Viewer  # noqa: E402
from vcosim.sim.pacing import Pacer  # noqa: E402
from vcosim.sim.simulation import Simulation  # noqa: E402
from vcosim.vehicle import Vehicle  # noqa: E402

CHROMIUM = os.environ.get("VCOSIM_CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--use-gl=swiftshader",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
SHOTS = (
    Path(os.environ.get("VCOSIM_SCREENSHOTS", "")) if os.environ.get("VCOSIM_SCREENSHOTS") else None
)

if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
    pytest.skip(
        f"no chromium at {CHROMIUM} (apt-get install chromium, or set VCOSIM_CHROMIUM)",
        allow_module_level=True,
    )


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    page = browser.new_page(viewport={"width": 800, "height": 500})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    yield page
    page.close()
    assert not errors, errors


def open_viewer(page: Any, viewer: Viewer) -> None:
    page.goto(viewer.url)
    page.wait_for_function(
        "window.vcosim && window.vcosim.ready && window.vcosim.connected", timeout=30_000
    )


def shot(page: Any, name: str) -> bytes:
    data = page.screenshot()
    if SHOTS is not None:
        SHOTS.mkdir(parents=True, exist_ok=True)
        (SHOTS / f"{name}.png").write_bytes(data)
    return data


def canvas_is_drawn(page: Any) -> bool:
    """More than one colour in the WebGL canvas (a blank canvas is one colour)."""
    return page.evaluate("""() => {
        const c = document.getElementById('scene');
        const probe = document.createElement('canvas');
        probe.width = 64; probe.height = 40;
        const g = probe.getContext('2d');
        g.drawImage(c, 0, 0, 64, 40);
        const d = g.getImageData(0, 0, 64, 40).data, seen = new Set();
        for (let i = 0; i < d.length; i += 4) seen.add(d[i] << 16 | d[i + 1] << 8 | d[i + 2]);
        return seen.size > 10;
    }""")


def test_page_draws_the_car_follows_it_and_switches_camera(router: Router, page, tmp_path):
    terrain = hilly_terrain(tmp_path)
    with (
        Viewer("127.0.0.1", router.address[1], port=0, terrain=terrain) as viewer,
        BusClient(16, port=router.address[1]).connect(timeout=2.0) as car,
    ):
        open_viewer(page, viewer)
        h = terrain.sample(0.0, 0.0)[0]
        car.send(FMVM(0.0, 0.0, h + 0.6, 0.0, 0.0, 0.0, 0.0, to=18))
        page.wait_for_function("window.vcosim.state.poses >= 1", timeout=10_000)
        page.wait_for_function("window.vcosim.frames >= 1")
        assert canvas_is_drawn(page)
        before = shot(page, "viewer-start")
        x = 25.0
        car.send(FMVM(x, 2.0, terrain.sample(x, 2.0)[0] + 0.6, 0.0, 0.0, 0.4, 10.0, to=18))
        page.wait_for_function(f"window.vcosim.state.x === {x}", timeout=10_000)
        page.evaluate(
            "() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))"
        )
        assert shot(page, "viewer-moved") != before

        # the page's terrain at the wheels is the vehicle's, within 1 cm
        wheels = page.evaluate("window.vcosim.wheelPositions()")
        assert len(wheels) == 4
        for wx, wy in wheels:
            page_h = page.evaluate(f"window.vcosim.sampleTerrain({wx}, {wy}).height")
            assert abs(page_h - terrain.sample(wx, wy)[0]) < 0.01

        page.keyboard.press("c")
        page.wait_for_function("window.vcosim.camera === 'driver'", timeout=5_000)
        shot(page, "viewer-driver")
        page.keyboard.press("c")
        page.wait_for_function("window.vcosim.camera === 'chase'", timeout=5_000)


def test_throttle_key_drives_the_simulated_car(router: Router, page):
    port = router.address[1]
    vehicle = Vehicle(engine_running=True)
    vehicle.step(automatic=1, gear=1)  # selector in D
    sim = Simulation(vehicle, Pacer("realtime", dt=vehicle.dt))
    sim.attach("bus", BusVehicle(port=port))
    thread = threading.Thread(target=lambda: sim.run(60.0), daemon=True)
    thread.start()
    assert router.wait_until(lambda: 16 in router.modules, 10.0)
    try:
        with (
            Viewer("127.0.0.1", port, port=0) as viewer,
            BusClient(20, port=port, monitor=True).connect(timeout=2.0) as monitor,
        ):
            open_viewer(page, viewer)
            page.wait_for_function("window.vcosim.state.poses > 10", timeout=10_000)
            start = shot(page, "viewer-drive-start")
            page.keyboard.down("w")
            deadline = time.monotonic() + 10
            throttle = None
            while throttle is None and time.monotonic() < deadline:
                copy = monitor.next_copy(timeout=1.0)
                if copy and isinstance(copy.message, IMFM) and copy.message.throttle > 0:
                    throttle = copy.message
            assert throttle is not None and throttle.to == 16
            page.wait_for_function("window.vcosim.state.speed > 3", timeout=30_000)
            page.keyboard.up("w")
            assert shot(page, "viewer-drive-moving") != start
            assert page.evaluate("window.vcosim.state.x") > 1.0
    finally:
        with BusClient(17, port=port).connect(timeout=2.0) as driver:
            driver.send(Shutdown(to=16))
        thread.join(10.0)


def test_page_answers_with_the_ground_under_each_wheel(router: Router, page, tmp_path):
    terrain = hilly_terrain(tmp_path)
    port = router.address[1]
    with (
        Viewer("127.0.0.1", port, port=0, terrain=terrain, send_ground=True) as viewer,
        BusClient(16, port=port).connect(timeout=2.0) as car,
    ):
        open_viewer(page, viewer)
        x, y = 30.0, -12.0
        car.send(FMVM(x, y, terrain.sample(x, y)[0] + 0.6, 0.0, 0.0, 1.0, 0.0, to=18))
        page.wait_for_function(f"window.vcosim.state.x === {x}", timeout=10_000)
        wheels = page.evaluate("window.vcosim.wheelPositions()")
        expected = [terrain.sample(wx, wy) for wx, wy in wheels]

        def matches(m: VMFM) -> bool:  # the page's answer for this pose, within 1 cm
            heights = (m.height_fl, m.height_fr, m.height_rl, m.height_rr)
            frictions = (m.friction_fl, m.friction_fr, m.friction_rl, m.friction_rr)
            return all(
                abs(h - eh) < 0.01 and abs(mu - emu) < 1e-3
                for h, mu, (eh, emu) in zip(heights, frictions, expected, strict=True)
            )

        deadline = time.monotonic() + 10
        seen: list[VMFM] = []
        while time.monotonic() < deadline and not (seen and matches(seen[-1])):
            message = car.next_message(timeout=1.0)
            if isinstance(message, VMFM):
                seen.append(message)
        assert seen and matches(seen[-1]), (seen[-1:], expected)
        assert len({round(h, 2) for h, _ in expected}) > 1  # the wheels are on a slope


def test_hud_shows_the_real_gear_and_the_dashboard_rtf_and_latency(router: Router, page):
    with (
        Viewer("127.0.0.1", router.address[1], port=0) as viewer,
        BusClient(16, port=router.address[1]).connect(timeout=2.0) as car,
    ):
        open_viewer(page, viewer)
        assert page.evaluate("window.vcosim.plots") == ["speed km/h", "rpm", "throttle / brake"]
        assert page.evaluate("window.vcosim.mirror.flipped")
        car.send(FMVM(0.0, 0.0, 0.6, 0.0, 0.0, 0.0, 0.0, to=18))
        car.send(EngineStatus(-1, 0.99, -1, 0, 1, to=18))  # reverse, no coupling
        page.wait_for_function(
            "document.getElementById('gear').textContent === 'R'", timeout=10_000
        )
        page.wait_for_function("window.vcosim.plots.includes('real-time factor')")
        assert "reply latency ms" not in page.evaluate("window.vcosim.plots")
        car.send(EngineStatus(3, 1.0, 2.5, 1, 1, to=18))  # third gear, a coupling answers
        page.wait_for_function(
            "document.getElementById('gear').textContent === '3'", timeout=10_000
        )
        page.wait_for_function("window.vcosim.plots.includes('reply latency ms')")
        assert canvas_is_drawn(page)
        shot(page, "viewer-dashboard")


def imfm_until(monitor: BusClient, accept: Any, timeout: float = 10.0) -> list[IMFM]:
    """IMFM copies from the bus up to and including the first ``accept`` takes."""
    seen: list[IMFM] = []
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        copy = monitor.next_copy(timeout=left)
        if copy is not None and isinstance(copy.message, IMFM):
            seen.append(copy.message)
            if accept(copy.message):
                return seen
    raise AssertionError(f"no such IMFM in {timeout} s; saw {seen[-5:]}")


def test_inputs_go_on_while_the_page_is_too_busy_to_draw(router: Router, page):
    """The 25 Hz timer lives in a worker: a page thread blocked for 2 s (a very slow frame)
    draws nothing and runs none of its own timers, yet inputs keep going."""
    port = router.address[1]
    with (
        Viewer("127.0.0.1", port, port=0) as viewer,
        BusClient(20, port=port, monitor=True).connect(timeout=2.0) as monitor,
    ):
        open_viewer(page, viewer)
        page.keyboard.down("w")
        imfm_until(monitor, lambda m: m.throttle == 255)
        start, end, drawn = page.evaluate("""() => {
            const drawn = window.vcosim.drawn, start = Date.now();
            while (Date.now() - start < 2000) {}  // the page's thread: busy, as if drawing
            return [start, Date.now(), window.vcosim.drawn - drawn];
        }""")
        assert drawn == 0
        page.wait_for_function(f"window.vcosim.inputTimes.some((t) => t > {end})")
        during = page.evaluate(
            f"window.vcosim.inputTimes.filter((t) => t >= {start} && t <= {end}).length"
        )
        assert during >= 10  # 50 at 25 Hz; the page's own timers would have sent none
        page.keyboard.up("w")


def test_a_hidden_page_lets_go_and_the_server_brakes(router: Router, page):
    port = router.address[1]
    with (
        Viewer("127.0.0.1", port, port=0) as viewer,
        BusClient(20, port=port, monitor=True).connect(timeout=2.0) as monitor,
    ):
        open_viewer(page, viewer)
        page.keyboard.down("w")
        imfm_until(monitor, lambda m: m.throttle == 255)
        page.evaluate("""() => {
            const hide = (name, value) =>
                Object.defineProperty(document, name, { value, configurable: true });
            hide('hidden', true);
            hide('visibilityState', 'hidden');
            document.dispatchEvent(new Event('visibilitychange'));
        }""")
        let_go = imfm_until(monitor, lambda m: m.throttle == 0)[-1]
        assert (let_go.throttle, let_go.brake, let_go.steering) == (0, 0, 128)
        after = imfm_until(monitor, lambda m: m.brake > 0)  # the dead-man, 0.5 s later
        assert after[-1] == IMFM(0, 128, 128, 0, to=16)
        assert all(m.throttle == 0 for m in after)
        assert viewer.stats.releases == 1
        copy = monitor.next_copy(timeout=0.5)  # and the hidden page sends nothing more
        assert copy is None or not isinstance(copy.message, IMFM)


def test_a_worlds_vehicles_are_drawn_and_the_camera_goes_to_any_of_them(router: Router, page):
    from vcosim.bus.catalogue import WorldPose, WorldSignal, WorldVehicle

    with (
        Viewer("127.0.0.1", router.address[1], port=0) as viewer,
        BusClient(22, port=router.address[1]).connect(timeout=2.0) as world,
        BusClient(16, port=router.address[1]).connect(timeout=2.0) as ego,
    ):
        open_viewer(page, viewer)
        for row, name in enumerate(("lead", "ego", "side")):
            world.send(WorldVehicle(row, name, 4.5, 1.8, int(name == "ego"), 0.1, to=18))
        for row, x in enumerate((30.0, 0.0, 5.0)):
            rpm = 1000.0 + 500.0 * row  # each vehicle's own dials: lead 1000, ego 1500
            world.send(WorldPose(row, x, 4.0 * (row == 2), 0.6, 0.0, 0.0, 0.0, 10.0, rpm, 2, to=18))
        page.wait_for_function("window.vcosim.world.vehicles.length === 3", timeout=10_000)
        # no vehicle module has spoken (a world of built-in drivers): the ego's WorldPose
        page.wait_for_function("document.getElementById('rpm').textContent === '1500'")
        assert page.inner_text("#speed") == "36" and page.inner_text("#gear") == "2"
        # no FMVM yet: the car is drawn at the ego's WorldPose, the others as boxes
        assert page.evaluate("window.vcosim.drawnRows()") == [0, 2]
        # a traffic light's heads (SUMO's): a ball each, lit in its state, relit when it changes
        for index, state in enumerate((0, 2)):
            world.send(WorldSignal(index, f"C.{index}", 20.0, -1.6, 3.0 + index, 0.0, state, to=18))
        lit = "(s) => s[0] === 0 && s[1] === 2"
        page.wait_for_function(f"({lit})(window.vcosim.signalStates())", timeout=5_000)
        world.send(WorldSignal(0, "C.0", 20.0, -1.6, 3.0, 0.0, 1, to=18))
        page.wait_for_function("window.vcosim.signalStates()[0] === 1", timeout=5_000)
        ego.send(FMVM(0.0, 0.0, 0.6, 0.0, 0.0, 0.0, 10.0, to=18))
        page.wait_for_function("window.vcosim.state.poses >= 1", timeout=10_000)
        assert page.evaluate("window.vcosim.targetName()") == "ego"
        page.wait_for_function("window.vcosim.cameraPosition()[0] < 0", timeout=5_000)  # chase
        page.keyboard.press("v")
        page.wait_for_function("window.vcosim.targetName() === 'lead'", timeout=5_000)
        assert "lead" in page.inner_text("#camera-name")
        page.wait_for_function("document.getElementById('rpm').textContent === '1000'")
        # the chase camera is 9 m behind the lead (at 30 m, carried forward at 10 m/s)
        page.wait_for_function("window.vcosim.cameraPosition()[0] > 20", timeout=5_000)
        if SHOTS is not None:
            shot(page, "viewer-world-lead")
        page.keyboard.press("Shift+V")
        page.wait_for_function("window.vcosim.targetName() === 'ego'", timeout=5_000)
        page.keyboard.press("Shift+V")
        page.wait_for_function("window.vcosim.targetName() === 'side'", timeout=5_000)


WHITE_PIXELS = """() => {  // the white paint's pixels in the 3-D view (nothing else is white)
    const c = document.getElementById('scene');
    const probe = document.createElement('canvas');
    probe.width = c.width; probe.height = c.height;
    const g = probe.getContext('2d');
    g.drawImage(c, 0, 0);
    const d = g.getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4) n += d[i] > 250 && d[i + 1] > 250 && d[i + 2] > 250;
    return n;
}"""

NEXT_FRAME = "() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))"


def test_an_opendrive_junction_is_drawn_with_its_lanes_and_marks(router: Router, page):
    """Three arms into a junction (scenariogeneration), broken centre lines: every lane and
    mark becomes a mesh, and the paint is on the screen (and gone with the road hidden)."""
    import math

    from scenariogeneration import xodr

    from helpers.roads import network_of
    from vcosim.modules.viewer.road import road_json

    junction = xodr.CommonJunctionCreator(100, "T", startnum=100)
    arms = []
    for rid, angle in ((1, 0.0), (2, math.pi / 2), (3, math.pi)):
        arm = xodr.create_road(xodr.Line(50), rid, center_road_mark=xodr.std_roadmark_broken())
        junction.add_incoming_road_circular_geometry(arm, 20, angle, "successor")
        arms.append(arm)
    for a, b in ((1, 2), (1, 3), (2, 3)):
        junction.add_connection(a, b)
    network = network_of(*arms, junctions=(junction,))
    drawn = road_json(network)
    dashes = sum(len(mark["strips"]) for mark in drawn["marks"])
    assert {r.junction for r in network.roads.values()} == {"-1", "100"}
    with (
        Viewer("127.0.0.1", router.address[1], port=0, road=network) as viewer,
        BusClient(16, port=router.address[1]).connect(timeout=2.0) as car,
    ):
        open_viewer(page, viewer)
        built = page.evaluate("window.vcosim.road.userData")
        assert built == {"lanes": 12, "marks": 18, "dashes": dashes}  # 6 roads, 2 lanes, 3 marks
        assert dashes > 18  # the broken centre lines are dashes
        assert page.evaluate("window.vcosim.road.children.length") == 12 + 18
        x, y = network.position(1, 30.0, lane=-1)[:2]  # west arm, heading into the junction
        car.send(FMVM(float(x[0]), float(y[0]), 0.6, 0.0, 0.0, 0.0, 0.0, to=18))
        page.wait_for_function("window.vcosim.state.poses >= 1", timeout=10_000)
        page.evaluate(NEXT_FRAME)
        painted = page.evaluate(WHITE_PIXELS)
        shot(page, "viewer-junction")
        page.evaluate("window.vcosim.road.visible = false")
        page.evaluate(NEXT_FRAME)
        assert painted > 200 and page.evaluate(WHITE_PIXELS) == 0, painted
