"""A stray datagram never takes the coupling from its real peer (issue 29's reproductions).

Each end hears one peer at a time, pinned by the first message it takes, and refuses ids
that answer nothing sent (simulator) or are implausibly far ahead (controller block). The
strays come from a fresh port of the peer's own host, over real UDP on loopback, once before
the peers have met (only the id check stands in the way) and once while they are coupled.
"""

from __future__ import annotations

import socket
import threading

import numpy as np
import pytest

from helpers.peers import RawPeer, coupled
from vcosim.sim.face import Face
from vcosim.sim.pacing import Pacer
from vcosim.sim.simulation import Simulation
from vcosim.tight import ControllerBlock, Controls
from vcosim.tight.endpoint import CouplingConfig, SimulatorEndpoint
from vcosim.tight.protocol import CONTROLLER_TO_SIM, SIM_TO_CONTROLLER
from vcosim.vehicle import Vehicle

STRAY_AT = 50  # the message after which the stray arrives while the peers are coupled


def stray(values: np.ndarray, to: tuple[str, int]) -> None:
    """Send ``values`` once from a fresh ephemeral port of 127.0.0.1."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.sendto(values.astype("<f8").tobytes(), to)


def takeover_reply() -> np.ndarray:
    """The 512-byte reply of the issue: id 1e15, steering +1."""
    reply = np.full(CONTROLLER_TO_SIM, np.nan)
    reply[0], reply[3] = 1e15, 1.0
    return reply


def straight_ahead(message: np.ndarray) -> np.ndarray:
    """The real controller: the id straight back, steering 0."""
    reply = np.full(CONTROLLER_TO_SIM, np.nan)
    reply[0], reply[3] = message[0], 0.0
    return reply


@pytest.mark.parametrize("when", ["before the first reply", "while coupled"])
def test_a_stray_reply_with_id_1e15_does_not_steer_the_car(when):
    def reply(message: np.ndarray) -> np.ndarray:
        if when == "while coupled" and message[0] == STRAY_AT:
            stray(takeover_reply(), endpoint.address)  # lands before the real reply
        return straight_ahead(message)

    peer = RawPeer(reply)
    sim, endpoint = coupled(peer, "lockstep", send_skips=0, spin=0.0)
    steered = []

    class Watch(Face):  # the steering input each step ran with
        def after_step(self, s: Simulation) -> None:
            steered.append(s.vehicle.inputs["steering"])

    sim.attach("watch", Watch())
    if when == "before the first reply":
        stray(takeover_reply(), endpoint.address)
    try:
        sim.run(0.1)  # 200 messages, each answered before the next step
    finally:
        peer.stop()
        endpoint.close()
    report = endpoint.report()
    assert len(steered) == 200 and max(steered) == 0.0  # never +1, not for one step
    assert report["timeouts"] == report["stale"] == report["duplicate"] == 0, report
    assert report["applied"] == 198  # replies to 1..198: the real peer kept control
    if when == "before the first reply":  # from the controller's host, but no such id sent
        assert (report["implausible_id"], report["rejected_peers"]) == (1, 0)
    else:  # the controller's address is pinned: another port is not the controller
        assert (report["implausible_id"], report["rejected_peers"]) == (0, 1)


def stray_message() -> np.ndarray:
    """The 888-byte message of the issue: id 1e300."""
    message = np.zeros(SIM_TO_CONTROLLER)
    message[0] = 1e300
    return message


@pytest.mark.parametrize("when", ["before the first message", "while coupled"])
def test_a_stray_message_with_id_1e300_does_not_take_the_controller_block(when):
    taken = [0]

    def step(msg) -> Controls:
        taken[0] += 1
        if when == "while coupled" and taken[0] == STRAY_AT:
            stray(stray_message(), block.address)  # lands before the next real message
        return Controls(throttle=0.1)

    block = ControllerBlock(step, listen_port=0, sim_port=0, spin=0.0, idle_exit=0.5)
    car = Vehicle(engine_running=True)
    car.set_inputs(automatic=1, gear=1)
    sim = Simulation(car, Pacer("lockstep", dt=car.dt))
    endpoint = sim.attach(
        "coupling",
        SimulatorEndpoint(
            CouplingConfig(listen_port=0, controller_port=block.address[1], spin=0.0)
        ),
    )
    if when == "before the first message":
        stray(stray_message(), block.address)
    reports = []
    thread = threading.Thread(target=lambda: reports.append(block.run()), daemon=True)
    thread.start()
    sim.run(0.5)  # 100 messages, then the simulator is gone and the block ends
    thread.join(timeout=30)
    endpoint.close()
    assert not thread.is_alive()
    (block_report,) = reports
    coupling = endpoint.report()
    assert block_report.answered == 100 and block_report.resets == 0, block_report
    assert block_report.stale == 0
    assert coupling["timeouts"] == 0 and coupling["applied"] == 98, coupling  # replies to 1..98
    if when == "before the first message":  # beyond any simulator's count
        assert (block_report.implausible_id, block_report.rejected_peers) == (1, 0)
    else:  # the simulator's address is pinned
        assert (block_report.implausible_id, block_report.rejected_peers) == (0, 1)


def test_the_block_couples_to_a_simulator_that_sends_from_another_port():
    """BeamNG's coupling controller sends from a second socket (``setpeername`` on an unbound
    one) and listens on 64891: the block must take its messages and answer the port it
    listens on, and then hear nobody else, not even with a plausible id."""
    with (
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as receive,
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as send,
    ):
        receive.bind(("127.0.0.1", 0))
        receive.settimeout(5.0)
        block = ControllerBlock(
            lambda msg: Controls(throttle=0.1),
            listen_port=0,
            sim_port=receive.getsockname()[1],
            spin=0.0,
        )
        send.connect(block.address)
        thread = threading.Thread(target=block.run, args=(0.1,), daemon=True)  # 20 steps
        thread.start()
        replies = []
        message = np.zeros(SIM_TO_CONTROLLER, "<f8")
        for n in range(20):
            message[0] = n
            if n == 10:
                stray(message, block.address)  # the id that comes next, from another port
            send.send(message.tobytes())
            replies.append(np.frombuffer(receive.recv(1024), "<f8")[0])
        thread.join(timeout=10)
    report = block.report()
    assert replies == list(range(20))
    assert report.answered == 20 and report.rejected_peers == 1 and report.stale == 0
