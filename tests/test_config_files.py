"""Every configuration file reader: bytes that are not UTF-8 and TOML nested beyond the parser
are one ConfigError naming the file, never an exception of the parser."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from vcosim.errors import ConfigError
from vcosim.modules.input.backends import ScriptedBackend
from vcosim.modules.input.mapping import load_mapping
from vcosim.sweep.config import load_sweep
from vcosim.vehicle import VehicleParams
from vcosim.vehicle.terrain import TerrainSpec
from vcosim.world import WorldFile

READERS: dict[str, Callable[[Path], Any]] = {
    "vehicle": VehicleParams.from_toml,
    "sweep": load_sweep,
    "terrain": TerrainSpec.load,
    "input mapping": load_mapping,
    "input script": ScriptedBackend.from_toml,
    "world": WorldFile.load,
}


@pytest.mark.parametrize("reader", READERS.values(), ids=READERS.keys())
@pytest.mark.parametrize(
    "content,problem",
    [
        (b'name = "\xff\xfe"\n', "not UTF-8 text: byte 8 is 0xff"),
        (b"x = " + b"[" * 100_000 + b"]" * 100_000, "not valid TOML: nested too deep"),
    ],
    ids=["latin-1 bytes", "nested 100000 deep"],
)
def test_unreadable_files_are_one_config_error(
    reader: Callable[[Path], Any], content: bytes, problem: str, tmp_path: Path
) -> None:
    path = tmp_path / "bad.toml"
    path.write_bytes(content)
    with pytest.raises(ConfigError) as info:
        reader(path)
    assert info.value.problems == [problem]
    assert str(path) in info.value.source
