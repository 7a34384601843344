"""The simulator side's compiled work on a message: derived sources out, a reply's inputs in.

Apart from the layouts (``vcosim.tight.interface``), so that the controller block, which
only reads the layouts, does not import numba.
"""

from __future__ import annotations

from vcosim.tight.interface import ADD, BOOLEAN, FREEZE, KIND, MULTIPLY, TARGET, VALUE
from vcosim.vehicle import layout as L
from vcosim.vehicle._jit_cache import kernel
from vcosim.vehicle.writes import limit


@kernel
def derive_sources(x, out) -> None:
    """Fill the derived sources (after the vehicle's outputs) from the state ``x``."""
    w, qx, qy, qz = x[L.X_QUAT], x[L.X_QUAT + 1], x[L.X_QUAT + 2], x[L.X_QUAT + 3]
    base = L.N_OUTPUTS  # the derived sources follow the vehicle's outputs
    out[base] = x[L.X_RATE]
    out[base + 1] = x[L.X_RATE + 1]
    # columns of the body-to-world rotation: x (forward), z (up); right = -y (y points left)
    out[base + 2] = 1.0 - 2.0 * (qy * qy + qz * qz)
    out[base + 3] = 2.0 * (qx * qy + w * qz)
    out[base + 4] = 2.0 * (qx * qz - w * qy)
    out[base + 5] = 2.0 * (qx * qz + w * qy)
    out[base + 6] = 2.0 * (qy * qz - w * qx)
    out[base + 7] = 1.0 - 2.0 * (qx * qx + qy * qy)
    out[base + 8] = -2.0 * (qx * qy - w * qz)
    out[base + 9] = -(1.0 - 2.0 * (qx * qx + qz * qz))
    out[base + 10] = -2.0 * (qy * qz + w * qx)
    out[base + 11] = 0.0


@kernel  # cached with the vehicle's sources: it compiles in the catalogue's ``limit``
def apply_inputs(message, inputs, frozen, clamps, slots, limits) -> None:
    """Turn a reply into vehicle inputs, group by group (BeamNG's channel arithmetic).

    The value channel (0 if the group has none) is multiplied by the multiply channel and
    the add channel added, where present; a non-zero freeze channel holds the value last in
    force instead. NaN means "leave as it is": a NaN value keeps the input, a NaN multiply
    or add channel is left out. The result is written as every face writes inputs
    (``vcosim.vehicle.writes.limit``: clamped, counted per group, rounded or switched).
    ``slots`` holds the wire slots of each group (-1: none), ``limits`` its low and high.
    """
    for g in range(slots.shape[0]):
        row = slots[g]
        f = message[row[FREEZE]] if row[FREEZE] >= 0 else 0.0
        if f == f and f != 0.0:
            inputs[row[TARGET]] = frozen[g]
            continue
        v = message[row[VALUE]] if row[VALUE] >= 0 else 0.0
        if v != v:
            continue
        if row[MULTIPLY] >= 0:
            m = message[row[MULTIPLY]]
            if m == m:
                v *= m
        if row[ADD] >= 0:
            a = message[row[ADD]]
            if a == a:
                v += a
        if v != v:  # inf times a zero multiply channel: no value, so the input is kept
            continue
        kind = row[KIND]
        if kind == BOOLEAN:
            v = 1.0 if v != 0.0 else 0.0
        v, clamped = limit(v, limits[g, 0], limits[g, 1], kind)
        clamps[g] += clamped
        inputs[row[TARGET]] = v
        frozen[g] = v
