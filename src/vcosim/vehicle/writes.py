"""How every face writes the vehicle's inputs: clamped to the catalogue's ranges, counted.

Compiled, and apart from the catalogue (``vcosim.vehicle.inputs``), so that a program that
only reads the catalogue (a controller, a contract client) does not import numba.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from vcosim.vehicle._jit_cache import njit
from vcosim.vehicle.inputs import INPUTS, INTEGER, KIND_CODES, SWITCH


@njit()
def limit(value: float, low: float, high: float, kind: int) -> tuple[float, int]:
    """A face's value as the input takes it, and 1 if it was out of range (else 0).

    Clamped to [low, high]; an ``INTEGER`` is then rounded, a ``SWITCH`` is 1 from 0.5 up.
    Every face writes through this (the tight coupling compiled into its reply kernel), so
    a value becomes the same input whichever way it came.
    """
    clamped = 0
    if value < low:
        value = low
        clamped = 1
    elif value > high:
        value = high
        clamped = 1
    if kind == INTEGER:
        value = float(round(value))
    elif kind == SWITCH:
        value = 1.0 if value >= 0.5 else 0.0
    return value, clamped


@njit()
def write_inputs(values, inputs, rows, limits, clamps) -> int:
    """Write ``values`` into ``inputs`` as the table says; how many values were clamped.

    ``rows`` holds (position in ``values``, slot in ``inputs``, kind code) per value and
    ``limits`` its (low, high); ``clamps`` counts the clamps of each row. A NaN holds the
    input (``NanRule``).
    """
    total = 0
    for r in range(rows.shape[0]):
        v = values[rows[r, 0]]
        if v != v:
            continue
        v, clamped = limit(v, limits[r, 0], limits[r, 1], rows[r, 2])
        inputs[rows[r, 1]] = v
        clamps[r] += clamped
        total += clamped
    return total


class InputWrites:
    """A face's table of the values it writes, and the clamps counted on them.

    The one way a face other than the tight coupling writes inputs (that one compiles
    ``limit`` into its channel arithmetic): ``write`` limits each value with its input's
    range and kind from the catalogue, holds an input on NaN, and counts clamps per name.
    """

    def __init__(self, writes: Sequence[tuple[int, int, str, str]]) -> None:
        """Build the table from ``writes``, one per value.

        Each is (position in the values, slot in the input array, the catalogue's input
        name, the name the face counts its clamps under).
        """
        self.names = tuple(counted for *_, counted in writes)
        rows, limits = [], []
        for position, slot, name, _ in writes:
            entry = INPUTS[name]
            rows.append((position, slot, KIND_CODES[entry.kind]))
            limits.append((entry.low, entry.high))
        self.rows = np.array(rows, dtype=np.int64).reshape(len(rows), 3)
        self.limits = np.array(limits, dtype=float).reshape(len(rows), 2)
        self.clamps = np.zeros(len(rows), dtype=np.int64)

    def write(self, values: np.ndarray, inputs: np.ndarray) -> int:
        """Write one set of values; how many were clamped (counted in ``clamps`` by value)."""
        return int(write_inputs(values, inputs, self.rows, self.limits, self.clamps))

    def take_clamps(self) -> dict[str, int]:
        """Clamps counted since the last call, by face name (and the counts start again)."""
        counted: dict[str, int] = {}
        for name, n in zip(self.names, self.clamps.tolist(), strict=True):
            if n:
                counted[name] = counted.get(name, 0) + n
        self.clamps[:] = 0
        return counted
