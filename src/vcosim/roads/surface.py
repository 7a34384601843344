"""The road surface sampled on a square grid: what the vehicle's terrain is made of.

The vehicle kernel samples its ground from a grid, bilinearly (vcosim.vehicle.terrain), so the
road reaches the wheels as a grid too: every grid point on a road gets the surface height
there (elevation, superelevation, lane offsets), exactly, from its (s, t). Bilinear
interpolation reproduces a plane exactly, so a grade or a superelevation reaches the tyres
without error; curvature of the surface within one cell is what the grid smooths.

Grid points just beyond a road's outermost lane (``apron``) carry the surface on, so the cells
along a road's edge do not lean towards the ground beside it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vcosim.errors import ConfigError
from vcosim.roads.model import Road
from vcosim.roads.network import END_TOLERANCE, RoadNetwork

MAX_STRIP = 10.0
"""m: the longest strip a road is cut into when it is rasterised."""

MAX_CELLS = 8_000_000
"""Grid points a road raster may have (about 140 MB with its friction and road mask)."""


APRON_RANK = 1e6
"""Added to an apron point's distance: a lane of one road beats the apron of another."""


@dataclass(frozen=True)
class RoadRaster:
    """The road surface on the grid ``[origin_x, origin_y, cell]`` (row index grows with y).

    ``height`` and ``friction`` are NaN where no road is; ``road`` is True on a lane (the
    apron beyond the outermost lanes carries a height but is not road).
    """

    grid: np.ndarray
    height: np.ndarray
    friction: np.ndarray
    road: np.ndarray


def grid_over(
    extent: tuple[float, float, float, float], cell: float
) -> tuple[np.ndarray, tuple[int, int]]:
    """The grid (origin on a multiple of ``cell``) covering ``extent`` = (x0, y0, x1, y1)."""
    x0, y0, x1, y1 = extent
    ox, oy = np.floor(x0 / cell) * cell, np.floor(y0 / cell) * cell
    nx = int(np.ceil((x1 - ox) / cell)) + 1
    ny = int(np.ceil((y1 - oy) / cell)) + 1
    if nx * ny > MAX_CELLS:
        raise ConfigError(
            [
                f"the road surface needs {nx} x {ny} grid points at {cell:g} m, more than "
                f"{MAX_CELLS:,}: give a larger road_cell"
            ],
            "road surface",
        )
    return np.array([ox, oy, cell]), (ny, nx)


def rasterise(
    network: RoadNetwork,
    cell: float = 0.5,
    *,
    extent: tuple[float, float, float, float] | None = None,
    friction: float = 1.0,
    apron: float | None = None,
) -> RoadRaster:
    """The network's surface on a grid of ``cell`` metres covering ``extent`` (default: roads).

    Lanes have the friction of their ``<material>``, else ``friction``. Where roads overlap
    (a junction) a point on a lane takes the road whose reference line is nearest.
    """
    apron = 2.0 * cell if apron is None else apron
    if extent is None:
        x0, y0, x1, y1 = network.bounds()
        extent = (x0 - apron, y0 - apron, x1 + apron, y1 + apron)
    grid, shape = grid_over(extent, cell)
    height = np.full(shape, np.nan)
    mu = np.full(shape, np.nan)
    road_mask = np.zeros(shape, dtype=bool)
    nearest = np.full(shape, np.inf)
    for road in network.roads.values():
        flat, s, t, on_lane = _cover(road, grid, shape, apron)
        rank = np.abs(t) + np.where(on_lane, 0.0, APRON_RANK)
        closer = rank < nearest.flat[flat]
        flat, s, t, on_lane = flat[closer], s[closer], t[closer], on_lane[closer]
        nearest.flat[flat] = rank[closer]
        height.flat[flat] = road.point(s, t)[2]
        mu.flat[flat] = _friction(road, s, t, friction)
        road_mask.flat[flat] = on_lane
    return RoadRaster(grid, height, mu, road_mask)


def _cover(
    road: Road, grid: np.ndarray, shape: tuple[int, int], apron: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The grid points on a road or its apron: flat index, s, t and whether on a lane.

    The road is cut into strips about as long as it is wide (fewest candidates per metre),
    short enough to turn at most half a radian; the grid points in each strip's bounding box
    are candidates, with the s of their foot point on the strip's chord as first guess.
    """
    ox, oy, cell = grid
    ny, nx = shape
    probe = road.samples(1.0)
    low, high = road.t_range(probe)
    bend = float(np.abs(road.plan.curvature(probe)).max())
    step = min(max(float((high - low).max()), 1.0), MAX_STRIP, 0.5 / max(bend, 1e-9))
    step = max(step, cell)
    s = road.samples(step)
    low, high = road.t_range(s)
    low, high = low - apron, high + apron
    x, y, _, heading = road.point(s)
    roll = np.cos(road.superelevation.value(s))
    # Strip corners (both ends, both edges) and their bounding boxes in grid indices.
    sin, cos = np.sin(heading) * roll, np.cos(heading) * roll
    start, end = slice(None, -1), slice(1, None)
    corners = [
        (x[k] - lat[k] * sin[k], y[k] + lat[k] * cos[k])
        for k in (start, end)
        for lat in (low, high)
    ]
    cx = np.stack([c[0] for c in corners])
    cy = np.stack([c[1] for c in corners])
    bulge = cell + 0.15 * step  # the outer edge's arc beyond the corners' box
    i0 = np.clip(np.floor((cx.min(axis=0) - bulge - ox) / cell), 0, nx - 1).astype(np.int64)
    i1 = np.clip(np.ceil((cx.max(axis=0) + bulge - ox) / cell), 0, nx - 1).astype(np.int64)
    j0 = np.clip(np.floor((cy.min(axis=0) - bulge - oy) / cell), 0, ny - 1).astype(np.int64)
    j1 = np.clip(np.ceil((cy.max(axis=0) + bulge - oy) / cell), 0, ny - 1).astype(np.int64)
    wide, tall = i1 - i0 + 1, j1 - j0 + 1
    count = wide * tall
    strip = np.repeat(np.arange(len(count)), count)
    k = np.arange(count.sum()) - np.repeat(np.cumsum(count) - count, count)
    gi = i0[strip] + k % wide[strip]
    gj = j0[strip] + k // wide[strip]
    px, py = ox + gi * cell, oy + gj * cell
    # Of a grid point's candidates, the strip its foot point falls in (or comes nearest).
    c, n = np.cos(heading[strip]), np.sin(heading[strip])
    along = (px - x[strip]) * c + (py - y[strip]) * n
    length = s[strip + 1] - s[strip]
    outside = np.maximum(np.maximum(-along, along - length), 0.0)
    flat = gj * nx + gi
    order = np.lexsort((outside, flat))
    flat, unique = np.unique(flat[order], return_index=True)
    best = order[unique]
    guess = s[strip[best]] + np.clip(along[best], 0.0, length[best])
    px, py = px[best], py[best]
    foot, t, rest = road.project(px, py, guess)
    lo, hi = road.t_range(foot)
    inside = (np.abs(rest) <= apron) & (t >= lo - apron) & (t <= hi + apron)
    on_lane = (np.abs(rest) < END_TOLERANCE) & (t >= lo) & (t <= hi)
    return flat[inside], foot[inside], t[inside], on_lane[inside]


def _friction(road: Road, s: np.ndarray, t: np.ndarray, default: float) -> np.ndarray:
    """Each lane's material friction, ``default`` where it gives none."""
    mu = np.full(s.shape, default)
    lanes = road.lane_at(s, t)
    index = road.section_index(s)
    for k, section in enumerate(road.sections):
        for lane in section.lanes.values():
            if lane.friction is not None:
                mu[(index == k) & (lanes == lane.id)] = lane.friction
    return mu
