"""The controller block and the example controllers, closed loop over real UDP."""

from __future__ import annotations

import math
import socket
import subprocess
import threading

import numpy as np
import pytest

from helpers.forks import vcosim_command
from helpers.loop import closed_loop, free_port, lockstep_simulation, wait_until_bound
from vcosim.controllers import example
from vcosim.errors import UnknownNameError
from vcosim.sim.pacing import Pacer
from vcosim.sim.simulation import Simulation
from vcosim.tight import ControllerBlock, ControllerStatus, Controls, SimulatorMessage
from vcosim.tight.endpoint import CouplingConfig, SimulatorEndpoint
from vcosim.vehicle import Vehicle


def step_response(trace, start: float, target: float) -> tuple[float, float]:
    """Settling time (within 0.5 m/s for good) and overshoot after ``start``."""
    t, v = trace["time"], trace["groundspeed"]
    after = t >= start
    outside = np.flatnonzero(after & (np.abs(v - target) > 0.5))
    settled = (t[outside[-1]] - start) if outside.size else 0.0
    return settled, float(v[after].max() - target)


@pytest.mark.parametrize("name", ["cruise", "cruise-torque"])
@pytest.mark.parametrize("memory", [False, True])
def test_cruise_controllers_settle_from_10_to_20_m_s(name, memory):
    controller = example(name, speed=10.0)

    def raise_target(sim):
        if sim.time >= 20.0:
            controller.speed = 20.0

    trace, sim_report, block_report = closed_loop(
        controller, 42.0, memory=memory, on_frame=raise_target
    )
    v10 = trace["groundspeed"][np.searchsorted(trace["time"], 19.9)]
    assert abs(v10 - 10.0) < 0.5
    settled, overshoot = step_response(trace, 20.0, 20.0)
    assert settled < 20.0 and overshoot < 2.0, (settled, overshoot)
    assert trace["groundspeed"][-1] == pytest.approx(20.0, abs=0.5)
    assert sim_report["coupling"]["timeouts"] == 0
    assert block_report["answered"] >= 42.0 / 0.005 - 2
    assert sim_report["coupling"]["send_skips"] == 9 and sim_report["coupling"]["window"] == 1


def test_heading_controller_turns_30_degrees():
    controller = example("heading", heading=0.0, speed=10.0)

    def turn(sim):
        if sim.time >= 10.0:
            controller.heading = 30.0

    trace, _, _ = closed_loop(controller, 20.0, on_frame=turn)
    t, yaw = trace["time"], np.degrees(trace["yaw"])
    after = t >= 10.0
    outside = np.flatnonzero(after & (np.abs(yaw - 30.0) > 2.0))
    assert outside.size and t[outside[-1]] - 10.0 < 10.0
    assert abs(yaw[-1] - 30.0) < 2.0
    assert trace["groundspeed"][-1] == pytest.approx(10.0, abs=0.5)


def test_block_reports_no_peer_and_resumes_with_a_new_simulator():
    statuses: list[ControllerStatus] = []
    changed = threading.Condition()
    block = ControllerBlock(
        example("cruise", speed=5.0),
        listen_port=0,
        sim_port=0,
        spin=0.0,
        timeout=0.3,
        idle_exit=None,  # wait for the second simulator however long it takes to start
    )

    def on_status(status):
        with changed:
            statuses.append(status)
            changed.notify_all()

    block.on_status = on_status
    thread = threading.Thread(target=block.run, daemon=True)

    def simulator(port: int) -> int:
        car = Vehicle(engine_running=True)
        car.step(automatic=1, gear=1)
        sim = Simulation(car, Pacer("lockstep", dt=car.dt))
        endpoint = sim.attach(
            "coupling",
            SimulatorEndpoint(
                CouplingConfig(listen_port=port, controller_port=block.address[1], spin=0.0)
            ),
        )
        bound = endpoint.address
        if not thread.is_alive():
            thread.start()
        sim.run(0.5)
        return bound[1]

    first_port = simulator(0)
    with changed:
        assert changed.wait_for(lambda: ControllerStatus.no_peer in statuses, timeout=10)
    answered = block.stats.answered
    simulator(first_port)  # the simulator starts again, on the same port
    block.stop()
    thread.join(timeout=5)
    assert statuses == [
        ControllerStatus.connected,
        ControllerStatus.no_peer,
        ControllerStatus.connected,
    ]
    assert block.stats.answered > answered + 50
    assert block.stats.resets >= 1


def test_block_ends_when_the_simulator_falls_silent():
    block = ControllerBlock(
        example("cruise", speed=5.0), listen_port=0, sim_port=0, spin=0.0, idle_exit=0.5
    )
    car = Vehicle(engine_running=True)
    car.step(automatic=1, gear=1)
    sim = Simulation(car, Pacer("lockstep", dt=car.dt))
    sim.attach(
        "coupling",
        SimulatorEndpoint(
            CouplingConfig(listen_port=0, controller_port=block.address[1], spin=0.0)
        ),
    )
    reports = []
    thread = threading.Thread(target=lambda: reports.append(block.run()), daemon=True)
    thread.start()
    sim.run(0.5)  # 100 messages, then the simulator is gone
    thread.join(timeout=30)
    assert not thread.is_alive(), "the block still waits for a simulator that ended"
    (report,) = reports
    assert report.simulator_ended and not report.interrupted
    assert report.answered == 100
    assert report.status == ControllerStatus.ended.value and report.resets == 0


def test_block_counts_and_ignores_malformed_datagrams():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        block = ControllerBlock(
            lambda msg: None, listen_port=0, sim_port=sock.getsockname()[1], spin=0.0, timeout=0.2
        )
        sock.sendto(b"\x01" * 100, block.address)
        good = np.zeros(111, "<f8")
        sock.sendto(good.tobytes(), block.address)
        report = block.run(0.005)  # one step: answers the good message
        reply, _ = sock.recvfrom(1024)
    assert report["malformed"] == 1 and report["answered"] == 1
    values = np.frombuffer(reply, "<f8")
    assert len(values) == 64 and values[0] == 0.0 and np.all(np.isnan(values[1:]))


def test_named_views_and_unset_outputs_go_as_nan():
    values = np.arange(111, dtype=float)
    msg = SimulatorMessage(values, time=1.5, dt=0.005)
    assert msg.id == 0 and msg.driver.throttle == 1.0 and msg.driver.steering_input == 10.0
    assert msg.body.posX == 11.0 and msg.body.altitude == 24.0
    assert msg.status.ignitionLevel == 25.0 and msg.status.wheelspeed == 36.0
    assert msg.wheels.FL.angularVelocity == 37.0 and msg.wheels.RR.downForce == 60.0
    assert msg.rpm == 33.0 and msg.wheelFR_brakingTorque == 45.0
    assert list(msg.custom[:2]) == [61.0, 62.0] and len(msg.custom) == 50
    out = np.zeros(64)
    Controls(steering=0.25, propulsion_torque=(1, 2, 3, 4), drive_mode="torques").write(out)
    assert out[3] == 0.25 and list(out[9:13]) == [1, 2, 3, 4] and out[13] == 1.0
    assert all(math.isnan(out[i]) for i in (1, 2, 4, 5, 8, 14, 63))
    with pytest.raises(UnknownNameError, match="did you mean 'throttle'"):
        Controls.from_mapping({"throtle": 1.0})


def test_recommendation_names_the_simulator_options():
    trace, _, report = closed_loop(example("cruise", speed=5.0), 1.0)
    advice = report["recommendation"]
    assert advice["ext_time"] == 0.005 and advice["send_skips"] == 9
    assert advice["ping_time"] > 0 and advice["window"] >= 1
    assert advice["keeps_real_time"] is True
    assert "--ext-time 0.005" in advice["simulator_options"]
    assert report["compute_ms"]["p99"] > 0


def test_cli_runs_a_users_function(tmp_path):
    (tmp_path / "my_controller.py").write_text(
        "def step(msg):\n    return {'throttle': 0.3 if msg.body.groundspeed < 5 else 0.0}\n"
    )
    port = free_port()
    sim, endpoint = lockstep_simulation(port)
    car = sim.vehicle
    process = subprocess.Popen(  # from the file's folder, by module name: no PYTHONPATH
        [
            *vcosim_command(),
            "controller",
            "--function",
            "my_controller:step",
            "--listen-port",
            str(port),
            "--sim-port",
            str(endpoint.address[1]),
            "--duration",
            "5",
        ],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert wait_until_bound(port, process)
    report = sim.run(5.0)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert "answered" in err and "1000" in err
    assert report.faces["coupling"]["applied"] >= 998  # the reply to id 0 is never applied
    assert car.signal("throttle_input") in (0.0, 0.3)
    assert car.signal("groundspeed") > 2.0


def test_cli_needs_exactly_one_controller_source():
    result = subprocess.run(
        [*vcosim_command(), "controller"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2
    assert "give exactly one of" in result.stderr
    result = subprocess.run(
        [*vcosim_command(), "controller", "cruse"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2 and "did you mean 'cruise'" in result.stderr
