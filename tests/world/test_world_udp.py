"""A world's ego coupled over real UDP on loopback: the range sensor rides in bank H."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.peers import RawPeer
from vcosim.controllers.acc import Acc
from vcosim.sim import Pacer, Simulation
from vcosim.tight.controller import Responder
from vcosim.tight.endpoint import CouplingConfig, SimulatorEndpoint
from vcosim.tight.protocol import SIM_CUSTOM
from vcosim.world import World, WorldFile
from vcosim.world.bank_h import H_DISTANCE, H_TARGET, H_VALID, fill_range_slots


def test_the_ego_of_a_world_couples_over_udp_in_lock_step_with_its_range_in_bank_h() -> None:
    world = World(WorldFile.load("examples/worlds/follow.toml"))
    sim = Simulation(world, Pacer("lockstep"))
    responder = Responder(Acc(time_gap=1.8, speed=20.0), 0.005, False)
    peer = RawPeer(reply=responder.respond)
    config = CouplingConfig(listen_port=0, controller_port=peer.port, timeout=5.0)
    endpoint = sim.attach(
        "coupling", SimulatorEndpoint(config, fill_custom=fill_range_slots), vehicle="ego"
    )
    peer.start(endpoint.address)
    try:
        report = sim.run(12.0)  # the lead brakes to a stop at 6-11 s
    finally:
        peer.stop()
    assert report.world.collisions == []
    assert report.faces["coupling"]["applied"] > 1000
    bank = np.array([m[SIM_CUSTOM] for m in peer.received])
    assert np.all(bank[:, H_VALID] == 1.0) and np.all(bank[:, H_TARGET] == world.row("lead"))
    assert bank[0, H_DISTANCE] == pytest.approx(40.0 - 4.5, abs=1e-9)  # 40 m apart, 4.5 m cars
    assert bank[:, H_DISTANCE].min() > 4.0  # the ACC kept its distance down to the stop
    assert world.vehicles["ego"].signal("groundspeed") < 3.0
