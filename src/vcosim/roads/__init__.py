"""OpenDRIVE roads: reading ``.xodr`` files, and where lanes and points are on them.

:func:`read_xodr` gives a :class:`RoadNetwork` (:func:`load_road`: a file's, parsed once);
its roads answer (s, t) -> (x, y, z, heading),
it answers the lane under a point (:meth:`RoadNetwork.locate`), the lanes ahead
(:meth:`RoadNetwork.next_lanes`) and a route's centre line (:meth:`RoadNetwork.route_path`).
:func:`vcosim.roads.surface.rasterise` samples the road surface for the vehicle's terrain.
"""

from vcosim.roads.model import NO_LANE, Lane, LaneSection, Link, Road, RoadMark
from vcosim.roads.network import Connection, Junction, RoadNetwork, RoadPositions
from vcosim.roads.opendrive import load_road, read_xodr

__all__ = [
    "NO_LANE",
    "Connection",
    "Junction",
    "Lane",
    "LaneSection",
    "Link",
    "Road",
    "RoadMark",
    "RoadNetwork",
    "RoadPositions",
    "load_road",
    "read_xodr",
]
