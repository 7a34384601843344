"""The coupling FMU: an FMI master (here a small one over fmpy) drives a real ``vcosim sim``."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from fmpy import read_model_description
from fmpy.validation import validate_fmu

from helpers.loop import free_port
from vcosim.fmi.build import build_coupling_fmu
from vcosim.fmi.coupling import BANKS, INPUTS, STATUS
from vcosim.tight.interface import CsvAdapter, Interface
from vcosim.tight.protocol import CONTROLLER_TO_SIM, SIM_TO_CONTROLLER
from vcosim.tight.views import SLOT_BY_NAME

STEP = 0.005
GROUNDSPEED = SLOT_BY_NAME["groundspeed"]


class FakeSimulator(threading.Thread):
    """Sends messages 0, 1, ... to the FMU, each once its predecessor was answered."""

    def __init__(self, fmu_port: int, count: int) -> None:
        super().__init__(daemon=True)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(1.0)  # resend a message unanswered this long (the FMU binding)
        self.target, self.count = ("127.0.0.1", fmu_port), count
        self.replies: list[np.ndarray] = []
        self.done = threading.Event()

    @property
    def port(self) -> int:
        return self.sock.getsockname()[1]

    def message(self, k: int) -> np.ndarray:
        """Message ``k``: the fixed layout, the ground speed 10 + k."""
        message = np.zeros(SIM_TO_CONTROLLER)
        message[0], message[GROUNDSPEED] = k, 10.0 + k
        return message

    def run(self) -> None:
        for k in range(self.count):
            message = self.message(k)
            while not self.done.is_set():
                self.sock.sendto(message.astype("<f8").tobytes(), self.target)
                try:
                    reply = np.frombuffer(self.sock.recv(4096), "<f8")
                except TimeoutError:
                    continue
                if reply[0] == k:
                    self.replies.append(reply)
                    break


VERSIONS = pytest.mark.parametrize("version", [2, 3], ids=["fmi2", "fmi3"])


@VERSIONS
def test_the_model_description_passes_fmpy_validation(coupling_fmus, version):
    assert validate_fmu(str(coupling_fmus[version])) == []
    description = read_model_description(str(coupling_fmus[version]))
    names: dict[str, set[str]] = {v.causality: set() for v in description.modelVariables}
    for v in description.modelVariables:
        names[v.causality].add(v.name)
    assert names["input"] == {v.name for v in INPUTS}
    assert names["output"] == {o.name for o in BANKS} | {s.name for s in STATUS}
    assert {"listen_port", "sim_port", "memory", "timeout"} <= names["parameter"]


@VERSIONS
def test_without_a_simulator_a_step_times_out_and_says_so(coupling_fmus, version, open_fmu):
    ports = {"listen_port": free_port(), "sim_port": free_port()}
    fmu = open_fmu(coupling_fmus[version]).start(**ports, timeout=0.2)
    fmu.step(STEP)
    connected, timeouts, received = fmu.get("connected", "timeouts", "received")
    assert (connected, received) == (False, 0)
    assert timeouts == 2  # leaving initialization and the step waited in vain
    with pytest.raises(Exception, match="DoStep failed"):
        fmu.fmu.doStep(fmu.time, 0.01)  # one message per step: the step is the ext_time


@pytest.mark.parametrize("memory", [False, True], ids=["feed-through", "memory"])
def test_replies_carry_the_message_id_and_the_inputs_set_after_it(coupling_fmu, open_fmu, memory):
    """Each doStep answers the message shown by the previous one with the inputs set since;
    with ``memory`` (Simulink's memory block) the answer is one message late."""
    port = free_port()
    peer = FakeSimulator(port, count=5)
    peer.start()
    fmu = open_fmu(coupling_fmu).start(
        listen_port=port, sim_port=peer.port, memory=memory, timeout=10.0
    )
    shown = []
    for _ in range(4):
        message_id, speed = fmu.get("message_id", "groundspeed")
        shown.append((message_id, speed))
        fmu.set(throttle=0.1 * (message_id + 1))
        fmu.step(STEP)
    fmu.close()
    peer.done.set()
    peer.join(timeout=5)
    assert shown == [(k, 10.0 + k) for k in range(4)]
    ids = [int(r[0]) for r in peer.replies[:4]]
    throttles = [r[1] for r in peer.replies[:4]]
    assert ids == [0, 1, 2, 3]
    if memory:
        assert np.isnan(throttles[0])  # nothing held yet: "leave as it is"
        assert throttles[1:] == pytest.approx([0.1, 0.2, 0.3])
    else:
        assert throttles == pytest.approx([0.1, 0.2, 0.3, 0.4])


def test_a_master_with_the_pi_fmu_cruises_a_lockstep_simulator_at_20_m_s(
    coupling_fmu, pi_fmu, open_fmu
):
    seconds = 40.0
    controller_port, sim_port = free_port(), free_port()
    with simulator(seconds, controller_port, sim_port, "--ext-time", str(STEP)) as sim:
        pi = open_fmu(pi_fmu).start(target_speed=20.0)
        # A generous timeout: the simulator may still be starting when the FMU binds.
        link = open_fmu(coupling_fmu).start(
            listen_port=controller_port, sim_port=sim_port, timeout=20.0
        )
        speeds = []
        for _ in range(round(seconds / STEP) - 1):  # message 0 came with the initialization
            speed = link.get("groundspeed")[0]
            speeds.append(speed)
            pi.set(groundspeed=speed)
            pi.step(STEP)
            throttle, brake = pi.get("throttle", "brake")
            link.set(throttle=throttle, brake=brake)
            link.step(STEP)
        status = dict(
            zip(
                ("connected", "timeouts", "stale", "received", "message_id"),
                link.get("connected", "timeouts", "stale", "received", "message_id"),
                strict=True,
            )
        )
        link.close()
        ended(sim)
    assert status == {
        "connected": True,
        "timeouts": 0,
        "stale": 0,
        "received": round(seconds / STEP),
        "message_id": round(seconds / STEP) - 1,
    }
    settled = np.array(speeds[round(25.0 / STEP) :])
    assert np.all(np.abs(settled - 20.0) < 0.5), (settled.min(), settled.max())


@contextlib.contextmanager
def simulator(
    seconds: float, controller_port: int, sim_port: int, *options: str
) -> Iterator[subprocess.Popen[str]]:
    """``vcosim sim`` in lock-step for the FMU to drive; killed if the test leaves it running."""
    sim = subprocess.Popen(
        [
            *(sys.executable, "-m", "vcosim", "sim", "--pacing", "lockstep"),
            *("--duration", str(seconds), *options),
            *("--controller", f"127.0.0.1:{controller_port}", "--listen", f"127.0.0.1:{sim_port}"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        yield sim
    finally:
        if sim.poll() is None:
            sim.kill()
            sim.wait()


def ended(sim: subprocess.Popen[str]) -> None:
    """The simulator ran its duration and exited cleanly."""
    output, _ = sim.communicate(timeout=60)
    assert sim.returncode == 0, output[-2000:]


def test_with_a_beamng_interface_csv_both_sides_speak_its_signals(fmu_dir, open_fmu):
    """The CSV (yaw and speed to the controller, throttle and steering back) in the FMU."""
    interface = Path(__file__).parents[2] / "examples" / "beamng" / "throttle.csv"
    path = build_coupling_fmu(fmu_dir / "coupling-csv.fmu", interface=interface)
    seconds, controller_port, sim_port = 4.0, free_port(), free_port()
    with simulator(seconds, controller_port, sim_port, "--interface", str(interface)) as sim:
        link = open_fmu(path).start(listen_port=controller_port, sim_port=sim_port, timeout=20.0)
        for _ in range(round(seconds / STEP) - 1):
            link.set(throttle=0.6, steering=0.0)
            link.step(STEP)
        speed, rpm, timeouts = link.get("groundspeed", "rpm", "timeouts")
        link.close()
        ended(sim)
    assert timeouts == 0
    assert speed > 5.0  # the throttle went through the CSV's slot
    assert np.isnan(rpm)  # not in the CSV: the output says it has no value


CHANNELS_CSV = """\
Section,Subsection,Parameter Name,Parameter Value,Type,Description,Units,Notes
signalTo,Kinematics,vehicleYaw,,number,,rad,
signalTo,Kinematics,vehicleGroundSpeed,,number,,m/s,
signalFrom,Driver,throttle,value,number,,,
signalFrom,Driver,throttle,multiply,number,,,
signalFrom,Driver,steeringWheelPosition,value,number,,,
signalFrom,Wheels,brakingTorqueFL,value,number,,N m,
"""


class CsvSimulator(FakeSimulator):
    """Sends the CSV's messages (id, yaw, speed), each until a reply with its id comes."""

    def message(self, k: int) -> np.ndarray:
        return np.array([k, 0.01 * k, 10.0 + k])


@VERSIONS
def test_the_csv_fmu_speaks_the_csvs_wire_as_the_controller_block_does(
    fmu_dir, open_fmu, version, tmp_path
):
    """Messages of the CSV's size shown on the fixed layout's outputs (NaN where the CSV has
    nothing), replies of its size: each value from its input, kept where the input is NaN,
    the multiply channel 1 (CsvAdapter, the Python controller side, gives the same bytes)."""
    csv_path = tmp_path / "channels.csv"
    csv_path.write_text(CHANNELS_CSV)
    path = build_coupling_fmu(
        fmu_dir / f"channels{version}.fmu", interface=csv_path, fmi_version=version, ext_time=STEP
    )
    port = free_port()
    peer = CsvSimulator(port, count=4)
    peer.start()
    fmu = open_fmu(path).start(listen_port=port, sim_port=peer.port, timeout=10.0)
    shown, sent = [], []
    controls = [(0.5, 0.1, 100.0), (float("nan"), -0.2, float("nan")), (0.7, 0.3, 5.0)]
    for throttle, steering, torque in controls:
        shown.append(fmu.get("message_id", "yaw", "groundspeed", "rpm"))
        fmu.set(throttle=throttle, steering=steering, braking_torque_FL=torque)
        sent.append((throttle, steering, torque))
        fmu.step(STEP)
    fmu.close()
    peer.done.set()
    peer.join(timeout=5)
    assert [row[:3] for row in shown] == [[k, 0.01 * k, 10.0 + k] for k in range(3)]
    assert all(np.isnan(row[3]) for row in shown)  # rpm: not in the CSV
    replies = [r.tolist() for r in peer.replies[:3]]
    assert replies == [
        [0.0, 0.5, 1.0, 0.1, 100.0],
        [1.0, 0.5, 1.0, -0.2, 100.0],  # NaN inputs: the last value sent, as BeamNG needs
        [2.0, 0.7, 1.0, 0.3, 5.0],
    ]
    adapter = CsvAdapter(Interface.from_csv(csv_path))
    fixed = np.full(CONTROLLER_TO_SIM, np.nan)
    for k, (throttle, steering, torque) in enumerate(sent):
        fixed[:] = np.nan
        fixed[0], fixed[1], fixed[3], fixed[5] = k, throttle, steering, torque
        assert adapter.gather(fixed).tolist() == replies[k]
