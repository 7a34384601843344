"""The driving manoeuvres as a user runs them: `vcosim sim` and `vcosim controller`, coupled.

Two processes over UDP on loopback, lock-step: the controller (``drivers.CoupledScript``)
plays ``drivers.SCHEDULE`` with the automatic (creep, brake-and-release, stop-and-go x3,
kickdown) through pedals and the gear slot; the simulator records every signal. The checks
read the recording and the simulator's summary, phase by phase.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

from driving.drivers import DURATION, SCHEDULE, STARTS
from helpers.forks import vcosim_command
from helpers.loop import free_port, wait_until_bound

DRIVERS = Path(__file__).with_name("drivers.py")
RATE = 100.0  # recorded rows per second
EXT_TIME = "0.01"  # the controller's step: a driver's 100 Hz, half the exchanges of 5 ms
TIMEOUT = "30"  # s: a loaded machine may hold either process off the CPU for a while
# Both ends sleep in their receives instead of busy-polling: this checks the driving, not the
# exchange rate, and two spinning processes would take both cores from the other tests.
NO_SPIN = ["--spin", "0"]


@pytest.fixture(scope="module")
def coupled_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, np.ndarray], dict]:
    folder = tmp_path_factory.mktemp("coupled-drive")
    port = free_port()
    vcosim = vcosim_command()
    controller = subprocess.Popen(
        [*vcosim, "controller", "--function", f"{DRIVERS}:CoupledScript"]
        + ["--listen", f"127.0.0.1:{port}", "--sim", "127.0.0.1:0", "--duration", f"{DURATION:g}"]
        + ["--ext-time", EXT_TIME, "--timeout", TIMEOUT, "--idle-exit", TIMEOUT, *NO_SPIN],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert wait_until_bound(port, controller), controller.communicate()[1]
        sim = subprocess.run(
            [*vcosim, "sim", "--pacing", "lockstep", "--gear-slot", "--vehicle", "nightrider"]
            + ["--listen", "127.0.0.1:0", "--controller", f"127.0.0.1:{port}"]
            + ["--ext-time", EXT_TIME, "--timeout", TIMEOUT, *NO_SPIN]
            + ["--duration", f"{DURATION:g}", "--record", str(folder / "run.csv")]
            + ["--record-rate", f"{RATE:g}", "--json-out", str(folder / "summary.json")],
            capture_output=True,
            text=True,
            timeout=600,
        )
        _, controller_err = controller.communicate(timeout=60)
    finally:
        if controller.poll() is None:
            controller.kill()
            controller.communicate()
    assert sim.returncode == 0, sim.stderr
    assert controller.returncode == 0, controller_err
    names = (folder / "run.csv").read_text().split("\n", 1)[0].split(",")
    table = np.loadtxt(folder / "run.csv", delimiter=",", skiprows=1)
    signals = {name: table[:, i] for i, name in enumerate(names)}
    return signals, json.loads((folder / "summary.json").read_text())


def phase(signals: dict[str, np.ndarray], name: str) -> slice:
    """The recorded rows of one phase of the schedule."""
    start = STARTS[name]
    end = start + next(p.seconds for p in SCHEDULE if p.name == name)
    t = signals["time"]
    return slice(int(np.searchsorted(t, start)), int(np.searchsorted(t, end)))


def test_the_run_was_coupled_throughout(coupled_run):
    signals, summary = coupled_run
    assert signals["time"][-1] == pytest.approx(DURATION, abs=0.02)
    assert summary["coupling"]["timeouts"] == 0


def test_the_engine_never_stalls_and_nothing_is_non_finite(coupled_run):
    signals, _ = coupled_run
    assert all(np.isfinite(values).all() for values in signals.values())
    stalled = np.flatnonzero(signals["engine_running"] < 0.5)
    assert stalled.size == 0, f"stalled from t = {signals['time'][stalled[0]]:.2f} s"


def test_it_creeps_at_idle(coupled_run):
    signals, _ = coupled_run
    creep = signals["groundspeed"][phase(signals, "creep")][-400:]  # the last 4 s
    assert 1.0 <= creep.mean() <= 2.5, f"creep speed {creep.mean():.3f} m/s"


def test_brake_hard_then_release_then_full_throttle_accelerates(coupled_run):
    signals, _ = coupled_run
    v = signals["groundspeed"]
    braking, flooring = v[phase(signals, "brake-hard")], v[phase(signals, "full-throttle")]
    assert braking[0] - braking[-1] > 5.0  # it braked: 1.2 s at full brake
    assert flooring[-1] - flooring[0] > 2.0, f"{flooring[0]:.2f} -> {flooring[-1]:.2f} m/s"


def test_stop_and_go_repeats_and_stops(coupled_run):
    signals, _ = coupled_run
    v = signals["groundspeed"]
    peaks = [v[phase(signals, f"go-{k}")].max() for k in (1, 2, 3)]
    rests = [v[phase(signals, f"stop-{k}")][-1] for k in (1, 2, 3)]
    assert all(abs(peak - 10.0) < 1.0 for peak in peaks), peaks
    assert np.ptp(peaks) < 0.05 * np.mean(peaks), peaks
    assert max(rests) < 0.05, rests


def test_kickdown_changes_down_and_accelerates(coupled_run):
    signals, _ = coupled_run
    cruise = phase(signals, "cruise-80")
    assert signals["groundspeed"][cruise][-1] == pytest.approx(80 / 3.6, abs=1.0)
    cruise_gear = signals["gear"][cruise][-1]
    kick = phase(signals, "kickdown")
    lower = np.flatnonzero(signals["gear"][kick] < cruise_gear)
    assert lower.size and lower[0] / RATE <= 1.5, f"in gear {cruise_gear:g}, no kickdown"
    v = signals["groundspeed"][kick]
    assert v[-1] - v[0] > 5.0
