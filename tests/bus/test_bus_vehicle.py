"""The vehicle as a bus module, driven over real UDP by a scripted input module."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from vcosim.bus.catalogue import FMLM, FMVM, IMFM, VMFM, ForceFeedback, Shutdown, SoundOnce
from vcosim.bus.router import Router
from vcosim.bus.vehicle_module import (
    FFB,
    POSE,
    BusVehicle,
    SoundModel,
    steering_from_wheel,
    wheel_from_steering,
)
from vcosim.modules.logger import Logger, read_recording
from vcosim.sim.face import Face
from vcosim.sim.pacing import Pacer
from vcosim.sim.simulation import Simulation
from vcosim.vehicle import Vehicle


def test_steering_wheel_mapping_positive_is_left():
    assert steering_from_wheel(0) == 1.0
    assert steering_from_wheel(128) == 0.0
    assert steering_from_wheel(255) == -1.0
    assert steering_from_wheel(64) == 0.5
    assert all(wheel_from_steering(steering_from_wheel(v)) == v for v in range(256))


def test_sound_follows_rpm_load_and_slip():
    sounds = SoundModel()
    idle = sounds.fmlm(rpm=800, load=0.0, slip=0.0, speed=0.0, running=True, to=19)
    assert idle == FMLM(90, 17640, 0, 19845, to=19)
    full = sounds.fmlm(rpm=6000, load=1.0, slip=0.6, speed=20.0, running=True, to=19)
    assert full == FMLM(255, 132300, 255, 24255, to=19)
    off = sounds.fmlm(rpm=0, load=0.5, slip=0.6, speed=0.0, running=False, to=19)
    assert off.engine_volume == 0 and off.engine_frequency == 100 and off.skid_volume == 0


class Script(Face):
    """A scripted input module: sends IMFM at set simulated times, each delivered before going on.

    Waiting for the router to have passed a message on (a condition, not a sleep) makes the run
    deterministic although the simulation runs as fast as it can: on loopback a datagram the
    router has sent is already in the vehicle's socket when the vehicle next looks.
    """

    def __init__(self, router: Router, steps: list[tuple[float, object]]) -> None:
        from vcosim.bus.client import BusClient

        self.router = router
        self.steps = list(steps)
        self.client = BusClient(17, port=router.address[1]).connect(timeout=2.0)
        self.delivered = 0

    def on_frame(self, sim: Simulation) -> None:
        vehicle = self.router.modules[16]
        while self.steps and sim.time >= self.steps[0][0]:
            _, message = self.steps.pop(0)
            self.client.send(message)  # type: ignore[arg-type]
            self.delivered += 1
            assert self.router.wait_until(lambda: vehicle.sent >= self.delivered, 2.0)

    def close(self) -> None:
        self.client.close()


class Trace(Face):
    """The simulator's own pose and force feedback each time the bus face publishes."""

    def __init__(self, every: int) -> None:
        self.every = every
        self.rows: list[tuple[float, ...]] = []

    def after_step(self, sim: Simulation) -> None:
        if sim.vehicle.step_index % self.every == 0:
            y = sim.vehicle.outputs
            self.rows.append((*(y[i] for i in POSE), y[FFB]))


def test_imfm_drives_the_vehicle_and_fmvm_matches_its_state(router: Router, connect, collect):
    viewer = collect(connect(18, monitor=True))  # a viewer that sees every copy
    car = Vehicle(engine_running=True)
    car.step(automatic=1, gear=1)
    sim = Simulation(car, Pacer("fast", dt=car.dt))
    bus = sim.attach("bus", BusVehicle(port=router.address[1], ground_from_viewer=True))
    trace = sim.attach("trace", Trace(every=20))
    sim.attach(
        "script",
        Script(
            router,
            [
                (0.2, IMFM(200, 0, 128, 0, to=16)),  # full-ish throttle, straight
                (3.0, IMFM(120, 0, 80, 0, to=16)),  # wheel turned left
                (4.0, VMFM(0, 0, 0, 0, 1, 1, 1, 1, to=16)),
                (5.0, IMFM(0, 255, 128, 0, to=16)),  # brake to a stop
                (7.5, IMFM(0, 255, 128, -1, to=16)),  # selector D -> N
            ],
        ),
    )
    report = sim.run(8.0)

    assert car.signal("posX") > 20.0 and car.signal("posY") > 1.0  # went ahead, then left
    assert car.signal("groundspeed") < 0.1 and car.inputs["gear"] == 0.0, report.faces
    assert len(trace.rows) == 800 == report.faces["bus"]["published"]
    assert viewer.wait_for(
        lambda copies: sum(isinstance(c.message, ForceFeedback) for c in copies) == 800
    )
    poses = [c.message.values for c in viewer.copies if isinstance(c.message, FMVM)]
    feedback = [c.message.force for c in viewer.copies if isinstance(c.message, ForceFeedback)]
    assert poses == [row[:7] for row in trace.rows]  # bit for bit: floats travel exactly
    assert feedback == [row[7] for row in trace.rows]
    assert {c.sender for c in viewer.copies if isinstance(c.message, (IMFM, VMFM))} == {17}
    assert {c.sender for c in viewer.copies if not isinstance(c.message, (IMFM, VMFM))} == {16}
    gear_sounds = [c.message for c in viewer.copies if isinstance(c.message, SoundOnce)]
    assert gear_sounds and all(m == SoundOnce("gear_change.wav", 255, to=19) for m in gear_sounds)
    face = report.faces["bus"]
    assert face["received"] == {"IMFM": 4, "VMFM": 1}
    assert face["shifts"] == 1 and face["malformed"] == 0 and face["send_failures"] == 0
    assert face["ground_from_viewer"] in (
        "applied 1",
        "unavailable: the vehicle has no per-wheel ground inputs",
    )
    assert bus.last_ground == VMFM(0, 0, 0, 0, 1, 1, 1, 1, to=16)


def test_ground_out_of_reach_is_refused_and_counted_and_the_run_goes_on(router: Router):
    car = Vehicle(engine_running=True)
    sim = Simulation(car, Pacer("fast", dt=car.dt))
    sim.attach("bus", BusVehicle(port=router.address[1], ground_from_viewer=True))
    far = VMFM(1e6, 1e6, 1e6, 1e6, 1, 1, 1, 1, to=16)  # a million metres above the car
    sim.attach("script", Script(router, [(0.2, far), (0.5, VMFM(0, 0, 0, 0, 1, 1, 1, 1, to=16))]))
    report = sim.run(1.0)
    face = report.faces["bus"]
    assert face["received"] == {"VMFM": 2}
    assert face["inputs_refused"] == 1
    assert face["ground_from_viewer"] == "applied 1"
    assert np.isfinite(car.outputs).all()


def test_shutdown_stops_every_module_cleanly(router: Router, connect, tmp_path):
    pytest.importorskip("mcap")  # the logger's file format (extra "logging")
    port = router.address[1]
    logger = Logger(tmp_path / "bus.mcap", port=port)
    logger.connect(timeout=2.0)
    logged: dict[str, object] = {}
    logger_thread = threading.Thread(target=lambda: logged.update(logger.run()), daemon=True)
    logger_thread.start()

    car = Vehicle(engine_running=True)
    sim = Simulation(car, Pacer("realtime", dt=car.dt))  # runs until told to stop
    sim.attach("bus", BusVehicle(port=port))
    ran: dict[str, object] = {}
    sim_thread = threading.Thread(target=lambda: ran.update(report=sim.run(None)), daemon=True)
    sim_thread.start()
    assert router.wait_until(lambda: 16 in router.modules, 10.0)

    driver = connect(17)
    driver.send(IMFM(50, 0, 128, 0, to=16))
    driver.send(Shutdown(to=0))

    sim_thread.join(5.0)
    logger_thread.join(5.0)
    assert not sim_thread.is_alive() and not logger_thread.is_alive()
    assert router.stopped.wait(2.0)
    assert Shutdown(to=17) in iter(lambda: driver.next_message(timeout=2.0), None)
    report = ran["report"]
    assert report.faces["bus"]["shutdown_received"] and not report.interrupted  # type: ignore
    assert logged["shutdown_received"]
    recording = list(read_recording(tmp_path / "bus.mcap"))
    assert recording[-1].message == Shutdown(to=0) and recording[-1].sender == 17
    assert IMFM(50, 0, 128, 0, to=16) in [r.message for r in recording]


def test_a_vehicle_with_no_router_says_so(tmp_path):
    from vcosim.errors import CouplingTimeout

    with Router("127.0.0.1", 0) as router:  # bound but not serving: nobody answers
        sim = Simulation(Vehicle(), Pacer("fast"))
        sim.attach("bus", BusVehicle(port=router.address[1], connect_timeout=0.3))
        with pytest.raises(CouplingTimeout, match="no answer from the bus router"):
            sim.run(0.1)


def test_engine_status_carries_gear_rtf_and_the_couplings_latency(router: Router, connect, collect):
    from vcosim.bus.catalogue import EngineStatus
    from vcosim.tight.inprocess import couple_in_process

    viewer = collect(connect(18, monitor=True))
    car = Vehicle(engine_running=True)
    car.step(automatic=1, gear=1)
    sim = Simulation(car, Pacer("fast", dt=car.dt))
    couple_in_process(sim, lambda message: {"throttle": 0.2, "gear": 1.0})
    bus = sim.attach("bus", BusVehicle(port=router.address[1]))
    report = sim.run(0.5)

    assert report.faces["bus"]["statuses"] == 5 == bus.statuses  # 10 Hz
    assert viewer.wait_for(
        lambda copies: sum(isinstance(c.message, EngineStatus) for c in copies) == 5
    )
    statuses = [c.message for c in viewer.copies if isinstance(c.message, EngineStatus)]
    last = statuses[-1]
    assert last == bus.last_status and last.to == 18
    assert last.a == 1.0 and last.e == 1.0  # gear 1, engine running
    # the run's real-time factor (simulated / wall time since the start) as of the last
    # status, at 0.4 s or later: at least 0.4 / 0.5 of the end's, however the load varied
    assert last.b >= 0.7 * sim.live["realtime_factor"] > 0
    assert last.d == 1.0 and 0.0 <= last.c < 1000.0  # connected, a real latency (ms)
    assert sim.live["coupling_connected"] == 1.0


def test_engine_status_without_a_coupling_says_so(router: Router, connect, collect):
    from vcosim.bus.catalogue import EngineStatus

    viewer = collect(connect(18, monitor=True))
    sim = Simulation(Vehicle(), Pacer("fast"))
    sim.attach("bus", BusVehicle(port=router.address[1]))
    sim.run(0.2)
    assert viewer.wait_for(
        lambda copies: sum(isinstance(c.message, EngineStatus) for c in copies) == 2
    )
    status = next(c.message for c in viewer.copies if isinstance(c.message, EngineStatus))
    assert (status.c, status.d) == (-1.0, 0.0)


def test_without_a_router_the_vehicle_brakes_then_gives_up(router: Router, connect, caplog):
    from vcosim.bus.client import Liveness, RouterLost

    car = Vehicle(engine_running=True)
    car.step(automatic=1, gear=1)
    sim = Simulation(car, Pacer("realtime", dt=car.dt))  # runs until the router is gone
    bus = sim.attach("bus", BusVehicle(port=router.address[1]))
    bus.client.liveness = Liveness(ping_after=0.2, lost_after=2.0, give_up_after=3.0)
    ended: list[BaseException] = []

    def run() -> None:
        try:
            sim.run(None)
        except BaseException as exc:  # noqa: BLE001 (handed to the test)
            ended.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert router.wait_until(lambda: 16 in router.modules, 10.0)
    connect(17).send(IMFM(255, 0, 128, 0, to=16))
    assert router.wait_until(lambda: bus.last_inputs.get("throttle") == 1.0, 10.0)
    router.stop()  # its sockets close: the vehicle's next message is refused
    thread.join(20.0)
    assert not thread.is_alive() and len(ended) == 1 and isinstance(ended[0], RouterLost)
    assert bus.router_lost and car.inputs["throttle"] == 0.0 and car.inputs["brake"] == 1.0
    assert any("throttle off, brakes on" in r.getMessage() for r in caplog.records)
    assert bus.report()["router_losses"] == 1
