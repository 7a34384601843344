"""FMU controllers: small native FMUs built here (helpers.tiny_fmu), run through FmuController."""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

import numpy as np
import pytest

from helpers.forks import vcosim_command
from helpers.loop import closed_loop, free_port, lockstep_simulation, wait_until_bound
from helpers.tiny_fmu import Var, build_tiny_fmu
from helpers.tiny_models import build_pi
from vcosim.controllers.fmu import FmuController
from vcosim.errors import ConfigError, VcosimError
from vcosim.tight.protocol import SIM_TO_CONTROLLER
from vcosim.tight.views import SLOT_BY_NAME, SimulatorMessage

NOOP_HOOKS = """
static int model_init(tiny *m) { (void)m; return 1; }
static int model_start(tiny *m) { (void)m; return 1; }
static void model_stop(tiny *m) { (void)m; }
"""

# Echoes inputs of each FMI 2 type to outputs, to check the time, types and custom slots.
ECHO = [
    Var("time", "input", start=0.0),
    Var("rpm", "input", start=0.0),
    Var("ignitionLevel", "input", "integer", 0),
    Var("reverse", "input", "boolean", 0),
    Var("custom0", "output"),
    Var("custom1", "output"),
    Var("fmu_time", "output"),
    Var("gear", "output", "integer"),
    Var("drive_mode", "output", "boolean"),
]
ECHO_C = (
    NOOP_HOOKS
    + """
static int model_step(tiny *m, double t, double h) {
    m->v[V_custom0] = m->v[V_time];
    m->v[V_custom1] = m->v[V_rpm];
    m->v[V_gear] = m->v[V_ignitionLevel];
    m->v[V_drive_mode] = m->v[V_reverse];
    m->v[V_fmu_time] = t + h;
    return 1;
}
"""
)

ODD = [
    Var("groundspeed", "input", start=0.0),
    Var("humidity", "input", start=0.0),
    Var("throttle", "output"),
    Var("wiper", "output"),
]
ODD_C = NOOP_HOOKS + (
    "static int model_step(tiny *m, double t, double h) { (void)m, (void)t, (void)h; return 1; }"
)

# FMI 3.0: a proportional speed controller with an Int32 pass-through.
FMI3 = [
    Var("time", "independent"),
    Var("groundspeed", "input", start=0.0),
    Var("target_speed", "parameter", start=15.0),
    Var("throttle", "output"),
    Var("ignitionLevel", "input", "integer", 0),
    Var("gear", "output", "integer"),
]
FMI3_C = (
    NOOP_HOOKS
    + """
static int model_step(tiny *m, double t, double h) {
    (void)t, (void)h;
    double *v = m->v;
    v[V_throttle] = fmin(fmax(0.25 * (v[V_target_speed] - v[V_groundspeed]), 0.0), 1.0);
    v[V_gear] = v[V_ignitionLevel];
    return 1;
}
"""
)


@pytest.fixture(scope="module")
def fmus(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("fmus")
    renamed = {"speed": "v", "throttle": "u_throttle", "brake": "u_brake"}
    return {
        "pi": build_pi(out / "pi.fmu"),
        "renamed": build_pi(out / "renamed.fmu", "VcosimTestPiRenamed", **renamed),
        "echo": build_tiny_fmu(out / "echo.fmu", "VcosimTestEcho", ECHO, ECHO_C),
        "odd": build_tiny_fmu(out / "odd.fmu", "VcosimTestOdd", ODD, ODD_C),
    }


def write_map(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text))
    return path


def message(time: float = 0.0, dt: float = 0.005, **named: float) -> SimulatorMessage:
    msg = SimulatorMessage(np.zeros(SIM_TO_CONTROLLER), time, dt)
    for name, value in named.items():
        msg.values[SLOT_BY_NAME[name]] = value
    return msg


def test_pi_fmu_holds_15_m_s_in_closed_loop(fmus):
    with FmuController(fmus["pi"]) as controller:
        assert controller.inputs == {"groundspeed": "groundspeed"}
        assert controller.outputs == {"throttle": "throttle", "brake": "brake"}
        trace, sim_report, block_report = closed_loop(controller, 25.0)
    assert trace["groundspeed"][0] < 0.1  # from standstill
    assert trace["time"][-1] == pytest.approx(25.0, abs=0.05)
    assert trace["groundspeed"][-1] == pytest.approx(15.0, abs=0.5)
    assert sim_report["coupling"]["timeouts"] == 0
    assert block_report["answered"] >= 25.0 / 0.005 - 2


def test_pi_fmu_through_the_cli_holds_15_m_s(fmus):
    """``vcosim controller --fmu`` in its own process against a lock-step simulator."""
    port = free_port()
    sim, endpoint = lockstep_simulation(port)
    car = sim.vehicle
    process = subprocess.Popen(
        [
            *vcosim_command(),
            "controller",
            "--fmu",
            str(fmus["pi"]),
            "--listen-port",
            str(port),
            "--sim-port",
            str(endpoint.address[1]),
            "--duration",
            "25",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert wait_until_bound(port, process)
    report = sim.run(25.0)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert report.faces["coupling"]["timeouts"] == 0
    assert car.signal("groundspeed") == pytest.approx(15.0, abs=0.5)


def test_map_file_renames_variables_and_sets_parameters(fmus, tmp_path):
    mapping = write_map(
        tmp_path / "map.toml",
        """
        [inputs]
        v = "groundspeed"
        [outputs]
        u_throttle = "throttle"
        u_brake = "brake"
        [parameters]
        target_speed = 5
        kp = 0.5
    """,
    )
    with FmuController(fmus["renamed"], mapping) as controller:
        assert controller.inputs == {"v": "groundspeed"}
        assert controller.parameters == {"target_speed": 5, "kp": 0.5}
        slow = controller(message(groundspeed=3.0))  # effort 0.5 * 2 m/s: saturated
        assert slow.throttle == pytest.approx(1.0) and slow.brake == 0.0
        fast = controller(message(0.005, groundspeed=6.0))  # effort -0.5, half to the brake
        assert fast.throttle == 0.0 and fast.brake == pytest.approx(0.25)
        assert np.isnan(fast.steering) and np.isnan(fast.propulsion_torque).all()
    with FmuController(fmus["renamed"], mapping) as controller:
        trace, _, _ = closed_loop(controller, 15.0)
    assert trace["groundspeed"][-1] == pytest.approx(5.0, abs=0.5)


def test_param_options_set_parameters_over_the_map(fmus, tmp_path):
    """``vcosim controller --fmu ... --param target_speed=8`` wins over the map's 5."""
    mapping = write_map(tmp_path / "map.toml", "[parameters]\ntarget_speed = 5\n")
    with FmuController(fmus["pi"], mapping, parameters={"target_speed": 8}) as controller:
        assert controller.parameters == {"target_speed": 8}
        assert controller(message(groundspeed=7.5)).throttle == pytest.approx(0.25 * 0.5)
    with pytest.raises(ConfigError) as caught:
        FmuController(fmus["pi"], parameters={"target_sped": 8, "groundspeed": 1.0})
    assert caught.value.problems == [
        "--param target_sped: no FMU variable 'target_sped' (did you mean 'target_speed'?)",
        "--param groundspeed: the FMU's causality for it is 'input', not 'parameter'",
    ]


def test_unmappable_input_is_reported_before_anything_runs(fmus, monkeypatch):
    def no_extract(*args, **kwargs):
        raise AssertionError("the FMU was extracted although its mapping is invalid")

    monkeypatch.setattr("fmpy.extract", no_extract)
    with pytest.raises(ConfigError) as caught:
        FmuController(fmus["odd"])
    problems = caught.value.problems
    assert caught.value.source == str(fmus["odd"])
    assert any("input 'humidity' cannot be mapped" in p for p in problems)
    assert any("output 'wiper' cannot be mapped" in p for p in problems)
    assert not any("'groundspeed'" in p or "'throttle'" in p for p in problems)
    assert any(p.startswith("hint: valid [inputs] names: time, throttle,") for p in problems)
    assert any(
        "braking_torque_{FL,FR,RL,RR}" in p
        for p in problems
        if p.startswith("hint: valid [outputs] names:")
    )


def test_map_naming_an_unknown_bank_quantity_is_rejected(fmus, tmp_path):
    mapping = write_map(
        tmp_path / "map.toml",
        """
        [inputs]
        v = "groundsped"
        nope = "rpm"
        [outputs]
        u_throttle = "throttle"
        u_brake = "handbrake"
        [parameters]
        target_speed = "fast"
        [extras]
    """,
    )
    with pytest.raises(ConfigError) as caught:
        FmuController(fmus["renamed"], mapping)
    text = str(caught.value)
    assert "no bank quantity 'groundsped' (did you mean 'groundspeed'?)" in text
    assert "map.toml [inputs] nope: no FMU variable 'nope'" in text
    assert "no controls field 'handbrake'" in text
    assert "target_speed: 'fast' does not fit its type Real" in text
    assert "unknown table [extras]" in text
    assert "input 'v' cannot be mapped" not in text  # its map entry is the one problem
    assert len(caught.value.problems) == 5


def test_time_integer_boolean_and_custom_slots(fmus, tmp_path):
    mapping = write_map(
        tmp_path / "map.toml",
        """
        [outputs]
        fmu_time = "custom2"  # the rest map by name
    """,
    )
    with FmuController(fmus["echo"], mapping, step=0.01) as controller:
        assert controller.inputs == {
            name: name for name in ("time", "rpm", "ignitionLevel", "reverse")
        }
        for k in range(3):
            controls = controller(
                message(0.01 * k, 0.01, rpm=900.0 + k, ignitionLevel=2.0, reverse=1.0)
            )
    assert controls.custom[:3].tolist() == pytest.approx([0.02, 902.0, 0.03])
    assert np.isnan(controls.custom[3:]).all()
    assert controls.gear == 2.0 and controls.drive_mode == 1.0


def test_fmi3_fmu(tmp_path):
    fmu = build_tiny_fmu(tmp_path / "fmi3.fmu", "VcosimTestFmi3", FMI3, FMI3_C, version=3)
    mapping = write_map(tmp_path / "map.toml", "[parameters]\ntarget_speed = 10.0\n")
    with FmuController(fmu, mapping) as controller:
        assert controller.fmi_version == "3.0"
        assert controller.outputs == {"throttle": "throttle", "gear": "gear"}
        controls = controller(message(groundspeed=8.0, ignitionLevel=2.0))
    assert controls.throttle == pytest.approx(0.5) and controls.gear == 2.0


def test_close_is_safe_twice_and_a_closed_controller_refuses(fmus):
    controller = FmuController(fmus["pi"])
    controller.close()
    controller.close()
    with pytest.raises(VcosimError, match="closed"):
        controller(message())


def test_step_must_match_the_block(fmus):
    with (
        FmuController(fmus["pi"], step=0.01) as controller,
        pytest.raises(ConfigError, match="differs"),
    ):
        controller(message(dt=0.005))


def test_not_an_fmu(tmp_path):
    bad = tmp_path / "bad.fmu"
    bad.write_text("not a zip")
    with pytest.raises(ConfigError, match="cannot read the FMU"):
        FmuController(bad)
