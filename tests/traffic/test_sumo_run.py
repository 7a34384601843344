"""Issue 28's first acceptance: `vcosim sim --sumo` with `vcosim controller acc` over UDP.

The crossing of examples/sumo/cross.sumocfg (a 4-way junction with a traffic light, a car every
2 s from each arm), the lone car as SUMO's ego coming from the west at 12 m/s towards its red
light, coupled in lock-step to the ACC reading the light in bank H. Lean: 12 s (about 24 SUMO
cars) instead of the 150 s with 300 cars of the documented run (docs/traffic.md), which shows
the same at full size. Run twice: the recordings are the same, byte for byte.
"""

from __future__ import annotations

import csv
import json
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("libsumo")

from typer.testing import CliRunner  # noqa: E402

from helpers.forks import vcosim_command
from helpers.loop import free_port, wait_until_bound  # noqa: E402
from vcosim.app import app  # noqa: E402

CROSSING = Path(__file__).parents[2] / "examples" / "sumo" / "cross.sumocfg"
DURATION = "12"
EXT_TIME = "0.02"  # s: the ACC's step, 600 exchanges
TIMEOUT = "30"  # s: a loaded machine may hold either process off the CPU for a while
STOP_LINE = -7.2  # m: x of the west approach's stop line


def coupled_run(folder: Path) -> dict:
    """`vcosim controller acc` in its process, `vcosim sim --sumo` in this one."""
    port = free_port()
    controller = subprocess.Popen(
        [*vcosim_command(), "controller", "acc", "--speed", "12"]
        + ["--param", "signals=true", "--ext-time", EXT_TIME, "--duration", DURATION]
        + ["--listen", f"127.0.0.1:{port}", "--sim", "127.0.0.1:0", "--timeout", TIMEOUT]
        + ["--spin", "0"],  # no busy-polling: the suite shares two cores
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert wait_until_bound(port, controller), controller.communicate()[1]
        result = CliRunner().invoke(
            app,
            ["sim", "--sumo", str(CROSSING), "--sumo-seed", "3", "--start-pose", "-80,-1.6,0"]
            + ["--start-speed", "12", "--pacing", "lockstep", "--duration", DURATION]
            + ["--listen", "127.0.0.1:0", "--controller", f"127.0.0.1:{port}"]
            + ["--ext-time", EXT_TIME, "--timeout", TIMEOUT, "--spin", "0"]
            + ["--record", str(folder / "run.csv"), "--json-out", str(folder / "summary.json")],
        )
        _, err = controller.communicate(timeout=60)
    finally:
        if controller.poll() is None:
            controller.kill()
            controller.communicate()
    assert result.exit_code == 0, result.output
    assert controller.returncode == 0, err
    return json.loads((folder / "summary.json").read_text())


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict]:
    first, second = tmp_path_factory.mktemp("first"), tmp_path_factory.mktemp("second")
    summary = coupled_run(first)
    coupled_run(second)
    return first, second, summary


def rows(path: Path) -> list[dict[str, str]]:
    with path.open() as file:
        return list(csv.DictReader(file))


def test_the_ego_stops_at_the_red_light_its_controller_reads(runs) -> None:
    first, _, summary = runs
    ego = rows(first / "run.ego.csv")
    end = ego[-1]
    assert float(end["groundspeed"]) < 0.05
    assert STOP_LINE - 5.0 < float(end["posX"]) < STOP_LINE  # short of the line, not past it
    assert summary["coupling:ego"]["timeouts"] == 0
    assert summary["world"]["collisions"] == []


def test_sumo_cars_brake_behind_the_ego(runs) -> None:
    first, _, summary = runs
    sumo = rows(first / "run.sumo.csv")
    assert summary["sumo"]["vehicles"] >= 20  # four arms' traffic
    first_east = [r for r in sumo if r["id"] == "east.0"]
    free = max(float(r["speed"]) for r in first_east)
    assert free > 12.0  # it came at its own speed, faster than the ego
    last = first_east[-1]
    ego_end = float(rows(first / "run.ego.csv")[-1]["posX"])
    assert float(last["x"]) < ego_end - 4.0  # behind the ego, in its lane
    assert float(last["y"]) == pytest.approx(-1.6, abs=0.01)
    assert float(last["speed"]) < free / 2.0  # and braked for it
    assert int(last["signals"]) & 8  # brake light on


def test_two_lockstep_runs_record_the_same_bytes(runs) -> None:
    first, second, _ = runs
    for name in ("run.ego.csv", "run.sumo.csv"):
        assert (first / name).read_bytes() == (second / name).read_bytes(), name
