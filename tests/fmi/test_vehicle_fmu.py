"""The vehicle FMU under fmpy: valid, simulates from an input file, rolls back, closes a loop."""

from __future__ import annotations

import csv
import gc
import subprocess
import sys

import numpy as np
import pytest
from fmpy import read_model_description
from fmpy.fmi1 import FMICallException
from fmpy.validation import validate_fmu

from vcosim.controllers.fmu import FmuController
from vcosim.fmi.metadata import INPUTS, OUTPUTS, PARAMETERS
from vcosim.sim.pacing import Pacer
from vcosim.sim.simulation import Simulation
from vcosim.tight.endpoint import CouplingConfig
from vcosim.tight.inprocess import couple_in_process
from vcosim.tight.views import SimulatorMessage
from vcosim.vehicle import Vehicle

VERSIONS = pytest.mark.parametrize("version", [2, 3], ids=["fmi2", "fmi3"])
STEP = 0.005  # the controller's step: 10 physics steps


@VERSIONS
def test_the_model_description_passes_fmpy_validation(vehicle_fmus, version):
    assert validate_fmu(str(vehicle_fmus[version])) == []


@VERSIONS
def test_the_model_description_names_units_ranges_and_parameters(vehicle_fmus, version):
    description = read_model_description(str(vehicle_fmus[version]))
    variables = {v.name: v for v in description.modelVariables}
    inputs = [v.name for v in description.modelVariables if v.causality == "input"]
    assert inputs == [i.name for i in INPUTS]
    assert {v.name for v in description.modelVariables if v.causality == "output"} == {
        o.name for o in OUTPUTS
    }
    throttle, groundspeed = variables["throttle"], variables["groundspeed"]
    assert (throttle.unit, throttle.min, throttle.max) == ("1", "0", "1")
    assert (variables["steering"].min, variables["steering"].max) == ("-1", "1")
    assert (variables["gear"].min, variables["gear"].max, variables["gear"].start) == (
        "-1",
        "5",
        "1",  # automatic gearbox: D
    )
    assert groundspeed.unit == "m/s"
    assert variables["wheelRL_propulsionTorque"].unit == "N.m"
    assert variables["rpm"].unit == "1/min"
    for p in PARAMETERS:
        assert variables[p.name].causality == "parameter"
        assert variables[p.name].variability == "fixed"
    assert variables["body.chassis_mass"].start == "1350"
    assert {u.name for u in description.unitDefinitions} >= {"m/s", "N.m", "rad", "1/min"}
    assert description.coSimulation.canGetAndSetFMUstate


@VERSIONS
def test_fmpy_simulate_with_an_input_file_produces_the_documented_outputs(
    vehicle_fmus, version, tmp_path
):
    inputs = tmp_path / "inputs.csv"
    inputs.write_text('"time","throttle","brake"\n0,0.4,0\n4,0.4,0\n4,0,0.6\n8,0,0.6\n')
    result = tmp_path / "result.csv"
    command = [
        *(sys.executable, "-c", "from fmpy.cli import main; main()"),
        *("simulate", str(vehicle_fmus[version]), "--input-file", str(inputs)),
        *("--stop-time", "8", "--output-interval", "0.01", "--output-file", str(result)),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    # The native FMU: no runtime that damages the heap, so no abort at exit is accepted.
    assert done.returncode == 0, done.stderr[-2000:]
    with result.open() as f:
        rows = list(csv.reader(f))
    header, values = rows[0], np.array(rows[1:], dtype=float)
    assert header == ["time", *(o.name for o in OUTPUTS)]
    column = {name: values[:, i] for i, name in enumerate(header)}
    at = {t: int(np.argmin(np.abs(column["time"] - t))) for t in (0.0, 4.0, 8.0)}
    assert column["groundspeed"][at[0.0]] == pytest.approx(0.0, abs=1e-6)
    assert column["groundspeed"][at[4.0]] > 5.0  # pulled away in D on 40 % throttle
    assert column["applied.gear"][at[4.0]] >= 1
    assert column["throttle_input"][at[0.0] + 10] == pytest.approx(0.4)
    assert column["groundspeed"][at[8.0]] < 0.1  # braked to a stop
    assert column["rpm"][at[8.0]] > 600  # the engine idles on


@VERSIONS
def test_a_rollback_with_get_and_set_state_replays_bit_for_bit(vehicle_fmus, version, open_fmu):
    car = open_fmu(vehicle_fmus[version]).start(**{"tyres.friction": 0.8})
    car.set(throttle=0.5)
    for _ in range(100):
        car.step(STEP)
    saved, saved_time = car.state(), car.time

    def drive() -> list[list[float]]:
        trace = []
        for k in range(150):
            car.set(steering=0.3 * np.sin(k / 20), brake=0.2 if k > 120 else 0.0)
            car.step(STEP)
            trace.append(car.get("posX", "posY", "yaw", "rpm", "wheelFL_Fy", "applied.gear"))
        return trace

    first = drive()
    car.restore(saved, saved_time)
    assert car.get("posX") != first[-1][:1]  # really back
    assert drive() == first


@VERSIONS
def test_a_step_that_is_no_multiple_of_half_a_millisecond_is_refused(
    vehicle_fmus, version, open_fmu
):
    car = open_fmu(vehicle_fmus[version]).start()
    car.step(0.001)
    with pytest.raises(Exception, match="DoStep failed"):
        car.fmu.doStep(car.time, 0.0007)
    before = car.get("posX", "rpm")
    car.step(0.0005)  # the FMU carries on with a valid step
    assert car.get("posX", "rpm") != before


def test_start_parameters_change_the_vehicle(vehicle_fmus, open_fmu):
    speeds = []
    for friction in (1.0, 0.3):
        car = open_fmu(vehicle_fmus[2]).start(**{"tyres.friction": friction})
        car.set(throttle=1.0)
        for _ in range(400):
            car.step(STEP)
        speeds.append(car.get("groundspeed")[0])
    assert speeds[1] < 0.6 * speeds[0]  # on a slippery road a full-throttle start spins


def test_a_bad_parameter_or_input_is_refused_and_logged(vehicle_fmus, open_fmu):
    car = open_fmu(vehicle_fmus[2]).start()
    car.set(throttle=0.25)
    car.set(throttle=float("nan"))
    assert car.get("throttle") == [0.25]  # the old value is kept
    bad = open_fmu(vehicle_fmus[2])
    with pytest.raises(FMICallException, match="fmi2ExitInitializationMode failed"):
        bad.start(**{"engine.initial_fuel": 2.0})  # refused at once: the FMU does not run
    bad.close()  # terminated and freed, as a careful master does: no double release
    gc.collect()  # (which used to crash the process here or at its exit)
    car.step(STEP)  # the other instance runs on
    assert car.time == STEP


@VERSIONS
def test_refused_parameters_make_simulate_fmu_raise_with_the_reason_logged(
    vehicle_fmus, version, capfd
):
    """Both versions refuse at exitInitializationMode; FMPy raises, and its log (printed with
    debug_logging) says why."""
    from fmpy import simulate_fmu

    call = f"fmi{version}ExitInitializationMode"
    with pytest.raises(FMICallException, match=f"{call} failed"):
        simulate_fmu(
            str(vehicle_fmus[version]),
            stop_time=0.1,
            output_interval=STEP,
            start_values={"engine.initial_fuel": 2.0},
            debug_logging=True,
        )
    said = capfd.readouterr().out
    assert (
        "parameters refused: engine.initial_fuel: Input should be less than or equal to 1" in said
    )


def test_two_fmus_hold_15_m_s_as_the_same_loop_through_the_in_process_coupling(
    vehicle_fmus, pi_fmu, open_fmu
):
    """Vehicle FMU + PI FMU under a small master, against the same PI through the coupling.

    The same loop: the controller samples every 5 ms (the coupling's ext_time), and what it
    answers to the message of step k is applied from step k + 1 on (the lock-step coupling
    sends the next message only with the reply in hand, and applies it then). The answer to
    message 0 is never applied (BeamNG's rule: no reply id 0 is), so neither is the PI's
    first output here.
    """
    seconds, n = 30.0, round(30.0 / STEP)
    car, pi = open_fmu(vehicle_fmus[2]).start(), open_fmu(pi_fmu).start()
    fmu_speeds = []
    for k in range(n):
        speed = car.get("groundspeed")[0]
        fmu_speeds.append(speed)
        pi.set(groundspeed=speed)
        pi.step(STEP)
        car.step(STEP)
        if k >= 1:
            throttle, brake = pi.get("throttle", "brake")
            car.set(throttle=throttle, brake=brake)

    reference = Vehicle(engine_running=True)
    reference.set_inputs(automatic=1, gear=1)
    sim = Simulation(reference, Pacer("lockstep", dt=reference.dt))
    controller = FmuController(pi_fmu, step=STEP)
    coupled_speeds = []

    def step_fn(msg: SimulatorMessage):
        coupled_speeds.append(msg.body.groundspeed)
        return controller(msg)

    couple_in_process(sim, step_fn, CouplingConfig(ext_time=STEP))
    try:
        sim.run(seconds)
    finally:
        controller.close()

    fmu_trace, coupled = np.array(fmu_speeds), np.array(coupled_speeds)
    assert len(coupled) == n
    assert np.max(np.abs(fmu_trace - coupled)) <= 1e-9
    settled = fmu_trace[round(20.0 / STEP) :]
    assert np.all(np.abs(settled - 15.0) < 0.5), (settled.min(), settled.max())
