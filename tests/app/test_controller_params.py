"""Controllers take parameters: ``--param NAME=VALUE`` reaches an example, a class, a function.

A parameter the controller does not take is refused before anything starts (exit 2, with the
names it takes), and so are ``--speed``, ``--heading`` and ``--time-gap``, their shorthands.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from vcosim.app import app
from vcosim.app.controller import make_step_function
from vcosim.tight.protocol import SIM_TO_CONTROLLER
from vcosim.tight.views import SLOT_BY_NAME, SimulatorMessage

MINE = """
from vcosim.tight import Controls


class Hold:
    def __init__(self, speed=15.0, gain=0.1):
        self.speed, self.gain = speed, gain

    def __call__(self, msg):
        return Controls(throttle=self.gain * (self.speed - msg.body.groundspeed))


def step(msg, speed=15.0):
    return Controls(throttle=0.1 * (speed - msg.body.groundspeed))


def bare(msg):
    return Controls(throttle=0.0)


made = Hold()
"""


@pytest.fixture
def mine(tmp_path: Path) -> str:
    (tmp_path / "mine.py").write_text(MINE)
    return str(tmp_path / "mine.py")


def step_function(source: str, **params: object) -> object:
    name, function = (source, None) if ":" not in source else (None, source)
    return make_step_function(
        name, function=function, fmu=None, map_file=None, step=0.005, params=params
    )


def throttle_at(step_fn: object, speed: float) -> float:
    msg = SimulatorMessage(np.zeros(SIM_TO_CONTROLLER), 0.0, 0.005)
    msg.values[SLOT_BY_NAME["groundspeed"]] = speed
    return step_fn(msg).throttle  # type: ignore[operator]


def test_parameters_reach_a_class_a_function_and_an_example(mine: str) -> None:
    assert throttle_at(step_function(f"{mine}:Hold", speed=20, gain=0.5), 18.0) == 1.0
    assert throttle_at(step_function(f"{mine}:step", speed=20), 18.0) == pytest.approx(0.2)
    assert throttle_at(step_function(f"{mine}:step"), 14.0) == pytest.approx(0.1)
    cruise = step_function("cruise", speed=12.0, kp=0.1)
    assert (cruise.speed, cruise.kp) == (12.0, 0.1)  # type: ignore[attr-defined]


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (
            ["--function", "{mine}:Hold", "--param", "sped=20"],
            "unknown parameter of Hold 'sped'; did you mean 'speed'? (valid: speed, gain)",
        ),
        (
            ["--function", "{mine}:step", "--heading", "30"],
            "unknown parameter of step 'heading' (valid: speed)",
        ),
        (["--function", "{mine}:bare", "--speed", "20"], "bare takes no parameters"),
        (
            ["--function", "{mine}:made", "--param", "gain=1"],
            "a Hold object is made already; name its class (Hold)",
        ),
        (["cruise", "--time-gap", "2"], "unknown parameter of Cruise 'time_gap'"),
        (["cruise", "--speed", "20", "--param", "speed=3"], "speed is also given by --speed"),
        (["cruise", "--param", "kp"], "'kp' is not NAME=VALUE"),
    ],
)
def test_a_parameter_the_controller_does_not_take_is_refused_before_the_start(
    mine: str, args: list[str], says: str
) -> None:
    code, output = run("controller", *(a.replace("{mine}", mine) for a in args))
    assert code == 2, output
    assert says in output and "Traceback" not in output
    assert "listening" not in output  # nothing started


def test_connect_passes_parameters_to_its_function_only(mine: str, tmp_path: Path) -> None:
    config = Path(__file__).parents[2] / "examples" / "contracts" / "cruise.json"
    code, output = run("connect", str(config), "--param", "speed=20")
    assert code == 2 and "parameters are for --function" in output
    code, output = run("connect", str(config), "--function", f"{mine}:bare", "--param", "x=1")
    assert code == 2 and "bare takes no parameters" in output
