"""The vehicle as a bus module (the seed's FM): ``vcosim sim --bus HOST:PORT``.

(Past 400 lines: the messages consumed and published, listed below, and the face that applies and
publishes them every 10 ms share the module's state; a quarter of it is that list.)

``BusVehicle`` is a face of the Simulation. Every ``1 / publish_rate`` of simulated time
(10 ms: 20 physics steps) it takes the messages that have arrived and then publishes the
vehicle's state, so the cadence is exact in simulated time whatever the frame rate; in real
time the messages leave at each frame, so a frame rate of at least 100 Hz (``--frame-rate
100``, as ``vcosim drive`` runs it) spaces them evenly on the wall clock.

Consumed:

- IMFM: throttle and brake 0-255 → 0-1; steering 0-255 with 128 centred → vcosim steering,
  positive = left: 0 is full left (+1), 255 full right (-1); shift +1/-1 moves the gear
  selector one step (automatic: R -1, N 0, D 1; manual: gears -1..5), once per message.
- Shutdown: ends the run after the current frame.
- VMFM (``ground_from_viewer=True``): per-wheel ground height and friction from the viewer
  replace the local terrain, through the vehicle's ground inputs (see ``GROUND_INPUTS``).

A router that has gone (``vcosim.bus.client.Liveness``: silent for 2 s, or its port closed)
can bring no driver input: the vehicle releases the throttle and brakes fully until the
router is back and the driver's next IMFM arrives; after 10 s of silence the run ends with
``RouterLost`` (exit code 1).

Published: FMVM (pose and ground speed) to the visualisation, FMLM (engine and skid sound
from rpm, load and slip) to the sound module, ForceFeedback (the tyres' aligning moment, the
``force_feedback`` signal, positive turns the wheel left) to the input module, each at the
publish rate; SoundOnce on engine start and stop and on each gear change; SoundStop of the
continuous sounds when the run ends.

EngineStatus (its five free values) goes to the visualisation at ``status_rate`` (10 Hz of
simulated time): gear (-1 R, 0 N, 1-5), the run's real-time factor, the tight coupling's reply
latency in ms (-1 when no coupling is attached or none has answered yet), whether the coupling
is connected (0/1) and whether the engine runs (0/1). The figures come from ``sim.live``, where
the host and the coupling face publish them (faces do not reach into each other).

On an OpenDRIVE road (``road``), RoadPosition (row 0: road id, s, t, lane id) goes to the
visualisation at ``road_rate`` (20 Hz of simulated time).
"""

from __future__ import annotations

import logging
import math
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from vcosim.bus.catalogue import (
    FMLM,
    FMVM,
    IMFM,
    VMFM,
    EngineStatus,
    ForceFeedback,
    Message,
    ModuleId,
    RoadPosition,
    SoundOnce,
    SoundStop,
)
from vcosim.bus.client import DEFAULT_PORT
from vcosim.bus.codec import Codec
from vcosim.bus.face import BusFace, BusReport
from vcosim.errors import ProtocolError
from vcosim.vehicle import InputError
from vcosim.vehicle import layout as L
from vcosim.vehicle.inputs import INPUT_NAMES, INPUTS

if TYPE_CHECKING:
    from vcosim.roads import RoadNetwork
    from vcosim.roads.tracking import RoadTracker
    from vcosim.sim.simulation import Simulation
    from vcosim.vehicle import VehicleView

log = logging.getLogger("vcosim.bus")

GROUND_INPUTS = ("ground_from_inputs", "ground_height", "ground_friction")
"""Vehicle inputs that let VMFM replace the terrain: a 0/1 switch and FL FR RL RR vectors."""

_S = L.SIGNAL_INDEX
POSE = tuple(_S[n] for n in ("posX", "posY", "posZ", "roll", "pitch", "yaw", "groundspeed"))
SLIPS = tuple(_S[f"wheel{w}_{q}"] for w in L.WHEELS for q in ("slip", "slipAngle"))
RPM, LOAD, RUNNING, GEAR = _S["rpm"], _S["engineLoad"], _S["engine_running"], _S["gear"]
SPEED, FFB = _S["groundspeed"], _S["force_feedback"]


def road_positions(
    tracker: RoadTracker, outputs: list[Any], rows: list[int], to: int
) -> list[RoadPosition]:
    """A RoadPosition for each vehicle (its outputs and row) from where it is on the road now."""
    at = tracker.update([y[POSE[0]] for y in outputs], [y[POSE[1]] for y in outputs])
    return [
        RoadPosition(row, at.road[k], at.s[k], at.t[k], int(at.lane[k]), to=to)
        if at.road[k]
        else RoadPosition(row, "-", 0.0, 0.0, 0, to=to)
        for k, row in enumerate(rows)
    ]


def steering_from_wheel(value: int) -> float:
    """IMFM steering 0-255 as vcosim steering: 0 → +1 (full left), 128 → 0, 255 → -1."""
    return (128 - value) / (128.0 if value <= 128 else 127.0)


def wheel_from_steering(steering: float) -> int:
    """The inverse of ``steering_from_wheel`` (rounded): for input modules and tests."""
    s = min(max(steering, -1.0), 1.0)
    return round(128 - s * (128.0 if s >= 0 else 127.0))


def _clamp(value: float, low: float, high: float) -> float:
    return min(max(value, low), high)


@dataclass(frozen=True)
class SoundModel:
    """How rpm, engine load and tyre slip become sound (FMLM), and the sound files' names.

    Frequencies are playback rates (Hz) of looped samples, as the seed's sound module takes
    them: the engine sample is taken to be recorded at ``engine_base_rpm`` and played at
    ``engine_base_rate`` there, faster with rpm. The skid sound starts at ``skid_slip_start``
    and is full at ``skid_slip_full`` (the larger of |slip| and |slip angle| over the wheels),
    faded in with ground speed so a car at rest does not squeal.
    """

    engine_base_rpm: float = 1000.0
    engine_base_rate: float = 22050.0
    engine_idle_volume: int = 90
    engine_full_volume: int = 255
    skid_slip_start: float = 0.08
    skid_slip_full: float = 0.4
    skid_base_rate: float = 22050.0
    skid_full_speed: float = 3.0
    engine_file: str = "engine.wav"
    skid_file: str = "skid.wav"
    start_file: str = "engine_start.wav"
    stop_file: str = "engine_stop.wav"
    gear_file: str = "gear_change.wav"
    event_volume: int = 255

    def fmlm(
        self, rpm: float, load: float, slip: float, speed: float, running: bool, to: int
    ) -> FMLM:
        """The FMLM message for this engine and tyre state."""
        engine_rate = _clamp(self.engine_base_rate * rpm / self.engine_base_rpm, 100, 705600)
        engine_volume = (
            (
                self.engine_idle_volume
                + (self.engine_full_volume - self.engine_idle_volume) * _clamp(load, 0.0, 1.0)
            )
            if running
            else 0.0
        )
        skid = _clamp(
            (slip - self.skid_slip_start) / (self.skid_slip_full - self.skid_slip_start), 0.0, 1.0
        )
        skid *= _clamp(speed / self.skid_full_speed, 0.0, 1.0)
        skid_rate = _clamp(self.skid_base_rate * (0.9 + 0.2 * skid), 100, 705600)
        return FMLM(
            round(engine_volume), round(engine_rate), round(255 * skid), round(skid_rate), to=to
        )


@dataclass
class BusVehicleReport(BusReport):
    """A vehicle module's counters: what it published, and what the driver did."""

    published: int
    statuses: int
    shifts: int
    sound_events: int
    ground_from_viewer: str
    inputs_refused: int


class BusVehicle(BusFace):
    """The simulated vehicle as module ``module_id`` on a NightRider bus (a Simulation face).

    Args:
        host, port: the router's handshake address.
        module_id, input_id, visualisation_id, sound_id: this module's id and its peers';
            a peer of None is sent nothing (a world's other vehicles: only their driver
            speaks to them, their poses go out as WorldPose).
        publish_rate: messages per simulated second (the seed's 10 ms step: 100).
        status_rate: EngineStatus messages per simulated second (0: none).
        ground_from_viewer: let VMFM replace the local terrain under each wheel.
        codec: message symbols and maximum length (the router's).
        sounds: the sound mapping and file names.
        connect_timeout: seconds to wait for the router's answer at start.
        road: the run's OpenDRIVE road: RoadPosition (row 0) to the visualisation.
        road_rate: RoadPosition messages per simulated second (whole publish periods).
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = DEFAULT_PORT,
        *,
        module_id: int = ModuleId.VEHICLE,
        input_id: int | None = ModuleId.INPUT,
        visualisation_id: int | None = ModuleId.VISUALISATION,
        sound_id: int | None = ModuleId.SOUND,
        publish_rate: float = 100.0,
        status_rate: float = 10.0,
        ground_from_viewer: bool = False,
        codec: Codec | None = None,
        sounds: SoundModel | None = None,
        connect_timeout: float = 5.0,
        road: RoadNetwork | None = None,
        road_rate: float = 20.0,
    ) -> None:
        if publish_rate <= 0:
            raise ProtocolError(f"publish_rate must be positive, got {publish_rate}")
        self.road_rate = road_rate
        self.road_every = 0
        self.road_positions = 0
        self._tracker: RoadTracker | None = None
        if road is not None:
            from vcosim.roads.tracking import RoadTracker

            self._tracker = RoadTracker(road)
        super().__init__(module_id, host, port, codec, connect_timeout)
        self.input_id, self.visualisation_id, self.sound_id = input_id, visualisation_id, sound_id
        self.publish_rate = publish_rate
        self.status_rate = status_rate
        self.status_every = 0
        self.statuses = 0
        self.last_status: EngineStatus | None = None
        self.ground_from_viewer = ground_from_viewer
        self.ground_hook = set(GROUND_INPUTS) <= set(INPUT_NAMES)
        self.sounds = sounds if sounds is not None else SoundModel()
        self.published = 0
        self.shifts = 0
        self.sound_events = 0
        self.ground_applied = 0
        self.inputs_refused = 0
        self.router_lost = False
        self.last_inputs: dict[str, float] = {}
        self.last_ground: VMFM | None = None
        self._running = False
        self._gear = 0

    # -- hooks ------------------------------------------------------------------------------
    def start(self, sim: Simulation) -> None:
        """Join the bus; note the engine and gear so that changes make sounds."""
        self.join()
        self.every = max(1, round(1.0 / (self.publish_rate * sim.dt)))
        if self.status_rate > 0 and self.visualisation_id is not None:  # whole publish periods
            self.status_every = self.every * max(1, round(self.publish_rate / self.status_rate))
        if self._tracker is not None and self.visualisation_id is not None:
            self.road_every = self.every * max(1, round(self.publish_rate / self.road_rate))
        y = sim.vehicle.outputs
        self._running, self._gear = y[RUNNING] >= 0.5, round(y[GEAR])
        if self.ground_from_viewer and not self.ground_hook:
            log.warning(
                "bus vehicle: VMFM ground is configured, but this vehicle model has no "
                "per-wheel ground inputs (%s); VMFM is received and counted only",
                ", ".join(GROUND_INPUTS),
            )
        log.info(
            "bus vehicle: module %d on the bus at %s:%d, publishing every %d steps",
            self.client.module_id,
            *self.client.router_address,
            self.every,
        )

    def after_step(self, sim: Simulation) -> None:
        """Every publish period: take the arrived messages, then publish (until Shutdown)."""
        if sim.vehicle.step_index % self.every == 0 and not self.shutdown:
            self.exchange(sim)

    def exchange(self, sim: Simulation) -> None:
        """Apply every message that has arrived, then publish the vehicle's state."""
        client = self.client
        client.poll()
        if client.router_lost != self.router_lost:
            self._router_changed(sim.vehicle, client.router_lost)
        while (message := client.next_message()) is not None:
            if not self.received_shutdown(sim, message):
                self._consume(sim, message)
        if not self.shutdown:
            self._publish(sim.vehicle)
            if self.status_every and sim.vehicle.step_index % self.status_every == 0:
                self._status(sim)
            if self.road_every and sim.vehicle.step_index % self.road_every == 0:
                self._road(sim.vehicle)

    def _router_changed(self, vehicle: VehicleView, lost: bool) -> None:
        """No router, no driver: release the throttle and brake (a dead-man rule)."""
        self.router_lost = lost
        if lost:
            vehicle.set_inputs(throttle=0.0, brake=1.0)
            log.warning("bus vehicle: no driver input without the router: throttle off, brakes on")

    # -- receiving --------------------------------------------------------------------------
    def _consume(self, sim: Simulation, message: Message) -> None:
        if isinstance(message, IMFM):
            self._drive(sim.vehicle, message)
        elif isinstance(message, VMFM):
            self.last_ground = message
            if self.ground_from_viewer and self.ground_hook:
                applied = self._apply(
                    sim.vehicle,
                    ground_from_inputs=1.0,
                    ground_height=(
                        message.height_fl,
                        message.height_fr,
                        message.height_rl,
                        message.height_rr,
                    ),
                    ground_friction=(
                        message.friction_fl,
                        message.friction_fr,
                        message.friction_rl,
                        message.friction_rr,
                    ),
                )
                self.ground_applied += applied

    def _drive(self, vehicle: VehicleView, message: IMFM) -> None:
        inputs: dict[str, float] = {
            "throttle": message.throttle / 255.0,
            "brake": message.brake / 255.0,
            "steering": steering_from_wheel(message.steering),
        }
        if message.shift:
            held = vehicle.inputs
            gears = INPUTS["gear"]  # the automatic's selector stops at D (1)
            top = 1.0 if held["automatic"] >= 0.5 else gears.high  # type: ignore[operator]
            gear = round(held["gear"]) + message.shift  # type: ignore[call-overload]
            inputs["gear"] = float(min(max(gear, gears.low), top))
            self.shifts += 1
        if self._apply(vehicle, **inputs):
            self.last_inputs = inputs

    def _apply(self, vehicle: VehicleView, **inputs: Any) -> bool:
        """Set inputs; those the vehicle refuses (ground out of reach) are counted, once said."""
        try:
            vehicle.set_inputs(**inputs)
        except InputError as exc:
            self.inputs_refused += 1
            if self.inputs_refused == 1:
                log.warning("bus vehicle: inputs refused (further ones are only counted): %s", exc)
            return False
        return True

    # -- publishing -------------------------------------------------------------------------
    def _publish(self, vehicle: VehicleView) -> None:
        if self.visualisation_id is None and self.sound_id is None and self.input_id is None:
            return  # a world's other vehicle: it only listens to its driver
        y = vehicle.outputs
        sounds = self.sounds
        slip = max(abs(y[i]) for i in SLIPS)
        running, gear = bool(y[RUNNING] >= 0.5), round(y[GEAR])
        try:
            if self.visualisation_id is not None:
                self._send(FMVM(*(y[i] for i in POSE), to=self.visualisation_id))
            if self.sound_id is not None:
                self._send(sounds.fmlm(y[RPM], y[LOAD], slip, y[SPEED], running, self.sound_id))
            if self.input_id is not None:
                self._send(ForceFeedback(y[FFB], 3.0 / self.publish_rate, to=self.input_id))
        except ProtocolError as exc:  # a non-finite state: say so once, keep running
            self.publish_errors += 1
            if self.publish_errors == 1:
                log.warning("bus vehicle: cannot publish: %s", exc)
            return
        self.published += 1
        if running != self._running:
            self._running = running
            self._event(sounds.start_file if running else sounds.stop_file)
        if gear != self._gear:
            self._gear = gear
            self._event(sounds.gear_file)

    def _status(self, sim: Simulation) -> None:
        """EngineStatus to the visualisation: gear, rtf, latency ms, connected, running."""
        y, live = sim.vehicle.outputs, sim.live
        if self.visualisation_id is None:
            return

        def finite(value: float | None) -> float:
            return value if value is not None and math.isfinite(value) else -1.0

        status = EngineStatus(
            float(round(y[GEAR])),
            finite(live.get("realtime_factor")),
            finite(live.get("coupling_latency_ms")),
            float(live.get("coupling_connected", 0.0)),
            1.0 if y[RUNNING] >= 0.5 else 0.0,
            to=self.visualisation_id,
        )
        self._send(status)
        self.statuses += 1
        self.last_status = status

    def _road(self, vehicle: VehicleView) -> None:
        """RoadPosition (row 0) to the visualisation: where the car is on the road now."""
        assert self._tracker is not None and self.visualisation_id is not None
        (message,) = road_positions(self._tracker, [vehicle.outputs], [0], self.visualisation_id)
        self._send(message)
        self.road_positions += 1

    def _event(self, file: str) -> None:
        if self.sound_id is None:
            return
        self.sound_events += 1
        self._send(SoundOnce(file, self.sounds.event_volume, to=self.sound_id))

    def _send(self, message: Message) -> None:
        self.client.send(message)

    # -- end --------------------------------------------------------------------------------
    def report(self) -> BusVehicleReport:
        """What the module received and sent."""
        if not self.ground_from_viewer:
            ground = "off"
        elif self.ground_hook:
            ground = f"applied {self.ground_applied}"
        else:
            ground = "unavailable: the vehicle has no per-wheel ground inputs"
        return BusVehicleReport(
            **asdict(self.counters()),
            published=self.published,
            statuses=self.statuses,
            shifts=self.shifts,
            sound_events=self.sound_events,
            ground_from_viewer=ground,
            inputs_refused=self.inputs_refused,
        )

    def leave(self) -> None:
        """Stop the continuous sounds (unless all is shutting down) before leaving the bus."""
        if self.client.connected and not self.shutdown and self.sound_id is not None:
            for file in (self.sounds.engine_file, self.sounds.skid_file):
                self._send(SoundStop(file, to=self.sound_id))
