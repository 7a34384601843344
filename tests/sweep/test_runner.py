"""One run: the metrics' definitions, determinism, the transports and timings, failures."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vcosim.scenarios.metrics import step_response
from vcosim.sweep.metrics import (
    MEASURED_COMPUTE_COLUMNS,
    TIMING_COLUMNS,
    RunMetrics,
    min_realtime_factor,
)
from vcosim.sweep.runner import SignalSpec, run_scenario, safe_run


def deterministic(metrics: RunMetrics) -> dict[str, float]:
    return metrics.deterministic()


def test_the_step_response_the_tracking_metrics_come_from():
    t = np.arange(0, 10.0001, 0.5)
    y = np.minimum(t * 3.0, 12.0)  # ramp from 0 to 12 at t = 4 ...
    y[t >= 4.0] = 12.0
    y[t == 4.5] = 10.5  # ... a dip out of the band ...
    y[t >= 8.0] = 9.9  # ... then it settles 0.1 under the target
    m = step_response(t, y, 12.0, band=0.02, band_min=0.1, steady_window=1.0)
    assert m.band == pytest.approx(0.24)  # max(0.02 * 12, 0.1)
    assert m.settling_time == math.inf  # 9.9 is 2.1 below the target to the end
    y[t >= 8.0] = 11.9
    m = step_response(t, y, 12.0, band=0.02, band_min=0.1, steady_window=1.0)
    assert m.settling_time == 5.0  # first sample after the dip at 4.5
    assert m.overshoot == 0.0 and m.overshoot_pct == 0.0
    assert m.steady_state_error == pytest.approx(0.1)  # mean of t >= 9: 11.9
    assert m.step_size == 12.0 and m.final_value == 11.9


def test_overshoot_follows_the_direction_of_the_step():
    t = np.arange(5.0)
    down = step_response(t, np.array([10.0, 6.0, 3.5, 4.0, 4.0]), 4.0)
    assert down.overshoot == pytest.approx(0.5)
    assert down.overshoot_pct == pytest.approx(100 * 0.5 / 6.0)
    assert down.settling_time == 3.0  # band max(0.12, 0.1): 3.5 is outside
    flat = step_response(t, np.array([4.0, 4.3, 4.0, 3.8, 4.0]), 4.0)
    assert flat.overshoot == pytest.approx(0.3)  # no step: any excursion counts
    assert math.isnan(flat.overshoot_pct)
    assert step_response(t, np.full(5, 4.0), 4.0).settling_time == 0.0


def test_min_realtime_factor():
    assert min_realtime_factor(0.005, 1, 0.0, 0.0) == math.inf
    assert min_realtime_factor(0.005, 1, 0.0, 0.00001) == pytest.approx(500.0)
    assert min_realtime_factor(0.005, 1, 0.01, 0.0) == pytest.approx(0.5)  # throughput
    assert min_realtime_factor(0.005, 1, 0.004, 0.002) == pytest.approx(0.005 / 0.006)
    assert min_realtime_factor(0.005, 2, 0.004, 0.002) == pytest.approx(1.25)  # window hides


def test_a_run_is_deterministic_with_friction_noise(make_sweep):
    sweep = make_sweep({}, vehicle={"tyres": {"friction_noise_variance": 0.01, "noise_seed": 3}})
    spec = SignalSpec(("groundspeed", "accY", "yaw_deg"), every=1)
    a, sa = run_scenario(sweep.scenario, {}, spec)
    b, sb = run_scenario(sweep.scenario, {}, spec)
    assert deterministic(a) == deterministic(b)
    for name in sa:
        np.testing.assert_array_equal(sa[name], sb[name])
    other, _ = run_scenario(sweep.scenario, {"vehicle.tyres.noise_seed": 4})
    assert deterministic(other) != deterministic(a)
    # 0.5 s at 5 ms; the reply to message 0 (id 0) is never applied, one reply is in flight
    assert a.applied == 98 and a.sent == 100
    assert a.target == 8.0 and a.final_value > 0.1


def test_in_process_and_udp_lockstep_runs_give_identical_signals(make_sweep):
    sweep = make_sweep({}, duration=2.0, scenario={"manoeuvre": [{"time": 1.0, "steering": 0.2}]})
    spec = SignalSpec(
        ("groundspeed", "accY", "yaw", "throttle", "brake", "steering", "rpm"), every=1
    )
    for params in ({}, {"coupling.memory": True, "coupling.ext_time": 0.0005}):
        local, ls = run_scenario(sweep.scenario, params, spec)
        udp, us = run_scenario(sweep.scenario, {**params, "coupling.transport": "udp"}, spec)
        assert deterministic(local) == deterministic(udp)
        for name in ls:
            np.testing.assert_array_equal(ls[name], us[name], err_msg=name)
        assert local.max_lateral_acceleration > 0.5  # the steering step did something


def test_realtime_timing_lands_replies_after_the_computation_time(make_sweep):
    sweep = make_sweep({}, duration=1.0)
    lockstep, _ = run_scenario(sweep.scenario, {})
    fast, _ = run_scenario(sweep.scenario, {"coupling.timing": "realtime"})
    slow, _ = run_scenario(
        sweep.scenario, {"coupling.timing": "realtime", "coupling.compute_time": 0.004}
    )
    again, _ = run_scenario(
        sweep.scenario, {"coupling.timing": "realtime", "coupling.compute_time": 0.004}
    )
    assert deterministic(slow) == deterministic(again)
    assert lockstep.final_value != fast.final_value != slow.final_value
    assert slow.compute_time == 0.004
    assert slow.min_realtime_factor == pytest.approx(0.005 / (0.004 + 0.00001))
    assert slow.wall_clock == TIMING_COLUMNS  # a simulated computation time is deterministic
    measured, _ = run_scenario(
        sweep.scenario,
        {
            "coupling.timing": "realtime",
            "coupling.compute_time": "measured",
            "coupling.busy_time": 0.0002,
        },
    )
    assert measured.compute_time >= 0.0002  # the p99 of the measured times
    assert measured.compute_time_median >= 0.0002
    assert set(MEASURED_COMPUTE_COLUMNS) <= set(measured.wall_clock)


def test_initial_speed_and_manoeuvre(make_sweep):
    sweep = make_sweep(
        {},
        duration=1.0,
        scenario={"initial_speed": 6.0, "manoeuvre": [{"time": 0.5, "steering": 0.3}]},
    )
    metrics, signals = run_scenario(
        sweep.scenario, {}, SignalSpec(("groundspeed", "steering"), every=100)
    )
    assert abs(signals["groundspeed"][0] - 6.0) < 0.05
    assert metrics.step_size == pytest.approx(8.0 - signals["groundspeed"][0])
    np.testing.assert_allclose(signals["time"], np.arange(21) * 0.05)
    steering = signals["steering"]  # the event applies before the step after t = 0.5 s
    assert np.all(steering[:11] == 0.0) and steering[11] > 0.0 and steering[-1] > 0.1
    assert metrics.max_lateral_acceleration > 0.5


def test_open_loop_runs_without_a_controller(make_sweep):
    sweep = make_sweep(
        {},
        controller={"name": "none"},
        metrics={"signal": "groundspeed"},
        scenario={"manoeuvre": [{"time": 0.0, "throttle": 0.5}]},
    )
    metrics, _ = run_scenario(sweep.scenario, {})
    assert metrics.final_value > 0.0
    assert math.isnan(metrics.settling_time) and math.isnan(metrics.min_realtime_factor)


def test_a_failing_run_is_a_failed_result(make_sweep):
    sweep = make_sweep(  # 1 s: the launch takes the car past 0.2 m/s only after 0.5 s
        {},
        duration=1.0,
        controller={"name": "sweep_faulty:Faulty", "speed": 8.0, "fail_above": 0.2},
    )
    result = safe_run(5, sweep.scenario, {"controller.kp": 0.5})
    assert result.failed and result.index == 5
    assert result.params == {"controller.kp": 0.5}
    assert result.error.startswith("ValueError: speed 0.2 above 0.2")
    assert "sweep_faulty.py" in result.traceback
    assert math.isnan(result.metrics.settling_time)
    ok = safe_run(6, sweep.scenario, {"controller.fail_above": 100.0})
    assert not ok.failed and ok.error == ""


def test_min_realtime_factor_reflects_the_controller_that_ran(make_sweep):
    """Unset, the computation time is the step function's measured one, not an instant one.

    (It was 0: every run then showed T_c / T_ping, 500 at T_ext 5 ms, whatever the controller.)
    """
    sweep = make_sweep({}, duration=0.5)
    heavy, _ = run_scenario(sweep.scenario, {"coupling.busy_time": 0.004})
    assert heavy.compute_time >= 0.004 and heavy.compute_time == heavy.compute_time_p99
    assert heavy.min_realtime_factor <= 0.005 / 0.004  # 1.25 at most: barely real time
    assert heavy.min_realtime_factor == pytest.approx(
        min_realtime_factor(0.005, 1, heavy.compute_time, 0.00001)
    )
    light, _ = run_scenario(sweep.scenario, {})
    assert light.min_realtime_factor > heavy.min_realtime_factor
    assert set(MEASURED_COMPUTE_COLUMNS) <= set(light.wall_clock)
    assert "min_realtime_factor" not in light.deterministic()
    given, _ = run_scenario(sweep.scenario, {"coupling.compute_time": 0.0})
    assert given.min_realtime_factor == pytest.approx(500.0)  # simulated 0: only T_ping
    assert given.deterministic()["min_realtime_factor"] == pytest.approx(500.0)


def test_run_metrics_are_typed_rows():
    row = RunMetrics(settling_time=1.5, sent=10.0)
    as_dict = row.to_dict()
    assert list(as_dict)[:2] == ["settling_time", "overshoot"]
    assert as_dict["settling_time"] == 1.5 and math.isnan(as_dict["overshoot"])
    assert row.column("sent") == 10.0 and row["sent"] == 10.0  # a Report reads as a mapping
    with pytest.raises(KeyError):
        row.column("wall_clock")  # an attribute, not a column
    assert "wall_time" in as_dict and "wall_time" not in row.deterministic()
