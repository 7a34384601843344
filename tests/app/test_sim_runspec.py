"""`vcosim sim` is a projection of RunSpec: its options against the model's fields, `--set`."""

from __future__ import annotations

import re
from enum import Enum
from pathlib import Path

import pytest
import tomli_w
import tomllib
import typer
from pydantic import BaseModel
from typer.core import TyperOption
from typer.testing import CliRunner

from vcosim.app import app
from vcosim.app.sim_options import (
    FACE_KINDS,
    FIELDS,
    MAKES,
    OUTSIDE,
    PANELS,
    apply_settings,
    face_class,
    model_default,
    model_of,
    shown_default,
)
from vcosim.scenarios.spec import (
    BusFaceSpec,
    ContractsFaceSpec,
    CouplingFaceSpec,
    PacingSpec,
    RecordingSpec,
    RunSpec,
)
from vcosim.world.sumo_spec import SumoSpec

click_error = typer.BadParameter

PANEL_TITLES = (
    "Run",
    "Coupling (BeamNG-compatible)",
    "Contracts (VS Connect-style)",
    "Bus (NightRider)",
    "World and scenario",
    "Outputs",
    "Timing",
)


def sim_options() -> dict[str, TyperOption]:
    """`vcosim sim`'s options by parameter name (--help aside)."""
    group = typer.main.get_command(app)
    command = group.commands["sim"]  # type: ignore[attr-defined]
    return {p.name: p for p in command.params if isinstance(p, TyperOption) and p.name is not None}


def test_every_option_sets_a_field_of_the_run_or_says_why_not() -> None:
    options = set(sim_options())
    assert not FIELDS.keys() & OUTSIDE.keys()
    assert options == FIELDS.keys() | OUTSIDE.keys(), "an option without its field, or the reverse"
    for paths in FIELDS.values():
        for path in paths:
            model_of(path)  # KeyError: the option names a field RunSpec does not have


def test_every_option_has_its_panel_and_the_panels_come_in_order() -> None:
    assert set(PANELS) == set(sim_options())
    result = CliRunner().invoke(app, ["sim", "--help"], env={"COLUMNS": "80"})
    titles = re.findall(r"╭─ (.+?) ─", result.output)
    assert titles == ["Options", *PANEL_TITLES]


def leaf_fields() -> list[str]:
    """Every key path of RunSpec one section deep, the faces by their kind."""
    sections: dict[str, type[BaseModel]] = {
        "start": RunSpec.model_fields["start"].annotation,  # type: ignore[dict-item]
        "pacing": PacingSpec,
        "recording": RecordingSpec,
        "sumo": SumoSpec,
        **{kind: face_class(kind) for kind in FACE_KINDS},
    }
    out = [name for name in RunSpec.model_fields if name not in sections]
    for section, model in sections.items():
        out += [f"{section}.{name}" for name in model.model_fields if name != "kind"]
    return out


def a_full_run() -> RunSpec:
    """A run with every section said, so that every field can be set."""
    return RunSpec(
        recording=RecordingSpec(path=Path("x.csv")),
        sumo=SumoSpec(config="x.sumocfg"),
        faces=[CouplingFaceSpec(), ContractsFaceSpec(), BusFaceSpec()],
    )


@pytest.mark.parametrize("path", leaf_fields())
def test_every_field_is_reached_by_set(path: str) -> None:
    run = a_full_run()
    first, _, key = path.partition(".")
    holder: BaseModel = run
    if first in FACE_KINDS:
        holder = run.face(first)  # type: ignore[assignment]
    elif key:
        holder = getattr(run, first)
    value = getattr(holder, key or first)
    if isinstance(value, Enum):
        value = value.value
    if isinstance(value, Path):
        value = str(value)
    if isinstance(value, (str, int, float)):  # bool is an int
        setting = f"{path}={tomli_w.dumps({'v': value}).partition('=')[2].strip()}"
    else:  # None (TOML has none), a table or a list: [] may be refused; the key is reached
        setting = f"{path}=[]"
    try:
        apply_settings(run, [setting])
    except click_error as exc:  # a value the model refuses: the key itself was reached
        assert path + ":" in exc.message and "unknown key" not in exc.message
        assert "this run has no" not in exc.message


def test_an_option_left_out_leaves_the_default_to_the_model_and_the_help_shows_it() -> None:
    options = sim_options()
    for name in FIELDS:
        if name in ("coupling", "contracts"):  # whether the face is there, not a field
            continue
        assert options[name].default is None, f"--{name} restates a default of the model"
    assert shown_default("frame_rate") == f"{PacingSpec().frame_rate:g}"
    assert shown_default("on_late") == PacingSpec().on_late.value
    assert shown_default("contracts_listen") == (
        f"{model_default('contracts.host')}:{model_default('contracts.port')}"
    )
    assert all(shown_default(name) is None for name in MAKES)  # left out: none at all
    help_text = CliRunner().invoke(app, ["sim", "--help"], env={"COLUMNS": "200"}).output
    frame_rate = next(line for line in help_text.splitlines() if "--frame-rate" in line)
    assert f"[default: ({PacingSpec().frame_rate:g})]" in frame_rate


def test_help_at_80_columns_cuts_no_option_name() -> None:
    result = CliRunner().invoke(app, ["sim", "--help"], env={"COLUMNS": "80"})
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert max(len(line) for line in lines) <= 80
    for option in sim_options().values():
        for name in [*option.opts, *option.secondary_opts]:
            pattern = rf"(?<![\w-]){re.escape(name)}(?![\w-])"
            assert any(re.search(pattern, line) for line in lines), f"{name} is cut or missing"
    assert "…" not in result.output


def run_sim(tmp_path: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(
        app,
        ["sim", "--no-coupling", "--pacing", "fast", "--duration", "0.1", *args],
    )
    return result.exit_code, result.output


def test_set_changes_the_run_and_the_spec_written_beside_it_says_so(tmp_path: Path) -> None:
    out = tmp_path / "r.csv"
    code, output = run_sim(
        tmp_path, "--record", str(out), "--set", "pacing.on_late=skip", "--set", "start.speed=4"
    )
    assert code == 0, output
    spec = tomllib.loads(out.with_suffix(".spec.toml").read_text())
    assert (spec["pacing"]["mode"], spec["pacing"]["on_late"]) == ("fast", "skip")
    assert spec["start"]["speed"] == 4.0
    # not given: the model decided, and the spec saved is the one used (its defaults written)
    assert spec["pacing"]["frame_rate"] == PacingSpec().frame_rate


@pytest.mark.parametrize(
    ("setting", "says"),
    [
        ("pacing.onlate=stop", "pacing.onlate: unknown key (did you mean on_late?"),
        ("pacing.on_late=late", "pacing.on_late: Input should be 'slow', 'skip' or 'stop'"),
        ("start.speed=-1", "start.speed: Input should be greater than or equal to 0"),
        ("coupling.window=3", "coupling.window: this run has no coupling face (give --coupling)"),
        ("pacing.mode=lockstep", "pacing.mode is also given by --pacing"),
        ("speed", "'speed' is not SECTION.KEY=VALUE"),
        ("start.how=drive_up", "start.pose: a vehicle driving up starts where it stands"),
    ],
)
def test_a_bad_setting_is_one_line_naming_it_and_exit_2(
    tmp_path: Path, setting: str, says: str
) -> None:
    extra = ["--start-pose", "1,2,0"] if "drive_up" in setting else []
    code, output = run_sim(tmp_path, *extra, "--set", setting)
    assert code == 2, output
    (line,) = [x for x in output.splitlines() if x.startswith("error:")]
    assert "'--set'" in line and says in line


def test_set_reaches_a_face_and_counts_as_said() -> None:
    run = RunSpec(faces=[CouplingFaceSpec(), ContractsFaceSpec()])
    run = apply_settings(run, ["coupling.window=3", "contracts.session_timeout=9.5"])
    coupling, contracts = run.faces
    assert isinstance(coupling, CouplingFaceSpec) and coupling.window == 3
    assert "window" in coupling.model_fields_set
    assert isinstance(contracts, ContractsFaceSpec) and contracts.session_timeout == 9.5
    assert RunSpec().faces == []  # the default run is untouched
