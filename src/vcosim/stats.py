"""Timing samples in bounded memory, for runs of any length.

A coupling measures a computation time, a round trip or a frame's lateness per message; kept
in a list, that is 80 bytes a message, gigabytes an hour in lock-step. ``Samples`` keeps the
latest ``CHUNK`` values exactly and folds older ones into a histogram of log-spaced bins, so
its memory is fixed, a sample costs a list append, and the percentiles of a whole run are
known to within half a bin (``RELATIVE_ERROR``); a short run's (no more than ``CHUNK``
samples) are exact, as are the count, minimum, maximum and mean of any run.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

CHUNK = 4096
"""Samples held exactly; a full chunk is folded into the histogram (tens of µs, once per chunk)."""
BINS_PER_DECADE = 200
LOWEST, HIGHEST = 1e-9, 1e3
"""The histogram's range (s, or whatever unit the samples have); values beyond it go to its end
bins, and a percentile that falls in one of them is the exact minimum or maximum."""
_BINS = round(math.log10(HIGHEST / LOWEST) * BINS_PER_DECADE)
RELATIVE_ERROR = 10 ** (0.5 / BINS_PER_DECADE) - 1.0
"""Largest relative error of a percentile once samples were folded (about 0.58 %)."""


class Samples:
    """A stream of non-negative samples: ``add`` each, ask for percentiles at the end.

    ``append`` is ``add`` (callers that kept a list go on appending); ``last`` is the latest
    sample, and ``numpy.asarray(samples)`` gives the exact samples of a short run or, once
    folded, one value per sample at its bin's centre.
    """

    __slots__ = ("_counts", "_max", "_min", "_pending", "_squares", "_sum", "folded", "last")

    def __init__(self) -> None:
        self._pending: list[float] = []
        self._counts = np.zeros(_BINS, dtype=np.int64)
        self.folded = 0
        """Samples in the histogram (the rest are held exactly)."""
        self._min, self._max, self._sum, self._squares = math.inf, -math.inf, 0.0, 0.0
        self.last = math.nan
        """The latest sample (NaN before the first)."""

    def add(self, value: float) -> None:
        """Record one sample (a list append; every ``CHUNK``-th also folds the chunk)."""
        pending = self._pending
        pending.append(value)
        self.last = value
        if len(pending) >= CHUNK:
            self._fold()

    append = add

    def _fold(self) -> None:
        values = np.asarray(self._pending, dtype=float)
        self._pending.clear()
        self._min = min(self._min, float(values.min()))
        self._max = max(self._max, float(values.max()))
        self._sum += float(values.sum())
        self._squares += float(np.dot(values, values))
        self._counts += np.bincount(_bin_of(values), minlength=_BINS)
        self.folded += values.size

    def __len__(self) -> int:
        return self.folded + len(self._pending)

    @property
    def count(self) -> int:
        """Samples recorded."""
        return len(self)

    @property
    def min(self) -> float:
        """The smallest sample (NaN if none)."""
        low = min(self._min, min(self._pending, default=math.inf))
        return low if len(self) else math.nan

    @property
    def max(self) -> float:
        """The largest sample (NaN if none)."""
        high = max(self._max, max(self._pending, default=-math.inf))
        return high if len(self) else math.nan

    @property
    def mean(self) -> float:
        """The mean of every sample (NaN if none)."""
        n = len(self)
        return (self._sum + math.fsum(self._pending)) / n if n else math.nan

    @property
    def std(self) -> float:
        """The standard deviation of every sample (NaN if none)."""
        n = len(self)
        if not n:
            return math.nan
        if not self.folded:
            return float(np.std(self._pending))
        pending = np.asarray(self._pending, dtype=float)
        mean = (self._sum + float(pending.sum())) / n
        squares = self._squares + float(np.dot(pending, pending))
        return math.sqrt(max(squares / n - mean * mean, 0.0))

    def percentile(self, q: float) -> float:
        """The ``q``-th percentile (0-100) of every sample; NaN if none.

        Exact (numpy's linear interpolation) while nothing is folded; afterwards the centre
        of the bin that holds it, within ``RELATIVE_ERROR``, and 0 and 100 give the exact
        minimum and maximum.
        """
        if not len(self):
            return math.nan
        if not self.folded:
            return float(np.percentile(self._pending, q))
        if q <= 0.0:
            return self.min
        if q >= 100.0:
            return self.max
        counts = self._counts.copy()
        if self._pending:
            counts += np.bincount(_bin_of(np.asarray(self._pending)), minlength=_BINS)
        rank = q / 100.0 * (len(self) - 1)  # the sample at this rank (0-based), as numpy's
        index = int(np.searchsorted(np.cumsum(counts), math.floor(rank) + 1))
        if index == 0:  # the end bins hold whatever lies beyond the range: bounded by the
            return self.min  # exact extremes instead
        if index == _BINS - 1:
            return self.max
        return min(max(float(_centre(index)), self.min), self.max)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        if not self.folded:
            values = np.asarray(self._pending, dtype=float)
        else:
            counts = self._counts + np.bincount(
                _bin_of(np.asarray(self._pending, dtype=float)), minlength=_BINS
            )
            centres = np.clip(_centre(np.arange(_BINS)), self.min, self.max)
            values = np.repeat(centres, counts)
        return values if dtype is None else values.astype(dtype)


def _bin_of(values: np.ndarray) -> np.ndarray:
    """The histogram bin of each value (NaN and values below ``LOWEST``: the lowest)."""
    scaled = np.log10(np.fmax(values, LOWEST) / LOWEST) * BINS_PER_DECADE
    return np.minimum(scaled.astype(np.int64), _BINS - 1)


def _centre(index: Any) -> Any:
    return LOWEST * 10.0 ** ((np.asarray(index) + 0.5) / BINS_PER_DECADE)
