"""BeamNG interface CSVs: parsing, refusals, channel arithmetic and coupling on both sides."""

from __future__ import annotations

import math
import subprocess
from pathlib import Path

import numpy as np
import pytest

from helpers.forks import vcosim_command
from helpers.loop import closed_loop, free_port, wait_until_bound
from helpers.peers import coupled
from vcosim.controllers import example
from vcosim.errors import ConfigError
from vcosim.sim.face import Face
from vcosim.sim.pacing import Pacer
from vcosim.sim.simulation import Simulation
from vcosim.tight.controller import ControllerConfig
from vcosim.tight.endpoint import CouplingConfig, SimulatorEndpoint
from vcosim.tight.interface import InputGroup, InputMap, Interface
from vcosim.tight.kernels import apply_inputs
from vcosim.vehicle import Vehicle

EXAMPLES = Path(__file__).parents[2] / "examples" / "beamng"
HEADER = "Section,Subsection,Parameter Name,Parameter Value,Type,Description,Units,Notes\n"


def write_csv(tmp_path: Path, rows: str, name: str = "interface.csv") -> Path:
    path = tmp_path / name
    path.write_text(HEADER + rows)
    return path


@pytest.mark.parametrize("name,out,back", [("throttle", 3, 3), ("torques", 5, 10), ("full", 79, 6)])
def test_the_shipped_examples_parse(name, out, back):
    face = Interface.from_csv(EXAMPLES / f"{name}.csv")
    assert (face.sim_to_controller, face.controller_to_sim) == (out, back)
    assert face.torque_mode == (name == "torques")
    assert face.connection.controller_port == 64890 and face.connection.simulator_port == 64891


def test_every_unservable_name_is_refused_with_its_line(tmp_path):
    path = write_csv(
        tmp_path,
        (
            "signalTo,Kinematics,vehicleGroundSpeed,,number,,,\n"  # line 2: fine
            "signalTo,Powertrain,mainEngine_outputAV1,,number,,,\n"  # 3
            "signalTo,IMU1,imuPositionX,,number,,,\n"  # 4
            "signalTo,Kinematics,vehicleGroundSped,,number,,,\n"  # 5: a typo
            "signalTo,Kinematics,vehicleMidFrontBumperX,,number,,,\n"  # 6
            "signalFrom,Wheels,frictionTorqueFL,value,number,,,\n"  # 7
            "signalFrom,Driver,throttle,divide,number,,,\n"  # 8
            "connection,otherUDP,port,70000,number,,,\n"  # 9
            "connection,beamngUDP,IP,localhost,string,,,\n"  # 10
        ),
    )
    with pytest.raises(ConfigError) as caught:
        Interface.from_csv(path)
    problems = caught.value.problems
    assert [p.split(":")[0] for p in problems] == [
        f"interface.csv line {n}" for n in (3, 4, 5, 6, 7, 8, 9, 10)
    ]
    assert "did you mean 'vehicleGroundSpeed'" in problems[2]
    assert "friction-torque" in problems[4]


def test_a_bad_interface_stops_vcosim_sim_before_it_starts(tmp_path):
    path = write_csv(tmp_path, "signalTo,Powertrain,gearbox_gearRatio,,number,,,\n")
    result = subprocess.run(
        [*vcosim_command(), "sim", "--interface", str(path), "--duration", "1"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "line 2" in result.stderr and "powertrain" in result.stderr
    assert "Traceback" not in result.stderr


def test_connection_rows_fill_what_options_do_not(tmp_path):
    path = write_csv(
        tmp_path,
        (
            "signalTo,Kinematics,vehicleGroundSpeed,,number,,,\n"
            "signalFrom,Driver,throttle,value,number,,,\n"
            "connection,,3rd Party Computation Time,0.002,number,,,\n"
            "connection,otherUDP,port,50001,number,,,\n"
            "connection,beamngUDP,port,50002,number,,,\n"
        ),
    )
    sim_side = CouplingConfig.for_interface(path, controller_port=40000)
    assert (sim_side.ext_time, sim_side.controller_port, sim_side.listen_port) == (
        0.002,
        40000,
        50002,
    )
    block_side = ControllerConfig.for_interface(path)
    assert (block_side.step, block_side.listen_port, block_side.sim_port) == (0.002, 50001, 50002)


def test_channels_multiply_add_and_freeze(tmp_path, peers):
    path = write_csv(
        tmp_path,
        (
            "signalTo,Kinematics,vehicleGroundSpeed,,number,,,\n"
            "signalFrom,Driver,throttle,value,number,,,\n"
            "signalFrom,Driver,throttle,multiply,number,,,\n"
            "signalFrom,Driver,throttle,add,number,,,\n"
            "signalFrom,Driver,throttle,freeze,number,,,\n"
            "signalFrom,Driver,brake,value,boolean,,,\n"
        ),
    )

    def reply(message):
        n = message[0]
        freeze = 1.0 if n >= 50 else 0.0  # from message 50 on the throttle is held
        value = 0.5 if n < 50 else 0.9
        return np.array([n, value, 0.5, 0.1, freeze, 0.2 if n < 20 else 0.0])

    class Inputs(Face):
        rows: list[tuple[float, float]] = []

        def after_step(self, sim):
            inputs = sim.vehicle.inputs
            self.rows.append((inputs["throttle"], inputs["brake"]))

    peer = peers(reply)
    sim, endpoint = coupled(peer, "lockstep", send_skips=0, interface=path)
    seen = sim.attach("inputs", Inputs())
    sim.run(0.05)
    throttle, brake = np.array(seen.rows).T
    assert brake[10] == 1.0 and brake[30] == 0.0  # boolean: 0.2 -> 1, 0.0 -> 0
    assert throttle[40] == pytest.approx(0.35)  # 0.5 * 0.5 + 0.1
    assert np.allclose(throttle[2:], 0.35)  # from message 50 on frozen: 0.9 is ignored
    assert endpoint.report()["interface"] == str(path)


def test_a_boolean_input_is_zero_or_one(tmp_path, peers):
    path = write_csv(
        tmp_path,
        (
            "signalTo,Kinematics,vehicleGroundSpeed,,number,,,\n"
            "signalFrom,Driver,parkingBrake,value,boolean,,,\n"
        ),
    )
    peer = peers(lambda m: np.array([m[0], 0.3]))
    sim, _ = coupled(peer, "lockstep", send_skips=0, interface=path)
    sim.run(0.01)
    assert sim.vehicle.inputs["parkingbrake"] == 1.0


def test_the_full_interface_carries_state_derived_values(peers):
    back = Interface.from_csv(EXAMPLES / "full.csv").controller_to_sim
    peer = peers(lambda m: np.concatenate(([m[0]], np.full(back - 1, np.nan))))  # leave all
    car = Vehicle(engine_running=True)
    sim, endpoint = coupled(
        peer, "fast", vehicle=car, send_skips=0, interface=EXAMPLES / "full.csv"
    )
    sim.run(0.002)
    assert peer.wait_for(1)
    names = ("id", *endpoint.interface.to_controller)
    first = dict(zip(names, peer.received[0], strict=True))
    assert len(peer.raw[0]) == 8 * 79
    yaw = first["vehicleYaw"]
    assert first["vehicleForwardX"] == pytest.approx(math.cos(yaw), abs=1e-3)
    assert first["vehicleForwardY"] == pytest.approx(math.sin(yaw), abs=1e-3)
    assert first["vehicleRightX"] == pytest.approx(math.sin(yaw), abs=1e-3)
    assert first["vehicleRightY"] == pytest.approx(-math.cos(yaw), abs=1e-3)
    assert first["vehicleUpZ"] == pytest.approx(1.0, abs=1e-3)
    assert abs(first["vehicleRollRate"]) < 0.05 and abs(first["vehiclePitchRate"]) < 0.05
    assert first["vehiclePositionX"] == pytest.approx(car.signal("posX"), abs=1e-6)
    assert first["wheelAngleRL"] == 0.0 and 700 < first["rpm"] < 900


def test_the_torques_interface_drives_on_wheel_torques(peers):
    def reply(message):
        out = np.zeros(10)  # id, steering, then braking/propulsion FL, FR, RL, RR
        out[0] = message[0]
        out[7] = out[9] = 300.0  # propulsion RL and RR
        return out

    peer = peers(reply)
    sim, _ = coupled(peer, "fast", send_skips=9, interface=EXAMPLES / "torques.csv")
    sim.run(2.0)
    assert sim.vehicle.inputs["drive_mode"] == "torques"
    assert sim.vehicle.signal("wheelRL_propulsionTorque") == 300.0
    assert sim.vehicle.signal("velX") > 1.0


def test_a_controller_block_and_the_simulator_share_a_csv(tmp_path):
    trace, sim_report, block_report = closed_loop(
        example("cruise", speed=12.0), 20.0, interface=EXAMPLES / "throttle.csv"
    )
    assert trace["groundspeed"][-1] == pytest.approx(12.0, abs=0.5)
    assert sim_report["coupling"]["timeouts"] == 0
    assert sim_report["coupling"]["interface"].endswith("throttle.csv")
    assert block_report["answered"] >= 20.0 / 0.005 - 2
    assert trace["brake"].max() == 0.0  # the CSV carries no brake: it stays released


def test_vcosim_controller_speaks_a_csv_interface():
    port = free_port()
    sim, endpoint = coupled_to_port(port)
    process = subprocess.Popen(
        [
            *vcosim_command(),
            "controller",
            "cruise",
            "--speed",
            "8",
            "--interface",
            str(EXAMPLES / "throttle.csv"),
            "--listen-port",
            str(port),
            "--sim-port",
            str(endpoint.address[1]),
            "--duration",
            "10",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert wait_until_bound(port, process)
    report = sim.run(10.0)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert report.faces["coupling"]["timeouts"] == 0
    assert sim.vehicle.signal("groundspeed") == pytest.approx(8.0, abs=1.0)


def coupled_to_port(port: int) -> tuple[Simulation, SimulatorEndpoint]:
    """A lock-step simulation with the throttle CSV, coupled to a controller on ``port``."""
    car = Vehicle(engine_running=True)
    car.set_inputs(automatic=1, gear=1)
    sim = Simulation(car, Pacer("lockstep", dt=car.dt))
    endpoint = sim.attach(
        "coupling",
        SimulatorEndpoint(
            CouplingConfig.for_interface(
                EXAMPLES / "throttle.csv", listen_port=0, controller_port=port, timeout=30.0
            )
        ),
    )
    return sim, endpoint


def test_a_run_with_a_csv_interface_can_be_analysed(tmp_path, peers):
    from vcosim.analysis import load_run

    peer = peers(lambda m: np.array([m[0], 0.2, 0.0]))
    sim, endpoint = coupled(
        peer, "lockstep", send_skips=9, interface=EXAMPLES / "throttle.csv", debug_log=tmp_path
    )
    sim.run(0.5)
    run = load_run(tmp_path)
    assert run.sends.names == ("time", "id", "vehicleYaw", "vehicleGroundSpeed")
    assert len(run.sends) == 100 and len(run.receives) == 98  # id 0; the last in flight
    assert run.metrics.skips == 9 and run.metrics.id_pattern == "direct"


def test_an_infinite_value_times_a_zero_multiply_channel_keeps_the_input():
    throttle = InputGroup("throttle", target=0, low=0.0, high=1.0, value=1, multiply=2, add=3)
    groups = InputMap([throttle])
    inputs, frozen, clamps = np.array([0.4]), np.zeros(1), np.zeros(1, dtype=np.int64)
    arrays = (inputs, frozen, clamps, groups.slots, groups.limits)
    apply_inputs(np.array([7.0, math.inf, 0.0, np.nan]), *arrays)
    assert inputs[0] == 0.4  # inf * 0 has no value: the input stays, never NaN
    apply_inputs(np.array([8.0, math.inf, 1.0, np.nan]), *arrays)
    assert inputs[0] == 1.0 and clamps[0] == 1  # inf * 1 is clamped, as any large value
