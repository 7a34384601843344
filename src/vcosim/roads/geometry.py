"""The plan view of a road: its reference line as a chain of OpenDRIVE geometry records.

Each record starts at ``(x, y)`` with heading ``hdg`` at road position ``s`` and runs for
``length`` metres; ``pose(ds)`` gives (x, y, heading) at distances ``ds`` into it, over arrays.
Lines and arcs are closed form; a spiral (clothoid, curvature linear in s) and a cubic are
integrated with Gauss-Legendre quadrature on pieces short enough that the heading turns less
than a radian on each, which is exact to rounding for these smooth integrands.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np

GAUSS_NODES, GAUSS_WEIGHTS = np.polynomial.legendre.leggauss(10)
MAX_TURN = 1.0  # rad: the heading change one quadrature piece may span

Poses = tuple[np.ndarray, np.ndarray, np.ndarray]
Profile = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class Geometry:
    """One plan-view record: a line unless a subclass bends it."""

    s: float
    x: float
    y: float
    hdg: float
    length: float

    def local(self, ds: np.ndarray) -> Poses:
        """(u, v, heading change) at ``ds``, in the frame of the start point."""
        return ds, np.zeros_like(ds), np.zeros_like(ds)

    def pose(self, ds: np.ndarray) -> Poses:
        """(x, y, heading) at distances ``ds`` along this record."""
        u, v, turn = self.local(np.asarray(ds, dtype=float))
        c, s = math.cos(self.hdg), math.sin(self.hdg)
        return self.x + c * u - s * v, self.y + s * u + c * v, self.hdg + turn

    def curvature(self, ds: np.ndarray) -> np.ndarray:
        """Curvature (1/m, + turns left) at ``ds``."""
        return np.zeros_like(np.asarray(ds, dtype=float))


Line = Geometry


@dataclass(frozen=True)
class Arc(Geometry):
    """A circular arc of constant ``k`` (1/m, + turns left)."""

    k: float = 0.0

    def local(self, ds: np.ndarray) -> Poses:
        """The chord form: no cancellation as ``k`` goes to 0."""
        half = 0.5 * self.k * ds
        chord = ds * np.sinc(half / math.pi)  # 2 sin(k ds / 2) / k
        return chord * np.cos(half), chord * np.sin(half), 2.0 * half

    def curvature(self, ds: np.ndarray) -> np.ndarray:
        """Constant."""
        return np.full_like(np.asarray(ds, dtype=float), self.k)


@dataclass(frozen=True)
class Spiral(Geometry):
    """A clothoid: curvature from ``k0`` to ``k1`` linearly over the length."""

    k0: float = 0.0
    k1: float = 0.0
    _knots: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Integrate once to the piece boundaries; a query then integrates one piece."""
        turn = max(abs(self.k0), abs(self.k1)) * self.length
        pieces = max(1, math.ceil(turn / MAX_TURN))
        edges = np.linspace(0.0, self.length, pieces + 1)
        u, v = _integrate(self._turn, edges[:-1], edges[1:])
        knots = np.zeros((pieces + 1, 3))
        knots[:, 0] = edges
        knots[1:, 1] = np.cumsum(u)
        knots[1:, 2] = np.cumsum(v)
        object.__setattr__(self, "_knots", knots)

    @property
    def rate(self) -> float:
        """Change of curvature per metre."""
        return (self.k1 - self.k0) / self.length if self.length > 0.0 else 0.0

    def _turn(self, ds: np.ndarray) -> np.ndarray:
        return ds * (self.k0 + 0.5 * self.rate * ds)

    def local(self, ds: np.ndarray) -> Poses:
        """The position integrated from the piece boundary just before each ``ds``."""
        knots = self._knots
        i = np.clip(np.searchsorted(knots[:, 0], ds, side="right") - 1, 0, len(knots) - 2)
        u, v = _integrate(self._turn, knots[i, 0], ds)
        return knots[i, 1] + u, knots[i, 2] + v, self._turn(ds)

    def curvature(self, ds: np.ndarray) -> np.ndarray:
        """Linear in ``ds``."""
        return self.k0 + self.rate * np.asarray(ds, dtype=float)


@dataclass(frozen=True)
class ParamPoly3(Geometry):
    """u(p), v(p) cubic in p; p runs over [0, length] (arcLength) or [0, 1] (normalized)."""

    u: tuple[float, float, float, float] = (0.0, 1.0, 0.0, 0.0)
    v: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)
    normalized: bool = True

    def _p(self, ds: np.ndarray) -> np.ndarray:
        return ds / self.length if self.normalized and self.length > 0.0 else ds

    def local(self, ds: np.ndarray) -> Poses:
        """Closed form in p; the heading is the direction of (u', v')."""
        p = self._p(ds)
        du, dv = _cubic_slope(self.u, p), _cubic_slope(self.v, p)
        return _cubic(self.u, p), _cubic(self.v, p), np.arctan2(dv, du)

    def curvature(self, ds: np.ndarray) -> np.ndarray:
        """(u'v'' - v'u'') / |(u', v')|^3."""
        p = self._p(np.asarray(ds, dtype=float))
        du, dv = _cubic_slope(self.u, p), _cubic_slope(self.v, p)
        ddu = 2.0 * self.u[2] + 6.0 * self.u[3] * p
        ddv = 2.0 * self.v[2] + 6.0 * self.v[3] * p
        return (du * ddv - dv * ddu) / np.maximum(np.hypot(du, dv), 1e-12) ** 3


@dataclass(frozen=True)
class Poly3(Geometry):
    """v(u) cubic in the local u (deprecated since OpenDRIVE 1.6, still met in files).

    ``ds`` is arc length, so u is found from a table of arc length over u (cubic Hermite
    between its rows: the derivative du/ds is known exactly).
    """

    coefficients: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)
    _table: tuple[np.ndarray, np.ndarray] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Arc length at u steps of at most 0.5 m up to u = length (arc length >= u)."""
        rows = max(8, math.ceil(self.length / 0.5)) + 1
        u = np.linspace(0.0, max(self.length, 1e-9), rows)
        arc = np.concatenate(([0.0], np.cumsum(_arc(self._speed, u[:-1], u[1:]))))
        object.__setattr__(self, "_table", (u, arc))

    def _speed(self, u: np.ndarray) -> np.ndarray:
        return np.hypot(1.0, _cubic_slope(self.coefficients, u))

    def _u(self, ds: np.ndarray) -> np.ndarray:
        u, arc = self._table
        i = np.clip(np.searchsorted(arc, ds, side="right") - 1, 0, len(u) - 2)
        h = arc[i + 1] - arc[i]
        t = (ds - arc[i]) / h
        m0, m1 = h / self._speed(u[i]), h / self._speed(u[i + 1])
        t2, t3 = t * t, t * t * t
        return (
            (2 * t3 - 3 * t2 + 1) * u[i]
            + (t3 - 2 * t2 + t) * m0
            + (-2 * t3 + 3 * t2) * u[i + 1]
            + (t3 - t2) * m1
        )

    def local(self, ds: np.ndarray) -> Poses:
        """v(u) at the u whose arc length is ``ds``."""
        u = self._u(ds)
        return u, _cubic(self.coefficients, u), np.arctan(_cubic_slope(self.coefficients, u))

    def curvature(self, ds: np.ndarray) -> np.ndarray:
        """The curvature v'' / (1 + v'^2)^1.5."""
        u = self._u(np.asarray(ds, dtype=float))
        c = self.coefficients
        return (2.0 * c[2] + 6.0 * c[3] * u) / self._speed(u) ** 3


def _cubic(c: tuple[float, ...], x: np.ndarray) -> np.ndarray:
    return c[0] + x * (c[1] + x * (c[2] + x * c[3]))


def _cubic_slope(c: tuple[float, ...], x: np.ndarray) -> np.ndarray:
    return c[1] + x * (2.0 * c[2] + x * 3.0 * c[3])


def _nodes(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Legendre nodes on [a, b] (one row per interval) and the half-widths."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    half = 0.5 * (b - a)
    return (0.5 * (a + b))[..., None] + half[..., None] * GAUSS_NODES, half


def _integrate(turn: Profile, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The integrals of (cos, sin) of ``turn(s)`` over [a, b], per interval."""
    nodes, half = _nodes(a, b)
    phase = turn(nodes)
    return half * (np.cos(phase) @ GAUSS_WEIGHTS), half * (np.sin(phase) @ GAUSS_WEIGHTS)


def _arc(speed: Profile, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The integral of ``speed`` over [a, b], per interval."""
    nodes, half = _nodes(a, b)
    return half * (speed(nodes) @ GAUSS_WEIGHTS)


class PlanView:
    """A road's reference line: its geometry records in order of s."""

    def __init__(self, records: list[Geometry]) -> None:
        self.records = sorted(records, key=lambda g: g.s)
        self.starts = np.array([g.s for g in self.records])
        self.length = (
            self.records[-1].s + self.records[-1].length - self.records[0].s
            if self.records
            else 0.0
        )

    def _each(self, s: np.ndarray) -> Iterator[tuple[Geometry, np.ndarray, np.ndarray]]:
        """(record, mask, ds) for every record some of ``s`` falls on (clamped to the ends)."""
        i = np.clip(np.searchsorted(self.starts, s, side="right") - 1, 0, len(self.records) - 1)
        for k in np.unique(i):
            g = self.records[k]
            mask = i == k
            yield g, mask, np.clip(s[mask] - g.s, 0.0, g.length)

    def pose(self, s: np.ndarray | float) -> Poses:
        """(x, y, heading) of the reference line at ``s`` (clamped to the road)."""
        s = np.atleast_1d(np.asarray(s, dtype=float))
        x, y, hdg = np.empty_like(s), np.empty_like(s), np.empty_like(s)
        for g, mask, ds in self._each(s):
            x[mask], y[mask], hdg[mask] = g.pose(ds)
        return x, y, hdg

    def curvature(self, s: np.ndarray | float) -> np.ndarray:
        """Curvature of the reference line at ``s``."""
        s = np.atleast_1d(np.asarray(s, dtype=float))
        k = np.empty_like(s)
        for g, mask, ds in self._each(s):
            k[mask] = g.curvature(ds)
        return k
