"""Hardening, fourth pass (issue 45): a run file is data, and every number in it is bounded.

A ``--spec`` file names code only as a registered face (vcosim's own, or an installed
plugin's) or what ``--allow-code`` names; even then, the named object must be a Face class
before it is called. Durations, frame rates, time dilation, ports and host names are
refused with their key (exit 2, no traceback) where they used to run forever, overflow or
fail with an encoding error at the first send.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import tomli_w
from typer.testing import CliRunner

from vcosim.app import app
from vcosim.errors import ConfigError
from vcosim.scenarios.spec import FACES, RunSpec, UserFaceSpec, registered_faces


def refused(args: list[str]) -> str:
    """``vcosim ARGS``: exit 2, no traceback; the output."""
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    return " ".join(result.output.split())


def spec_file(folder: Path, data: dict[str, object], name: str = "run.spec.toml") -> Path:
    path = folder / name
    path.write_text(tomli_w.dumps(data))
    return path


def test_a_user_face_naming_any_code_is_refused_before_it_is_imported(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    face = {
        "kind": "user",
        "name": "x",
        "entry_point": "subprocess:run",
        "options": {"args": ["touch", str(marker)]},
    }
    path = spec_file(tmp_path, {"duration": 0.01, "pacing": {"mode": "fast"}, "faces": [face]})
    said = refused(["sim", "--spec", str(path)])
    assert "faces.0.entry_point: 'subprocess:run' is code, and a run file is data" in said
    assert "give --allow-code subprocess:run" in said
    # allowed, it is imported, but it is no Face: refused before it is called
    said = refused(["sim", "--spec", str(path), "--allow-code", "subprocess:run"])
    assert "'subprocess:run' is not a Face class" in said
    assert not marker.exists()


def test_custom_hooks_in_a_run_file_are_code_too(tmp_path: Path) -> None:
    hooks = tmp_path / "hooks.py"
    marker = tmp_path / "ran"
    hooks.write_text(f"open({str(marker)!r}, 'w').close()\n")
    face = {"kind": "coupling", "listen_port": 0, "custom_hooks": str(hooks)}
    path = spec_file(tmp_path, {"duration": 0.01, "faces": [face]})
    with pytest.raises(ConfigError) as problems:
        RunSpec.from_toml(path)
    assert problems.value.problems[0].startswith(f"faces.0.custom_hooks: '{hooks}' is code")
    assert "--allow-code" in refused(["sim", "--spec", str(path)])
    assert not marker.exists()
    assert RunSpec.from_toml(path, allow_code=[str(hooks)]).faces[0].kind == "coupling"


def test_registered_and_plugin_faces_need_no_permission(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.metadata

    story = {"kind": "user", "name": "storyboard", "entry_point": FACES["storyboard"]}
    assert RunSpec.from_toml(spec_file(tmp_path, {"faces": [story]})).faces[0] == UserFaceSpec(
        name="storyboard", entry_point=FACES["storyboard"]
    )
    plugin = {"kind": "user", "name": "probe", "entry_point": "vcosim.sim.recorder:SignalRecorder"}
    path = spec_file(tmp_path, {"faces": [plugin]}, "plugin.toml")
    with pytest.raises(ConfigError, match="is code, and a run file is data"):
        RunSpec.from_toml(path)
    point = importlib.metadata.EntryPoint(
        name="probe", value="vcosim.sim.recorder:SignalRecorder", group="vcosim.faces"
    )
    real = importlib.metadata.entry_points

    def entry_points(**select: str) -> object:
        if select.get("group") == "vcosim.faces":
            return importlib.metadata.EntryPoints([point])
        return real(**select)

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)
    assert "vcosim.sim.recorder:SignalRecorder" in registered_faces()
    assert RunSpec.from_toml(path).faces[0].kind == "user"


def test_allow_code_goes_with_a_spec_only() -> None:
    said = refused(["sim", "--allow-code", "x:Y", "--duration", "0.01"])
    assert "--allow-code" in said and "without --spec" in said


@pytest.mark.parametrize(
    ("data", "key"),
    [
        ({"duration": 2**63 - 1}, "duration: Input should be less than or equal to 10000000"),
        ({"duration": 1e300}, "duration"),
        ({"pacing": {"frame_rate": 1e-12}}, "pacing.frame_rate"),
        ({"pacing": {"frame_rate": 1e6}}, "pacing.frame_rate"),
        ({"pacing": {"time_dilation": 1e-12}}, "pacing.time_dilation"),
        ({"faces": [{"kind": "bus", "host": "a" * 5000}]}, "faces.0.bus.host: a host of 5000"),
        ({"faces": [{"kind": "bus", "host": "a..b"}]}, "faces.0.bus.host"),
        ({"faces": [{"kind": "bus", "port": 70000}]}, "faces.0.bus.port"),
        ({"faces": [{"kind": "coupling", "controller_host": "x" * 300}]}, "controller_host"),
        ({"faces": [{"kind": "contracts", "host": "b" * 64 + ".local"}]}, "contracts.host"),
        (
            {"world": {"vehicles": [{"name": "a", "coupling": {"listen": "h" * 300 + ":1"}}]}},
            "world",
        ),  # fmt: skip
    ],
    ids=lambda v: str(v)[:40],
)
def test_every_number_and_host_of_a_spec_is_bounded(
    tmp_path: Path, data: dict[str, object], key: str
) -> None:
    path = spec_file(tmp_path, data)
    with pytest.raises(ConfigError) as problems:
        RunSpec.from_toml(path)
    assert any(key in p for p in problems.value.problems), problems.value.problems
    assert all(len(p) < 400 for p in problems.value.problems)
    assert key.split(":")[0] in refused(["sim", "--spec", str(path)])


@pytest.mark.parametrize(
    ("option", "value", "said"),
    [
        ("--duration", str(2**63 - 1), "at most 1e+07 s"),
        ("--frame-rate", "1e-12", "from 0.1 to 2000 frames per second"),
        ("--bus", "a" * 5000 + ":4001", "a host of 5000 characters"),
        ("--controller", "a" * 64 + ":4000", "not a host name"),
    ],
)
def test_the_command_line_bounds_the_same_numbers(option: str, value: str, said: str) -> None:
    output = refused(["sim", option, value, "--duration", "0.01"] if option != "--duration"
                     else ["sim", option, value])  # fmt: skip
    assert said in output and len(output) < 600
