"""The first answer is not a licence (issue 45, A): a stray that answered first gives way.

The reproduction: the simulator (or the controller block) starts before its peer; a local
process answers from another port with plausible ids and is pinned; the real peer, which
sends from the address it was configured with (where it listens), came later and was
dropped as ``rejected_peers`` for as long as the stray went on. Now the peer's own address
outranks any other: its first message takes the pin. Over real UDP on loopback; the tests
wait for events (messages counted), never for a fixed time.
"""

from __future__ import annotations

import socket
import threading

import numpy as np

from helpers.peers import RawPeer, coupled
from vcosim.sim.face import Face
from vcosim.sim.pacing import Pacer
from vcosim.sim.simulation import Simulation
from vcosim.tight import ControllerBlock, Controls, SimulatorMessage
from vcosim.tight.endpoint import CouplingConfig, SimulatorEndpoint
from vcosim.tight.protocol import CONTROLLER_TO_SIM, SIM_TO_CONTROLLER
from vcosim.vehicle import Vehicle

HANG = 60.0  # s: a guard against a hang, not a measure of speed
MARK = 99.0  # the stray simulator's ground speed, which no real run of 0.5 s reaches


class Stray:
    """Sends ``make(k)`` for k = first, first + 1, ... every ``period`` s from a fresh port."""

    def __init__(self, target: tuple[str, int], make, first: int, period: float) -> None:
        self.target, self.make, self.first, self.period = target, make, first, period
        self.sent = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            sock.bind(("127.0.0.1", 0))
            k = self.first
            while not self._stop.wait(self.period):
                sock.sendto(np.asarray(self.make(k), "<f8").tobytes(), self.target)
                self.sent += 1
                k += 1

    def __enter__(self) -> Stray:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


def steering_reply(reply_id: int) -> np.ndarray:
    """A stray reply: a plausible id, the steering full left."""
    reply = np.full(CONTROLLER_TO_SIM, np.nan)
    reply[0], reply[3] = reply_id, 1.0
    return reply


def straight_ahead(message: np.ndarray) -> np.ndarray:
    """The real controller: the id straight back, steering 0."""
    reply = np.full(CONTROLLER_TO_SIM, np.nan)
    reply[0], reply[3] = message[0], 0.0
    return reply


def test_the_controllers_own_address_takes_the_car_from_a_stray_that_answered_first():
    peer = RawPeer(straight_ahead)  # listens (and answers) on the configured port
    peer.answering.clear()  # not started yet, as far as the simulator can tell
    sim, endpoint = coupled(peer, "lockstep", send_skips=0, spin=0.0, timeout=5.0)
    steered: list[float] = []

    class Watch(Face):  # the steering input each step ran with
        def after_step(self, s: Simulation) -> None:
            steered.append(s.vehicle.inputs["steering"])

    sim.attach("watch", Watch())
    thread = threading.Thread(target=sim.run, args=(0.2,), daemon=True)
    try:
        # Ids 1, 2, 3, ... a millisecond apart: each releases the next message (lock-step).
        with Stray(endpoint.address, steering_reply, first=1, period=0.001):
            thread.start()
            assert peer.wait_for(20, timeout=HANG)  # the stray has driven 20 messages
            peer.answering.set()  # the real controller starts, the stray goes on
            thread.join(HANG)
        assert not thread.is_alive()
    finally:
        sim.stop()
        peer.stop()
        endpoint.close()
    report = endpoint.report()
    stray_at = steered.index(1.0)  # the reproduction: the stray steered first
    real = steered.index(0.0, stray_at)  # the first step the real controller's reply acted on
    assert real < len(steered) - 100 and max(steered[real:]) == 0.0, steered[real:]
    assert report["peer_takeovers"] == 1 and report["timeouts"] == 0, report
    assert report["rejected_peers"] > 0, report  # the stray, dropped after the takeover


def test_the_simulators_own_address_takes_the_block_from_a_stray_that_spoke_first():
    seen: list[float] = []
    stray_heard = threading.Event()

    def step(msg: SimulatorMessage) -> Controls:
        seen.append(msg.body.groundspeed)
        if len(seen) == 10:
            stray_heard.set()
        return Controls(throttle=0.2)

    car_config = CouplingConfig(listen_port=0, controller_port=1, spin=0.0)
    car = Vehicle(engine_running=True)
    car.set_inputs(automatic=1, gear=1)
    sim = Simulation(car, Pacer("lockstep", dt=car.dt))
    endpoint = sim.attach("coupling", SimulatorEndpoint(car_config))
    block = ControllerBlock(
        step, listen_port=0, sim_port=endpoint.address[1], spin=0.0, idle_exit=1.0
    )
    endpoint.link.peer = block.address  # (the block's port is known only now)

    def stray_message(k: int) -> np.ndarray:
        message = np.zeros(SIM_TO_CONTROLLER)
        message[0], message[17] = k, MARK  # slot 17: groundspeed
        return message

    reports = []
    thread = threading.Thread(target=lambda: reports.append(block.run()), daemon=True)
    try:
        with Stray(block.address, stray_message, first=0, period=0.002):
            thread.start()
            assert stray_heard.wait(HANG)  # the block took the stray's messages first
            sim.run(0.5)  # the real simulator: 100 messages, while the stray goes on
            thread.join(HANG)  # (the block ends 1 s after the simulator, the stray still on)
    finally:
        endpoint.close()
    assert not thread.is_alive()
    (block_report,) = reports
    coupling = endpoint.report()
    assert seen[0] == MARK  # the reproduction: the stray was taken first
    real = next(i for i, speed in enumerate(seen) if speed != MARK)
    assert MARK not in seen[real:]  # once the simulator spoke, never the stray again
    assert len(seen) - real == 100, (len(seen), real)  # every real message answered
    assert block_report.peer_takeovers == 1 and block_report.rejected_peers > 0, block_report
    assert coupling["timeouts"] == 0 and coupling["applied"] >= 98, coupling


def test_a_beamng_like_peer_still_couples_from_its_second_port():
    """BeamNG's components answer from a port the system picks: they still pin (no takeover)."""
    egress = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)  # bound by its first send
    listen = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    listen.bind(("127.0.0.1", 0))
    listen.settimeout(5.0)
    port = listen.getsockname()[1]
    sim_config = CouplingConfig(listen_port=0, controller_port=port, send_skips=0, spin=0.0)
    car = Vehicle(engine_running=True)
    sim = Simulation(car, Pacer("lockstep", dt=car.dt))
    endpoint = sim.attach("coupling", SimulatorEndpoint(sim_config))
    stop = threading.Event()

    def answer() -> None:
        while not stop.is_set():
            try:
                data = listen.recv(4096)
            except (TimeoutError, OSError):
                return
            message = np.frombuffer(data, "<f8")
            egress.sendto(straight_ahead(message).astype("<f8").tobytes(), endpoint.address)

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    try:
        sim.run(0.1)
    finally:
        stop.set()
        listen.close()
        thread.join(timeout=10)
        egress.close()
        endpoint.close()
    report = endpoint.report()
    assert report["applied"] == 198 and report["peer_takeovers"] == 0, report
    assert report["timeouts"] == report["rejected_peers"] == 0, report
