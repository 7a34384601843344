"""The simulator side of the tight coupling: a face on the Simulation, run every physics step.

(Past 400 lines on purpose: the per-step send, the reply bookkeeping (ids, skips, implausible
replies) and their statistics are one hot path whose parts share the endpoint's counters; split,
every step would cross modules.)

It follows BeamNG.tech's coupling controller (``tech/vehicleSystemsCoupling`` and
``tech/cosimulationCoupling``; docs/tight-coupling.md, "Compatibility with BeamNG.tech"):

- a reply is applied if and only if its id is greater than the largest id applied so far,
  which starts at 0 (so a reply with id 0 is never applied, and peers that number replies
  one behind or one ahead both couple), and at most one ahead of the last message sent: an
  id further ahead answers nothing that was sent, and is refused (``implausible_id``);
- the controller's address is pinned by the first reply applied and released by a timeout:
  datagrams from any other address meanwhile are dropped (``rejected_peers``); but the
  controller's own address (``--controller HOST:PORT``) outranks whichever port answered
  first: its first reply takes the pin and restarts the id rules (``peer_takeovers``);
- before each physics step: fewer than ``send_skips`` steps since the last send: poll;
  otherwise a send step: poll and send if fewer than ``window`` messages are unanswered,
  else block (up to ``timeout``) for a reply and send; while nothing has been applied yet,
  any reply lets the next message go out;
- a timeout resets the send counter and the largest applied id, nothing else: message ids
  keep counting, so a peer that rejects ids it has seen accepts the next message;
- at start-up, before any controller has answered, a wait that expires is not a timeout: the
  run holds and the last message is sent again every ``timeout`` until a reply comes (the
  start-up rule lets any reply release the next message), so a controller started after
  the simulator sees what it would have seen started first.

In lock-step pacing the simulator never polls: replies are taken only by the blocking
receive of a send step, so the step at which a reply applies is fixed and a run is
deterministic. Dropped replies (stale, duplicate, start-up) and timeouts are counted and, with
debug logs on, written to the events log.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from vcosim.constants import PEER_STATUS_EVERY as STATUS_EVERY
from vcosim.net import parse_allow
from vcosim.reports import Report
from vcosim.sim.face import COUPLING, Face
from vcosim.sim.simulation import Simulation
from vcosim.tight.config import CouplingConfig
from vcosim.tight.debuglog import DebugLog, Event
from vcosim.tight.interface import DERIVED_NAMES
from vcosim.tight.kernels import apply_inputs, derive_sources
from vcosim.tight.protocol import (
    CONTROLLER_CUSTOM,
    SIM_CUSTOM,
    WIRE_DTYPE,
    Schedule,
)
from vcosim.tight.transport import ANSWERED, CouplingLink, UdpLink
from vcosim.vehicle import layout as L
from vcosim.vehicle._jit_cache import entry_point

log = logging.getLogger("vcosim.tight")
_SENT_RING = 4096  # send times kept for the latency figure (far more than any window)
_NEVER_FULL = 1 << 62  # the window while the controller is lost in real time: never blocks

CustomFill = Callable[[Simulation, np.ndarray], None]
CustomReceive = Callable[[Simulation, np.ndarray], None]


@dataclass
class CouplingReport(Report):
    """What the coupling did in a run; every dropped or changed value is counted.

    Attributes:
        startup_unapplied: replies that arrived before anything was applied and were not
            applied (BeamNG's start-up rule), as opposed to ``stale`` (an id not above the
            largest applied) and ``duplicate`` (the same id again).
        implausible_id: replies refused for an id more than one ahead of the last message
            sent (no controller numbers its replies so; a stray datagram may).
        peer_takeovers: how often the controller's own address took the coupling from
            another port that had answered first (a stray, or a second controller).
        startup_wait: wall seconds the run held at start-up until a controller answered.
        startup_resends: how often the last message was sent again while holding.
        clamped: per input, how many values were outside their range and clamped.
        timeouts: blocking receives that expired once a controller had answered.
        blocked_time: wall seconds spent in blocking receives, the start-up wait left out.
        controller_lost: how often a controller that had answered fell silent (a timeout
            after replies); ``uncontrolled_time`` is the simulation time it stayed silent.
    """

    interface: str
    send_skips: int | None
    window: int | None
    send_offset: int | None
    sent: int
    applied: int
    stale: int
    duplicate: int
    startup_unapplied: int
    implausible_id: int
    malformed: int
    rejected_peers: int
    peer_takeovers: int
    clamped: dict[str, int]
    clamped_total: int
    timeouts: int
    blocked_time: float
    startup_wait: float
    startup_resends: int
    controller_lost: int = 0
    uncontrolled_time: float = 0.0


@dataclass
class CouplingStats:
    """What the coupling did; every dropped or changed value is counted here."""

    sent: int = 0
    applied: int = 0
    stale: int = 0
    duplicate: int = 0
    startup: int = 0
    implausible: int = 0
    bad_id: int = 0
    timeouts: int = 0
    blocked_time: float = 0.0  # the start-up wait included (``report`` leaves it out)
    startup_wait: float = 0.0
    resent: int = 0
    lost: int = 0
    uncontrolled_steps: int = 0  # steps the controller was lost (the current loss left out)


class SimulatorEndpoint(Face):
    """BeamNG-compatible coupling endpoint; attach with ``sim.attach("coupling", endpoint)``."""

    kind: ClassVar[str] = COUPLING

    def __init__(
        self,
        config: CouplingConfig | None = None,
        *,
        fill_custom: CustomFill | None = None,
        on_custom: CustomReceive | None = None,
        link: CouplingLink | None = None,
    ) -> None:
        self.config = config if config is not None else CouplingConfig()
        self.interface = self.config.layout()
        self.fill_custom = fill_custom
        self.on_custom = on_custom
        self.schedule: Schedule | None = None
        self.debug: DebugLog | None = None
        self.stats = CouplingStats()
        face = self.interface
        self._out = np.zeros(face.sim_to_controller, dtype=WIRE_DTYPE)
        self._reply = np.zeros(face.controller_to_sim, dtype=WIRE_DTYPE)
        self._sources = face.source_indices()
        self._values_out = self._out[1 : 1 + len(self._sources)]  # the sources' slots
        first = int(self._sources[0]) if len(self._sources) else 0
        self._source_run = (  # sources in order (the fixed layout): a slice copy is faster
            slice(first, first + len(self._sources))
            if np.array_equal(self._sources, np.arange(first, first + len(self._sources)))
            else None
        )
        self._source_values: np.ndarray | None = None  # that slice, a view fixed by start()
        self._slots, self._limits = face.inputs.slots, face.inputs.limits
        self._extended = np.zeros(L.N_OUTPUTS + len(DERIVED_NAMES)) if face.needs_derived else None
        self._clamps = np.zeros(len(face.inputs.names), dtype=np.int64)
        self._frozen = np.zeros(len(face.inputs.names))
        self._next_id = 0  # id of the next message; never reset (as in BeamNG)
        self._largest = 0.0  # largest reply id applied since the last reset (BeamNG's maxRecvId)
        self._sent = 0  # messages sent since the last reset (BeamNG's sendCtr)
        self._answers = 0  # replies to them received since the last reset
        self._since_send = 0
        self._quiet_from = -1  # the step whose quiet_steps ran the steps after it in one call
        self._lockstep = False
        self._t0 = 0.0
        self._sent_at = [0.0] * _SENT_RING  # wall time of each send, by id modulo the ring
        self.last_latency: float | None = None  # s, send to taken reply, of the last applied
        self._apply_first = True  # apply a reply before the message it lets go (see start())
        self._held = -1  # a reply taken but not applied yet: the id of the message it answers
        self._ready = False  # the next message is packed and goes out with the awaited reply
        self._taken_at = 0.0  # when the last reply was taken
        self._pin = True  # the next reply applied pins the controller's address
        self._heard = False  # a reply was applied or counted as start-up (``heard``)
        self._skips, self._window, self._timeout = 0, 1, 2.0  # the schedule's, set by start()
        self._dt = 0.0  # the physics step, set by start()
        self._lost_step = -1  # the step at which the controller was declared lost (-1: not)
        self._lost_wall = 0.0  # and the wall time of it
        self._told = 0.0  # wall time of the last line about it
        self.link: CouplingLink = link if link is not None else self._udp_link()
        cfg = self.config
        if cfg.debug_log is not None:
            self.debug = DebugLog(
                cfg.debug_log, ("id", *face.to_controller), ("id", *face.from_controller)
            )

    @classmethod
    def compile_ahead(cls, config: CouplingConfig | None = None) -> None:
        """Compile (or load from numba's cache) the kernels an endpoint of ``config`` calls.

        For a process with a core to spare while the simulator compiles its vehicle (the
        demo's first run): the simulator's endpoint then loads them from the cache instead of
        compiling them after the vehicle, about 2 s of CPU. The endpoint made here listens
        on an ephemeral port of its own, and its arrays are of the types ``start`` passes (a
        vehicle's inputs and state: one-dimensional float arrays).
        """
        ephemeral = (config or CouplingConfig()).model_copy(update={"listen_port": 0})
        endpoint = cls(ephemeral)
        try:  # (its link compiled the native receive as it was made)
            inputs = np.zeros(L.N_INPUTS)
            entry_point(apply_inputs, (endpoint.link.message, inputs, *endpoint._apply_rest()))
            if endpoint._extended is not None:
                derive_sources(np.zeros(L.N_STATES), endpoint._extended)
        finally:
            endpoint.close()

    def _apply_rest(self) -> tuple[np.ndarray, ...]:
        """``apply_inputs``' arguments after the message and the vehicle's inputs."""
        return (self._frozen, self._clamps, self._slots, self._limits)

    def _udp_link(self) -> UdpLink:
        """The UDP socket to the controller: its host (or address) and ``allow`` may answer."""
        cfg, face = self.config, self.interface
        return UdpLink(
            (cfg.listen_host, cfg.listen_port),
            (cfg.controller_host, cfg.controller_port),
            face.controller_to_sim,
            allow=parse_allow(cfg.allow)[0],
            exact=cfg.exact_peer,
            spin=0.0,
            name="simulator endpoint",
            native=True,
        )

    @property
    def address(self) -> tuple[str, int]:
        """Where the simulator listens (host, port)."""
        return self.link.address

    @property
    def connected(self) -> bool:
        """True once the controller answered since the last reset."""
        return self._answers > 0

    @property
    def heard(self) -> bool:
        """True once any controller answered; until then the run holds at its first wait.

        Every reply before the first applied one is applied or counted as start-up.
        """
        return self._heard

    def start(self, sim: Simulation) -> None:
        """Fix the schedule for the run (logged by the caller) and the waiting strategy."""
        schedule = self.schedule = self.config.schedule(sim.dt)
        self._skips, self._window = schedule.send_skips, schedule.window
        self._timeout = schedule.timeout
        self._dt = sim.dt
        self._lockstep = sim.pacer.lockstep
        self.quiet = self._lockstep and self.debug is None and self._skips > 0
        self._body = sim.body
        spin = self.config.spin
        self.link.spin = spin if spin is not None else (0.05 if self._lockstep else 0.0)
        self._since_send = schedule.send_skips - schedule.send_offset
        self._inputs = sim.vehicle.input_array
        self._outputs = sim.vehicle.outputs
        self._state = sim.vehicle.state
        if self.interface.torque_mode:
            self._inputs[L.U_DRIVE_MODE] = 1.0
        self._frozen[:] = self._inputs[self.interface.inputs.target]
        self._send_out = self.link.send
        self._apply_args = (self._inputs, *self._apply_rest())
        self._apply_inputs = entry_point(apply_inputs, (self.link.message, *self._apply_args))
        source = self._extended if self._extended is not None else self._outputs
        if self._source_run is not None:
            self._source_values = source[self._source_run]
        # A reply's inputs act on the coming step and the message carries the last step's
        # outputs: the message can go first, and the peer has it sooner. Not when a hook
        # fills bank H (it may read the inputs or what ``on_custom`` kept) or debug logs
        # record the order of things.
        self._apply_first = self.debug is not None or (
            self.fill_custom is not None and self.interface.custom
        )
        self._t0 = sim.wall_start or time.perf_counter()
        sim.live["coupling_connected"] = 0.0

    # -- per physics step ------------------------------------------------------------------
    def before_step(self, sim: Simulation) -> None:
        """Receive, apply and send as the schedule says; runs before the vehicle steps."""
        if self.debug is not None:
            self.debug.steps.add(time.perf_counter() - self._t0)
        if self._quiet_from >= 0:  # the steps quiet_steps let run in one call, counted now
            self._since_send += self._body.step_index - self._quiet_from - 1
            self._quiet_from = -1
        if self._since_send < self._skips:
            self._since_send += 1
            if not self._lockstep:
                self._poll_newest(sim)
            return
        if self._sent - self._answers < self._window:
            if not self._lockstep:
                self._poll_newest(sim)
            self._pack(sim)
            self._post()
            return
        # The message carries the last step's outputs, which no reply changes: once a
        # controller answers, it is packed before the wait and goes out the moment the
        # reply is taken (``_wait_reply``), the bookkeeping and the reply's inputs after
        # it. Not while the run holds at start-up (its resends repeat the last message
        # sent) nor when the reply is applied first (``start``).
        packed = self._ready = self._heard and not self._apply_first
        if packed:
            self._pack(sim)
        if self._wait_reply(sim, self._timeout) or self._await_controller(sim):
            if not packed:
                self._pack(sim)
            if self._ready or not packed:  # not sent by the wait (a start-up reply)
                self._ready = False
                self._post()
            if self._held >= 0:  # the reply that let the message go, applied now it is out
                self._apply(sim, self.link.message, self._held)
                self._held = -1
        elif self._heard:  # BeamNG's timeout: reset the counters, go on stepping
            self._ready = False
            self.stats.timeouts += 1
            self._event(Event.TIMEOUT, self._next_id - 1, False)
            self._sent = self._answers = 0
            self._largest = 0.0
            self.link.unpin()  # the controller may come back from another port
            self._pin = True
            sim.live["coupling_connected"] = 0.0
            self._lost(sim)

    # -- a controller that falls silent ----------------------------------------------------
    def _lost(self, sim: Simulation) -> None:
        """A timeout after replies: say so once, then every ``STATUS_EVERY`` s while it lasts.

        In real time the run stops waiting for it (the window never fills) until it is heard
        again, and the pacer catches up the timeout it waited: the vehicle drives on without
        control, in real time, as a real one would. Otherwise (lock-step, fast) BeamNG's
        rule holds: a send that finds the window full waits its timeout.
        """
        now = time.perf_counter()
        if self._lost_step >= 0:
            if now - self._told >= STATUS_EVERY:
                self._tell_lost(sim, now)
            return
        self._lost_step, self._lost_wall, self._told = sim.body.step_index, now, now
        self.stats.lost += 1
        if sim.pacer.realtime:
            meanwhile = "the run goes on in real time without control, sending on"
            self._window = _NEVER_FULL
            sim.pacer.excuse(self._timeout)
        elif self._lockstep:
            meanwhile = f"lock-step: the run holds, each send waits {self._timeout:g} s for it"
        else:
            meanwhile = f"each send waits {self._timeout:g} s for it (fast pacing)"
        log.warning(
            "controller lost: no reply within the %g s timeout at t = %.2f s (%s:%d); %s",
            self._timeout,
            sim.time,
            self.config.controller_host,
            self.config.controller_port,
            meanwhile,
        )

    def _tell_lost(self, sim: Simulation, now: float) -> None:
        self._told = now
        held = "driving on without control" if sim.pacer.realtime else "held, waiting"
        log.warning(
            "controller still lost, for %.0f s (since t = %.2f s): %s; %d timeouts so far",
            now - self._lost_wall,
            self._lost_step * sim.dt,
            held,
            self.stats.timeouts,
        )

    def _found(self, sim: Simulation) -> None:
        """The lost controller answered: say so, count the time without it, block again."""
        steps = sim.body.step_index - self._lost_step
        self.stats.uncontrolled_steps += steps
        self._lost_step = -1
        if self._window == _NEVER_FULL:  # real time: wait for it again, from an empty window
            self._window = self.schedule.window if self.schedule is not None else 1
            self._sent = self._answers = 0
        log.warning(
            "controller back at t = %.2f s, after %.1f s of simulation without control",
            sim.time,
            steps * sim.dt,
        )

    def on_frame(self, sim: Simulation) -> None:
        """While the controller is lost in real time: a status line every few seconds."""
        if self._lost_step >= 0:
            now = time.perf_counter()
            if now - self._told >= STATUS_EVERY:
                self._tell_lost(sim, now)

    def quiet_steps(self, sim: Simulation) -> int:
        """In lock-step, the steps up to the next send run in one call (``Face.quiet_steps``).

        Between sends a lock-step endpoint does nothing but count: replies are awaited at a
        send, when the window is full. Not in real time, where every step takes the newest
        reply, nor with a debug log, which stamps every step; with a message every step
        there is nothing to save (``quiet`` is False).
        """
        quiet = self._skips - self._since_send  # steps after this one before the next send
        if quiet <= 0 or not self.quiet:
            return 1
        self._quiet_from = self._body.step_index
        return quiet + 1

    def _await_controller(self, sim: Simulation) -> bool:
        """At start-up, after a wait expired: hold the run until a controller answers.

        Until a reply has come, BeamNG's start-up rule lets whatever reply arrives release
        the next message, and a timeout would reset nothing (the send counter and the largest
        applied id are at their start values): so the simulator sends its last message
        again every ``timeout`` and waits on, without a timeout, instead of stepping on
        uncontrolled. False once a controller was heard (a real timeout), or when the run
        is asked to stop.
        """
        if self.heard:
            return False
        assert self.schedule is not None
        timeout = self.schedule.timeout
        began = time.perf_counter() - timeout  # the wait that just expired
        try:
            while not sim.stopping:
                self._resend()
                if self._wait_reply(sim, timeout):
                    return True
            return False
        finally:
            self.stats.startup_wait += time.perf_counter() - began

    def _resend(self) -> None:
        """Send the last message again, unchanged, and time its reply from now."""
        out, now = self._out, time.perf_counter()
        self.link.send(out)
        self._sent_at[(self._next_id - 1) % _SENT_RING] = now
        if self.debug is not None:
            self.debug.send.add(now - self._t0, out)
        self.stats.resent += 1

    def _pack(self, sim: Simulation) -> None:
        """Write the next message into ``_out``: its id, the sources, bank H."""
        out = self._out
        out[0] = self._next_id
        source = self._outputs
        if self._extended is not None:
            source = self._extended
            source[: L.N_OUTPUTS] = self._outputs
            derive_sources(self._state, source)
        if self._source_values is not None:
            self._values_out[...] = self._source_values  # views fixed by start(): one copy
        else:
            np.take(source, self._sources, out=self._values_out)
        if self.fill_custom is not None and self.interface.custom:
            self.fill_custom(sim, out[SIM_CUSTOM])

    def _post(self) -> float:
        """Send the packed message and count it; returns when it went out."""
        self._send_out(self._out)
        return self._count_sent()

    def _count_sent(self) -> float:
        """Count the message just sent (and log it); returns the time, which it keeps."""
        now = self._sent_at[self._next_id % _SENT_RING] = time.perf_counter()
        if self.debug is not None:
            self.debug.send.add(now - self._t0, self._out)
        self._next_id += 1
        self._sent += 1
        self._since_send = 0
        self.stats.sent += 1
        return now

    def _reply_id(self, message: np.ndarray) -> float | None:
        """The reply's id, or None (counted) if it is not a whole number."""
        reply_id = float(message[0])
        if reply_id % 1.0 == 0.0:  # NaN and ±inf give NaN here: not whole numbers
            return reply_id
        self.stats.bad_id += 1
        return None

    def _drop(self, reply_id: float, best: float, blocking: bool) -> None:
        """Count and log a reply that is not applied."""
        if best == 0.0:
            self.stats.startup += 1
            self._heard = True
            kind = Event.STARTUP
        elif reply_id == best:
            self.stats.duplicate += 1
            kind = Event.DUPLICATE
        else:
            self.stats.stale += 1
            kind = Event.STALE
        self._event(kind, reply_id, blocking)

    def _poll_newest(self, sim: Simulation) -> None:
        """Drain what has arrived and apply only the newest new reply (no queue grows)."""
        link, best, ceiling = self.link, self._largest, self._next_id
        while link.poll():
            if link.taken_over:  # the controller's own address: what came before is not its
                best = self._new_peer()
            reply_id = self._reply_id(link.message)
            if reply_id is None:
                continue
            if reply_id > best:
                if reply_id > ceiling:
                    self._refuse(reply_id)
                    continue
                best = reply_id
                self._reply[:] = link.message
                self._answered()
                if self._pin:
                    self._pin_controller()
            else:
                if best == 0.0:  # a start-up reply answers a message all the same
                    self._answered()
                self._drop(reply_id, best, False)
        if best > self._largest:
            self._apply(sim, self._reply, self._take(best))

    def _wait_reply(self, sim: Simulation, timeout: float) -> bool:
        """Block for a reply that lets the next message go.

        That is one newer than any applied (it is applied, or held for ``before_step`` to
        apply once the message is out), or, while nothing has been applied yet, any reply
        (BeamNG's rule). A message packed beforehand (``_ready``) goes out first thing after
        the receive, before any bookkeeping: the peer waits on it.
        """
        link, clock = self.link, time.perf_counter
        message = link.message
        start = clock()
        deadline, remaining = start + timeout, timeout
        while remaining > 0.0:
            try:
                if self._ready:  # the link may send it itself, the moment the reply is in
                    got = link.wait_answer(remaining, self._out, self._largest, self._next_id)
                else:
                    got = link.wait(remaining)
            except BaseException:  # (Ctrl-C while waiting: the time waited still counts)
                self.stats.blocked_time += clock() - start
                raise
            if not got:
                break
            if link.taken_over:  # (a reply from the controller's own address, not pinned)
                self._new_peer()
            reply_id = message.item(0)
            if got == ANSWERED:
                self._went_out(sim, reply_id, start)
                return True
            if self._largest < reply_id <= self._next_id and reply_id % 1.0 == 0.0:
                if self._ready:
                    self._send_out(self._out)
                    self._went_out(sim, reply_id, start)
                    return True
                self._answered()
                if self._pin:
                    self._pin_controller()
                if self._apply_first:
                    self._apply(sim, message, self._take(reply_id))
                else:
                    self._held = self._take(reply_id)
                self.stats.blocked_time += clock() - start
                return True
            if self._unwanted(reply_id):
                self.stats.blocked_time += clock() - start
                return True
            remaining = deadline - clock()
        self.stats.blocked_time += clock() - start
        return False

    def _went_out(self, sim: Simulation, reply_id: float, start: float) -> None:
        """The packed message went out on ``reply_id``'s arrival: count both, apply the reply."""
        self._ready = False
        answered = self._next_id - 1  # the newest message the reply can answer
        taken = self._count_sent()
        self.stats.blocked_time += taken - start
        self._answers = min(self._answers + 1, self._sent - 1)
        self._largest, self._taken_at = reply_id, taken
        if self._pin:
            self._pin_controller()
        self._apply(sim, self.link.message, min(int(reply_id), answered))

    def _unwanted(self, reply_id: float) -> bool:
        """Count a reply that is not applied; True if it lets the next message go all the same.

        That is a start-up reply: while nothing has been applied, any reply does (BeamNG).
        """
        if reply_id % 1.0 != 0.0:  # NaN and ±inf give NaN here: not whole numbers
            self.stats.bad_id += 1
        elif reply_id > self._next_id:
            self._refuse(reply_id)
        else:
            self._drop(reply_id, self._largest, True)
            if self._largest == 0.0:
                self._answered()
                return True
        return False

    def _answered(self) -> None:
        self._answers = min(self._answers + 1, self._sent)

    def _refuse(self, reply_id: float) -> None:
        """Count a reply whose id is ahead of every message sent; log the first."""
        self.stats.implausible += 1
        if self.stats.implausible == 1:
            log.warning(
                "a reply with id %.17g refused: no message beyond id %d has been "
                "sent (further ones are only counted as implausible_id)",
                reply_id,
                self._next_id - 1,
            )

    def _take(self, reply_id: float, taken: float = 0.0, sent_since: int = 1) -> int:
        """Make ``reply_id`` the largest applied; the id of the message it answers.

        ``taken`` is when it was taken (0: now); ``sent_since`` counts the messages sent
        since, plus one: the newest message it can answer is ``_next_id - sent_since``.
        """
        self._largest = reply_id
        self._taken_at = taken or time.perf_counter()
        return min(int(reply_id), self._next_id - sent_since)

    def _new_peer(self) -> float:
        """The controller's own address took the pin: its replies start the id rules afresh.

        Whatever the port that answered first made the largest applied id, the controller's
        replies are judged as if nothing had been applied (as after a timeout); the largest
        applied id returned is 0.
        """
        self.link.taken_over = False
        self._largest = 0.0
        self._pin = False
        return 0.0

    def _pin_controller(self) -> None:
        """From the first reply taken since the start or a reset: hear only its sender."""
        self.link.pin()
        self._pin = False

    def _apply(self, sim: Simulation, message: np.ndarray, answered: int) -> None:
        """Apply a reply taken (``_take``) in answer to message ``answered``."""
        self._apply_inputs(message, *self._apply_args)
        self.stats.applied += 1
        self._heard = True
        if self._lost_step >= 0:
            self._found(sim)
        self.last_latency = self._taken_at - self._sent_at[answered % _SENT_RING]
        live = sim.live
        live["coupling_connected"] = 1.0
        live["coupling_latency_ms"] = 1000.0 * self.last_latency
        if self.debug is not None:
            self.debug.receive.add(time.perf_counter() - self._t0, message)
        if self.on_custom is not None and self.interface.custom:
            self.on_custom(sim, message[CONTROLLER_CUSTOM])

    def _event(self, kind: int, reply_id: float, blocking: bool) -> None:
        if self.debug is not None:
            self.debug.events.add(
                time.perf_counter() - self._t0,
                np.array([kind, reply_id, self._largest, float(blocking)]),
            )

    # -- reporting and closing --------------------------------------------------------------
    def report(self) -> CouplingReport:
        """Statistics of the coupling."""
        s, link = self.stats, self.link
        clamped = {
            name: int(n)
            for name, n in zip(self.interface.inputs.names, self._clamps, strict=True)
            if n
        }
        sched = self.schedule
        return CouplingReport(
            interface=self.interface.name,
            send_skips=sched.send_skips if sched else None,
            window=sched.window if sched else None,
            send_offset=sched.send_offset if sched else None,
            sent=s.sent,
            applied=s.applied,
            stale=s.stale,
            duplicate=s.duplicate,
            startup_unapplied=s.startup,
            implausible_id=s.implausible,
            malformed=link.malformed + s.bad_id,
            rejected_peers=link.rejected,
            peer_takeovers=link.takeovers,
            clamped=clamped,
            clamped_total=sum(clamped.values()),
            timeouts=s.timeouts,
            blocked_time=max(s.blocked_time - s.startup_wait, 0.0),  # µs apart at most
            startup_wait=s.startup_wait,
            startup_resends=s.resent,
            controller_lost=s.lost,
            uncontrolled_time=self._uncontrolled_steps() * self._dt,
        )

    def _uncontrolled_steps(self) -> int:
        """Steps without the controller: those of past losses and of one lasting still."""
        steps = self.stats.uncontrolled_steps
        if self._lost_step >= 0:
            steps += self._body.step_index - self._lost_step
        return steps

    def close(self) -> None:
        """Close the socket and complete the debug logs (safe twice)."""
        if self.debug is not None:
            self.debug.close()
        self.link.close()
