"""A SpeedProfileAction's speed against time, as esmini (the field's reference player) plays it.

Both following modes start from the same corners: one (time, speed) per entry, each ``time``
seconds after the last, its slope held within ``maxAcceleration``/``maxDeceleration`` (an
entry too steep is reached later, one without a time as fast as they allow), an entry of
time 0 inside the profile a step in speed.

- ``position``: straight lines between the corners; a first entry of time 0 is the speed the
  profile starts at (a step, as esmini does: ``condition_delay.xosc`` starts at 50 km/h).
- ``follow``: the corners rounded by a constant rate of acceleration change
  (``maxAccelerationRate``/``maxDecelerationRate``). The first bend starts from the speed and
  acceleration at the start (a first entry of time 0 is that speed, not a step), which shifts
  the first line; each later bend is centred on its corner; with a single entry the slope is
  chosen so the speed arrives at the entry's time (later when the limits forbid it).

A profile is a list of pieces ``(t, v, k, j)``: from ``t`` on the speed is
``v + k (τ) + j τ² / 2`` with τ = now − t, until the next piece.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from vcosim.openscenario import model as m

EPS = 1e-9
INSTANT = 1.0e6  # m/s2 (and m/s3): a limit the file does not give


class Piece(NamedTuple):
    """From ``t``: speed ``v``, acceleration ``k``, its rate ``j``."""

    t: float
    v: float
    k: float
    j: float


def plan(
    do: m.SpeedProfileAction, now: float, speed: float, acceleration: float, base: float
) -> list[Piece]:
    """The profile's pieces, started at ``now`` at ``speed`` and ``acceleration``.

    ``base``: the speed the entries are relative to (the entity's at the start; 0: absolute).
    """
    follow = do.following == "follow"
    corners = _corners(do, now, speed, base, follow)
    if len(corners) == 1:
        return [Piece(now, corners[0][1], 0.0, 0.0)]
    if not follow:
        pieces = [
            Piece(t0, v0, (v1 - v0) / (t1 - t0) if t1 > t0 else 0.0, 0.0)
            for (t0, v0), (t1, v1) in zip(corners, corners[1:], strict=False)
        ]
        return [*pieces, Piece(corners[-1][0], corners[-1][1], 0.0, 0.0)]
    up = do.max_acceleration_rate or INSTANT
    down = do.max_deceleration_rate or INSTANT
    if len(corners) == 2:
        return _one_entry(do, corners, acceleration, up, down)
    return _rounded(corners, acceleration, up, down)


def at(pieces: list[Piece], now: float) -> tuple[float, float]:
    """(speed, acceleration) of a profile at ``now`` (the last piece holds)."""
    piece = pieces[0]
    for p in pieces[1:]:
        if now < p.t - EPS:
            break
        piece = p
    tau = max(now - piece.t, 0.0)
    return piece.v + piece.k * tau + 0.5 * piece.j * tau * tau, piece.k + piece.j * tau


def _corners(
    do: m.SpeedProfileAction, now: float, speed: float, base: float, follow: bool
) -> list[tuple[float, float]]:
    """(time, speed) of each entry, its slope within the acceleration limits."""
    rise = do.max_acceleration or INSTANT
    fall = do.max_deceleration or INSTANT
    entries = [(base + s, t) for s, t in do.entries]
    corners = [(now, speed)]
    if entries[0][1] is not None and abs(entries[0][1]) < EPS:
        if not follow:
            corners = [(now, entries[0][0])]  # position: the profile starts at that speed
        entries = entries[1:]
    for n, (target, given) in enumerate(entries):
        t, v = corners[-1]
        dv = target - v
        if given is not None and given < EPS and n < len(entries) - 1:
            corners[-1] = (t, target)  # a step in speed inside the profile
            continue
        if given is None or given < EPS:
            if abs(dv) < EPS:
                continue
            duration = dv / rise if dv > 0 else -dv / fall
        else:
            slope = min(max(dv / given, -fall), rise)
            duration = dv / slope if abs(dv) > EPS else given
        corners.append((t + duration, target))
    return corners


def _rounded(corners: list[tuple[float, float]], k0: float, up: float, down: float) -> list[Piece]:
    """Follow mode, several entries: each bend between two lines rounded by a constant jerk."""
    lines = [
        ((v1 - v0) / (t1 - t0) if t1 > t0 else 0.0, v0, t0)
        for (t0, v0), (t1, v1) in zip(corners, corners[1:], strict=False)
    ]
    lines.append((0.0, corners[-1][1], corners[-1][0]))  # the end: the last speed held
    t, v = corners[0]
    k1 = lines[0][0]
    j = up if k1 > k0 else -down
    tau = (k1 - k0) / j if abs(k1 - k0) > EPS else 0.0
    pieces = [Piece(t, v, k0, j)] if tau > 0 else []
    t, v = t + tau, v + k0 * tau + 0.5 * j * tau * tau
    offset = v - k1 * t  # the first line, shifted to where the first bend ends
    pieces.append(Piece(t, v, k1, 0.0))
    ka, ma = k1, offset
    for kb, vb, tb in lines[1:]:
        mb = vb - kb * tb
        if abs(kb - ka) < EPS:
            continue
        j = up if kb > ka else -down
        tau = (kb - ka) / j
        start = max((mb - ma) / (ka - kb) - tau / 2.0, pieces[-1].t)  # centred on the corner
        pieces.append(Piece(start, ka * start + ma, ka, j))
        end = start + tau
        v_end = ka * start + ma + ka * tau + 0.5 * j * tau * tau
        pieces.append(Piece(end, v_end, kb, 0.0))
        ka, ma = kb, v_end - kb * end
    return pieces


def _one_entry(
    do: m.SpeedProfileAction, corners: list[tuple[float, float]], k0: float, up: float, down: float
) -> list[Piece]:
    """Follow mode, one entry: bend, line, bend, the speed arriving at the entry's time.

    The line's slope is found by bisection; with too little time the line vanishes and the
    speed arrives later, with too steep a slope it is held at the limit and arrives later.
    """
    (t0, v0), (t3, v3) = corners
    target, span = v3 - v0, t3 - t0
    sign = 1.0 if target >= 0 else -1.0
    limit = (do.max_acceleration or INSTANT) if sign > 0 else (do.max_deceleration or INSTANT)
    first = up if sign > 0 else -down  # jerk into the slope
    last = -down if sign > 0 else up  # jerk out of it

    def shape(k1: float, line: float | None) -> tuple[float, float, float, float]:
        """(gain, τ bend in, τ line, τ bend out) for slope ``k1``."""
        tau0 = max((k1 - k0) / first, 0.0)
        tau2 = -k1 / last
        tau1 = max(span - tau0 - tau2, 0.0) if line is None else line
        gain = k0 * tau0 + 0.5 * first * tau0 * tau0 + k1 * tau1 + 0.5 * k1 * tau2
        return gain, tau0, tau1, tau2

    low, high = 0.0, limit
    if sign * shape(sign * high, None)[0] < abs(target):  # too steep: held at the limit
        k1 = sign * high
        gain, tau0, _, tau2 = shape(k1, 0.0)
        tau1 = max((target - gain) / k1, 0.0)
    else:
        for _ in range(60):
            mid = 0.5 * (low + high)
            if sign * shape(sign * mid, None)[0] < abs(target):
                low = mid
            else:
                high = mid
        k1 = sign * high
        _, tau0, tau1, tau2 = shape(k1, None)
    pieces = [Piece(t0, v0, k0, first)]
    v1 = v0 + k0 * tau0 + 0.5 * first * tau0 * tau0
    pieces.append(Piece(t0 + tau0, v1, k1, 0.0))
    v2 = v1 + k1 * tau1
    pieces.append(Piece(t0 + tau0 + tau1, v2, k1, last))
    end = t0 + tau0 + tau1 + tau2
    pieces.append(Piece(end, v3, 0.0, 0.0))
    return [p for p in pieces if not math.isnan(p.v)]
