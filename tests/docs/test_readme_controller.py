"""The README's own controller, the template users copy, follows a step as the README says.

Its code is taken from the README itself and coupled in process, in lock-step, to the vehicle
``vcosim sim`` builds: the run is the one the README's two terminals make, value for value.
"""

from __future__ import annotations

import types

import pytest
from doc_blocks import fenced_blocks, parse
from doc_runs import ROOT

from vcosim.scenarios import PacingSpec, RunSpec, build_simulation
from vcosim.scenarios.metrics import StepResponse, step_response
from vcosim.sim.recorder import SignalRecorder
from vcosim.tight.inprocess import couple_in_process


def readme_controller() -> types.ModuleType:
    """The README's controller file, as a module (its ``__main__`` part does not run)."""
    block = next(b for b in map(parse, fenced_blocks(ROOT / "README.md")) if b.save_as is not None)
    module = types.ModuleType("readme_controller")
    exec(compile(block.text, f"README.md:{block.line}", "exec"), module.__dict__)
    return module


def step_of(controller: object, target: float, duration: float) -> StepResponse:
    sim = build_simulation(RunSpec(pacing=PacingSpec(mode="lockstep")))  # as `vcosim sim`
    couple_in_process(sim, controller)
    signals = sim.attach("signals", SignalRecorder())
    sim.run(duration)
    return step_response(signals.column("time"), signals.column("groundspeed"), target, band=0.05)


@pytest.fixture(scope="module")
def keep_speed() -> type:
    return readme_controller().KeepSpeed


def test_it_reaches_its_speed_without_overshoot_and_settles_within_8_s(keep_speed: type) -> None:
    response = step_of(keep_speed(), 15.0, 20.0)  # from rest, as in the README
    assert response.overshoot_pct <= 10.0
    assert response.settling_time < 8.0  # within +-5 % of 15 m/s from then on
    assert abs(response.steady_state_error) < 0.1


def test_its_parameter_sets_the_speed(keep_speed: type) -> None:
    response = step_of(keep_speed(speed=20.0), 20.0, 20.0)  # --param speed=20
    assert response.overshoot_pct <= 10.0 and response.settling_time < 8.0
