"""The world file: every problem listed at once with its location; the examples load."""

from __future__ import annotations

from pathlib import Path

import pytest

from vcosim.errors import ConfigError
from vcosim.world.spec import WorldFile

EXAMPLES = Path(__file__).parents[2] / "examples" / "worlds"


def test_a_world_file_with_three_mistakes_lists_all_three(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(
        """
driver_period = -0.01

[paths.road]
points = [[0, 0], [100, 0]]

[[vehicles]]
name = "lead"
driver = { kind = "profile", path = "road", speeds = [[0, 10], [0, 5]] }

[[vehicles]]
name = "ego"
colour = "red"
""",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as caught:
        WorldFile.load(path)
    problems = caught.value.problems
    assert len(problems) == 3, problems
    assert any(p.startswith("driver_period:") for p in problems)
    assert any(
        p.startswith("vehicles.0.driver.profile") and "times must rise" in p for p in problems
    )
    assert "vehicles.1.colour: unknown key" in problems
    assert str(path) in str(caught.value)


def test_names_that_point_nowhere_are_listed_together() -> None:
    with pytest.raises(ConfigError) as caught:
        WorldFile.from_dict(
            {
                "ego": "nobody",
                "vehicles": [
                    {"name": "a", "driver": {"kind": "idm", "path": "lane"}},
                    {"name": "a"},
                ],
            }
        )
    problems = caught.value.problems
    assert "vehicles.0 (a).driver.path: no path named 'lane'" in problems
    assert "vehicles.1 (a): name used twice" in problems
    assert "ego: no vehicle named 'nobody'" in problems


def test_names_that_point_nowhere_are_listed_beside_bad_values(tmp_path: Path) -> None:
    """pydantic checks the whole file only once each value is valid; the names are not left out."""
    path = tmp_path / "bad.toml"
    path.write_text(
        """
[paths.road]
points = [[0, 0], [100, 0]]

[[vehicles]]
name = "ego"
start = { x = 0, y = 0, speed = -5 }

[[vehicles]]
name = "lead"
driver = { kind = "profile", path = "motorway", speeds = [[0, 10]] }

[[vehicles]]
name = "ego"
""",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as caught:
        WorldFile.load(path)
    problems = caught.value.problems
    assert len(problems) == 3, problems
    assert problems[0].startswith("vehicles.0.start.speed: ")
    assert "vehicles.1 (lead).driver.path: no path named 'motorway'" in problems
    assert "vehicles.2 (ego): name used twice" in problems


@pytest.mark.parametrize("name", ["follow", "cut-in", "platoon", "ring"])
def test_the_examples_are_valid_worlds(name: str) -> None:
    world = WorldFile.load(EXAMPLES / f"{name}.toml")
    assert len(world.all_vehicles()) >= 2


def test_traffic_stands_for_numbered_vehicles_along_its_path() -> None:
    world = WorldFile.load(EXAMPLES / "ring.toml")
    cars = world.all_vehicles()
    assert len(cars) == 100
    assert cars[0].name == "car000" and cars[-1].name == "car099"
    assert cars[7].start.s == pytest.approx(7 * 25.0)
