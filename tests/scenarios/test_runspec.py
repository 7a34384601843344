"""One description of a run: the CLI, a sweep and the Python API build the same run from it.

``vcosim sim --start-speed 15``, a sweep's ``initial_speed = 15`` and ``RunSpec(start=...)``
start alike (teleported, unless the spec says ``drive_up``) and record the same signals; a
recorded run leaves its spec beside it and ``vcosim sim --spec`` repeats it byte for byte.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from vcosim.app import app
from vcosim.app.cli import REMOVED_IN, modernise
from vcosim.errors import ConfigError
from vcosim.scenarios import (
    BusFaceSpec,
    ContractsFaceSpec,
    CouplingFaceSpec,
    PacingSpec,
    RecordingSpec,
    RunSpec,
    StartSpec,
    UserFaceSpec,
    build_simulation,
)
from vcosim.sim.face import Face
from vcosim.sim.recorder import SignalRecorder
from vcosim.sim.simulation import Simulation
from vcosim.sweep.config import parse
from vcosim.sweep.runner import SignalSpec, run_scenario
from vcosim.vehicle import Vehicle

SIGNALS = ("groundspeed", "posX", "rpm", "gear", "accX")
DURATION = 0.5
EVERY = 20  # 100 rows per simulated second, the CLI's default --record-rate


def cli(*args: str) -> str:
    result = CliRunner().invoke(app, ["sim", *args])
    assert result.exit_code == 0, result.output
    return result.output


def csv_columns(path: Path) -> dict[str, list[str]]:
    with path.open() as f:
        rows = list(csv.DictReader(f))
    return {name: [row[name] for row in rows] for name in ("time", *SIGNALS)}


def as_csv(values: np.ndarray) -> list[str]:
    return [f"{v:.9g}" for v in values]  # as the recorder writes them


@pytest.fixture(scope="module")
def api_signals() -> dict[str, np.ndarray]:
    spec = RunSpec(start=StartSpec(speed=15.0), pacing=PacingSpec(mode="lockstep"))
    sim = build_simulation(spec)
    recorder = sim.attach("signals", SignalRecorder(every=EVERY))
    sim.run(DURATION)
    return {name: recorder.column(name) for name in ("time", *SIGNALS)}


def test_the_cli_the_sweep_and_the_api_run_one_scenario_alike(
    api_signals: dict[str, np.ndarray], tmp_path: Path
) -> None:
    sweep = parse(
        {
            "scenario": {"name": "alike", "duration": DURATION, "initial_speed": 15.0},
            "controller": {"name": "none"},
            "metrics": {"signal": "groundspeed"},
        },
        "alike",
    )
    _, swept = run_scenario(sweep.scenario, {}, SignalSpec(SIGNALS, every=EVERY))
    assert swept is not None
    for name in SIGNALS:  # the sweep's run and the API's: the same numbers, bit for bit
        np.testing.assert_array_equal(swept[name], api_signals[name], err_msg=name)
    assert api_signals["groundspeed"][0] == pytest.approx(15.0, abs=1e-3)  # teleported

    record = tmp_path / "cli.csv"
    cli(
        *("--pacing", "lockstep", "--no-coupling", "--start-speed", "15"),
        *("--duration", str(DURATION), "--record", str(record)),
    )
    recorded = csv_columns(record)
    assert recorded["time"] == as_csv(api_signals["time"])
    for name in SIGNALS:  # the CLI's recording: the same numbers, as its CSV writes them
        assert recorded[name] == as_csv(api_signals[name]), name


def test_a_recorded_run_repeats_byte_for_byte_from_its_spec(tmp_path: Path) -> None:
    first, again = tmp_path / "first.csv", tmp_path / "again.csv"
    output = cli(
        *("--pacing", "lockstep", "--no-coupling", "--duration", "0.25"),
        *("--start", "drive_up", "--start-speed", "3", "--record", str(first)),
    )
    spec_file = tmp_path / "first.spec.toml"
    assert "first.spec.toml" in output.replace("\n", "")
    saved = RunSpec.from_toml(spec_file)
    assert saved.start == StartSpec(speed=3.0, how="drive_up")
    assert saved.pacing.mode == "lockstep" and saved.faces == [] and saved.duration == 0.25
    cli("--spec", str(spec_file), "--record", str(again))
    assert again.read_bytes() == first.read_bytes()
    resaved = RunSpec.from_toml(tmp_path / "again.spec.toml")
    assert resaved.model_copy(update={"recording": saved.recording}) == saved

    refused = CliRunner().invoke(app, ["sim", "--spec", str(spec_file), "--vehicle", "x"])
    assert refused.exit_code == 2 and "--vehicle: the spec file says it" in refused.output


def test_a_start_speed_teleports_unless_the_spec_says_drive_up() -> None:
    teleported = build_simulation(RunSpec(start=StartSpec(speed=15.0)))
    assert teleported.vehicle.signal("groundspeed") == pytest.approx(15.0, abs=1e-3)
    assert teleported.vehicle.step_index == 1  # the step that puts the selector in D
    driven = build_simulation(RunSpec(start=StartSpec(speed=4.0, how="drive_up")))
    assert driven.vehicle.signal("groundspeed") == pytest.approx(4.0, abs=0.05)
    assert driven.time > 1.0  # driven there, holding it for a second


def test_every_problem_of_a_spec_is_listed_with_its_key_path(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        RunSpec.checked(
            {
                "start": {"speed": -1.0, "pose": [1e9, 0.0, 0.0]},
                "pacing": {"mode": "sometimes"},
                "recording": {"path": "run.txt"},
                "faces": [{"kind": "coupling", "ext_time": 0.0}, {"kind": "radio"}],
            }
        )
    assert caught.value.problems == [
        "start.pose: more than 10,000 km from the origin",
        "start.speed: Input should be greater than or equal to 0",
        "pacing.mode: Input should be 'realtime', 'fast' or 'lockstep'",
        "recording.path: a .csv or .mcap file, not 'run.txt'",
        "faces.0.coupling.ext_time: Input should be greater than 0",
        "faces.1: Input tag 'radio' found using 'kind' does not match any of the expected "
        "tags: 'coupling', 'contracts', 'bus', 'osi', 'foxglove', 'storyboard', 'user'",
    ]
    with pytest.raises(ConfigError) as caught:
        RunSpec.checked({"world": "w.toml", "vehicle": "x", "faces": [{"kind": "bus"}] * 2})
    assert caught.value.problems == [
        "vehicle: a world's file says it for each of its vehicles",
        "faces.1: a second 'bus' face (the first is faces.0)",
    ]
    bad = tmp_path / "bad.toml"
    bad.write_text("[start]\nspeed = -1\n")
    result = CliRunner().invoke(app, ["sim", "--spec", str(bad)])
    assert result.exit_code == 2 and "start.speed" in result.output


def test_a_spec_reads_back_from_its_toml_with_every_kind_of_face(tmp_path: Path) -> None:
    spec = RunSpec(
        vehicle="compact",
        terrain=tmp_path / "hills.toml",
        start=StartSpec(pose=(10.0, -5.0, 90.0), speed=12.0),
        gearbox="manual",
        duration=2.5,
        pacing=PacingSpec(mode="fast", frame_rate=100.0),
        recording=RecordingSpec(path=tmp_path / "run.mcap", rate=50.0),
        faces=[
            CouplingFaceSpec(ext_time=0.01, listen_port=0, custom_hooks="hooks.py"),
            ContractsFaceSpec(port=0, wait_for_clients=1),
            BusFaceSpec(port=4001),
            UserFaceSpec(name="mine", entry_point="my.faces:Probe", options={"gain": 2}),
        ],
    )
    path = spec.save(tmp_path / "run.spec.toml")
    assert RunSpec.from_toml(path, allow_code=["hooks.py", "my.faces:Probe"]) == spec
    assert spec.recording is not None and spec.recording.every == 40


def test_faces_come_from_their_specs_and_the_couplings_by_kind() -> None:
    spec = RunSpec(
        pacing=PacingSpec(mode="fast"),
        faces=[
            CouplingFaceSpec(listen_port=0, controller_port=9),
            UserFaceSpec(name="probe", entry_point="vcosim.sim.recorder:SignalRecorder"),
        ],
    )
    sim = build_simulation(spec)
    assert list(sim.faces) == ["coupling", "probe"]
    assert sim.couplings() == {None: sim.faces["coupling"]}
    assert isinstance(sim.faces["probe"], SignalRecorder)
    sim.close()


def test_only_a_face_attaches_and_only_its_own_hooks_run() -> None:
    sim = Simulation(Vehicle(), None)
    with pytest.raises(TypeError, match="not a vcosim.sim.face.Face"):
        sim.attach("plain", object())  # type: ignore[type-var]

    class Counter(Face):
        frames = 0

        def on_frame(self, sim: Simulation) -> None:
            self.frames += 1

    counter = sim.attach("counter", Counter())
    report = sim.run(0.05)
    assert counter.frames == report.frames["frames"] > 0
    assert "counter" not in report.faces  # nothing to report


def test_every_old_spelling_says_when_it_goes(capsys: pytest.CaptureFixture[str]) -> None:
    assert modernise(["sim", "--listen-port", "5"]) == ["sim", "--listen", ":5"]
    assert f"goes in vcosim {REMOVED_IN}" in capsys.readouterr().err


def test_an_interface_csv_fills_what_the_coupling_face_does_not_say(tmp_path: Path) -> None:
    example = Path(__file__).parents[2] / "examples" / "beamng" / "throttle.csv"
    csv_file = tmp_path / "throttle.csv"
    csv_file.write_text(example.read_text().replace("port,64890", "port,7000"))
    assert CouplingFaceSpec(interface=csv_file).config().controller_port == 7000
    said = CouplingFaceSpec(interface=csv_file, controller_port=5).config()
    assert said.controller_port == 5 and said.interface == csv_file
