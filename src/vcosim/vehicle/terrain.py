"""Terrain under the vehicle: ground height and tyre-road friction as sampled grids.

(Past 400 lines: the pictures' decoding, the compiled lookups and the ``Terrain`` that validates
them share one grid layout, kept in one place so the layout cannot drift.)

The grids come from pictures so that a track can be drawn in any paint program: a height-map
(blue channel, black lowest), a road map (blue 255 marks the road) and a friction map
(blue 255 is a friction coefficient just under 1). Pictures are centred on the world origin,
image columns run along world +x and the top of the picture is the largest world y (north up).

The physics kernel calls :func:`sample_terrain`, a pure numba function over the raw arrays, so
the terrain lookup can be inlined into compiled code; :class:`Terrain` owns and validates the
arrays and offers :meth:`Terrain.sample` for Python callers.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import numpy as np
from PIL import Image
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from vcosim.errors import ConfigError
from vcosim.vehicle._jit_cache import njit

if TYPE_CHECKING:
    from vcosim.roads import RoadNetwork

WORLD_LIMIT = 1.0e7  # m: positions and heights beyond lose a 0.5 ms step's motion to rounding

FRICTION_AT_FULL_BLUE = 0.99
"""Friction coefficient of blue 255 in a friction map: the spec's "just under 1"."""

ROAD_THRESHOLD = 128
"""Blue values at or above this count as road, so anti-aliased or JPEG-compressed maps work."""

ImageSource = str | Path | None


@njit(error_model="numpy", fastmath=False, inline="always")
def _axis(coord: float, origin: float, cell: float, n: int) -> tuple[int, int, float, bool]:
    """Locate ``coord`` between two samples along one axis.

    Returns the lower and upper sample index, the fraction between them and whether the point
    lies inside the sampled range; outside it the value is held at the edge, so the slope along
    this axis is zero there. A single sample (``n == 1``) is a constant along the axis.
    """
    if n < 2:
        return 0, 0, 0.0, False
    f = (coord - origin) / cell
    if not f >= 0.0:  # also catches NaN, which must not reach the integer conversion
        return 0, 1, 0.0, False
    last = n - 1
    if f > last:
        return last - 1, last, 1.0, False
    i0 = min(int(math.floor(f)), last - 1)
    return i0, i0 + 1, f - i0, True


@njit(error_model="numpy", fastmath=False, inline="always")
def sample_terrain(
    height: np.ndarray, friction: np.ndarray, grid: np.ndarray, x: float, y: float
) -> tuple[float, float, float, float]:
    """(h, dh/dx, dh/dy, mu) at world point (x, y).

    Height and friction are bilinear between samples; the slope is the exact gradient of the
    bilinear height patch, so it is consistent with the height the suspension sees. Outside the
    map both are clamped to the edge (slope zero across the edge). Array row index grows with
    world y and column index with world x; ``grid`` is ``[origin_x, origin_y, cell_size]``.
    """
    ny, nx = height.shape
    cell = grid[2]
    i0, i1, tx, in_x = _axis(x, grid[0], cell, nx)
    j0, j1, ty, in_y = _axis(y, grid[1], cell, ny)

    h00 = height[j0, i0]
    h01 = height[j0, i1]
    h10 = height[j1, i0]
    h11 = height[j1, i1]
    h = (1.0 - ty) * ((1.0 - tx) * h00 + tx * h01) + ty * ((1.0 - tx) * h10 + tx * h11)
    dhdx = ((1.0 - ty) * (h01 - h00) + ty * (h11 - h10)) / cell if in_x else 0.0
    dhdy = ((1.0 - tx) * (h10 - h00) + tx * (h11 - h01)) / cell if in_y else 0.0

    m00 = friction[j0, i0]
    m01 = friction[j0, i1]
    m10 = friction[j1, i0]
    m11 = friction[j1, i1]
    mu = (1.0 - ty) * ((1.0 - tx) * m00 + tx * m01) + ty * ((1.0 - tx) * m10 + tx * m11)
    return h, dhdx, dhdy, mu


@njit(error_model="numpy")
def _sample_grid(
    height: np.ndarray, friction: np.ndarray, grid: np.ndarray, xs: np.ndarray, ys: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(height, mu) at many points, as the kernel samples them."""
    h, mu = np.empty(xs.size), np.empty(xs.size)
    for k in range(xs.size):
        h[k], _, _, mu[k] = sample_terrain(height, friction, grid, xs[k], ys[k])
    return h, mu


MAX_PICTURE_PIXELS = 4096 * 4096
"""The most pixels of a terrain picture: 4096 x 4096 samples cost 134 MB as a height grid
(a 0.25 m grid over a kilometre); a bigger picture would cost gigabytes before a step."""
MAX_PICTURE_BYTES = 64 << 20
"""The largest terrain picture file read (64 MiB)."""


def _read_blue(path: str | Path) -> np.ndarray:
    """Blue channel (grey value for grey images) as float64, rows flipped so row 0 is south.

    Raises:
        ConfigError: not a picture, or over the pixel or byte limit (its size and the limit).
    """
    where = f"terrain picture {path}"
    try:
        size = Path(path).stat().st_size
        if size > MAX_PICTURE_BYTES:
            raise ConfigError([f"{size} bytes: at most {MAX_PICTURE_BYTES} bytes"], where)
        with warnings.catch_warnings():  # the limit is ours, below
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            img = Image.open(path)
        with img:
            pixels_in = img.width * img.height
            if pixels_in > MAX_PICTURE_PIXELS:
                raise ConfigError(
                    [
                        f"{img.width} x {img.height} pixels: at most {MAX_PICTURE_PIXELS} "
                        "pixels (4096 x 4096)"
                    ],
                    where,
                )
            if img.mode in ("L", "LA", "1"):
                pixels = np.asarray(img.convert("L"), dtype=np.float64)
            else:
                pixels = np.asarray(img.convert("RGB"), dtype=np.float64)[:, :, 2]
    except ConfigError:
        raise
    except (OSError, ValueError, Image.DecompressionBombError) as exc:  # not a picture
        raise ConfigError([f"not a picture vcosim reads: {exc}"], where) from None
    return np.ascontiguousarray(pixels[::-1, :])


@dataclass(frozen=True, eq=False)
class Terrain:
    """Sampled ground height and friction on a square grid.

    ``grid`` is ``[origin_x, origin_y, cell_size]``: the world position of sample ``[0, 0]``
    and the spacing in metres. Equality is identity because array fields have no single truth
    value.
    """

    height: np.ndarray
    friction: np.ndarray
    road: np.ndarray | None
    grid: np.ndarray

    def __post_init__(self) -> None:
        """Normalise to C-contiguous float64 so the compiled sampler gets one array type."""
        height = np.ascontiguousarray(self.height, dtype=np.float64)
        friction = np.ascontiguousarray(self.friction, dtype=np.float64)
        grid = np.ascontiguousarray(self.grid, dtype=np.float64).reshape(-1)
        road = None if self.road is None else np.ascontiguousarray(self.road, dtype=bool)

        problems: list[str] = []
        if height.ndim != 2 or height.size == 0:
            problems.append(f"height must be a non-empty 2-D array, got shape {height.shape}")
        if friction.shape != height.shape:
            problems.append(
                f"friction shape {friction.shape} differs from height shape {height.shape}"
            )
        if road is not None and road.shape != height.shape:
            problems.append(f"road shape {road.shape} differs from height shape {height.shape}")
        if grid.shape != (3,):
            problems.append(f"grid must be [origin_x, origin_y, cell_size], got {grid.tolist()}")
        elif not (np.all(np.isfinite(grid)) and grid[2] > 0.0):
            problems.append(f"grid must be finite with cell_size > 0, got {grid.tolist()}")
        if height.size and not np.all(np.isfinite(height)):
            problems.append("height contains non-finite values")
        elif height.size and np.abs(height).max() > WORLD_LIMIT:
            problems.append(
                f"height reaches {np.abs(height).max():g} m; beyond {WORLD_LIMIT:g} m the "
                "suspension's millimetres are lost to rounding"
            )
        if (
            grid.shape == (3,)
            and np.all(np.isfinite(grid))
            and np.abs(grid[:2]).max() > WORLD_LIMIT
        ):
            problems.append(f"grid origin beyond {WORLD_LIMIT:g} m: {grid.tolist()}")
        if friction.size and not np.all(np.isfinite(friction) & (friction >= 0.0)):
            problems.append("friction must be finite and >= 0")
        if problems:
            raise ConfigError(problems, source="Terrain")

        object.__setattr__(self, "height", height)
        object.__setattr__(self, "friction", friction)
        object.__setattr__(self, "road", road)
        object.__setattr__(self, "grid", grid)

    @classmethod
    def flat(cls, friction: float = 1.0) -> Terrain:
        """Level ground at height 0 with one friction everywhere: the spec's default world."""
        return cls(
            height=np.zeros((1, 1)),
            friction=np.full((1, 1), float(friction)),
            road=None,
            grid=np.array([0.0, 0.0, 1.0]),
        )

    @classmethod
    def from_images(
        cls,
        height_map: ImageSource = None,
        road_map: ImageSource = None,
        friction_map: ImageSource = None,
        *,
        hill_height: float = 10.0,
        size: float = 1000.0,
        road_friction: float = 1.0,
        offroad_friction: float = 0.6,
    ) -> Terrain:
        """Build the terrain from pictures; every problem is reported at once.

        ``hill_height`` is the height in metres of blue 255 in the height-map, ``size`` the
        extent in metres of the pictures' longer side (cells are square). Friction comes from
        the friction map if given, else from the road map (``road_friction`` on the road,
        ``offroad_friction`` off it), else it is 1. Without a height-map the ground is level
        at 0 on the grid of the other maps; without any map the terrain is :meth:`flat`.
        """
        problems: list[str] = []
        if not 0.0 < size < math.inf:
            problems.append(f"size must be finite and > 0, got {size}")
        for name, value in (
            ("hill_height", hill_height),
            ("road_friction", road_friction),
            ("offroad_friction", offroad_friction),
        ):
            if not 0.0 <= value < math.inf:
                problems.append(f"{name} must be finite and >= 0, got {value}")

        sources = {"height_map": height_map, "road_map": road_map, "friction_map": friction_map}
        blues: dict[str, np.ndarray] = {}
        for name, path in sources.items():
            if path is None:
                continue
            try:
                blues[name] = _read_blue(path)
            except (OSError, ValueError) as exc:
                problems.append(f"{name}: cannot read image '{path}': {exc}")

        shapes = {name: blue.shape for name, blue in blues.items()}
        problems += [
            f"{name}: a picture of {w} x {h} pixels; a map needs at least 2 (a slope "
            "between samples; leave it out for level ground)"
            for name, (h, w) in shapes.items()
            if h * w < 2
        ]
        if len(set(shapes.values())) > 1:
            listing = ", ".join(f"{name} {w}x{h}" for name, (h, w) in shapes.items())
            problems.append(f"maps must have the same pixel size (width x height): {listing}")

        if problems:
            given = [str(p) for p in sources.values() if p is not None]
            raise ConfigError(problems, source="terrain " + (", ".join(given) or "settings"))
        if not blues:
            return cls.flat()

        ny, nx = next(iter(shapes.values()))
        cell = size / max(nx, ny)
        grid = np.array([-(nx - 1) * cell / 2.0, -(ny - 1) * cell / 2.0, cell])

        height = (
            blues["height_map"] * (hill_height / 255.0)
            if "height_map" in blues
            else np.zeros((ny, nx))
        )
        road = blues["road_map"] >= ROAD_THRESHOLD if "road_map" in blues else None
        if "friction_map" in blues:
            friction = blues["friction_map"] * (FRICTION_AT_FULL_BLUE / 255.0)
        elif road is not None:
            friction = np.where(road, float(road_friction), float(offroad_friction))
        else:
            friction = np.ones((ny, nx))
        return cls(height=height, friction=friction, road=road, grid=grid)

    def sample(self, x: float, y: float) -> tuple[float, float]:
        """(height, mu) at world point (x, y), for Python callers that do not need the slope."""
        h, _, _, mu = sample_terrain(self.height, self.friction, self.grid, float(x), float(y))
        return float(h), float(mu)

    @property
    def extent(self) -> tuple[float, float, float, float] | None:
        """(x0, y0, x1, y1) the samples cover; None for one sample (flat everywhere)."""
        ny, nx = self.height.shape
        if nx * ny == 1:
            return None
        x0, y0, cell = self.grid
        return float(x0), float(y0), float(x0 + (nx - 1) * cell), float(y0 + (ny - 1) * cell)

    def with_road(
        self, path: str | Path, cell: float = 0.5, friction: float | None = None
    ) -> Terrain:
        """The terrain with an OpenDRIVE road laid on it, on a grid of ``cell`` metres.

        On the road the height is the road surface's (elevation, superelevation, lane
        offsets) and the friction that of its lanes' ``<material>``, else ``friction`` (else
        this terrain's); off the road both are this terrain's. The grid covers the road and
        this terrain's pictures; its road mask is the road's lanes.
        """
        from vcosim.roads import load_road
        from vcosim.roads.surface import grid_over, rasterise

        network = load_road(path)
        apron = 2.0 * cell
        x0, y0, x1, y1 = network.bounds()
        extent = (x0 - apron, y0 - apron, x1 + apron, y1 + apron)
        if (mine := self.extent) is not None:
            extent = (
                min(extent[0], mine[0]),
                min(extent[1], mine[1]),
                max(extent[2], mine[2]),
                max(extent[3], mine[3]),
            )
        grid, shape = grid_over(extent, cell)
        ny, nx = shape
        xs = np.repeat((grid[0] + cell * np.arange(nx))[None, :], ny, axis=0)
        ys = np.repeat((grid[1] + cell * np.arange(ny))[:, None], nx, axis=1)
        height, mu = _sample_grid(self.height, self.friction, self.grid, xs.ravel(), ys.ravel())
        height, mu = height.reshape(shape), mu.reshape(shape)
        raster = rasterise(network, cell, extent=extent, friction=math.nan, apron=apron)
        paved = np.isfinite(raster.height)
        height[paved] = raster.height[paved]
        given = raster.road & np.isfinite(raster.friction)
        mu[given] = raster.friction[given]
        if friction is not None:
            mu[raster.road & ~given] = friction
        return Terrain(height=height, friction=mu, road=raster.road, grid=grid)


NonNegative = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Positive = Annotated[float, Field(gt=0, allow_inf_nan=False)]


class TerrainSpec(BaseModel):
    """A terrain as a file or a table describes it: flat ground of one friction, or pictures.

    The one description the simulator drives on and the viewer draws (``--terrain FILE``),
    and a sweep file's ``[terrain]`` table. Picture paths are relative to the file that names
    them. ``friction`` scales whatever friction the pictures give. ``road`` lays an OpenDRIVE
    road on the ground (docs/roads.md), sampled every ``road_cell`` metres; its lanes have
    ``road_friction`` unless their material says otherwise.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, title="terrain")

    friction: NonNegative = 1.0
    height_map: str | None = None
    road_map: str | None = None
    friction_map: str | None = None
    hill_height: NonNegative = 10.0
    size: Positive = 1000.0
    road_friction: NonNegative = 1.0
    offroad_friction: NonNegative = 0.6
    road: str | None = None
    road_cell: Annotated[float, Field(ge=0.05, le=10.0)] = 0.5

    @property
    def flat(self) -> bool:
        """True without pictures or a road: level ground with ``friction`` everywhere."""
        pictures = (self.height_map, self.road_map, self.friction_map)
        return self.road is None and all(p is None for p in pictures)

    def build(self, base: Path | None = None) -> Terrain:
        """The terrain; picture paths are taken relative to ``base`` (a folder)."""
        if self.flat:
            return Terrain.flat(self.friction)

        def where(name: str | None) -> Path | None:
            return None if name is None else (base / name if base else Path(name))

        terrain = Terrain.from_images(
            where(self.height_map),
            where(self.road_map),
            where(self.friction_map),
            hill_height=self.hill_height,
            size=self.size,
            road_friction=self.road_friction,
            offroad_friction=self.offroad_friction,
        )
        if self.road is not None:
            terrain = terrain.with_road(str(where(self.road)), self.road_cell, self.road_friction)
        if self.friction == 1.0:
            return terrain
        return Terrain(terrain.height, terrain.friction * self.friction, terrain.road, terrain.grid)

    def read_road(self, base: Path | None = None) -> RoadNetwork | None:
        """The OpenDRIVE road laid on this terrain (for drawing it), or None without one."""
        if self.road is None:
            return None
        from vcosim.roads import load_road

        return load_road(base / self.road if base else Path(self.road))

    @classmethod
    def load(cls, path: str | Path) -> TerrainSpec:
        """A terrain file: a TOML of these keys, a road (``.xodr``) or a picture (a height-map).

        A road lies on flat ground, a picture's other keys are the defaults. Picture and road
        paths in the TOML become relative to its folder. Every problem is one ``ConfigError``
        naming the file.
        """
        path = Path(path)
        if path.suffix.lower() != ".toml":
            if not path.is_file():
                raise ConfigError(["no such file"], f"terrain {path}")
            if path.suffix.lower() == ".xodr":
                return cls(road=str(path))
            return cls(height_map=str(path))
        from vcosim.config import read_toml, validation_problems, with_number_problems

        source = f"terrain {path}"

        def build(data: dict[str, Any]) -> TerrainSpec:
            try:
                return cls(**data)
            except ValidationError as exc:
                raise ConfigError(validation_problems(exc), source) from None

        spec = with_number_problems(read_toml(path, source, numbers=False), source, build)
        folder = path.parent
        return spec.model_copy(
            update={
                k: str(folder / v)
                for k in ("height_map", "road_map", "friction_map", "road")
                if (v := getattr(spec, k)) is not None
            }
        )


def load_terrain(path: str | Path | None) -> Terrain:
    """The terrain of ``--terrain FILE`` (a TOML, a road or a height-map picture); None: flat."""
    return Terrain.flat() if path is None else TerrainSpec.load(path).build()
