"""SUMO's traffic in a world, in lock-step: its cars brake for ours, ours see its cars and lights.

The scenario is examples/worlds/sumo-junction.toml: two vcosim cars standing in the west
approach of a signalled 4-way junction (examples/sumo/), SUMO's eastbound cars entering 100 m
down that approach. One run of 12 s serves every test, a second one the repeat.
"""

from __future__ import annotations

import contextlib
import math
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

pytest.importorskip("libsumo")

from vcosim.errors import ConfigError, MissingExtra  # noqa: E402
from vcosim.traffic.sumo import SumoTraffic, sumo_world  # noqa: E402
from vcosim.world import World, WorldFile  # noqa: E402
from vcosim.world.bank_h import (  # noqa: E402
    H_AHEAD,
    H_DISTANCE,
    H_SIGNAL_DISTANCE,
    H_SIGNAL_STATE,
    H_SIGNAL_VALID,
    H_TARGET,
    H_VALID,
    fill_range_slots,
)
from vcosim.world.sumo_spec import SumoSpec  # noqa: E402

WORLD = Path(__file__).parents[2] / "examples" / "worlds" / "sumo-junction.toml"
SECONDS = 12.0
SAMPLE = 1000  # physics steps (0.5 s) between samples


def drive(trace: Path) -> dict[str, Any]:
    """Run the junction world for ``SECONDS``, tracing SUMO's cars; what the tests look at."""
    world = sumo_world(WORLD)
    traffic = world.objects
    assert isinstance(traffic, SumoTraffic)
    traffic.trace(trace)
    speeds: dict[str, list[float]] = {}
    brake_lights: set[str] = set()
    accelerations: list[tuple[float, float]] = []  # (ours, SUMO's getter)
    try:
        for _ in range(round(SECONDS / (SAMPLE * world.dt))):
            world.run(SAMPLE)
            for vid in traffic.ids:
                state = traffic.state(vid)
                speeds.setdefault(vid, []).append(state["speed"])
                accelerations.append(
                    (state["acceleration"], traffic.api.vehicle.getAcceleration(vid))
                )
                if state["brake_light"]:
                    brake_lights.add(vid)
        banks = {}
        for name in ("ego", "watcher"):
            banks[name] = np.zeros(50)
            fill_range_slots(SimpleNamespace(world=world, vehicle_name=name), banks[name])
        return {
            "world": world,
            "speeds": speeds,
            "accelerations": accelerations,
            "brake_lights": brake_lights,
            "banks": banks,
            "lights": dict(traffic.lights),
            "signal": traffic.next_signal("ego"),
            "seen": world.sense("watcher"),
            "gap": -world.overlap("ego", "east.0"),
            "report": world.report(),
        }
    finally:
        traffic.close()


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path, Path]:
    folder = tmp_path_factory.mktemp("sumo")
    first, second = folder / "first.csv", folder / "second.csv"
    return drive(first), first, second


def test_sumo_cars_brake_behind_a_vcosim_car_in_their_lane(runs: tuple) -> None:
    run = runs[0]
    first = run["speeds"]["east.0"]
    assert first[0] > 12.0  # it came at full speed ...
    assert first[-1] < 0.5  # ... and (nearly) stands behind the ego
    assert 0.0 < run["gap"] < 5.0  # bumper to bumper, apart
    assert {"east.0", "east.1"} <= run["brake_lights"]
    assert run["report"].collisions == []


def test_sumo_cars_accelerations_are_sumos_own_to_the_bit(runs: tuple) -> None:
    """Taken from the speed change (SUMO's SPEED2ACCEL), not read: equal to its getter's."""
    pairs = runs[0]["accelerations"]
    assert len(pairs) > 50 and any(ours < -1.0 for ours, _ in pairs)  # some brake hard
    assert [ours for ours, _ in pairs] == [sumo for _, sumo in pairs]


def test_the_range_sensor_sees_sumo_cars(runs: tuple) -> None:
    run = runs[0]
    world = run["world"]
    seen = run["seen"]
    assert seen.target is not None and seen.target.startswith("east.")
    assert 0.0 < seen.distance < 150.0
    bank = run["banks"]["watcher"]
    assert bank[H_AHEAD + H_VALID] == 1.0
    assert bank[H_AHEAD + H_DISTANCE] == pytest.approx(seen.distance)
    assert bank[H_AHEAD + H_TARGET] == world.target_row(seen.target) >= len(world)


def test_a_red_light_is_visible_to_the_world(runs: tuple) -> None:
    run = runs[0]
    assert "r" in run["lights"]["C"]
    distance, state = run["signal"]
    assert state == 0.0  # the west approach has red for the first 40 s
    assert 85.0 < distance < 95.0  # the ego's front at about -97.5 m, the stop line at -7.2 m
    bank = run["banks"]["ego"]
    assert bank[H_SIGNAL_VALID] == 1.0
    assert bank[H_SIGNAL_DISTANCE] == pytest.approx(distance)
    assert bank[H_SIGNAL_STATE] == 0.0
    watcher = run["banks"]["watcher"]  # no route given: it follows its road straight on
    assert watcher[H_SIGNAL_VALID] == 1.0 and watcher[H_SIGNAL_STATE] == 0.0
    assert watcher[H_SIGNAL_DISTANCE] == pytest.approx(distance + 150.0, abs=0.5)  # 150 m back


@pytest.mark.parametrize("program", ["static", "actuated"])
def test_the_lights_read_are_sumos_at_every_step(tmp_path: Path, program: str) -> None:
    """Fixed-time lights read when their switch comes, others subscribed: both SUMO's state."""
    sumo = WORLD.parent.parent / "sumo"
    for name in ("junction.sumocfg", "junction.rou.xml", "junction.net.xml"):
        text = (sumo / name).read_text()
        (tmp_path / name).write_text(text.replace('type="static"', f'type="{program}"'))
    world_text = WORLD.read_text().replace("../sumo/junction.sumocfg", "junction.sumocfg")
    (tmp_path / "world.toml").write_text(world_text)
    world = sumo_world(tmp_path / "world.toml")
    traffic = world.objects
    assert isinstance(traffic, SumoTraffic)
    lights, changes, before = traffic.api.trafficlight, 0, dict(traffic.lights)
    try:
        assert bool(traffic._switches) == (program == "static")
        for _ in range(4500):  # 45 s: the west approach's red ends at 40 s
            world.run(traffic.period_steps)
            assert traffic.lights == {tls: lights.getRedYellowGreenState(tls) for tls in before}
            changes += traffic.lights != before
            before = dict(traffic.lights)
    finally:
        traffic.close()
    assert changes >= 2


def test_two_lockstep_runs_give_identical_traces(runs: tuple) -> None:
    _, first, second = runs
    drive(second)
    text = first.read_text()
    assert text.count("\n") > 100 and ",east.0," in text
    assert second.read_text() == text


def test_the_sumo_section_is_checked_with_the_world_file() -> None:
    data = {
        "vehicles": [{"name": "ego"}],
        "sumo": {"config": "x.sumocfg", "step_length": 0.0102, "routes": {"egg": ["WC"]}},
    }
    with pytest.raises(ConfigError) as caught:
        WorldFile.from_dict(data)
    text = str(caught.value)
    assert "sumo.step_length" in text and "whole number of 0.0005 s" in text
    data["sumo"] = {"config": "x.sumocfg", "routes": {"egg": ["WC"]}}
    with pytest.raises(ConfigError, match="sumo: no vehicle 'egg' in this world"):
        WorldFile.from_dict(data)
    with pytest.raises(ConfigError, match="give one of config"):
        WorldFile.from_dict({"vehicles": [{"name": "ego"}], "sumo": {"seed": 3}})
    assert SumoSpec(config="x.sumocfg").period_steps == 20


def test_without_the_sumo_extra_a_world_with_sumo_refuses_in_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "libsumo", None)
    world = SimpleNamespace(names=["ego"], dt=0.0005, time=0.0)
    with pytest.raises(MissingExtra) as caught:
        SumoTraffic(world, SumoSpec(config="x.sumocfg"))  # type: ignore[arg-type]
    assert str(caught.value).count("\n") == 0
    assert "pip install" in str(caught.value) and "[sumo]" in str(caught.value)


def test_the_acc_stops_at_a_red_light_it_reads_in_bank_h() -> None:
    from vcosim.controllers.acc import Acc
    from vcosim.sim import Pacer, Simulation
    from vcosim.tight.config import CouplingConfig
    from vcosim.tight.controller import Responder
    from vcosim.tight.endpoint import SimulatorEndpoint
    from vcosim.tight.inprocess import InProcessLink

    world = sumo_world(WORLD.with_name("sumo-red-light.toml"))  # the ego first in line, 150 m off
    traffic = world.objects
    assert isinstance(traffic, SumoTraffic)
    try:
        sim = Simulation(world, Pacer("fast"))
        config = CouplingConfig()
        step = config.schedule(sim.dt).controller_step(sim.dt)
        acc = Acc(speed=12.0, signals=True)
        link = InProcessLink(Responder(acc, step, False), lambda: world.step_index)
        face = SimulatorEndpoint(config, link=link, fill_custom=fill_range_slots)
        sim.attach("coupling", face, vehicle="ego")
        report = sim.run(18.0)
        signal = traffic.next_signal("ego")
        assert any(vid.startswith("north") for vid in traffic.ids)  # cross traffic runs
    finally:
        traffic.close()
    assert report.world.collisions == []
    assert signal is not None and signal[1] == 0.0  # still red
    assert sim.vehicles["ego"].signal("groundspeed") < 0.3
    assert 0.0 < signal[0] < 5.0  # standing short of the stop line


def test_with_a_radius_only_sumo_cars_near_the_world_cars_enter_it() -> None:
    spec = WorldFile.load(WORLD)
    assert spec.sumo is not None
    spec.sumo.radius = 30.0
    world = sumo_world(spec)
    traffic = world.objects
    assert isinstance(traffic, SumoTraffic)
    try:
        world.run(16_000)  # 8 s: the first cars queue behind the ego, more are on their way
        p = world.poses()
        ids = traffic.ids
        in_sumo = traffic.api.vehicle.getIDCount() - 2
        ours = [world.row(name) for name in ("ego", "watcher")]
        for vid in ids:
            row = world.target_row(vid)
            near = min(
                math.hypot(p["cx"][row] - p["cx"][r], p["cy"][row] - p["cy"][r]) for r in ours
            )
            assert near < 30.0 + 10.0  # SUMO measures from front bumpers
    finally:
        traffic.close()
    assert "east.0" in ids and 0 < len(ids) < in_sumo


def test_a_sumo_car_that_cannot_see_a_world_car_collides_with_it() -> None:
    spec = WorldFile.load(WORLD)
    assert spec.sumo is not None
    spec.sumo.vehicles = []  # SUMO does not know of the ego standing in its lane
    world = sumo_world(spec)
    traffic = world.objects
    assert isinstance(traffic, SumoTraffic)
    try:
        world.run(20_000)  # east.0 enters 100 m behind the ego at 14 m/s
    finally:
        traffic.close()
    first = world.collisions[0]
    assert first.vehicles == ("ego", "east.0")
    assert first.relative_speed > 10.0 and 0.0 < first.overlap < 0.5
    assert world.report().collided == ["ego"]


@contextlib.contextmanager
def sumo_elsewhere(folder: Path) -> Iterator[tuple[subprocess.Popen[bytes], World, int]]:
    """SUMO in a process of its own serving the junction over TraCI, and a world joined to it
    (``[sumo] host``): the process, the world and SUMO's port. SUMO is killed at the end."""
    from vcosim.traffic.sumo import OURS_TYPE_XML, QUIET, sumo_tool

    ours = folder / "vcosim.add.xml"  # the type vcosim's cars are copies of
    ours.write_text(OURS_TYPE_XML, encoding="utf-8")
    with socket.socket() as probe:  # a free port for SUMO to listen on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = WORLD.parents[1] / "sumo" / "junction.sumocfg"
    sumo = subprocess.Popen(
        [sumo_tool("sumo"), "-c", str(config), "--step-length", "0.01", "--seed", "1",
         "--remote-port", str(port), "-a", str(ours), *QUIET],
        stdout=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        spec = WorldFile.load(WORLD)
        assert spec.sumo is not None
        sumo_spec = spec.sumo.model_dump() | {"config": None, "host": f"127.0.0.1:{port}"}
        spec.sumo = SumoSpec(**sumo_spec)
        yield sumo, sumo_world(spec), port
    finally:
        sumo.kill()


def test_a_sumo_elsewhere_over_traci_gives_the_same_traffic(runs: tuple) -> None:
    _, first, _ = runs
    with sumo_elsewhere(first.parent) as (sumo, world, _):
        traffic = world.objects
        assert isinstance(traffic, SumoTraffic)
        trace = first.with_name("traci.csv")
        try:
            traffic.trace(trace)
            world.run(8_000)
        finally:
            traffic.close()
        assert sumo.wait(timeout=30) == 0  # closing the connection ends that SUMO
    rows = trace.read_text().splitlines()
    assert len(rows) > 10
    assert rows == first.read_text().splitlines()[: len(rows)]  # the same, row by row


def test_a_sumo_elsewhere_that_has_gone_ends_the_run_in_one_line_naming_it(tmp_path) -> None:
    from vcosim.errors import VcosimError

    with sumo_elsewhere(tmp_path) as (sumo, world, port):
        traffic = world.objects
        assert isinstance(traffic, SumoTraffic)
        try:
            world.run(200)
            sumo.kill()
            sumo.wait(30)
            with pytest.raises(VcosimError, match=rf"sumo: the SUMO at 127.0.0.1:{port} has gone"):
                world.run(200)
        finally:
            traffic.close()
