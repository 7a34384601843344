"""Controllers that behave on the wire like BeamNG's real ones, for the parity tests.

Each is a raw UDP socket in a thread running a PI cruise controller, wired the way BeamNG's
own components behave (facts from their public sources). Like both S-functions (``beamng.c``'s
``socketOut``, ``beamng_sfunction.c``'s egress socket) each sends its replies from a second,
unbound socket, so from a port the system picks, not from the port it listens on. (Which port
BeamNG's FMUs send from their public sources do not say; they take the same, harder case.)

- ``first_sfunction``: the first Simulink S-function (fixed 111/64 layout). It blocks on
  receive and accepts an id greater than the largest it has seen, or equal to it once; its
  2 s reset counts CPU time, which does not advance while it blocks, so here it never resets.
  BeamNG's example models route the id and the controls through Memory blocks (initial 0):
  the reply to message k carries id k - 1 and the controls computed from message k - 1.
- ``early_custom``: the S-function's very first version, which wrote its 50 custom inputs
  one double early (over the drive-mode slot) and left the last double uninitialised.
- ``csv_sfunction``: the 2024 S-function with a CSV interface: no id filter, the received id
  straight back, only the CSV's signals.
- ``fmu``: BeamNG's FMI FMU: it numbers its replies with its own counter (the reply to
  message k carries k + 1) and sends its Integer gear input, 0 unless set.
"""

from __future__ import annotations

import socket
import struct
import threading
import time
from dataclasses import dataclass, field

import numpy as np

GROUNDSPEED_SLOT = 17  # in the fixed 111-value message
PI_STEP = 0.005


@dataclass
class Cruise:
    """A discrete PI speed controller at 5 ms: throttle above, brake below the target."""

    target: float = 20.0
    kp: float = 0.25
    ki: float = 0.08
    integral: float = 0.0

    def __call__(self, speed: float) -> tuple[float, float]:
        error = self.target - speed
        self.integral = min(max(self.integral + error * PI_STEP, -5.0), 12.0)
        effort = self.kp * error + self.ki * self.integral
        return min(max(effort, 0.0), 1.0), min(max(-effort, 0.0), 1.0)


@dataclass
class PeerStats:
    """What the peer saw and did."""

    received: int = 0
    accepted: int = 0
    rejected: int = 0
    replies: int = 0
    speeds: list[float] = field(default_factory=list)


class BeamngLikePeer:
    """One of BeamNG's controller-side components, emulated (see the module docstring).

    Args:
        ids: "previous" (Memory block on the id), "direct" (id straight back) or "counter"
            (its own counter, one ahead).
        memory: The controls go through a Memory block (the reply carries the controls
            computed from the previous message).
        id_filter: Accept only ids above the largest seen, or equal to it once.
        layout: "fixed" (64 values back) or "csv" (throttle and steering back; the speed is
            the second value of the simulator's message).
        early_custom: Write the custom bank one double early and leave the last one garbage.
        stall_at: After accepting this many messages, stall ``stall`` seconds once.
    """

    def __init__(
        self,
        *,
        ids: str = "previous",
        memory: bool = True,
        id_filter: bool = True,
        layout: str = "fixed",
        early_custom: bool = False,
        stall_at: int | None = None,
        stall: float = 3.0,
        target: float = 20.0,
    ) -> None:
        self.ids, self.memory, self.id_filter, self.layout = ids, memory, id_filter, layout
        self.early_custom, self.stall_at, self.stall = early_custom, stall_at, stall
        self.cruise = Cruise(target)
        self.stats = PeerStats()
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.05)
        self.egress = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)  # bound by its first send
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._garbage = np.random.default_rng(7)
        self.simulator: tuple[str, int] | None = None

    @property
    def port(self) -> int:
        return self.sock.getsockname()[1]

    def start(self, simulator: tuple[str, int]) -> BeamngLikePeer:
        self.simulator = simulator
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self.sock.close()
        self.egress.close()

    def _accepts(self, message_id: float, largest: float, unique: bool) -> bool:
        return not self.id_filter or message_id > largest or (message_id == largest and unique)

    def _loop(self) -> None:
        largest, unique = 0.0, True
        held_id, held = 0.0, (0.0, 0.0)  # the Memory blocks, initial 0
        counter = 0
        while not self._stop.is_set():
            try:
                data = self.sock.recv(8192)
            except TimeoutError:
                continue
            except OSError:
                return
            message = np.frombuffer(data, "<f8")
            self.stats.received += 1
            message_id = float(message[0])
            if not self._accepts(message_id, largest, unique):
                self.stats.rejected += 1
                continue
            unique = message_id > largest
            largest = max(largest, message_id)
            self.stats.accepted += 1
            if self.stall_at is not None and self.stats.accepted == self.stall_at:
                time.sleep(self.stall)  # the behaviour under test: a controller that hangs
            speed = float(message[2 if self.layout == "csv" else GROUNDSPEED_SLOT])
            self.stats.speeds.append(speed)
            computed = self.cruise(speed)
            controls = held if self.memory else computed
            held = computed
            if self.ids == "previous":
                reply_id, held_id = held_id, message_id
            elif self.ids == "counter":
                counter += 1
                reply_id = float(counter)
            else:
                reply_id = message_id
            self.egress.sendto(self._reply(reply_id, controls), self.simulator)
            self.stats.replies += 1

    def _reply(self, reply_id: float, controls: tuple[float, float]) -> bytes:
        throttle, brake = controls
        if self.layout == "csv":
            return struct.pack("<3d", reply_id, throttle, 0.0)  # id, throttle, steering
        core = [throttle, brake, 0.0, 0.0, *[0.0] * 8, 0.0]  # gear 0, torques 0, pedals mode
        custom = [0.0] * 50  # unconnected inputs read 0
        values = [reply_id, *core, *custom]
        if self.early_custom:  # custom written at offset 13: over drive mode, one short
            values = [reply_id, *core[:12], *custom]
            raw = struct.pack("<63d", *values)
            return raw + self._garbage.bytes(8)
        return struct.pack("<64d", *values)
