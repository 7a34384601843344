"""The HUD's figures (static/hud.js): the followed vehicle's own speed, rpm and gear.

Run with node, which executes the page's module as the browser does (the browser tests of
test_viewer_browser.py need chromium); skipped where there is no node.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from vcosim.modules.viewer.server import STATIC

NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="no node to run the page's module")

HUD = (Path(STATIC) / "hud.js").resolve().as_uri()
OWN = {"speed": 20.0, "rpm": 3000.0, "gear": 4, "poses": 12}  # the ego's FMVM, FMLM, ...
NOTHING = {"speed": 0.0, "rpm": 0.0, "gear": None, "poses": 0}  # no vehicle module
WORLD = [
    {"row": 0, "name": "lead", "ego": False, "speed": 14.0, "rpm": 2200, "gear": 3},
    {"row": 1, "name": "ego", "ego": True, "speed": 12.5, "rpm": 1900, "gear": 2},
]


def in_node(expression: str) -> Any:
    assert NODE is not None
    script = (
        f"import {{ hudFigures, gearLabel }} from '{HUD}';\n"
        f"console.log(JSON.stringify({expression}));"
    )
    done = subprocess.run(
        [NODE, "--input-type=module", "-e", script],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(done.stdout)


def figures(state: dict, vehicles: list[dict], target: int | None) -> dict:
    args = ", ".join(json.dumps(a) for a in (state, vehicles, target))
    return in_node(f"hudFigures({args})")


def test_a_world_of_built_in_drivers_moves_the_dials() -> None:
    # no vehicle module sends FMVM: the ego's own figures come from its WorldPose, not zeros
    assert figures(NOTHING, WORLD, None) == {"speed": 12.5, "rpm": 1900, "gear": 2}


def test_the_followed_vehicle_shows_its_own_figures() -> None:
    assert figures(OWN, WORLD, 0) == {"speed": 14.0, "rpm": 2200, "gear": 3}
    # back on the ego, which has a vehicle module: its 100 Hz messages win
    assert figures(OWN, WORLD, None) == {"speed": 20.0, "rpm": 3000.0, "gear": 4}
    assert figures(OWN, [], None) == {"speed": 20.0, "rpm": 3000.0, "gear": 4}  # a lone car


def test_gear_labels() -> None:
    labels = in_node(
        "[gearLabel(-1, 'D'), gearLabel(0, 'D'), gearLabel(3, 'D'), gearLabel(null, 'D')]"
    )
    assert labels == ["R", "N", "3", "D"]
