"""The RunSpec's ``sumo`` and `vcosim sim --sumo`'s refusals: checked before SUMO starts."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from vcosim.app import app
from vcosim.errors import ConfigError
from vcosim.scenarios.spec import RunSpec
from vcosim.world import WorldFile

EXAMPLES = Path(__file__).parents[2] / "examples"
CROSSING = EXAMPLES / "sumo" / "cross.sumocfg"


def test_a_run_spec_with_sumo_goes_to_toml_and_back(tmp_path: Path) -> None:
    spec = RunSpec.checked(
        {"sumo": {"config": "cross.sumocfg", "seed": 3, "step_length": 0.1}, "duration": 5.0}
    )
    assert RunSpec.from_toml(spec.save(tmp_path / "run.toml")) == spec
    assert "[sumo]" in spec.to_toml() and "seed = 3" in spec.to_toml()
    assert spec.sumo is not None and spec.sumo.period_steps == 200


def test_what_sumo_cannot_go_with_is_listed_with_its_key() -> None:
    world = WorldFile.load(EXAMPLES / "worlds" / "sumo-junction.toml")
    with pytest.raises(ConfigError) as caught:
        RunSpec.checked({"world": world.model_dump(), "sumo": {"config": "x.sumocfg"}})
    assert "sumo: the world has a [sumo] section of its own" in str(caught.value)
    with pytest.raises(ConfigError) as caught:
        RunSpec.checked(
            {
                "sumo": {"config": "x.sumocfg", "routes": {"lead": ["WC"]}},
                "start": {"how": "drive_up", "speed": 5.0},
            }
        )
    text = str(caught.value)
    assert "starts by teleport" in text and "no vehicle 'lead' (the lone car is 'ego')" in text


@pytest.mark.parametrize(
    ("options", "says"),
    [
        (["--sumo-step", "0.1"], "need --sumo FILE.sumocfg or --sumo-host"),
        (["--sumo", str(CROSSING), "--sumo-host", "127.0.0.1:8813"], "not both"),
        (["--sumo", str(CROSSING), "--sumo-step", "0.0007"], "whole number"),
        (["--sumo-host", "nowhere"], "HOST:PORT"),
        (["--sumo", str(CROSSING), "--start", "drive_up", "--start-speed", "3"], "teleport"),
    ],
)
def test_sim_refuses_sumo_options_that_do_not_go_together(options: list[str], says: str) -> None:
    result = CliRunner().invoke(app, ["sim", "--no-coupling", "--duration", "1", *options])
    assert result.exit_code == 2, result.output
    assert says in " ".join(result.output.split()), result.output


def test_beside_a_spec_sumo_is_the_spec_files_to_say(tmp_path: Path) -> None:
    spec = RunSpec.checked({"duration": 1.0}).save(tmp_path / "run.toml")
    result = CliRunner().invoke(app, ["sim", "--spec", str(spec), "--sumo", str(CROSSING)])
    assert result.exit_code == 2 and "the spec file says it" in result.output


def test_sumo_of_the_road_needs_the_road_and_only_it_takes_route_files() -> None:
    with pytest.raises(ConfigError) as caught:
        WorldFile.from_dict({"vehicles": [{"name": "ego"}], "sumo": {"road": True}})
    assert "sumo.road: SUMO's network of the road needs terrain.road" in str(caught.value)
    with pytest.raises(ConfigError) as caught:
        WorldFile.from_dict(
            {"vehicles": [{"name": "ego"}], "sumo": {"config": "x.sumocfg", "route_files": ["r"]}}
        )
    assert "route_files go with road = true" in str(caught.value)


def test_beside_a_world_the_specs_sumo_becomes_its_section() -> None:
    from vcosim.scenarios.traffic import world_file

    world = EXAMPLES / "worlds" / "follow.toml"
    spec = RunSpec.checked({"world": str(world), "sumo": {"config": str(CROSSING), "seed": 4}})
    made = world_file(spec)
    assert isinstance(made, WorldFile) and made.sumo is not None
    assert made.sumo.seed == 4 and Path(made.sumo.config or "") == CROSSING.resolve()
    assert made.base == world.parent  # its vehicle files still found beside it
    assert [v.name for v in made.vehicles] == [v.name for v in WorldFile.load(world).vehicles]
    lone = world_file(RunSpec.checked({"sumo": {"config": "x.sumocfg"}, "start": {"speed": 3}}))
    assert isinstance(lone, WorldFile) and lone.ego == "ego"
    assert lone.vehicles[0].start.speed == 3.0 and lone.vehicles[0].driver.kind == "external"
