from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from vcosim.errors import ConfigError
from vcosim.vehicle.terrain import Terrain, sample_terrain


def _save_blue(path: Path, blue: np.ndarray, mode: str = "RGB") -> Path:
    """Write ``blue`` (rows top to bottom) as the blue channel, with red/green as noise."""
    blue = np.asarray(blue, dtype=np.uint8)
    if mode == "L":
        Image.fromarray(blue, mode="L").save(path)
        return path
    rgb = np.zeros((*blue.shape, 3), dtype=np.uint8)
    rgb[:, :, 0] = 200
    rgb[:, :, 1] = 17
    rgb[:, :, 2] = blue
    Image.fromarray(rgb, mode="RGB").convert(mode).save(path)
    return path


def _sample(t: Terrain, x: float, y: float) -> tuple[float, float, float, float]:
    return sample_terrain(t.height, t.friction, t.grid, x, y)


@pytest.fixture
def ramp(tmp_path: Path) -> Terrain:
    """64 x 32 px, blue = 4 * column; 640 m wide -> 10 m cells; 25.5 m at 255 -> 0.4 m/col."""
    blue = np.tile(np.arange(64) * 4, (32, 1))
    path = _save_blue(tmp_path / "ramp.png", blue)
    return Terrain.from_images(height_map=path, hill_height=25.5, size=640.0)


def test_flat_terrain_is_level_everywhere() -> None:
    t = Terrain.flat()
    assert t.height.shape == (1, 1)
    for x, y in [(0.0, 0.0), (123.4, -987.6), (-1e6, 1e6)]:
        assert _sample(t, x, y) == (0.0, 0.0, 0.0, 1.0)
        assert t.sample(x, y) == (0.0, 1.0)
    assert Terrain.flat(friction=0.3).sample(5.0, 5.0) == (0.0, 0.3)


def test_from_images_without_maps_is_flat() -> None:
    t = Terrain.from_images()
    assert t.sample(10.0, -3.0) == (0.0, 1.0)


def test_ramp_height_and_slope(ramp: Terrain) -> None:
    assert ramp.height.shape == (32, 64)
    assert ramp.height.dtype == np.float64 and ramp.height.flags.c_contiguous
    np.testing.assert_allclose(ramp.grid, [-315.0, -155.0, 10.0])
    # column i is at x = -315 + 10 i, so x = 0 sits between columns 31 and 32
    for x, expected in [(0.0, 12.6), (-315.0, 0.0), (-310.0, 0.2), (100.0, 16.6), (315.0, 25.2)]:
        h, dhdx, dhdy, mu = _sample(ramp, x, 7.0)
        assert h == pytest.approx(expected, abs=1e-9)
        assert dhdx == pytest.approx(0.04, abs=1e-12)
        assert dhdy == 0.0
        assert mu == 1.0


def test_gradient_matches_finite_difference(ramp: Terrain) -> None:
    x, y, eps = 12.3, -4.5, 1e-4
    _, dhdx, _, _ = _sample(ramp, x, y)
    fd = (_sample(ramp, x + eps, y)[0] - _sample(ramp, x - eps, y)[0]) / (2 * eps)
    assert dhdx == pytest.approx(fd, rel=1e-6)


def test_top_of_image_is_north(tmp_path: Path) -> None:
    blue = np.zeros((20, 10))
    blue[0, :] = 255  # top row of the picture
    path = _save_blue(tmp_path / "north.png", blue, mode="L")
    t = Terrain.from_images(height_map=path, hill_height=5.0, size=200.0)
    # 20 rows over 200 m -> 10 m cells, rows at y = -95 ... +95
    assert t.sample(0.0, 95.0)[0] == pytest.approx(5.0)
    assert t.sample(0.0, -95.0)[0] == 0.0
    h, _, dhdy, _ = _sample(t, 0.0, 90.0)  # halfway between the top two rows
    assert h == pytest.approx(2.5)
    assert dhdy == pytest.approx(0.5)


def test_friction_map_full_blue_is_just_under_one(tmp_path: Path) -> None:
    blue = np.zeros((8, 8))
    blue[:, 4:] = 255
    path = _save_blue(tmp_path / "mu.png", blue, mode="RGBA")
    t = Terrain.from_images(friction_map=path, size=80.0)
    np.testing.assert_array_equal(t.height, 0.0)
    assert t.sample(35.0, 0.0)[1] == pytest.approx(0.99)
    assert t.sample(-35.0, 0.0)[1] == 0.0
    assert t.road is None


def test_road_map_sets_friction(tmp_path: Path) -> None:
    blue = np.zeros((10, 10))
    blue[:, 3:6] = 255
    path = _save_blue(tmp_path / "road.png", blue)
    t = Terrain.from_images(road_map=path, size=100.0, road_friction=0.9, offroad_friction=0.4)
    assert t.road is not None and t.road.dtype == bool
    assert t.road[:, 3:6].all() and not t.road[:, :3].any()
    # columns at x = -45 + 10 i; column 4 -> x = -5 (road), column 8 -> x = 35 (off road)
    assert t.sample(-5.0, 0.0) == (0.0, pytest.approx(0.9))
    assert t.sample(35.0, 0.0) == (0.0, pytest.approx(0.4))


def test_friction_map_wins_over_road_map(tmp_path: Path) -> None:
    road = _save_blue(tmp_path / "road.png", np.full((4, 4), 255))
    mu = _save_blue(tmp_path / "mu.png", np.full((4, 4), 0))
    t = Terrain.from_images(road_map=road, friction_map=mu, size=40.0)
    assert t.sample(0.0, 0.0)[1] == 0.0
    assert t.road is not None and t.road.all()


def test_clamped_outside_the_map(ramp: Terrain) -> None:
    east = _sample(ramp, 5000.0, 10.0)
    west = _sample(ramp, -5000.0, 10.0)
    assert east == (pytest.approx(25.2), 0.0, 0.0, 1.0)
    assert west == (0.0, 0.0, 0.0, 1.0)
    north = _sample(ramp, 0.0, 1e9)
    assert north == (pytest.approx(12.6), pytest.approx(0.04), 0.0, 1.0)
    assert _sample(ramp, float("nan"), float("inf"))[2] == 0.0


def test_single_row_and_single_column(tmp_path: Path) -> None:
    row = _save_blue(tmp_path / "row.png", np.array([[0, 255]]))
    t = Terrain.from_images(height_map=row, hill_height=2.0, size=20.0)
    assert t.height.shape == (1, 2)
    h, dhdx, dhdy, _ = _sample(t, 0.0, 123.0)
    assert (h, dhdx, dhdy) == (pytest.approx(1.0), pytest.approx(0.2), 0.0)

    col = _save_blue(tmp_path / "col.png", np.array([[255], [0]]))
    t = Terrain.from_images(height_map=col, hill_height=2.0, size=20.0)
    h, dhdx, dhdy, _ = _sample(t, -50.0, 0.0)
    assert (h, dhdx, dhdy) == (pytest.approx(1.0), 0.0, pytest.approx(0.2))


def test_bilinear_exact_at_samples_and_cell_centre(tmp_path: Path) -> None:
    blue = np.array([[40, 200], [0, 100]])  # rows top to bottom
    path = _save_blue(tmp_path / "quad.png", blue)
    t = Terrain.from_images(height_map=path, hill_height=255.0, size=2.0)
    # 1 m cells; samples at x, y = +-0.5; image top row is y = +0.5
    assert t.sample(-0.5, 0.5)[0] == 40.0
    assert t.sample(0.5, 0.5)[0] == 200.0
    assert t.sample(-0.5, -0.5)[0] == 0.0
    assert t.sample(0.5, -0.5)[0] == 100.0
    h, dhdx, dhdy, _ = _sample(t, 0.0, 0.0)
    assert h == pytest.approx((40 + 200 + 0 + 100) / 4)
    assert dhdx == pytest.approx(((200 - 40) + (100 - 0)) / 2)
    assert dhdy == pytest.approx(((40 - 0) + (200 - 100)) / 2)


def test_mismatched_sizes_are_rejected(tmp_path: Path) -> None:
    height = _save_blue(tmp_path / "h.png", np.zeros((32, 64)))
    road = _save_blue(tmp_path / "r.png", np.zeros((32, 60)))
    with pytest.raises(ConfigError) as info:
        Terrain.from_images(height_map=height, road_map=road)
    assert len(info.value.problems) == 1
    problem = info.value.problems[0]
    assert "same pixel size" in problem
    assert "height_map 64x32" in problem and "road_map 60x32" in problem


def test_every_problem_is_listed(tmp_path: Path) -> None:
    missing = tmp_path / "nope.png"
    garbage = tmp_path / "garbage.png"
    garbage.write_text("not an image")
    with pytest.raises(ConfigError) as info:
        Terrain.from_images(height_map=missing, friction_map=garbage, hill_height=-1.0, size=-5.0)
    problems = info.value.problems
    assert len(problems) == 4
    assert any("hill_height" in p for p in problems)
    assert any("size" in p for p in problems)
    assert any(str(missing) in p and "height_map" in p for p in problems)
    assert any(str(garbage) in p and "friction_map" in p for p in problems)


def test_inconsistent_arrays_are_rejected() -> None:
    with pytest.raises(ConfigError):
        Terrain(np.zeros((2, 2)), np.ones((2, 3)), None, np.array([0.0, 0.0, 1.0]))
    with pytest.raises(ConfigError):
        Terrain(np.zeros((2, 2)), np.ones((2, 2)), None, np.array([0.0, 0.0, 0.0]))
