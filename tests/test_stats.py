"""Samples: exact while short, bounded and within half a bin once folded."""

import math

import numpy as np
import pytest

from vcosim.stats import CHUNK, RELATIVE_ERROR, Samples


def filled(values: np.ndarray) -> Samples:
    samples = Samples()
    for value in values:
        samples.add(float(value))
    return samples


def test_a_short_run_is_exact() -> None:
    values = np.random.default_rng(1).lognormal(-9.0, 1.0, 1000)
    samples = filled(values)
    assert samples.folded == 0
    for q in (0, 1, 50, 99, 99.9, 100):
        assert samples.percentile(q) == np.percentile(values, q)
    assert np.array_equal(np.asarray(samples), values)
    assert samples.last == values[-1]
    assert samples.std == pytest.approx(values.std())


def test_a_long_run_keeps_fixed_memory_and_percentiles_within_half_a_bin() -> None:
    values = np.random.default_rng(2).lognormal(-9.0, 1.5, 10 * CHUNK + 123)
    samples = filled(values)
    assert samples.folded == 10 * CHUNK  # everything older than the last chunk is folded
    assert len(samples) == values.size
    assert samples.min == values.min() and samples.max == values.max()
    assert samples.mean == pytest.approx(values.mean(), rel=1e-12)
    assert samples.std == pytest.approx(values.std(), rel=1e-9)
    for q in (0.1, 1, 50, 90, 99, 99.9):
        exact = np.percentile(values, q, method="lower")
        assert abs(samples.percentile(q) / exact - 1.0) <= RELATIVE_ERROR * 1.0001, q
    assert samples.percentile(0) == values.min() and samples.percentile(100) == values.max()
    spread = np.asarray(samples)  # one value per sample, at its bin's centre
    assert spread.size == values.size
    assert np.percentile(spread, 50) == pytest.approx(np.median(values), rel=2 * RELATIVE_ERROR)


def test_no_samples_are_nan_and_out_of_range_values_land_in_the_end_bins() -> None:
    samples = Samples()
    assert math.isnan(samples.percentile(50)) and math.isnan(samples.min) and len(samples) == 0
    for value in [0.0, 1e-12, 5e4] * CHUNK:
        samples.add(value)
    assert samples.min == 0.0 and samples.max == 5e4
    assert samples.percentile(10) == 0.0  # the lowest bin gives the exact minimum
    assert samples.percentile(90) == 5e4  # the highest the maximum
