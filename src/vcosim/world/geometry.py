"""Where the vehicles of a world are relative to each other: boxes, contacts, range readings.

Compiled with numba over plain arrays, because a world checks its 1000 vehicles for contact
after every physics step it could touch in. Every vehicle is an oriented box in the ground
plane: ``(cx, cy)`` its centre, ``yaw`` its heading, ``half_length`` and ``half_width``.

The broad phase sorts the boxes by x and sweeps (sweep and prune): a pair is examined only when
the x-extents of the circles around the two boxes (plus a margin) overlap, so a spread-out
world costs about N log N, not N².
"""

from __future__ import annotations

import math

import numpy as np

from vcosim.vehicle._jit_cache import kernel
from vcosim.vehicle.layout import Y_B, Y_YAW_RATE

# Range reading columns (one row per vehicle): a block for the nearest vehicle ahead (in the
# own lane or the cone), then one each for the nearest ahead in the lane to the left and to
# the right. Within a block, from its first column:
R_TARGET = 0  # index of the vehicle seen, -1 when nothing is in sight
R_DISTANCE = 1  # bumper gap along the sensor's heading (m)
R_RELATIVE_SPEED = 2  # target speed minus own along the heading (m/s); < 0: closing in
R_RELATIVE_ACCELERATION = 3  # target minus own acceleration along the heading (m/s2)
R_LATERAL = 4  # the target centre's offset to the left of the predicted own path (m)
R_LATERAL_SPEED = 5  # target velocity minus own across the heading (m/s), left positive
R_BLOCK = 6
R_AHEAD, R_LEFT, R_RIGHT = 0, R_BLOCK, 2 * R_BLOCK  # the blocks' first columns
N_RANGE = 3 * R_BLOCK


POSE_NAMES = ("x", "y", "yaw", "vx", "vy", "speed", "ax", "ay", "yaw_rate", "cx", "cy")


@kernel
def pose_table(outputs, box_offset) -> np.ndarray:
    """Rows ``POSE_NAMES``, a column per vehicle, read from the outputs in one pass.

    Position, heading, world velocity, ground speed, world acceleration, yaw rate, and the
    box centre ``box_offset`` ahead of the centre of gravity.
    """
    n = outputs.shape[0]
    out = np.empty((len(POSE_NAMES), n))
    for v in range(n):
        y = outputs[v]
        yaw = y[Y_B + 12]
        c, s = math.cos(yaw), math.sin(yaw)
        out[0, v], out[1, v], out[2, v] = y[Y_B], y[Y_B + 1], yaw
        out[3, v], out[4, v], out[5, v] = y[Y_B + 3], y[Y_B + 4], y[Y_B + 6]
        out[6, v] = c * y[Y_B + 7] - s * y[Y_B + 8]
        out[7, v] = s * y[Y_B + 7] + c * y[Y_B + 8]
        out[8, v] = y[Y_YAW_RATE]
        out[9, v] = y[Y_B] + box_offset[v] * c
        out[10, v] = y[Y_B + 1] + box_offset[v] * s
    return out


@kernel
def candidate_pairs(cx, cy, radius, margin, own) -> np.ndarray:
    """Pairs (i < j) whose circles, grown by ``margin``, may touch: a sort-and-sweep over x.

    Sorted by the circles' left edges, the sweep from each circle stops at the first whose left
    edge lies beyond its reach. Only pairs with a vehicle of the world's own (``i < own``) count:
    boxes from ``own`` on are external objects (SUMO traffic), which look after each other, so
    the sweep from an external box visits only the world's boxes after it (``next_own``): with
    one car among 1000 SUMO cars it visits about n boxes, not n times those in reach.
    Returns a (k, 2) array of indices.
    """
    n = cx.shape[0]
    order = np.argsort(cx - radius)
    next_own = np.empty(n + 1, dtype=np.int64)  # the first place from a on holding one of ours
    next_own[n] = n
    for a in range(n - 1, -1, -1):
        next_own[a] = a if order[a] < own else next_own[a + 1]
    out = np.empty((max(4 * n, 16), 2), dtype=np.int64)
    k = 0
    for a in range(n):
        i = order[a]
        right = cx[i] + radius[i] + margin
        b = a
        while True:
            b = b + 1 if i < own else next_own[b + 1]
            if b >= n:
                break
            j = order[b]
            if cx[j] - radius[j] > right:
                break
            dx, dy = cx[j] - cx[i], cy[j] - cy[i]
            limit = radius[i] + radius[j] + margin
            if dx * dx + dy * dy <= limit * limit:
                if k == out.shape[0]:
                    grown = np.empty((2 * k, 2), dtype=np.int64)
                    grown[:k] = out
                    out = grown
                out[k, 0], out[k, 1] = min(i, j), max(i, j)
                k += 1
    return out[:k]


@kernel
def box_overlap(cx, cy, yaw, half_length, half_width, i, j) -> float:
    """Depth of overlap of boxes ``i`` and ``j`` (m): the smallest push that parts them.

    Separating axis test over the four edge normals; 0 or less means apart.
    """
    depth = math.inf
    dx, dy = cx[j] - cx[i], cy[j] - cy[i]
    ci, si, cj, sj = math.cos(yaw[i]), math.sin(yaw[i]), math.cos(yaw[j]), math.sin(yaw[j])
    for ax, ay in ((ci, si), (-si, ci), (cj, sj), (-sj, cj)):
        reach_i = half_length[i] * abs(ci * ax + si * ay) + half_width[i] * abs(-si * ax + ci * ay)
        reach_j = half_length[j] * abs(cj * ax + sj * ay) + half_width[j] * abs(-sj * ax + cj * ay)
        gap = abs(dx * ax + dy * ay) - reach_i - reach_j
        depth = min(depth, -gap)
    return depth


@kernel
def overlapping_pairs(cx, cy, yaw, half_length, half_width, own) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of boxes (one among the first ``own``) that overlaps now, with its depth (m)."""
    radius = np.sqrt(half_length * half_length + half_width * half_width)
    pairs = candidate_pairs(cx, cy, radius, 0.0, own)
    keep = np.zeros(pairs.shape[0], dtype=np.bool_)
    depth = np.zeros(pairs.shape[0])
    for k in range(pairs.shape[0]):
        depth[k] = box_overlap(cx, cy, yaw, half_length, half_width, pairs[k, 0], pairs[k, 1])
        keep[k] = depth[k] > 0.0
    return pairs[keep], depth[keep]


@kernel
def safe_horizon(
    cx, cy, yaw, vx, vy, spin, half_length, half_width, accel_bound, horizon, touching, own
) -> float:
    """Time (s, at most ``horizon``) in which no two boxes can come to touch.

    Two boxes close in at most at their relative speed plus how fast their corners swing
    (``spin``: yaw rate times half-diagonal), plus what both can accelerate meanwhile
    (``accel_bound`` each): gap <= closing t + accel_bound t². The gap is the separating-axis
    gap, never more than the true distance. Pairs in ``touching`` (k, 2) already overlap and
    are left out: they were reported when they met.
    """
    radius = np.sqrt(half_length * half_length + half_width * half_width)
    fastest = math.sqrt((vx * vx + vy * vy).max()) + spin.max()
    reach = 2.0 * fastest * horizon + accel_bound * horizon * horizon
    pairs = candidate_pairs(cx, cy, radius, reach, own)
    best = horizon
    for k in range(pairs.shape[0]):
        i, j = pairs[k, 0], pairs[k, 1]
        known = False
        for m in range(touching.shape[0]):
            known = known or (touching[m, 0] == i and touching[m, 1] == j)
        if known:
            continue
        gap = -box_overlap(cx, cy, yaw, half_length, half_width, i, j)
        if gap <= 0.0:
            return 0.0
        closing = math.hypot(vx[j] - vx[i], vy[j] - vy[i]) + spin[i] + spin[j]
        # the positive root of accel_bound t² + closing t - gap = 0
        t = 2.0 * gap / (closing + math.sqrt(closing * closing + 4.0 * accel_bound * gap))
        best = min(best, t)
    return best


@kernel
def range_readings(
    cx, cy, yaw, vx, vy, ax, ay, yaw_rate, half_length, max_range, half_lane, cone, own
) -> np.ndarray:
    """What each vehicle's ideal forward range sensor sees: the nearest vehicle ahead.

    A vehicle is seen when its centre lies ahead within ``max_range`` and either within
    ``half_lane`` of the path the sensor's vehicle is predicted to take (the arc of its
    present curvature, yaw rate over speed) or within the cone of half-angle ``cone`` (rad).
    One not seen so whose centre is within a lane more of the path, to the left or the right,
    is in the neighbouring lane on that side: the nearest there fills that side's block (a car
    about to cut in is seen before it does). Distance is the bumper gap along the heading
    (centre distance minus both half lengths). Returns one row per vehicle: the blocks
    ``R_AHEAD``, ``R_LEFT``, ``R_RIGHT`` of columns ``R_*``, for the first ``own`` vehicles
    (the world's; the boxes after them are seen, but carry no sensor).
    """
    n = cx.shape[0]
    out = np.zeros((own, N_RANGE))
    for block in (R_AHEAD, R_LEFT, R_RIGHT):
        out[:, block + R_TARGET] = -1.0
        out[:, block + R_DISTANCE] = math.inf
    reach = max_range + 2.0 * half_length.max()
    pairs = candidate_pairs(cx, cy, np.zeros(n), reach, own)
    # each sensor's heading and predicted curvature, once (not once per pair it is in)
    cos_yaw, sin_yaw, curvatures = np.empty(own), np.empty(own), np.empty(own)
    for i in range(own):
        cos_yaw[i], sin_yaw[i] = math.cos(yaw[i]), math.sin(yaw[i])
        speed = math.hypot(vx[i], vy[i])
        curvature = yaw_rate[i] / speed if speed > 1.0 else 0.0
        curvatures[i] = min(max(curvature, -0.02), 0.02)  # a radius of 50 m or more
    for k in range(pairs.shape[0]):
        for flip in range(2):
            i, j = (pairs[k, 0], pairs[k, 1]) if flip == 0 else (pairs[k, 1], pairs[k, 0])
            if i >= own:
                continue
            c, s = cos_yaw[i], sin_yaw[i]
            dx, dy = cx[j] - cx[i], cy[j] - cy[i]
            along, left = c * dx + s * dy, -s * dx + c * dy
            if along <= 0.0 or along > max_range + half_length[i] + half_length[j]:
                continue
            lateral = left - 0.5 * curvatures[i] * along * along
            if abs(lateral) <= half_lane or abs(math.atan2(left, along)) <= cone:
                block = R_AHEAD
            elif abs(lateral) <= 3.0 * half_lane:
                block = R_LEFT if lateral > 0.0 else R_RIGHT
            else:
                continue
            distance = along - half_length[i] - half_length[j]
            if distance < out[i, block + R_DISTANCE]:
                dvx, dvy = vx[j] - vx[i], vy[j] - vy[i]
                out[i, block + R_TARGET] = j
                out[i, block + R_DISTANCE] = distance
                out[i, block + R_RELATIVE_SPEED] = c * dvx + s * dvy
                out[i, block + R_RELATIVE_ACCELERATION] = c * (ax[j] - ax[i]) + s * (ay[j] - ay[i])
                out[i, block + R_LATERAL] = lateral
                out[i, block + R_LATERAL_SPEED] = -s * dvx + c * dvy
    return out
