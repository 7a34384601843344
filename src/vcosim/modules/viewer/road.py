"""An OpenDRIVE road for the page: its lanes and painted marks as triangle strips.

The page draws what the road model says, so the strips are cut here from the same geometry
the wheels read (elevation, superelevation and lane offsets included) and sent once; the page
only joins each strip's cross sections into triangles. A strip is a flat list of cross
sections, each its left point (larger t) then its right one, x, y, z rounded to 1 mm.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from vcosim.roads import RoadNetwork
from vcosim.roads.model import Lane, LaneSection, Road, RoadMark

ROAD_STEP = 1.0
"""m between cross sections along a road: a 10 m junction arc is then off by 1.3 cm at most."""
DASH = (3.0, 9.0)
"""m painted and m left out of a broken mark, along s (OpenDRIVE leaves both to the reader)."""
PAINTED = {
    "solid": ("solid",),
    "broken": ("broken",),
    "solid solid": ("solid", "solid"),
    "solid broken": ("solid", "broken"),
    "broken solid": ("broken", "solid"),
    "broken broken": ("broken", "broken"),
}
"""The lines of each mark type drawn, inside to outside (the centre lane's: left to right).
Curbs, grass, Botts' dots and custom marks are not paint; they are not drawn."""


def road_json(network: RoadNetwork, step: float = ROAD_STEP) -> dict[str, Any]:
    """Every lane's surface and every painted line of a network, as the page draws them.

    ``lanes``: one strip per lane and lane section (lanes of type ``none`` have no surface).
    ``marks``: one entry per road mark, its dashes (or its one line) as strips.
    """
    lanes: list[dict[str, Any]] = []
    marks: list[dict[str, Any]] = []
    for road in network.roads.values():
        s_all = road.samples(step)
        for section in road.sections:
            s, inside = _span(s_all, section.s, section.end, section.end)
            for lane in section.lanes.values():
                if lane.id != 0 and lane.type != "none":
                    inner = road.lane_t(inside, lane.id, 0.0)
                    outer = road.lane_t(inside, lane.id, 1.0)
                    strip = _strip(road, s, np.maximum(inner, outer), np.minimum(inner, outer))
                    lanes.append({"road": road.id, "lane": lane.id, "type": lane.type, **strip})
                marks.extend(_marks(road, section, lane, s_all))
    return {"lanes": lanes, "marks": marks}


def _span(s_all: np.ndarray, a: float, b: float, end: float) -> tuple[np.ndarray, np.ndarray]:
    """The samples from a to b with both ends, and where to evaluate lanes for each.

    The lane section's last point belongs to the next section: lanes are read just before it.
    """
    s = np.unique(np.concatenate([[a, b], s_all[(s_all > a) & (s_all < b)]]))
    return s, np.minimum(s, np.nextafter(end, a)) if end > a else s


def _strip(road: Road, s: np.ndarray, left: np.ndarray, right: np.ndarray) -> dict[str, Any]:
    """The cross sections (s; t left and right) as the flat list the page reads."""
    xl, yl, zl, _ = road.point(s, left)
    xr, yr, zr, _ = road.point(s, right)
    points = np.column_stack((xl, yl, zl, xr, yr, zr))
    return {"strip": [round(float(v), 3) for v in points.ravel()]}


def _marks(road: Road, section: LaneSection, lane: Lane, s_all: np.ndarray) -> list[dict[str, Any]]:
    """The painted lines of a lane's marks, each from its start to the next mark's."""
    out: list[dict[str, Any]] = []
    starts = [section.s + mark.s_offset for mark in lane.marks]
    ends = [*starts[1:], section.end] if starts else []
    for mark, a, b in zip(lane.marks, starts, ends, strict=True):
        lines = PAINTED.get(mark.type)
        if lines is None or b <= a:
            continue
        outwards = 1.0 if lane.id > 0 else -1.0  # inside to outside; the centre lane: to the right
        strips = []
        for n, kind in enumerate(lines):
            shift = 0.0 if len(lines) == 1 else (2 * n - 1) * outwards * mark.width
            for d0, d1 in _dashes(a, b) if kind == "broken" else [(a, b)]:
                s, inside = _span(s_all, d0, d1, section.end)
                t = road.lane_t(inside, lane.id, 1.0) + shift
                half = mark.width / 2
                strips.append(_strip(road, s, t + half, t - half)["strip"])
        out.append(_mark_entry(road, lane, mark, strips))
    return out


def _dashes(a: float, b: float) -> list[tuple[float, float]]:
    """(start, end) of each dash of a broken line from a to b."""
    painted, gap = DASH
    starts = np.arange(a, b, painted + gap)
    return [(float(d), float(min(d + painted, b))) for d in starts]


def _mark_entry(
    road: Road, lane: Lane, mark: RoadMark, strips: list[list[float]]
) -> dict[str, Any]:
    return {
        "road": road.id,
        "lane": lane.id,
        "type": mark.type,
        "color": mark.color,
        "width": mark.width,
        "strips": strips,
    }
