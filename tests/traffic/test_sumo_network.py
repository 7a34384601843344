"""SUMO scenarios made on the spot: a grid from a folder named relative to the working one."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("libsumo")

from vcosim.traffic.network import grid_scenario  # noqa: E402
from vcosim.traffic.sumo import QUIET, _libsumo, sumo_tool  # noqa: E402


def test_a_grid_in_a_relative_folder_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    config = grid_scenario(Path("made") / "grid", junctions=3, vehicles=20)
    assert config.is_absolute() and config == tmp_path / "made" / "grid" / "grid.sumocfg"
    api = _libsumo()
    api.start([sumo_tool("sumo"), "-c", str(config), *QUIET])
    try:
        for _ in range(5):
            api.simulationStep()
        assert api.vehicle.getIDCount() > 10
    finally:
        api.close()
