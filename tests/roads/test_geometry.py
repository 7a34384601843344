"""Plan-view geometry against closed forms: Fresnel integrals, circles, cubics; loops close."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scenariogeneration import xodr
from scipy.special import fresnel

from helpers.roads import network_of
from vcosim.roads.geometry import Arc, ParamPoly3, Poly3, Spiral

MM = 1e-3


def fresnel_end(k0: float, k1: float, length: float, hdg: float = 0.0) -> tuple[float, float]:
    """End point of a clothoid from the origin by the Fresnel integrals (completing the square).

    heading(u) = hdg + k0 u + c u^2 / 2 = hdg - k0^2 / 2c + (pi / 2) tau^2 with
    tau = (u + k0 / c) sqrt(c / pi), so the integral of exp(i heading) is
    sqrt(pi / c) exp(i (hdg - k0^2 / 2c)) (E(tau1) - E(tau0)), E = C + i S.
    """
    c = (k1 - k0) / length
    scale = math.sqrt(math.pi / abs(c))
    sign = 1.0 if c > 0 else -1.0  # a clothoid tightening clockwise mirrors one anticlockwise
    tau = np.array([k0 / c, length + k0 / c]) / scale * sign
    s_, c_ = fresnel(tau)
    e = complex(c_[1] - c_[0], sign * (s_[1] - s_[0])) * scale * sign
    end = complex(math.cos(hdg - k0 * k0 / (2 * c)), math.sin(hdg - k0 * k0 / (2 * c))) * e
    return end.real, end.imag


@pytest.mark.parametrize(
    ("k0", "k1", "length"),
    [(0.0, 0.05, 80.0), (0.02, -0.03, 120.0), (-0.01, -0.2, 40.0), (0.0, 1.0 / 30, 300.0)],
)
def test_a_clothoid_ends_where_the_fresnel_integrals_say(k0: float, k1: float, length: float):
    spiral = Spiral(0.0, 0.0, 0.0, 0.3, length, k0=k0, k1=k1)
    x, y, heading = spiral.pose(np.array([length]))
    ex, ey = fresnel_end(k0, k1, length, hdg=0.3)
    assert math.hypot(x[0] - ex, y[0] - ey) < MM
    assert heading[0] == pytest.approx(0.3 + 0.5 * (k0 + k1) * length)


def test_an_arc_and_a_parampoly3_match_their_closed_forms():
    radius, angle = 25.0, 2.5  # more than a right angle, turning right
    arc = Arc(0.0, 10.0, -5.0, 1.0, radius * angle, k=-1.0 / radius)
    x, y, heading = arc.pose(np.array([radius * angle]))
    # Centre to the right of the start, the end rotated clockwise about it by the angle.
    cx, cy = 10.0 + radius * math.sin(1.0), -5.0 - radius * math.cos(1.0)
    ex = cx + radius * math.cos(1.0 + math.pi / 2 - angle)
    ey = cy + radius * math.sin(1.0 + math.pi / 2 - angle)
    assert math.hypot(x[0] - ex, y[0] - ey) < MM
    assert heading[0] == pytest.approx(1.0 - angle)

    u, v = (0.0, 30.0, 4.0, -2.0), (0.0, 0.0, 9.0, -3.0)
    for normalized, p in ((True, 1.0), (False, 37.0)):
        poly = ParamPoly3(0.0, 2.0, 3.0, -0.4, 37.0, u=u, v=v, normalized=normalized)
        x, y, heading = poly.pose(np.array([37.0]))
        uu, vv = (sum(c * p**n for n, c in enumerate(coef)) for coef in (u, v))
        du = u[1] + 2 * u[2] * p + 3 * u[3] * p * p
        dv = v[1] + 2 * v[2] * p + 3 * v[3] * p * p
        ex = 2.0 + uu * math.cos(-0.4) - vv * math.sin(-0.4)
        ey = 3.0 + uu * math.sin(-0.4) + vv * math.cos(-0.4)
        assert math.hypot(x[0] - ex, y[0] - ey) < MM
        assert heading[0] == pytest.approx(-0.4 + math.atan2(dv, du))


def test_a_poly3_is_walked_by_arc_length():
    """The point at arc length L has v = v(u) and the arc from 0 to u integrates to L."""
    coefficients = (0.5, 0.1, 0.01, -0.0004)
    poly = Poly3(0.0, 0.0, 0.0, 0.0, 50.0, coefficients=coefficients)
    u, v, _ = poly.local(np.array([50.0]))
    grid = np.linspace(0.0, u[0], 200001)
    slope = coefficients[1] + 2 * coefficients[2] * grid + 3 * coefficients[3] * grid**2
    arc = np.trapezoid(np.hypot(1.0, slope), grid)
    assert arc == pytest.approx(50.0, abs=MM)
    assert v[0] == pytest.approx(np.polyval(coefficients[::-1], u[0]))


def _corner(radius: float, spiral: float) -> list:
    """A left turn of 90 degrees: clothoid in, arc, clothoid out (no clothoids if 0)."""
    k = 1.0 / radius
    arc = math.pi / 2 - (spiral * k if spiral else 0.0)
    inner = [xodr.Arc(k, length=arc * radius)]
    if not spiral:
        return inner
    return [xodr.Spiral(0.0, k, length=spiral), *inner, xodr.Spiral(k, 0.0, length=spiral)]


def test_a_closed_loop_of_lines_arcs_and_clothoids_closes_within_a_millimetre():
    """Two corner kinds, the straights solved to close the loop by the Fresnel integrals.

    The record starts in the file come from the generator; each record's end as vcosim
    computes it must meet the next record's start, and the last one the loop's start.
    """
    radius, spiral = 40.0, 25.0
    k = 1.0 / radius
    # The corner with clothoids: in, arc, out. The way out mirrors the way in about the
    # corner's bisector, so its chord is the entry's (sx, sy) swapped.
    sx, sy = fresnel_end(0.0, k, spiral)
    turn = spiral * k / 2
    arc_end = math.pi / 2 - turn
    ax = radius * (math.sin(arc_end) - math.sin(turn))
    ay = radius * (math.cos(turn) - math.cos(arc_end))
    corner_b = complex(sx + ax + sy, sy + ay + sx)
    corner_a = complex(radius, radius)
    rot = [complex(math.cos(a), math.sin(a)) for a in (0.0, math.pi / 2, math.pi, 1.5 * math.pi)]
    a_len, b_len = 100.0, 60.0
    corners = corner_b * rot[0] + corner_a * rot[1] + corner_a * rot[2] + corner_b * rot[3]
    c_len, d_len = a_len + corners.real, b_len + corners.imag
    records = [
        xodr.Line(a_len),
        *_corner(radius, spiral),
        xodr.Line(b_len),
        *_corner(radius, 0.0),
        xodr.Line(c_len),
        *_corner(radius, 0.0),
        xodr.Line(d_len),
        *_corner(radius, spiral),
    ]
    network = network_of(xodr.create_road(records, 1))
    plan = network.road(1).plan
    ends = np.array([g.pose(np.array([g.length])) for g in plan.records])[:, :2, 0]
    starts = np.array([(g.x, g.y) for g in plan.records])
    assert np.hypot(*(ends[:-1] - starts[1:]).T).max() < MM
    assert math.hypot(*ends[-1]) < MM
    assert plan.pose(plan.length)[2][0] == pytest.approx(2 * math.pi)
