"""Every external vehicle of a world gets its own coupling endpoint: real UDP, real processes.

Two cars on two lanes, each driven by a cruise controller in a process of its own (10 and
15 m/s), over loopback in lock-step: both hold their targets, each endpoint logs to its own
folder, and the same world run twice writes the same logs.
"""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path

import numpy as np
import pytest

from vcosim.analysis.logs import read_logs
from vcosim.controllers.cruise import Cruise
from vcosim.errors import ConfigError
from vcosim.scenarios import CouplingFaceSpec, PacingSpec, RunSpec, build_simulation
from vcosim.scenarios.build import endpoints
from vcosim.scenarios.harness import ControllerProcess
from vcosim.sim.simulation import RunReport
from vcosim.tight.config import CouplingConfig
from vcosim.world import World, WorldFile

TWO_LANES = """
[[vehicles]]
name = "slow"
start = {{ x = 0, y = 0, speed = 9 }}
[vehicles.coupling]
listen = "127.0.0.1:0"
controller = "127.0.0.1:{slow}"

[[vehicles]]
name = "fast"
start = {{ x = 0, y = 5, speed = 14 }}
[vehicles.coupling]
listen = "127.0.0.1:0"
controller = "127.0.0.1:{fast}"
"""


def run_two(tmp: Path, logs: Path, slow: int, fast: int) -> tuple[RunReport, World]:
    """The two-lane world coupled to the cruise controllers on ports ``slow`` and ``fast``."""
    world_file = tmp / "two.toml"
    world_file.write_text(TWO_LANES.format(slow=slow, fast=fast))
    coupling = CouplingFaceSpec(ext_time=0.01, timeout=5.0, spin=0.0, debug_log=logs)
    spec = RunSpec(world=world_file, pacing=PacingSpec(mode="lockstep"), faces=[coupling])
    sim = build_simulation(spec)
    assert set(sim.faces) == {"coupling:slow", "coupling:fast"}
    coupled = endpoints(sim)
    assert set(coupled) == set(sim.couplings()) == {"slow", "fast"}
    assert coupled["slow"].address != coupled["fast"].address
    report = sim.run(5.0)
    assert sim.world is not None
    return report, sim.world


def test_two_coupled_vehicles_hold_their_speeds_and_a_lockstep_run_repeats_exactly(
    tmp_path: Path,
) -> None:
    with ExitStack() as stack:  # all four controllers start at once: each run gets fresh ones
        peers = [
            stack.enter_context(ControllerProcess(Cruise(speed=speed), step=0.01))
            for speed in (10.0, 15.0, 10.0, 15.0)
        ]
        ports = [peer.port() for peer in peers]
        first, world = run_two(tmp_path, tmp_path / "one", *ports[:2])
        states = world.states.copy()
        second, again = run_two(tmp_path, tmp_path / "two", *ports[2:])
    for name, target in (("slow", 10.0), ("fast", 15.0)):
        coupling = first.faces[f"coupling:{name}"]
        assert coupling["timeouts"] == 0 and coupling["sent"] == 500
        assert coupling["applied"] >= 495
        assert world.vehicles[name].signal("groundspeed") == pytest.approx(target, abs=0.25)
    assert "coupling:slow" in first.to_dict() and first.world.collisions == []

    np.testing.assert_array_equal(again.states, states)
    for name in ("slow", "fast"):  # every value sent and received, message by message
        logs = [read_logs(tmp_path / run / name) for run in ("one", "two")]
        for table in ("sends", "receives"):
            a, b = (getattr(log, table) for log in logs)
            assert len(a) == len(b) > 490
            np.testing.assert_array_equal(a.values, b.values)
            np.testing.assert_array_equal(a.id, b.id)


def test_ports_are_allocated_in_order_unless_the_file_gives_them(tmp_path: Path) -> None:
    from vcosim.scenarios import vehicle_couplings

    world = World(
        WorldFile.from_dict(
            {
                "vehicles": [
                    {"name": "a"},
                    {"name": "b", "start": {"x": 0, "y": 5}},
                    {
                        "name": "c",
                        "start": {"x": 0, "y": 10},
                        "coupling": {"listen": "127.0.0.2:7000"},
                    },
                    {
                        "name": "d",
                        "start": {"x": 0, "y": 15},
                        "driver": {"kind": "idm", "path": "road"},
                    },
                ],
                "paths": {"road": {"points": [[0, 15], [100, 15]]}},
            }
        )
    )
    configs = vehicle_couplings(world, CouplingConfig(debug_log=tmp_path, allow=("10.0.0.7",)))
    assert list(configs) == ["a", "b", "c"]  # d has a driver of its own
    ports = {n: (c.listen_host, c.listen_port, c.controller_port) for n, c in configs.items()}
    assert ports == {
        "a": ("127.0.0.1", 64891, 64890),
        "b": ("127.0.0.1", 64893, 64892),
        "c": ("127.0.0.2", 7000, 64894),
    }
    assert configs["b"].debug_log == tmp_path / "b"
    assert configs["b"].allow == ("10.0.0.7",)


def test_coupling_ports_are_checked_with_the_world_file() -> None:
    with pytest.raises(ConfigError) as caught:
        WorldFile.from_dict(
            {"vehicles": [{"name": "a", "coupling": {"listen": "nowhere", "controller": ":99999"}}]}
        )
    text = str(caught.value)
    assert "vehicles.0.coupling.listen" in text and "vehicles.0.coupling.controller" in text
    with pytest.raises(ConfigError, match=r"vehicles.0 \(b\).coupling: only an external"):
        WorldFile.from_dict(
            {
                "vehicles": [
                    {
                        "name": "b",
                        "driver": {"kind": "idm", "path": "road"},
                        "coupling": {"listen": "127.0.0.1:1"},
                    }
                ],
                "paths": {"road": {"points": [[0, 15], [100, 15]]}},
            }
        )


def test_analyze_on_a_world_folder_names_the_vehicles_to_pick(tmp_path: Path) -> None:
    for name in ("ego", "lead"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "simulinkSendLog.csv").write_text("")
    with pytest.raises(ConfigError) as caught:
        read_logs(tmp_path)
    assert f"{tmp_path / 'ego'}" in str(caught.value) and "lead" in str(caught.value)
