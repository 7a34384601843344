"""The scripted-driving language: conditions, drivers, phases and the drive through them."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vcosim.scenarios.manoeuvres import (
    LIMIT_FACTOR,
    Phase,
    Progress,
    clutch_out,
    combine,
    drive,
    faster_than,
    heading_error,
    hold_speed,
)
from vcosim.scenarios.metrics import column
from vcosim.vehicle import Vehicle


class Stub:
    """A vehicle that only answers ``signal`` (what conditions and drivers read)."""

    def __init__(self, **signals: float) -> None:
        self.signals = signals

    def signal(self, name: str) -> float:
        return self.signals[name]


def test_heading_error_is_wrapped_and_positive_to_the_left():
    assert heading_error(Stub(yaw=math.radians(350)), 0.0) == pytest.approx(math.radians(10))
    assert heading_error(Stub(yaw=math.radians(10)), 350.0) == pytest.approx(math.radians(-20))


def test_clutch_out_is_linear_and_holds_its_throttle():
    driver = clutch_out(2.0, throttle=0.4)
    assert driver(Stub(), 0.0) == {"clutch": 1.0, "throttle": 0.4}
    assert driver(Stub(), 1.0)["clutch"] == pytest.approx(0.5)
    assert clutch_out(2.0)(Stub(), 3.0) == {"clutch": 0.0}


def test_combine_lets_later_drivers_win_and_hold_speed_limits_the_turn_in():
    car = Stub(groundspeed=50 / 3.6, yaw=0.0)
    merged = combine(hold_speed(50, heading_deg=90), clutch_out(1.0, throttle=0.9))
    inputs = merged(car, 0.1)
    assert inputs["throttle"] == 0.9 and inputs["clutch"] == pytest.approx(0.9)
    assert inputs["steering"] == pytest.approx(0.14 * 0.1 / 0.5)  # reached over 0.5 s
    assert hold_speed(50, heading_deg=90)(car, 2.0)["steering"] == pytest.approx(0.14)


def test_drive_records_every_10_ms_cuts_short_and_reports_progress():
    car = Vehicle(engine_running=True)
    reports: list[Progress] = []
    phases = (
        Phase("hold", 0.5, {"brake": 1.0}),
        Phase("wait for 200 km/h", 0.2, {"brake": 1.0}, until=faster_than(200)),
    )
    run = drive(car, phases, reports.append)
    t = column(run.rows, "time")
    assert np.allclose(np.diff(t), 0.01) and t[0] == 0.0
    assert t[-1] == pytest.approx(0.5 + 0.2 * LIMIT_FACTOR)  # gave up at three times 0.2 s
    assert run.phase_starts == [("hold", 0.0), ("wait for 200 km/h", pytest.approx(0.5))]
    assert run.unfinished == ["wait for 200 km/h"]
    assert reports[0] == Progress("hold", 0.0, pytest.approx(0.7), reports[0].rtf)
    assert reports[-1].label == "done" and reports[-1].done == reports[-1].total == t[-1]
    assert {r.label for r in reports} == {"hold", "wait for 200 km/h", "done"}


def test_a_condition_that_holds_ends_the_phase_at_once():
    car = Vehicle(engine_running=True)
    run = drive(car, (Phase("already", 5.0, {}, until=lambda v: True),))
    assert run.rows.shape[0] == 1 and run.unfinished == []
