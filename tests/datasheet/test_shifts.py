"""The shift-quality measure on synthetic traces: what it calls a jolt, and what it does not."""

from __future__ import annotations

import numpy as np
import pytest

from vcosim.datasheet import shifts

DT = 0.002


def trace(
    acc: np.ndarray, start: float, end: float, gears: tuple[int, int]
) -> dict[str, np.ndarray]:
    """A 4 s trace: ``acc`` sampled every 2 ms, a shift from ``start`` to ``end`` (s)."""
    t = np.arange(len(acc)) * DT
    busy = (t >= start) & (t < end)
    gear = np.where(t < start + 0.05, gears[0], gears[1]).astype(float)
    return {"time": t, "accX": acc, "shift_in_progress": busy.astype(float), "gear": gear}


def test_a_shift_that_moves_between_its_levels_is_no_jolt() -> None:
    t = np.arange(2000) * DT
    acc = np.interp(t, [1.0, 1.4], [1.2, 0.7])  # the level falls smoothly through the shift
    (shift,) = shifts.shifts_in(trace(acc, 1.0, 1.4, (1, 2)))
    assert (shift.start_gear, shift.end_gear) == (1, 2)
    assert shift.excursion == pytest.approx(0.0, abs=1e-9)


def test_a_bump_is_measured_above_the_higher_level() -> None:
    t = np.arange(2000) * DT
    acc = np.where(t < 1.2, 1.0, 0.5)
    acc = acc + np.where((t >= 1.2) & (t < 1.3), 2.0, 0.0)  # 100 ms at 2.5 m/s^2
    (shift,) = shifts.shifts_in(trace(acc, 1.0, 1.4, (1, 2)))
    assert shift.excursion == pytest.approx(2.5 - 1.0, abs=1e-6)


def test_a_dip_is_measured_below_the_lower_level_in_20_ms_means() -> None:
    t = np.arange(2000) * DT
    acc = np.full_like(t, -0.5)
    acc[(t >= 1.2) & (t < 1.21)] = -3.5  # 10 ms at -3.5: a 20 ms mean halves it
    (shift,) = shifts.shifts_in(trace(acc, 1.0, 1.4, (3, 2)))
    assert (shift.start_gear, shift.end_gear) == (3, 2)
    assert shift.excursion == pytest.approx(1.5, abs=0.01)


def test_a_shift_too_close_to_the_ends_of_the_trace_is_left_out() -> None:
    acc = np.zeros(2000)
    assert shifts.shifts_in(trace(acc, 0.1, 0.5, (1, 2))) == []
    assert shifts.shifts_in(trace(acc, 3.5, 3.9, (1, 2))) == []


def test_shifts_to_and_from_neutral_are_not_counted() -> None:
    acc = np.zeros(2000)
    assert shifts.shifts_in(trace(acc, 1.0, 1.4, (0, 1))) == []
