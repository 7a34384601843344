"""The simulator side of the tight coupling: a face on the Simulation, run every physics step.

Scheduling (docs/tight-coupling.md): before each physics step, if fewer than ``send_skips``
steps passed since the last send, poll; otherwise it is a send step: poll and send if fewer than
``window`` messages are unanswered, else block (up to ``timeout``) for a new reply, apply it
and send. A timeout resets the counters; the coupling restarts by itself when the controller
comes back. In lock-step pacing the simulator never polls: replies are taken only by the
blocking receive of a send step, so the step at which a reply applies is fixed and a run is
deterministic.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numba import njit

from vcosim.sim.simulation import Simulation
from vcosim.tight.debuglog import DebugLog
from vcosim.tight.protocol import (
    CONTROL_HIGH,
    CONTROL_LOW,
    CONTROLLER_CUSTOM,
    CONTROLLER_PORT,
    CONTROLLER_SLOTS,
    CONTROLLER_TO_SIM,
    N_CONTROLS,
    SIM_CUSTOM,
    SIM_TO_CONTROLLER,
    SIMULATOR_PORT,
    WIRE_DTYPE,
    Schedule,
)
from vcosim.tight.transport import UdpLink
from vcosim.vehicle import layout as L

# Where each controller slot 1..13 lands in the vehicle's input array.
_TARGETS = np.array(
    [L.U_THROTTLE, L.U_BRAKE, L.U_STEERING, L.U_GEAR,
     *(L.U_BRAKING + k for k in range(4)), *(L.U_PROPULSION + k for k in range(4)),
     L.U_DRIVE_MODE],
    dtype=np.int64,
)
_SENT_RING = 4096  # send times kept for the latency figure (far more than any window)
_GEAR_SLOT = 3
_MODE_SLOT = 12

CustomFill = Callable[[Simulation, np.ndarray], None]
CustomReceive = Callable[[Simulation, np.ndarray], None]


@njit(cache=True)
def apply_controls(message, inputs, clamps, low, high, targets) -> None:
    """Write slots 1..13 of a reply into the vehicle inputs: NaN keeps, out of range clamps."""
    for i in range(low.shape[0]):
        value = message[1 + i]
        if value != value:
            continue
        if value < low[i]:
            value = low[i]
            clamps[i] += 1
        elif value > high[i]:
            value = high[i]
            clamps[i] += 1
        if i == _GEAR_SLOT:
            value = float(round(value))
        elif i == _MODE_SLOT:
            value = 1.0 if value >= 0.5 else 0.0
        inputs[targets[i]] = value


@dataclass
class CouplingConfig:
    """Addresses, timing and options of the simulator side of the tight coupling."""

    controller_host: str = "127.0.0.1"
    controller_port: int = CONTROLLER_PORT
    listen_host: str = "127.0.0.1"
    listen_port: int = SIMULATOR_PORT
    ext_time: float = 0.005
    ping_time: float = 0.00001
    window: int | None = None
    send_skips: int | None = None
    send_offset: int = 0
    timeout: float = 2.0
    allowed_hosts: tuple[str, ...] | None = None
    spin: float | None = None
    debug_log: Path | None = None

    def schedule(self, dt: float) -> Schedule:
        """The skips/window/offset in force."""
        return Schedule.derive(self.ext_time, self.ping_time, dt, window=self.window,
                               send_skips=self.send_skips, send_offset=self.send_offset,
                               timeout=self.timeout)


@dataclass
class CouplingStats:
    """What the coupling did; every dropped or changed value is counted here."""

    sent: int = 0
    applied: int = 0
    stale: int = 0
    timeouts: int = 0
    blocked_time: float = 0.0
    clamped: dict[str, int] = field(default_factory=dict)


class SimulatorEndpoint:
    """BeamNG-compatible coupling endpoint; attach with ``sim.attach("coupling", endpoint)``."""

    def __init__(
        self, config: CouplingConfig | None = None, *, fill_custom: CustomFill | None = None,
        on_custom: CustomReceive | None = None, link: Any = None,
    ) -> None:
        self.config = config if config is not None else CouplingConfig()
        self.fill_custom = fill_custom
        self.on_custom = on_custom
        self.schedule: Schedule | None = None
        self.link = link
        self.debug: DebugLog | None = None
        self.stats = CouplingStats()
        self._out = np.zeros(SIM_TO_CONTROLLER, dtype=WIRE_DTYPE)
        self._reply = np.zeros(CONTROLLER_TO_SIM, dtype=WIRE_DTYPE)
        self._clamps = np.zeros(N_CONTROLS, dtype=np.int64)
        self._next_id = 0  # id of the next message to send
        self._answered = -1  # largest reply id applied since the last reset
        self._since_send = 0
        self._lockstep = False
        self._t0 = 0.0
        self._sent_at = np.zeros(_SENT_RING)  # wall time of each send, by id modulo the ring
        self.last_latency: float | None = None  # s, send to applied reply, of the last reply
        self._open()

    def _open(self) -> None:
        """Open the UDP socket (unless a link was given) and the debug logs."""
        cfg = self.config
        if cfg.debug_log is not None:
            self.debug = DebugLog(cfg.debug_log)
        if self.link is not None:
            return
        allowed = set(cfg.allowed_hosts) if cfg.allowed_hosts else {cfg.controller_host}
        self.link = UdpLink(
            (cfg.listen_host, cfg.listen_port), (cfg.controller_host, cfg.controller_port),
            CONTROLLER_TO_SIM, allowed_hosts=allowed, spin=0.0, name="simulator endpoint",
        )

    @property
    def address(self) -> tuple[str, int]:
        """Where the simulator listens (host, port)."""
        return self.link.address

    @property
    def connected(self) -> bool:
        """True once a reply has been applied since the last reset."""
        return self._answered >= 0

    def start(self, sim: Simulation) -> None:
        """Fix the schedule for the run (logged by the caller) and the waiting strategy."""
        self.schedule = self.config.schedule(sim.dt)
        self._lockstep = sim.pacer.lockstep
        spin = self.config.spin
        self.link.spin = spin if spin is not None else (0.05 if self._lockstep else 0.0)
        self._since_send = self.schedule.send_skips - self.schedule.send_offset
        self._inputs = sim.vehicle.input_array
        self._outputs = sim.vehicle.outputs
        self._t0 = sim.wall_start or time.perf_counter()
        sim.live["coupling_connected"] = 0.0

    # -- per physics step ------------------------------------------------------------------
    def before_step(self, sim: Simulation) -> None:
        """Receive, apply and send as the schedule says; runs before the vehicle steps."""
        schedule = self.schedule
        if self.debug is not None:
            self.debug.steps.add(time.perf_counter() - self._t0)
        if self._since_send < schedule.send_skips:
            self._since_send += 1
            if not self._lockstep:
                self._poll_newest(sim)
            return
        outstanding = self._next_id - 1 - self._answered
        if outstanding < schedule.window:
            if not self._lockstep:
                self._poll_newest(sim)
            self._send(sim)
            return
        if self._wait_new(sim, schedule.timeout):
            self._send(sim)
        else:
            self.stats.timeouts += 1
            self._next_id = 0
            self._answered = -1
            sim.live["coupling_connected"] = 0.0

    def _send(self, sim: Simulation) -> None:
        out = self._out
        out[0] = self._next_id
        out[1:61] = self._outputs[:60]
        if self.fill_custom is not None:
            self.fill_custom(sim, out[SIM_CUSTOM])
        self.link.send(out)
        self._sent_at[self._next_id % _SENT_RING] = time.perf_counter()
        if self.debug is not None:
            self.debug.send.add(time.perf_counter() - self._t0, out)
        self._next_id += 1
        self._since_send = 0
        self.stats.sent += 1

    def _poll_newest(self, sim: Simulation) -> None:
        """Drain what has arrived and apply only the newest new reply (no queue grows)."""
        link, best = self.link, self._answered
        while link.poll():
            reply_id = link.message[0]
            if best < reply_id < self._next_id:
                best = reply_id
                self._reply[:] = link.message
            else:
                self.stats.stale += 1
        if best > self._answered:
            self._apply(sim, self._reply)

    def _wait_new(self, sim: Simulation, timeout: float) -> bool:
        """Block until a reply newer than any applied arrives (stale ones are dropped)."""
        link = self.link
        start = time.perf_counter()
        deadline = start + timeout
        try:
            while True:
                remaining = deadline - time.perf_counter()
                if remaining <= 0.0 or not link.wait(remaining):
                    return False
                if self._answered < link.message[0] < self._next_id:
                    self._apply(sim, link.message)
                    return True
                self.stats.stale += 1
        finally:
            self.stats.blocked_time += time.perf_counter() - start

    def _apply(self, sim: Simulation, message: np.ndarray) -> None:
        apply_controls(message, self._inputs, self._clamps, CONTROL_LOW, CONTROL_HIGH, _TARGETS)
        self._answered = int(message[0])
        self.stats.applied += 1
        self.last_latency = time.perf_counter() - self._sent_at[self._answered % _SENT_RING]
        live = sim.live
        live["coupling_connected"] = 1.0
        live["coupling_latency_ms"] = 1000.0 * self.last_latency
        if self.debug is not None:
            self.debug.receive.add(time.perf_counter() - self._t0, message)
        if self.on_custom is not None:
            self.on_custom(sim, message[CONTROLLER_CUSTOM])

    # -- reporting and closing --------------------------------------------------------------
    def report(self) -> dict[str, object]:
        """Statistics of the coupling, JSON-friendly."""
        s, link = self.stats, self.link
        clamped = {name: int(n) for (name, _, _), n in zip(CONTROLLER_SLOTS, self._clamps,
                                                           strict=True) if n}
        sched = self.schedule
        return {
            "send_skips": sched.send_skips if sched else None,
            "window": sched.window if sched else None,
            "send_offset": sched.send_offset if sched else None,
            "sent": s.sent, "applied": s.applied, "stale": s.stale,
            "malformed": link.malformed if link else 0,
            "rejected_peers": link.rejected if link else 0,
            "clamped": clamped, "clamped_total": sum(clamped.values()),
            "timeouts": s.timeouts, "blocked_time": s.blocked_time,
        }

    def close(self) -> None:
        """Close the socket and complete the debug logs (safe twice)."""
        if self.debug is not None:
            self.debug.close()
        if self.link is not None:
            self.link.close()
