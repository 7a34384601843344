"""An OpenDRIVE road: its reference line, profiles and lanes, and where a (s, t) lies in space.

Coordinates follow the standard: ``s`` runs along the reference line, ``t`` to its left,
measured in the road's cross section, which the superelevation rolls about the reference
line (a point at ``t`` lies ``t cos(phi)`` to the left of it and ``t sin(phi)`` above it).
Lane ids count outwards from the centre lane 0: 1, 2, ... on the left, -1, -2, ... on the
right; lanes are as wide as their width polynomials, the centre lane shifted by the lane offset.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from vcosim.roads.geometry import PlanView
from vcosim.roads.profiles import Cubic

PROJECTION_STEPS = 6
"""Newton steps from a first guess (within a metre or so) to the foot point on a road."""

NO_LANE = 0
"""What :meth:`Road.lane_at` answers off the road's lanes (lane 0 has no width)."""


@dataclass(frozen=True)
class RoadMark:
    """A line painted along a lane's outer border from ``s_offset`` into its lane section."""

    s_offset: float
    type: str = "solid"
    color: str = "standard"
    width: float = 0.12
    weight: str = "standard"
    lane_change: str = "both"


@dataclass(frozen=True)
class Lane:
    """One lane of a lane section; ``predecessor`` and ``successor`` are linked lane ids."""

    id: int
    type: str = "driving"
    width: Cubic = field(default_factory=Cubic, compare=False)
    marks: tuple[RoadMark, ...] = ()
    predecessor: int | None = None
    successor: int | None = None
    friction: float | None = None
    level: bool = False


@dataclass
class LaneSection:
    """Lanes from ``s`` to ``end``; ``left`` ordered 1, 2, ..., ``right`` ordered -1, -2, ..."""

    s: float
    left: tuple[Lane, ...] = ()
    right: tuple[Lane, ...] = ()
    center: Lane | None = None
    single_side: bool = False
    end: float = 0.0

    @property
    def lanes(self) -> dict[int, Lane]:
        """Every lane by id, the centre lane included."""
        found = {lane.id: lane for lane in (*self.left, *self.right)}
        if self.center is not None:
            found[0] = self.center
        return found

    def borders(self, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The outer borders of the left lanes (rows 1, 2, ...) and the right (-1, -2, ...).

        Measured from the centre lane (the lane offset is not included), one column per ``s``.
        """
        ds = np.atleast_1d(np.asarray(s, dtype=float)) - self.s

        def outwards(lanes: tuple[Lane, ...]) -> np.ndarray:
            widths = [lane.width.value(ds) for lane in lanes]
            return np.cumsum(widths, axis=0) if widths else np.zeros((0, ds.size))

        return outwards(self.left), -outwards(self.right)


@dataclass(frozen=True)
class Link:
    """Where a road's start (predecessor) or end (successor) leads: a road or a junction."""

    element_type: str
    element_id: str
    contact_point: str | None = None


@dataclass
class Road:
    """One road: geometry, profiles, lane sections (in order of s) and its two links."""

    id: str
    length: float
    plan: PlanView
    sections: list[LaneSection]
    elevation: Cubic = field(default_factory=Cubic)
    superelevation: Cubic = field(default_factory=Cubic)
    lane_offset: Cubic = field(default_factory=Cubic)
    junction: str = "-1"
    predecessor: Link | None = None
    successor: Link | None = None
    name: str = ""
    rule: str = "RHT"

    def __post_init__(self) -> None:
        """Each lane section ends where the next one starts, the last at the road's end."""
        self.sections.sort(key=lambda section: section.s)
        for section, after in zip(self.sections, [*self.sections[1:], None], strict=True):
            section.end = after.s if after is not None else self.length
        self._section_starts = np.array([section.s for section in self.sections])

    # -- where things are -------------------------------------------------------------------
    def section_index(self, s: np.ndarray | float) -> np.ndarray:
        """The index of the lane section each ``s`` falls in."""
        s = np.atleast_1d(np.asarray(s, dtype=float))
        last = len(self.sections) - 1
        return np.clip(np.searchsorted(self._section_starts, s, side="right") - 1, 0, last)

    def section_at(self, s: float) -> LaneSection:
        """The lane section at ``s``."""
        return self.sections[int(self.section_index(s)[0])]

    def point(
        self, s: np.ndarray | float, t: np.ndarray | float = 0.0
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(x, y, z, heading of the reference line) of road positions (s, t)."""
        s = np.atleast_1d(np.asarray(s, dtype=float))
        t = np.broadcast_to(np.asarray(t, dtype=float), s.shape)
        x, y, heading = self.plan.pose(s)
        roll = self.superelevation.value(s)
        across = t * np.cos(roll)
        z = self.elevation.value(s) + t * np.sin(roll)
        return x - across * np.sin(heading), y + across * np.cos(heading), z, heading

    def project(
        self, x: np.ndarray, y: np.ndarray, s: np.ndarray, steps: int = PROJECTION_STEPS
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(s, t, along) of points (x, y) on this road, from a first guess of s each.

        ``steps`` Newton steps to the foot point on the reference line (from a guess a step's
        travel away, two do); ``along`` is what is left of the distance along the line there
        (0 unless the foot point lies beyond an end of the road, or the steps were too few).
        """
        for _ in range(steps):
            rx, ry, heading = self.plan.pose(s)
            c, n = np.cos(heading), np.sin(heading)
            ex, ey = x - rx, y - ry
            along = ex * c + ey * n
            across = -ex * n + ey * c
            bend = 1.0 - self.plan.curvature(s) * across
            s = np.clip(s + along / np.where(bend > 0.1, bend, 0.1), 0.0, self.length)
        rx, ry, heading = self.plan.pose(s)
        c, n = np.cos(heading), np.sin(heading)
        ex, ey = x - rx, y - ry
        across = -ex * n + ey * c
        t = across / np.cos(self.superelevation.value(s))
        return s, t, ex * c + ey * n

    def lane_t(self, s: np.ndarray | float, lane_id: int, fraction: float = 0.5) -> np.ndarray:
        """The t of a point ``fraction`` of the way from a lane's inner border to its outer one.

        0.5 is the lane's centre line. A lane missing from the section at some ``s`` gives NaN.
        """
        s = np.atleast_1d(np.asarray(s, dtype=float))
        t = np.full_like(s, np.nan)
        index = self.section_index(s)
        for k in np.unique(index):
            mask = index == k
            inner, outer = self._lane_edges(self.sections[k], s[mask], lane_id)
            t[mask] = inner + fraction * (outer - inner)
        return t + self.lane_offset.value(s)

    def _lane_edges(
        self, section: LaneSection, s: np.ndarray, lane_id: int
    ) -> tuple[np.ndarray, np.ndarray]:
        left, right = section.borders(s)
        side = left if lane_id > 0 else right
        n = abs(lane_id)
        if lane_id == 0 or n > len(side):
            nan = np.full_like(s, np.nan)
            return (np.zeros_like(s), np.zeros_like(s)) if lane_id == 0 else (nan, nan)
        inner = side[n - 2] if n > 1 else np.zeros_like(s)
        return inner, side[n - 1]

    def lane_at(self, s: np.ndarray | float, t: np.ndarray | float) -> np.ndarray:
        """The lane id at road positions (s, t); :data:`NO_LANE` beyond the outermost lanes."""
        s = np.atleast_1d(np.asarray(s, dtype=float))
        across = np.broadcast_to(np.asarray(t, dtype=float), s.shape) - self.lane_offset.value(s)
        lane = np.full(s.shape, NO_LANE, dtype=np.int64)
        index = self.section_index(s)
        for k in np.unique(index):
            mask = index == k
            left, right = self.sections[k].borders(s[mask])
            tk = across[mask]
            to_left = 1 + np.sum(left < tk, axis=0)
            to_right = -1 - np.sum(right > tk, axis=0)
            ids = np.where(tk >= 0.0, to_left, to_right)
            ids[(ids > len(left)) | (ids < -len(right))] = NO_LANE
            lane[mask] = ids
        return lane

    def t_range(self, s: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
        """(rightmost, leftmost) t of the road's lanes at ``s``, the lane offset included."""
        s = np.atleast_1d(np.asarray(s, dtype=float))
        low, high = np.zeros_like(s), np.zeros_like(s)
        index = self.section_index(s)
        for k in np.unique(index):
            mask = index == k
            left, right = self.sections[k].borders(s[mask])
            if len(left):
                high[mask] = left.max(axis=0).clip(min=0.0)
            if len(right):
                low[mask] = right.min(axis=0).clip(max=0.0)
        offset = self.lane_offset.value(s)
        return low + offset, high + offset

    def samples(self, step: float) -> np.ndarray:
        """Positions s at most ``step`` apart from 0 to the road's end, and every record's start.

        Geometry records, lane sections and profile records begin on a sample, so lines
        drawn through the samples keep their corners.
        """
        n = max(1, int(np.ceil(self.length / step)))
        knots = [
            self.plan.starts,
            self._section_starts,
            self.elevation.starts,
            self.superelevation.starts,
            self.lane_offset.starts,
        ]
        s = np.concatenate([np.linspace(0.0, self.length, n + 1), *knots])
        return np.unique(s[(s >= 0.0) & (s <= self.length)])

    def mark_lines(self, step: float = 1.0) -> list[tuple[int, RoadMark, np.ndarray]]:
        """Every painted road mark: (lane id, the mark, (x, y, z) rows along the lane's border).

        A mark runs along its lane's outer border (the centre lane's: the lane offset line)
        from its ``s_offset`` to the next mark of the lane or the section's end. Marks of
        type ``none`` are left out.
        """
        lines = []
        s_all = self.samples(step)
        for section in self.sections:
            for lane in section.lanes.values():
                starts = [section.s + m.s_offset for m in lane.marks]
                ends = [*starts[1:], section.end] if starts else []
                for mark, a, b in zip(lane.marks, starts, ends, strict=True):
                    if mark.type == "none" or b <= a:
                        continue
                    s = np.unique(np.concatenate([[a, b], s_all[(s_all > a) & (s_all < b)]]))
                    inside = np.minimum(s, np.nextafter(b, a))
                    x, y, z, _ = self.point(s, self.lane_t(inside, lane.id, fraction=1.0))
                    lines.append((lane.id, mark, np.column_stack((x, y, z))))
        return lines

    def lane_centre(
        self, lane_id: int, section: int = 0, step: float = 1.0
    ) -> tuple[np.ndarray, np.ndarray]:
        """The centre line of a lane through one lane section: s, and (x, y, z) per row."""
        sec = self.sections[section]
        s = self.samples(step)
        s = np.unique(np.concatenate([[sec.s, sec.end], s[(s > sec.s) & (s < sec.end)]]))
        # The section's last point belongs to the next section: evaluate it just before.
        inside = np.minimum(s, np.nextafter(sec.end, sec.s)) if sec.end > sec.s else s
        t = self.lane_t(inside, lane_id)
        x, y, z, _ = self.point(s, t)
        return s, np.column_stack((x, y, z))
