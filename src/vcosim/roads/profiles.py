"""Piecewise cubics in s: how OpenDRIVE writes elevation, superelevation, offsets and widths."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


class Cubic:
    """a + b ds + c ds^2 + d ds^3, a record per start; ds from the record's own start.

    No records: zero everywhere. Before the first record the first one extends backwards,
    as a file whose records start past 0 is read by other tools.
    """

    def __init__(self, records: Sequence[tuple[float, float, float, float, float]] = ()) -> None:
        rows = sorted(records, key=lambda r: r[0])
        self.starts = np.array([r[0] for r in rows], dtype=float)
        self.coefficients = np.array([r[1:] for r in rows], dtype=float).reshape(-1, 4)

    def __bool__(self) -> bool:
        return len(self.starts) > 0

    def _locate(self, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        i = np.clip(np.searchsorted(self.starts, s, side="right") - 1, 0, len(self.starts) - 1)
        return self.coefficients[i], s - self.starts[i]

    def value(self, s: np.ndarray | float) -> np.ndarray:
        """The profile at ``s``."""
        s = np.asarray(s, dtype=float)
        if not self:
            return np.zeros_like(s)
        c, ds = self._locate(s)
        return c[..., 0] + ds * (c[..., 1] + ds * (c[..., 2] + ds * c[..., 3]))

    def slope(self, s: np.ndarray | float) -> np.ndarray:
        """The derivative along s at ``s``."""
        s = np.asarray(s, dtype=float)
        if not self:
            return np.zeros_like(s)
        c, ds = self._locate(s)
        return c[..., 1] + ds * (2.0 * c[..., 2] + ds * 3.0 * c[..., 3])
