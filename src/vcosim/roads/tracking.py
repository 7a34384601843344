"""Where moving points are on a road network, each looked for from where it was last.

Recordings and the bus say where every vehicle is on the road (road id, s, t, lane id) at
their output steps. :meth:`RoadNetwork.locate` searches every road; a vehicle moves a metre
or two between two outputs, so :class:`RoadTracker` first projects it onto the road it was on,
from its last s (a few Newton steps, no search), and searches the network only for the
points that have left that road's lanes.

A point stays on the road it was on while it is within that road's lanes: in a junction whose
connecting roads overlap, a car keeps the road it came by (``locate`` would take the road
whose reference line is nearest, which can flip between overlapping roads).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from vcosim.roads.network import END_TOLERANCE, RoadNetwork, RoadPositions

ROAD_COLUMNS = ("road_id", "road_s", "road_t", "lane_id")
"""What a recording adds for each vehicle on a road: road id ("" off the roads), s, t, lane."""


class RoadTracker:
    """Road positions of ``n`` points that move a little between two calls of :meth:`update`."""

    def __init__(self, network: RoadNetwork, n: int = 1) -> None:
        self.network = network
        self._road = np.full(n, "", dtype=object)
        self._s = np.full(n, np.nan)

    def update(self, x: npt.ArrayLike, y: npt.ArrayLike) -> RoadPositions:
        """Road, s, t, lane and surface height of the points now (road "" off the lanes)."""
        x = np.atleast_1d(np.asarray(x, dtype=float))
        y = np.broadcast_to(np.asarray(y, dtype=float), x.shape)
        n = x.size
        found = RoadPositions(
            np.full(n, "", dtype=object),
            np.full(n, np.nan),
            np.full(n, np.nan),
            np.zeros(n, dtype=np.int64),
            np.full(n, np.nan),
        )
        lost = np.ones(n, dtype=bool)
        for road_id in set(self._road[self._road != ""]):
            here = np.flatnonzero(self._road == road_id)
            road = self.network.roads[road_id]
            s, t, along = road.project(x[here], y[here], self._s[here])
            low, high = road.t_range(s)
            on = (np.abs(along) < END_TOLERANCE) & (t >= low) & (t <= high)
            if not on.any():
                continue
            k, s, t = here[on], s[on], t[on]
            found.road[k], found.s[k], found.t[k] = road_id, s, t
            found.lane[k] = road.lane_at(s, t)
            found.z[k] = road.point(s, t)[2]
            lost[k] = False
        if lost.any():
            searched = self.network.locate(x[lost], y[lost])
            for name in ("road", "s", "t", "lane", "z"):
                getattr(found, name)[lost] = getattr(searched, name)
        self._road, self._s = found.road.copy(), found.s.copy()
        return found
