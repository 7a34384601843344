"""A SUMO city made at run time with SUMO's own tools, so tests meet networks vcosim never saw.

A netgenerate grid of signalled junctions, a road of its own 4 km east joined in by
netconvert, and randomTrips' trips (random departure places and speeds: the demand draws
from SUMO's random streams) routed by duarouter. Needs the ``sumo`` extra.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

FAR_ROAD = (4100.0, -1.6)
"""(x, y) on the far road's eastbound lane: 3.6 km from the grid, which no trip reaches."""


def _tool(command: list[str], folder: Path) -> None:
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{Path(command[0]).name}: {done.stderr[-500:]}")


def build_city(
    folder: Path,
    *,
    junctions: int = 4,
    end: float = 10.0,
    period: float = 0.1,
    seed: int = 3,
) -> Path:
    """The city's .sumocfg: a grid of ``junctions`` a side, 150 m apart, and a car every
    ``period`` s until ``end`` s on trips of the grid."""
    from vcosim.traffic.tools import sumo_tool

    folder.mkdir(parents=True, exist_ok=True)
    tools = Path(sumo_tool("sumo")).parents[1] / "tools"
    _tool([sumo_tool("netgenerate"), "--grid", "--grid.number", str(junctions),
           "--grid.length", "150", "--default-junction-type", "traffic_light", "--seed", "1",
           "-o", "grid.net.xml"], folder)  # fmt: skip
    (folder / "far.nod.xml").write_text(
        '<nodes><node id="farA" x="4000" y="0"/><node id="farB" x="4400" y="0"/></nodes>'
    )
    (folder / "far.edg.xml").write_text(
        '<edges><edge id="far" from="farA" to="farB" numLanes="1" speed="13.9"/></edges>'
    )
    _tool([sumo_tool("netconvert"), "-s", "grid.net.xml", "-n", "far.nod.xml",
           "-e", "far.edg.xml", "-o", "city.net.xml"], folder)  # fmt: skip
    _tool([sys.executable, str(tools / "randomTrips.py"), "-n", "grid.net.xml",
           "-o", "city.trips.xml", "-b", "0", "-e", str(end), "-p", str(period),
           "--seed", str(seed),
           "--trip-attributes", 'departPos="random" departSpeed="random"'], folder)  # fmt: skip
    _tool([sumo_tool("duarouter"), "-n", "city.net.xml", "--route-files", "city.trips.xml",
           "-o", "city.rou.xml", "--seed", str(seed)], folder)  # fmt: skip
    config = folder / "city.sumocfg"
    config.write_text(
        '<configuration><input><net-file value="city.net.xml"/>'
        '<route-files value="city.rou.xml"/></input></configuration>'
    )
    return config


CORRIDOR_TYPES = {"car": "passenger", "bus": "bus", "truck": "truck",
                  "motorcycle": "motorcycle", "bicycle": "bicycle"}  # fmt: skip
"""The vehicle types of the corridor's demand (their SUMO vehicle classes)."""


def build_corridor(
    folder: Path, *, roads: int = 4, end: float = 60.0, period: float = 0.25
) -> Path:
    """``roads`` straight 3-lane roads of 400 m side by side (50 m apart, eastbound, with
    sidewalks), on each a vehicle every ``period`` s until ``end`` s (cars mostly, a bus,
    truck, motorcycle or bicycle among them) on a random lane at a random place and speed
    (so they change lanes), and people walking: its .sumocfg.

    A road carries about 1.5 vehicles a second out, so hundreds enter and leave in a minute.
    """
    from vcosim.traffic.tools import sumo_tool

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "road.nod.xml").write_text(
        "<nodes>"
        + "".join(
            f'<node id="W{i}" x="0" y="{50 * i}"/><node id="E{i}" x="400" y="{50 * i}"/>'
            for i in range(roads)
        )
        + "</nodes>"
    )
    (folder / "road.edg.xml").write_text(
        "<edges>"
        + "".join(
            f'<edge id="R{i}" from="W{i}" to="E{i}" numLanes="3" speed="13.8"/>'
            for i in range(roads)
        )
        + "</edges>"
    )
    _tool([sumo_tool("netconvert"), "-n", "road.nod.xml", "-e", "road.edg.xml",
           "--sidewalks.guess", "true", "-o", "road.net.xml"], folder)  # fmt: skip
    kinds = "".join(
        f'<vType id="{kind}" vClass="{vclass}"/>' for kind, vclass in CORRIDOR_TYPES.items()
    )
    share = {"car": 0.8, "bus": 0.05, "truck": 0.07, "motorcycle": 0.05, "bicycle": 0.03}
    flows = "".join(
        f'<flow id="{kind}{i}" type="{kind}" begin="0" end="{end}" period="{period / p:.6f}" '
        f'from="R{i}" to="R{i}" departLane="random" departSpeed="random" departPos="random"/>'
        for i in range(roads)
        for kind, p in share.items()
    )
    walks = "".join(
        f'<personFlow id="walker{i}" begin="0" end="{end}" period="4">'
        f'<walk edges="R{i}"/></personFlow>'
        for i in range(roads)
    )
    (folder / "road.rou.xml").write_text(f"<routes>{kinds}{flows}{walks}</routes>")
    config = folder / "road.sumocfg"
    config.write_text(
        '<configuration><input><net-file value="road.net.xml"/>'
        '<route-files value="road.rou.xml"/></input></configuration>'
    )
    return config
