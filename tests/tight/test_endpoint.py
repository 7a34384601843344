"""The simulator endpoint against a raw-socket controller over real UDP on 127.0.0.1."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from helpers.peers import RawPeer, coupled, nan_reply, read_log
from vcosim.tight.protocol import (
    CONTROLLER_TO_SIM,
    SIM_SLOT_NAMES,
    Schedule,
    send_skips_for,
    window_for,
)
from vcosim.vehicle import SIGNAL_NAMES, Vehicle

SLOT = {name: i for i, name in enumerate(SIM_SLOT_NAMES)}


def controls(message_id: float, **values: float) -> np.ndarray:
    """A controller message: NaN everywhere but the given slots."""
    names = [
        "id",
        "throttle",
        "brake",
        "steering",
        "gear",
        "bFL",
        "bFR",
        "bRL",
        "bRR",
        "pFL",
        "pFR",
        "pRL",
        "pRR",
        "mode",
    ]
    out = np.full(CONTROLLER_TO_SIM, np.nan)
    out[0] = message_id
    for name, value in values.items():
        out[names.index(name)] = value
    return out


@pytest.mark.parametrize(
    "ext,ping,skips,window",
    [
        (0.0005, 0.00001, 0, 1),
        (0.005, 0.00001, 9, 1),
        (0.0005, 0.002, 0, 4),
        (0.001, 0.001, 1, 1),
        (0.0051, 0.00001, 10, 1),
    ],
)
def test_send_skips_and_window_from_ext_and_ping_time(ext, ping, skips, window):
    assert send_skips_for(ext, 0.0005) == skips
    assert window_for(ping, ext) == window
    assert Schedule.derive(ext, ping, 0.0005, window=7).window == 7


def test_datagram_size_layout_and_ids(peers):
    peer = peers()
    sim, _ = coupled(peer, "lockstep", send_skips=0)
    sim.run(0.05)
    assert peer.wait_for(100)
    assert {len(raw) for raw in peer.raw} == {888}
    ids = [m[0] for m in peer.received]
    assert ids == list(range(len(ids))) and len(ids) == 100
    first = struct.unpack("<111d", peer.raw[0])
    assert first == tuple(peer.received[0])
    last = peer.received[-1]
    assert last[SLOT["maxrpm"]] == 7000.0
    assert 700 < last[SLOT["rpm"]] < 900  # idling
    assert last[SLOT["ignitionLevel"]] == 2.0
    assert last[SLOT["wheelFL_downForce"]] > 1000
    assert np.all(last[61:] == 0.0)  # bank H: no hook, zeros
    # Banks A-G are the vehicle's outputs at the send (the step before the last one ran).
    assert last[SLOT["accZ"]] == pytest.approx(9.81, abs=0.1)
    assert SIM_SLOT_NAMES[1:61] == SIGNAL_NAMES[:60]


def test_nan_keeps_previous_value_and_values_apply(peers):
    def reply(message):
        n = int(message[0])
        return controls(n, throttle=0.5, steering=-0.25) if n < 10 else nan_reply(message)

    peer = peers(reply)
    sim, endpoint = coupled(peer, "lockstep", send_skips=0)
    sim.run(0.1)
    inputs = sim.vehicle.inputs
    assert inputs["throttle"] == 0.5 and inputs["steering"] == -0.25
    assert inputs["brake"] == 0.0
    assert endpoint.report()["applied"] >= 190


def test_out_of_range_values_are_clamped_and_counted(peers):
    peer = peers(lambda m: controls(m[0], throttle=2.0, steering=-np.inf, gear=9, brake=0.3))
    sim, endpoint = coupled(peer, "lockstep", send_skips=0, gear_slot=True)
    sim.run(0.01)
    inputs = sim.vehicle.inputs
    assert inputs["throttle"] == 1.0 and inputs["steering"] == -1.0 and inputs["gear"] == 5.0
    assert inputs["brake"] == 0.3
    report = endpoint.report()
    applied = report["applied"]
    assert report["clamped"] == {"throttle": applied, "steering": applied, "gear": applied}


def test_slot_4_is_reserved_unless_the_gear_slot_is_asked_for(peers):
    """BeamNG ignores slot 4; an unconnected Simulink input sends 0 there (neutral)."""
    peer = peers(lambda m: controls(m[0], throttle=0.4, gear=0.0))
    car = Vehicle(engine_running=True)
    car.set_inputs(automatic=1, gear=1)
    sim, endpoint = coupled(peer, "lockstep", vehicle=car, send_skips=0)
    sim.run(0.05)
    assert sim.vehicle.inputs["gear"] == 1.0 and sim.vehicle.inputs["throttle"] == 0.4
    assert "gear" not in endpoint.interface.inputs.names


def test_wrong_length_datagram_is_counted_and_the_run_goes_on(peers):
    def reply(message):
        if message[0] == 3:
            peer.send(b"\x00" * 100)  # garbage first, then the real answer
        return nan_reply(message)

    peer = peers(reply)
    sim, endpoint = coupled(peer, "lockstep", send_skips=0)
    sim.run(0.05)
    report = endpoint.report()
    assert report["malformed"] == 1
    assert report["applied"] == 98 and report["timeouts"] == 0  # id 0 is never applied


def test_stale_and_duplicate_ids_are_dropped_counted_and_logged(peers, tmp_path):
    def reply(message):
        n = message[0]
        if n >= 2:
            peer.send(controls(n - 2, throttle=0.9))  # stale: an older id than applied
        peer.send(controls(n, throttle=0.2))
        return controls(n, throttle=0.7)  # duplicate of the id just sent

    peer = peers(reply)
    sim, endpoint = coupled(peer, "lockstep", send_skips=1, debug_log=tmp_path)
    sim.run(0.2)
    endpoint.close()
    report = endpoint.report()
    assert report["stale"] > 0 and report["duplicate"] > 0
    assert report["startup_unapplied"] == 2  # (0, 0.2) and (0, 0.7): id 0 is never applied
    assert sim.vehicle.inputs["throttle"] == 0.2  # neither stale nor duplicate values applied
    events = read_log(tmp_path / "vcosimCouplingEvents.csv")
    kinds = events[:, 1].astype(int).tolist()
    assert kinds.count(1) == report["stale"] and kinds.count(2) == report["duplicate"]
    assert kinds.count(3) == 2


def test_a_second_reply_with_a_fractional_id_is_malformed_not_applied(peers):
    def reply(message):
        n = message[0]
        peer.send(controls(n, throttle=0.2))
        return controls(n + 0.5, throttle=0.9)  # a second answer to the same message

    peer = peers(reply)
    sim, endpoint = coupled(peer, "lockstep", send_skips=0)
    sim.run(0.05)
    report = endpoint.report()
    assert report["applied"] == 98  # ids 1..98 once each (99 arrives after the run ends)
    assert report["sent"] == 100
    assert report["malformed"] == 98  # each k + 0.5 read before the next reply: counted
    assert sim.vehicle.inputs["throttle"] == 0.2


def test_a_controller_started_late_is_waited_for_without_a_timeout(peers):
    """The first two copies of message 0 find nobody; the third is answered."""
    peer = peers(lambda m: nan_reply(m) if len(peer.received) > 2 else None)
    sim, endpoint = coupled(peer, "fast", send_skips=0, timeout=0.2)
    sim.run(0.3)
    report = endpoint.report()
    assert report["timeouts"] == 0 and report["startup_resends"] == 2
    assert report["startup_wait"] >= 0.4  # two waits of 0.2 s expired
    ids = [int(m[0]) for m in peer.received]
    assert ids[:4] == [0, 0, 0, 1] and ids[3:] == list(range(1, len(ids) - 2))
    assert peer.raw[0] == peer.raw[1] == peer.raw[2]  # the same message, sent again
    # as if the controller had started first: 600 sends, replies 1..598 applied
    assert report["sent"] == 600 and report["applied"] == 598


def test_a_timeout_once_connected_resets_and_recovers(peers):
    peer = peers(lambda m: None if m[0] in (3, 4) else nan_reply(m))  # silent twice
    sim, endpoint = coupled(peer, "fast", send_skips=0, timeout=0.2)
    sim.run(0.3)
    report = endpoint.report()
    assert report["timeouts"] == 2 and report["startup_resends"] == 0
    ids = [int(m[0]) for m in peer.received]
    assert ids == list(range(len(ids)))  # ids keep counting across resets, as in BeamNG
    # steps 4 and 6 time out and send nothing; replies 1, 2 and 5..596 apply
    assert report["sent"] == 598 and report["applied"] == 594
    assert report["blocked_time"] >= 0.4


def test_torque_mode_overrides_the_powertrain(peers):
    peer = peers(
        lambda m: controls(
            m[0], mode=1.0, pRL=400, pRR=400, pFL=0, pFR=0, bFL=0, bFR=0, bRL=0, bRR=0, throttle=0.0
        )
    )
    sim, _ = coupled(peer, "fast", send_skips=9)
    sim.run(3.0)
    s = sim.vehicle.signals()
    assert s["velX"] > 3.0
    assert s["wheelRL_propulsionTorque"] == 400.0
    assert s["rpm"] < 900  # the engine idles, disconnected


def test_custom_values_round_trip_through_the_hooks(peers):
    def reply(message):
        out = nan_reply(message)
        out[14:64] = message[61:111] * 2.0  # echo bank H doubled into the custom bank B
        return out

    received = []

    def fill(sim, custom):
        custom[:] = np.arange(50) + sim.vehicle.step_index

    peer = peers(reply)
    sim, endpoint = coupled(peer, "lockstep", send_skips=0)
    endpoint.fill_custom = fill
    endpoint.on_custom = lambda sim, custom: received.append(custom.copy())
    sim.run(0.01)
    assert len(received) == 18  # replies to messages 1..18 (id 0 is never applied)
    np.testing.assert_array_equal(received[0], 2.0 * (np.arange(50) + 1))
    np.testing.assert_array_equal(received[-1], 2.0 * (np.arange(50) + 18))


def test_datagrams_from_other_addresses_are_dropped_and_counted(peers):
    peer = peers()
    intruder = RawPeer(host="127.0.0.2")
    sim, endpoint = coupled(peer, "fast", send_skips=9)
    intruder.target = endpoint.address
    for i in range(5):
        intruder.send(controls(1000 + i, throttle=1.0))
    sim.run(0.2)
    intruder.sock.close()
    report = endpoint.report()
    assert report["rejected_peers"] == 5
    assert sim.vehicle.inputs["throttle"] == 0.0


def test_one_step_memory_controller_interoperates(peers):
    """Like BeamNG's S-function with Simulink's memory block: the reply to message k carries
    id k and the outputs computed from message k-1."""
    memory = {"previous": None}

    def one_step_memory(message):
        previous, memory["previous"] = memory["previous"], message
        source = previous if previous is not None else message
        return controls(message[0], throttle=source[0] / 1000.0)

    peer = peers(one_step_memory)
    sim, endpoint = coupled(peer, "lockstep", send_skips=0)
    sim.run(0.1)
    report = endpoint.report()
    assert report["timeouts"] == 0 and report["applied"] == 198
    # the last reply applied answers message 198 with the outputs computed from message 197
    assert sim.vehicle.inputs["throttle"] == pytest.approx(197 / 1000.0)


def test_a_late_reply_after_a_reset_is_applied_and_later_ones_are_not_stale(peers):
    """A controller that answers message 3 only after the simulator timed out and reset."""
    held: list[np.ndarray] = []

    def reply(message):
        n = int(message[0])
        if n == 3:
            held.append(controls(3, throttle=0.3))  # hold this answer back
            return None
        if held:
            peer.send(held.pop())  # arrives after the reset: its id 3 > 0, so it applies
        return controls(n, throttle=0.1)

    peer = peers(reply)
    sim, endpoint = coupled(peer, "fast", send_skips=0, timeout=0.1)
    sim.run(0.05)
    report = endpoint.report()
    assert report["timeouts"] == 1
    assert report["stale"] == 0 and report["duplicate"] == 0
    # Steps 0 (first send), 1 (reply id 0, never applied), 4 (the timeout) and 5 (first send
    # after the reset, window open) apply nothing; every other step applies one reply.
    assert report["applied"] == 100 - 4
    assert sim.vehicle.inputs["throttle"] == 0.1


def test_the_kernels_compiled_ahead_are_the_ones_a_started_endpoint_calls():
    from vcosim.sim.pacing import Pacer
    from vcosim.sim.simulation import Simulation
    from vcosim.tight.config import CouplingConfig
    from vcosim.tight.endpoint import SimulatorEndpoint
    from vcosim.tight.kernels import apply_inputs
    from vcosim.tight.native import look, wait_look

    SimulatorEndpoint.compile_ahead()  # (another process does it in the demo's first run)
    kernels = (apply_inputs, look, wait_look)
    compiled = [set(k.signatures) for k in kernels]
    assert all(compiled)
    sim = Simulation(Vehicle(), Pacer("lockstep"))
    config = CouplingConfig(listen_port=0, controller_port=9)
    endpoint = sim.attach("coupling", SimulatorEndpoint(config))
    try:
        endpoint.start(sim)
    finally:
        endpoint.close()
    assert [set(k.signatures) for k in kernels] == compiled  # nothing compiled anew
