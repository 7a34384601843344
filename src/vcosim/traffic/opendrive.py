"""One road for both: an OpenDRIVE road as SUMO's network, with the map between their lanes.

SUMO's ``netconvert`` (in the eclipse-sumo wheel) converts the ``.xodr`` the world drives on
(``terrain.road``) into a ``.net.xml`` in the same coordinates (no offset), and keeps each
SUMO lane's OpenDRIVE origin (``--output.original-names``: a lane's ``origId`` parameter,
``ROAD_LANE``). ``LaneMap`` reads that back: which SUMO lanes an OpenDRIVE lane became (one
per lane section, in the order of the road's sections) and which OpenDRIVE lane a SUMO lane
came from, so a route of OpenDRIVE lanes (a world path's ``lanes``) is a route of SUMO edges.
"""

from __future__ import annotations

import subprocess
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from vcosim.errors import VcosimError
from vcosim.traffic.tools import sumo_tool

OpenDriveLane = tuple[str, int]
"""An OpenDRIVE road's id and a lane id on it (negative: right of the reference line)."""


@dataclass(frozen=True)
class LaneMap:
    """SUMO's lanes and OpenDRIVE's, each way (only lanes SUMO drives on: netconvert's types)."""

    to_sumo: dict[OpenDriveLane, list[str]] = field(default_factory=dict)
    """An OpenDRIVE lane -> the SUMO lanes it became, one per lane section, in file order."""
    to_opendrive: dict[str, OpenDriveLane] = field(default_factory=dict)
    """A SUMO lane id -> the OpenDRIVE lane it came from."""

    @classmethod
    def read(cls, net: Path | str) -> LaneMap:
        """The map of a ``.net.xml`` netconvert wrote with ``--output.original-names``."""
        to_sumo: dict[OpenDriveLane, list[str]] = {}
        to_opendrive: dict[str, OpenDriveLane] = {}
        for edge in ET.parse(net).getroot().iter("edge"):
            if edge.get("function") == "internal":
                continue
            for lane in edge.iter("lane"):
                origin = next(
                    (p.get("value") for p in lane.iter("param") if p.get("key") == "origId"), None
                )
                if origin is None:
                    continue
                road, _, number = origin.rpartition("_")
                key = (road, int(number))
                to_opendrive[lane.get("id", "")] = key
                to_sumo.setdefault(key, []).append(lane.get("id", ""))
        return cls(to_sumo, to_opendrive)

    def edges(self, lanes: list[OpenDriveLane]) -> list[str]:
        """SUMO's route (edges, in order, each once) along a route of OpenDRIVE lanes."""
        route: list[str] = []
        for road, lane in lanes:
            for sumo_lane in self.to_sumo.get((str(road), int(lane)), []):
                edge = sumo_lane.rpartition("_")[0]
                if not route or route[-1] != edge:
                    route.append(edge)
        return route


def sumo_network(road: Path | str, net: Path | str, *options: str) -> LaneMap:
    """Convert OpenDRIVE ``road`` into SUMO network ``net`` and return their lanes' map.

    ``options`` go to netconvert after vcosim's own (e.g. ``--tls.guess``, ``true``).
    """
    command = [
        sumo_tool("netconvert"), "--opendrive-files", str(road), "--output-file", str(net),
        "--output.original-names", "true", "--offset.disable-normalization", "true",
        "--no-warnings", "true", *options,
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise VcosimError(f"netconvert could not convert {road}: {done.stderr.strip()[-500:]}")
    return LaneMap.read(net)
