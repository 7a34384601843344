"""Lane centre lines as polylines packed into flat arrays, and pure pursuit along them.

All paths of a world live in one point array (``points``, ``cum``: arc length at each point),
path ``q`` being rows ``starts[q]:ends[q]``; a closed path repeats its first point at its end.
Compiled, because every built-in driver steers every driver period.
"""

from __future__ import annotations

import math

import numpy as np

from vcosim.errors import ConfigError, UnknownNameError
from vcosim.roads import RoadNetwork
from vcosim.vehicle._jit_cache import kernel
from vcosim.world.spec import PathSpec

WINDOW = 40  # segments searched around the last projection (a driver moves < 1 m per period)


class Paths:
    """The world's paths by name, packed for the compiled steering."""

    def __init__(self, specs: dict[str, PathSpec], network: RoadNetwork | None = None) -> None:
        self.index = {name: q for q, name in enumerate(specs)}
        polylines: list[np.ndarray] = []
        problems: list[str] = []
        for name, spec in specs.items():
            try:
                polylines.append(np.asarray(spec.polyline(network), dtype=float))
            except (ConfigError, UnknownNameError) as exc:
                found = exc.problems if isinstance(exc, ConfigError) else [str(exc)]
                problems.extend(f"paths.{name}.lanes: {problem}" for problem in found)
        if problems:
            raise ConfigError(problems, "world")
        lengths = [len(p) for p in polylines]
        self.starts = np.cumsum([0, *lengths])[:-1].astype(np.int64)  # none: none ([0] was one)
        self.ends = self.starts + np.asarray(lengths, dtype=np.int64)
        self.points = np.concatenate(polylines) if polylines else np.zeros((0, 2))
        self.cum = np.zeros(len(self.points))
        for q, line in enumerate(polylines):
            seg = np.hypot(*np.diff(line, axis=0).T)
            self.cum[self.starts[q] + 1 : self.ends[q]] = np.cumsum(seg)
        self.closed = np.array([spec.is_loop for spec in specs.values()], dtype=np.bool_)

    def add(self, name: str, line: np.ndarray) -> int:
        """A path more, from now (a route the storyboard assigns): its index."""
        line = np.asarray(line, dtype=float)[:, :2]
        keep = np.concatenate(([True], np.hypot(*np.diff(line, axis=0).T) > 1e-9))
        line = line[keep]
        q = len(self.index)
        self.index[name] = q
        start = len(self.points)
        self.starts = np.append(self.starts, start).astype(np.int64)
        self.ends = np.append(self.ends, start + len(line)).astype(np.int64)
        self.points = np.concatenate((self.points, line))
        cum = np.concatenate(([0.0], np.cumsum(np.hypot(*np.diff(line, axis=0).T))))
        self.cum = np.concatenate((self.cum, cum))
        self.closed = np.append(self.closed, False)
        return q

    def pose_at(self, name: str, s: float, offset: float) -> tuple[float, float, float]:
        """(x, y, heading in degrees) ``s`` metres along path ``name``, ``offset`` to its left."""
        q = self.index[name]
        x, y, heading, _ = point_at(
            self.points, self.cum, self.starts[q], self.ends[q], self.closed[q], s, offset, 0
        )
        return x, y, math.degrees(heading)


@kernel
def point_at(points, cum, start, end, closed, s, offset, k):
    """(x, y, heading, segment) at arc length ``s`` and lateral ``offset``; search from ``k``.

    An open path is extended straight beyond its ends; a closed one wraps around.
    """
    nseg = end - start - 1
    total = cum[end - 1]
    if closed:
        s = s % total
    k = min(max(k, 0), nseg - 1)
    while k < nseg - 1 and cum[start + k + 1] < s:
        k += 1
    while k > 0 and cum[start + k] > s:
        k -= 1
    a = start + k
    length = cum[a + 1] - cum[a]
    dx, dy = (points[a + 1, 0] - points[a, 0]) / length, (points[a + 1, 1] - points[a, 1]) / length
    along = s - cum[a]
    x = points[a, 0] + dx * along - dy * offset
    y = points[a, 1] + dy * along + dx * offset
    return x, y, math.atan2(dy, dx), k


@kernel
def project(points, cum, start, end, closed, x, y, hint):
    """(s, segment) of the point of the path nearest (x, y), searched near segment ``hint``.

    A negative ``hint`` searches the whole path.
    """
    nseg = end - start - 1
    if hint < 0 or nseg <= 2 * WINDOW:
        first, count = 0, nseg
    else:
        first, count = hint - WINDOW // 4, WINDOW
    best, best_k, best_s = math.inf, 0, 0.0
    for m in range(count):
        k = first + m
        if closed:  # (first is at most a window before 0, count at most nseg: no division)
            k += nseg if k < 0 else -nseg if k >= nseg else 0
        elif k < 0 or k >= nseg:
            continue
        a = start + k
        ax, ay = points[a, 0], points[a, 1]
        bx, by = points[a + 1, 0] - ax, points[a + 1, 1] - ay
        length2 = bx * bx + by * by
        t = ((x - ax) * bx + (y - ay) * by) / length2
        if k > 0 or closed:
            t = max(t, 0.0)
        if k < nseg - 1 or closed:
            t = min(t, 1.0)
        ex, ey = ax + t * bx - x, ay + t * by - y
        d2 = ex * ex + ey * ey
        if d2 < best:
            best, best_k, best_s = d2, k, cum[a] + t * math.sqrt(length2)
    return best_s, best_k


@kernel
def pure_pursuit(
    rows, path_of, offset, px, py, yaw, speed, rear, wheelbase, max_steer,
    points, cum, starts, ends, closed, hint, steering, arc,
):  # fmt: skip
    """Steering input for each driven row: pure pursuit of a point ahead on its lane.

    The rear axle (``rear`` m behind the centre of gravity) aims at the lane point one
    lookahead ahead (5 m, or the distance of 0.8 s at speed); the arc through it gives the
    road-wheel angle, the steering input is that over ``max_steer``. Writes ``steering``,
    ``arc`` (s along the path) and ``hint`` per row.
    """
    for m in range(rows.shape[0]):
        v = rows[m]
        q = path_of[m]
        c, s = math.cos(yaw[v]), math.sin(yaw[v])
        rx, ry = px[v] - rear[v] * c, py[v] - rear[v] * s
        here, hint[m] = project(points, cum, starts[q], ends[q], closed[q], rx, ry, hint[m])
        arc[m] = here
        lookahead = max(5.0, 0.8 * speed[v])
        tx, ty, _, _ = point_at(
            points, cum, starts[q], ends[q], closed[q], here + lookahead, offset[m], hint[m]
        )
        dx, dy = tx - rx, ty - ry
        along, left = c * dx + s * dy, -s * dx + c * dy
        distance2 = max(along * along + left * left, 1e-6)
        curvature = 2.0 * left / distance2
        angle = math.atan(curvature * wheelbase[v])
        steering[m] = min(max(angle / max_steer[v], -1.0), 1.0)
