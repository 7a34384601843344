"""Roads near a point, from a grid laid over the network once: searches that stay local.

:meth:`RoadNetwork.locate` samples and projects onto every road of the network, for every
call; on a town's map that is most of a storyboard's look. :class:`RoadGrid` lays square cells
over the network once and lists, for each cell, the roads whose lanes reach into it (or into
a neighbouring cell) with the samples of s they do it at. :meth:`RoadGrid.locate` then
projects a point onto those roads only, from the nearest sample, and gives the answer
:meth:`RoadNetwork.locate` gives (the same rule where roads overlap: the nearest reference
line wins).

:class:`RoadOffsets` answers the other local question, how two roads' s and t relate when
they are joined (directly or through a few others): what distances along the road need.
"""

from __future__ import annotations

import math
from collections import deque

import numpy as np
import numpy.typing as npt

from vcosim.roads.network import END_TOLERANCE, RoadNetwork, RoadPositions

CELL = 10.0
"""m: the side of a grid cell."""
STEP = 2.0
"""m: how far apart along s (and at most across t) a road is sampled to fill the grid."""
REACH = 1000.0
"""m: how far along joined roads :func:`road_offsets` looks for the other road."""


class RoadGrid:
    """The roads near every cell of a square grid over ``network``."""

    def __init__(self, network: RoadNetwork, cell: float = CELL) -> None:
        self.network = network
        self.cell = cell
        self._samples: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = {}
        cells: dict[tuple[int, int], dict[str, np.ndarray]] = {}
        for road in network.roads.values():
            s = road.samples(STEP)
            rx, ry, _, _ = road.point(s)
            low, high = road.t_range(s)
            reach = np.maximum(np.abs(low), np.abs(high)) + STEP  # no lane farther from a sample
            self._samples[road.id] = (s, rx, ry, reach**2)
            across = max(2, int(np.ceil(float(np.max(high - low, initial=0.0)) / STEP)) + 1)
            index = np.repeat(np.arange(s.size), across)
            fractions = np.tile(np.linspace(0.0, 1.0, across), s.size)
            t = low[index] + fractions * (high - low)[index]
            x, y, _, _ = road.point(s[index], t)
            ix, iy = np.floor(x / cell).astype(np.int64), np.floor(y / cell).astype(np.int64)
            # a point of a neighbouring cell is near this cell's points too
            shifts = [(dx, dy) for dx in (-1, 0, 1) for dy in (-1, 0, 1)]
            cx = np.concatenate([ix + dx for dx, _ in shifts])
            cy = np.concatenate([iy + dy for _, dy in shifts])
            where = np.tile(index, len(shifts))
            order = np.lexsort((where, cy, cx))
            cx, cy, where = cx[order], cy[order], where[order]
            starts = np.flatnonzero(np.r_[True, (np.diff(cx) != 0) | (np.diff(cy) != 0)])
            for a, b in zip(starts, [*starts[1:], cx.size], strict=True):
                cells.setdefault((int(cx[a]), int(cy[a])), {})[road.id] = np.unique(where[a:b])
        self._cells = cells

    def near(self, x: float, y: float) -> dict[str, float]:
        """The roads whose lanes may be under (x, y), each with the nearest sample of s."""
        key = (math.floor(x / self.cell), math.floor(y / self.cell))
        out = {}
        for rid, index in self._cells.get(key, {}).items():
            s, rx, ry, reach = self._samples[rid]
            squared = (rx[index] - x) ** 2 + (ry[index] - y) ** 2
            k = int(np.argmin(squared))
            if squared[k] <= reach[index[k]]:
                out[rid] = float(s[index[k]])
        return out

    def locate(self, x: npt.ArrayLike, y: npt.ArrayLike) -> RoadPositions:
        """Road, s, t, lane and surface height under points, as :meth:`RoadNetwork.locate`."""
        x = np.atleast_1d(np.asarray(x, dtype=float))
        y = np.broadcast_to(np.asarray(y, dtype=float), x.shape)
        found = RoadPositions(
            np.full(x.shape, "", dtype=object),
            np.full(x.shape, np.nan),
            np.full(x.shape, np.nan),
            np.zeros(x.shape, dtype=np.int64),
            np.full(x.shape, np.nan),
        )
        for k in range(x.size):
            best = math.inf
            for rid, guess in self.near(float(x[k]), float(y[k])).items():
                road = self.network.roads[rid]
                s, t, along = road.project(x[k : k + 1], y[k : k + 1], np.array([guess]))
                low, high = road.t_range(s)
                if not (abs(along[0]) < END_TOLERANCE and low[0] <= t[0] <= high[0]):
                    continue
                if abs(t[0]) < best:
                    best = abs(float(t[0]))
                    found.road[k], found.s[k], found.t[k] = rid, s[0], t[0]
                    found.lane[k] = road.lane_at(s, t)[0]
                    found.z[k] = road.point(s, t)[2][0]
        return found


def _ends(network: RoadNetwork) -> dict[str, list[tuple[str, str, str]]]:
    """For every road, (its end, the other road, the other's end) where two roads touch."""
    joins: dict[str, list[tuple[str, str, str]]] = {rid: [] for rid in network.roads}
    for road in network.roads.values():
        for end, link in (("start", road.predecessor), ("end", road.successor)):
            if link is None or link.element_type != "road" or link.element_id not in joins:
                continue
            other = link.element_id
            other_end = link.contact_point or "start"
            for a, b in ((road.id, (end, other, other_end)), (other, (other_end, road.id, end))):
                if b not in joins[a]:
                    joins[a].append(b)
    return joins


class RoadOffsets:
    """How joined roads' coordinates relate, found by walking the road links (and cached).

    A junction's connecting roads link to the roads they join, so walking road links crosses
    junctions too.
    """

    def __init__(self, network: RoadNetwork, reach: float = REACH) -> None:
        self.network = network
        self.reach = reach
        self._joins = _ends(network)
        self._found: dict[tuple[str, str], tuple[float, float] | None] = {}

    def __call__(self, frm: str, to: str) -> tuple[float, float] | None:
        """(shift, sign): a point at s on road ``to`` is at ``shift + sign * s`` along ``frm``.

        Its t is ``sign * t`` in ``frm``'s frame. None when ``to`` is not joined to ``frm``
        within ``reach`` metres.
        """
        if frm == to:
            return 0.0, 1.0
        key = (frm, to)
        if key not in self._found:
            self._walk(frm)
        return self._found.get(key)

    def _walk(self, frm: str) -> None:
        """Breadth first from ``frm``: every road within reach, with its (shift, sign)."""
        roads = self.network.roads
        seen: dict[str, tuple[float, float]] = {frm: (0.0, 1.0)}
        queue = deque([frm])
        while queue:
            here = queue.popleft()
            shift, sign = seen[here]
            length = roads[here].length
            for end, other, other_end in self._joins[here]:
                if other in seen:
                    continue
                at = shift + (sign * length if end == "end" else 0.0)
                out = sign if end == "end" else -sign  # the way out of ``here`` at that end
                if other_end == "start":
                    seen[other] = (at, out)
                else:
                    seen[other] = (at + out * roads[other].length, -out)
                if abs(at) <= self.reach:
                    queue.append(other)
        for rid in roads:
            self._found[(frm, rid)] = seen.get(rid)
