"""A sweep's world: its file with the run's overrides applied, validated as a world file."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from vcosim.config import read_toml
from vcosim.errors import ConfigError
from vcosim.scenarios.spec import StoryboardFaceSpec
from vcosim.sweep.config.sections import WorldSection
from vcosim.world.spec import WorldFile


@lru_cache(maxsize=8)
def _read(path: str) -> dict[str, Any]:
    return read_toml(Path(path), f"world {path}")


def world_spec(section: WorldSection) -> WorldFile:
    """The world of a run: ``section.file`` with ``section.overrides`` applied.

    An OpenSCENARIO file (``.xosc``) is the world of its entities, the overrides its
    parameters (``world.EgoSpeed``); its storyboard is ``storyboard(section)``.

    Raises:
        ConfigError: every problem, each with its key path under ``world.``.
    """
    assert section.file is not None
    if is_scenario(section):
        return _scenario(section)[1]
    data = copy.deepcopy(_read(section.file))
    problems: list[str] = []
    vehicles = {v.get("name"): v for v in data.get("vehicles", []) if isinstance(v, dict)}
    for key, value in section.overrides.items():
        if key in vehicles:
            _merge(vehicles[key], value, f"world.{key}", problems)
        elif isinstance(value, dict) and isinstance(data.get(key), dict | list):
            _merge(data[key], value, f"world.{key}", problems)
        else:
            data[key] = value
    try:
        world = WorldFile.from_dict(data, f"world {section.file}", base=Path(section.file).parent)
    except ConfigError as exc:
        problems += [f"world: {p}" for p in exc.problems]
    if problems:
        raise ConfigError(problems, "world")
    return world


def is_scenario(section: WorldSection) -> bool:
    """True when the world is an OpenSCENARIO file's."""
    return section.file is not None and section.file.lower().endswith(".xosc")


def storyboard(section: WorldSection) -> StoryboardFaceSpec | None:
    """The storyboard face of an OpenSCENARIO world (None for a world file)."""
    return _scenario(section)[0] if is_scenario(section) else None


def _scenario(section: WorldSection) -> tuple[StoryboardFaceSpec, WorldFile]:
    from vcosim.openscenario.storyboard import scenario_run

    assert section.file is not None
    try:
        return scenario_run(section.file, section.overrides)
    except ConfigError as exc:
        raise ConfigError([f"world: {p}" for p in exc.problems], "world") from None


def _merge(node: Any, override: Mapping[str, Any], where: str, problems: list[str]) -> None:
    """``override`` onto ``node`` in place: tables key by key, list items by their index."""
    for key, value in override.items():
        here = f"{where}.{key}"
        if isinstance(node, list):
            if not (key.isdigit() and int(key) < len(node)):
                problems.append(f"{here}: no item {key} (the list has {len(node)})")
                continue
            slot: Any = int(key)
        else:
            slot = key
        child = node[slot] if isinstance(node, list) or key in node else None
        if isinstance(value, Mapping) and isinstance(child, dict | list):
            _merge(child, value, here, problems)
        else:
            node[slot] = value
