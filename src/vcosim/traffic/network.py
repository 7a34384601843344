"""SUMO scenarios made on the spot with SUMO's tools: a grid of signalled junctions, full of cars.

For the bench and for trying things: ``netgenerate`` builds the network and
``randomTrips.py`` (both from the eclipse-sumo wheel) the trips, into a folder of one's
choosing, so nothing big is committed.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from vcosim.errors import VcosimError

LANE_WIDTH = 3.2
"""m: SUMO's default lane width (the right-hand lane's centre is half of it right of an edge)."""


def column(i: int) -> str:
    """The name netgenerate gives the grid's column ``i`` (A, B, ... Z, AA, ...)."""
    name = ""
    i += 1
    while i:
        i, rest = divmod(i - 1, 26)
        name = chr(ord("A") + rest) + name
    return name


def row_route(row: int, columns: int) -> list[str]:
    """The edges eastward along grid row ``row``, from its first junction to its last."""
    return [f"{column(i)}{row}{column(i + 1)}{row}" for i in range(columns - 1)]


def grid_scenario(
    folder: Path, junctions: int, vehicles: int, length: float = 200.0, seed: int = 1
) -> Path:
    """A SUMO grid full of cars at time 0: its .sumocfg.

    ``junctions`` × ``junctions`` crossings with traffic lights, ``length`` m apart, two lanes
    each way, and ``vehicles`` cars. Every car starts at a random place of its first edge at
    full speed, on a trip of at least three blocks, so the count holds for tens of seconds.
    """
    from vcosim.traffic.sumo import sumo_tool

    folder = Path(folder).resolve()  # the tools run in it: a relative name would be twice
    folder.mkdir(parents=True, exist_ok=True)
    net, trips = folder / "grid.net.xml", folder / "grid.trips.xml"
    _run(
        [sumo_tool("netgenerate"), "--grid", "--grid.number", str(junctions),
         "--grid.length", str(length), "--default.lanenumber", "2",
         "--default-junction-type", "traffic_light", "--no-turnarounds", "true",
         "--seed", str(seed), "-o", str(net)],
        folder,
    )  # fmt: skip
    _run(
        [sys.executable, str(Path(sumo_tool("sumo")).parents[1] / "tools" / "randomTrips.py"),
         "-n", str(net), "-o", str(trips), "-b", "0", "-e", "1", "-p", f"{1.0 / vehicles:.9f}",
         "--seed", str(seed), "--min-distance", str(3 * length), "--fringe-factor", "1",
         "--trip-attributes", 'departPos="random" departSpeed="max" departLane="best"'],
        folder,
    )  # fmt: skip
    config = folder / "grid.sumocfg"
    config.write_text(
        "<configuration>\n  <input>\n"
        f'    <net-file value="{net.name}"/>\n    <route-files value="{trips.name}"/>\n'
        "  </input>\n</configuration>\n",
        encoding="utf-8",
    )
    return config


def _run(command: list[str], folder: Path) -> None:
    """Run one of SUMO's tools in ``folder`` (where it leaves its by-products)."""
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise VcosimError(f"{Path(command[0]).name} failed: {done.stderr.strip()[-500:]}")
