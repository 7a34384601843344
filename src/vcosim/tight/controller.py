"""The controller side of the tight coupling: what BeamNG's S-function does for Simulink.

``ControllerBlock(step_fn).run()`` receives the simulator's messages, hands each one to
``step_fn`` as a named ``SimulatorMessage``, and sends the returned ``Controls`` back with the
message's id. It works against ``vcosim sim`` and against BeamNG.tech alike (same wire).

The messages carry no time. The controller's sample time is the simulator's
``(send_skips + 1) * dt`` and must be configured here as ``step`` (default 5 ms, BeamNG's
default ``T_ext``), as a Simulink model's fixed step must be.

The block hears one simulator at a time: the first message it takes pins the sender's
address until the block resets (``timeout`` without an acceptable message), except that the
simulator's own address (``--sim HOST:PORT``) outranks whichever port spoke first: its first
message takes the pin and restarts the id rules (``peer_takeovers``). A message is
taken if its id is above the largest taken (or equal to it once after a reset) and not
implausibly far above it (``ID_JUMP``, ``ID_LIMIT``); others are counted, never answered.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

import numpy as np

from vcosim.constants import PHYSICS_DT
from vcosim.net import parse_allow
from vcosim.reports import Report
from vcosim.stats import Samples
from vcosim.tight.config import ControllerConfig
from vcosim.tight.interface import CsvAdapter, Interface
from vcosim.tight.protocol import (
    CONTROLLER_TO_SIM,
    SIM_TO_CONTROLLER,
    WIRE_DTYPE,
    send_skips_for,
    window_for,
)
from vcosim.tight.transport import UdpLink
from vcosim.tight.views import Controls, SimulatorMessage, as_controls

StepFunction = Callable[[SimulatorMessage], Controls | Mapping[str, Any] | None]
STOP_CHECK = 0.1  # s: a waiting block notices ``stop()`` at least this often
ID_LIMIT = 2.0**53
"""No simulator's first id is above this: past it, consecutive ids are the same double."""
ID_JUMP = 2.0**20
"""Ids a message may be ahead of the last one taken. A simulator sends one per send step,
and only BeamNG's coupling controller keeps sending to a controller that does not answer
(2000 a second at most in real time): 2^20 is minutes of them. The block resets after
``timeout`` without an acceptable message, so a longer gap costs one reset, as a stall does."""


class ControllerStatus(str, Enum):
    """What the block knows about its simulator."""

    waiting = "waiting for the first message"
    connected = "connected"
    no_peer = "no peer"
    ended = "the simulator ended"


@dataclass
class Recommendation(Report):
    """What to give the simulator, from what the block measured.

    ``simulator_options`` is the command-line form; ``keeps_real_time`` is False when the
    computation's p99 exceeds the step (the simulator would fall behind real time).
    """

    ext_time: float
    ping_time: float | None
    send_skips: int
    window: int
    compute_time_p99: float | None
    keeps_real_time: bool | None
    simulator_options: str | None


@dataclass
class BlockReport(Report):
    """What a controller block did: status, counters, timing (ms) and the recommendation.

    ``simulator_ended`` says the run ended because the simulator fell silent (--idle-exit).
    ``implausible_id`` counts messages refused for an id far ahead of the last one taken (or,
    with none taken, beyond any simulator's count): a stray datagram, not a simulator.
    """

    status: str
    interrupted: bool
    simulator_ended: bool
    received: int
    answered: int
    stale: int
    implausible_id: int
    malformed: int
    rejected_peers: int
    peer_takeovers: int
    resets: int
    compute_ms: dict[str, float | None]
    round_trip_ms: dict[str, float | None]
    recommendation: Recommendation


@dataclass
class ControllerStats:
    """Counters and timing samples of a controller block (bounded memory: ``Samples``)."""

    received: int = 0
    answered: int = 0
    stale: int = 0
    implausible: int = 0
    resets: int = 0
    compute: Samples = field(default_factory=Samples)
    round_trip: Samples = field(default_factory=Samples)


class Responder:
    """Turns one simulator message into its reply: the named view, the step function, memory.

    Shared by the UDP ``ControllerBlock`` and the in-process coupling, so both answer alike.
    With a CSV interface the message is seen through the fixed layout's views (and by BeamNG
    name in ``msg.signals``) and the reply carries the CSV's signals.
    """

    def __init__(
        self, step_fn: StepFunction, step: float, memory: bool, interface: Interface | None = None
    ) -> None:
        self.step_fn = step_fn
        self.step = step
        self.memory = memory
        self.answered = 0
        self.compute = Samples()
        self._csv = CsvAdapter(interface) if interface and not interface.custom else None
        self._in = np.zeros(SIM_TO_CONTROLLER, dtype=WIRE_DTYPE)
        self._out = np.zeros(CONTROLLER_TO_SIM, dtype=WIRE_DTYPE)
        self._message = SimulatorMessage(self._in, 0.0, step)
        self._held = Controls()

    def respond(self, values: np.ndarray) -> np.ndarray:
        """The reply to ``values`` (a view reused by the next call): same id, the outputs."""
        start = time.perf_counter()
        if self._csv is not None:
            self._message.signals = self._csv.spread(values, self._in)
        else:
            self._in[:] = values
        self._message.time = self.answered * self.step
        controls = as_controls(self.step_fn(self._message))
        if self.memory:
            controls, self._held = self._held, controls
        self._out[0] = values[0]
        controls.write(self._out)
        self.answered += 1
        self.compute.add(time.perf_counter() - start)
        return self._csv.gather(self._out) if self._csv is not None else self._out


class ControllerBlock:
    """Run a step function against a tight-coupling simulator (vcosim or BeamNG.tech)."""

    def __init__(
        self, step_fn: StepFunction, config: ControllerConfig | None = None, **options: Any
    ) -> None:
        base = config if config is not None else ControllerConfig()
        self.config = ControllerConfig(**{**base.model_dump(), **options}) if options else base
        cfg = self.config
        self.interface = (
            Interface.from_csv(cfg.interface) if cfg.interface is not None else Interface.fixed()
        )
        self.link = UdpLink(
            (cfg.listen_host, cfg.listen_port),
            (cfg.sim_host, cfg.sim_port),
            self.interface.sim_to_controller,
            allow=parse_allow(cfg.allow)[0],
            exact=cfg.exact_peer,
            spin=cfg.spin,
            name="controller block",
        )
        self.status = ControllerStatus.waiting
        self.stats = ControllerStats()
        self.on_status: Callable[[ControllerStatus], None] | None = None
        self.responder = Responder(step_fn, cfg.step, cfg.memory, self.interface)
        self.stats.compute = self.responder.compute
        self._stopping = False
        self.interrupted = self.simulator_ended = False

    @property
    def address(self) -> tuple[str, int]:
        """Where the block listens (host, port)."""
        return self.link.address

    def stop(self) -> None:
        """End ``run`` after the current message (from the step function or another thread)."""
        self._stopping = True

    def run(self, duration: float | None = None) -> BlockReport:
        """Answer messages for ``duration`` controller seconds (None: until stopped or Ctrl-C).

        Returns the report (see ``report``); the socket is closed at the end.
        """
        cfg, link, stats, responder = self.config, self.link, self.stats, self.responder
        limit = None if duration is None else round(duration / cfg.step)
        largest, fresh = 0.0, True  # fresh: an id equal to the largest is accepted once
        ceiling = ID_LIMIT  # a larger id is implausible
        sent_at = 0.0
        reply_to_sender = cfg.sim_port == 0
        heard = 0.0  # when the last accepted message arrived (0: never)
        self._stopping = False
        self.interrupted = self.simulator_ended = False
        try:
            while (limit is None or stats.answered < limit) and not self._stopping:
                deadline = time.perf_counter() + cfg.timeout
                if heard and cfg.idle_exit:  # a simulator that fell silent ended its run
                    deadline = min(deadline, heard + cfg.idle_exit)
                accepted = False
                while not accepted and not self._stopping:
                    remaining = deadline - time.perf_counter()
                    if remaining <= 0.0:
                        break
                    if not link.wait(min(remaining, STOP_CHECK)):
                        continue
                    stats.received += 1
                    if link.taken_over:  # the simulator's own address: start afresh with it
                        link.taken_over = False
                        largest, fresh, ceiling = 0.0, True, ID_LIMIT
                    message_id = link.message.item(0)
                    if not (message_id > largest or (fresh and message_id == largest)):
                        stats.stale += 1
                    elif message_id > ceiling:
                        stats.implausible += 1
                    else:
                        accepted = True
                if self._stopping:
                    break
                if not accepted:  # nothing acceptable within the timeout: reset, keep waiting
                    if heard and cfg.idle_exit and time.perf_counter() - heard >= cfg.idle_exit:
                        self.simulator_ended = True  # silent that long: its run ended
                        self._set_status(ControllerStatus.ended)
                        break
                    if self.status is not ControllerStatus.waiting:  # a peer was lost
                        self._set_status(ControllerStatus.no_peer)
                        stats.resets += 1
                    largest, fresh, ceiling = 0.0, True, ID_LIMIT
                    link.unpin()  # the simulator may come back from another port
                    continue
                arrived = heard = time.perf_counter()
                largest, fresh, ceiling = message_id, False, message_id + ID_JUMP
                if link.pinned is None:  # the first since the start or a reset
                    link.pin()
                link.send(responder.respond(link.message), link.sender if reply_to_sender else None)
                if sent_at:
                    stats.round_trip.add(arrived - sent_at)
                sent_at = time.perf_counter()
                stats.answered += 1
                if self.status is not ControllerStatus.connected:
                    self._set_status(ControllerStatus.connected)
        except KeyboardInterrupt:
            self.interrupted = True
        finally:
            self.close()
        return self.report()

    def _set_status(self, status: ControllerStatus) -> None:
        self.status = status
        if self.on_status is not None:
            self.on_status(status)

    def recommendation(self) -> Recommendation:
        """The ``T_ext``/``T_ping`` (and skips/window) to give the simulator.

        ``T_ext`` is the configured step (the simulator derives the controller's step from
        it); the measured computation time must stay below it for real time. The round trip
        is estimated as the shortest time from a reply to the next message, an upper bound
        that includes the simulator's own step.
        """
        cfg, stats = self.config, self.stats
        compute_p99 = stats.compute.percentile(99) if stats.compute.count else None
        ping = stats.round_trip.min if stats.round_trip.count else None
        ext_time = cfg.step
        return Recommendation(
            ext_time=ext_time,
            ping_time=ping,
            send_skips=send_skips_for(ext_time, PHYSICS_DT),
            window=window_for(ping, ext_time) if ping is not None else 1,
            compute_time_p99=compute_p99,
            keeps_real_time=None if compute_p99 is None else compute_p99 < ext_time,
            simulator_options=(
                None if ping is None else f"--ext-time {ext_time:g} --ping-time {ping:.6f}"
            ),
        )

    def report(self) -> BlockReport:
        """Status, counters, timing (ms) and the recommendation."""
        stats, link = self.stats, self.link

        def ms(values: Samples, q: float) -> float | None:
            return values.percentile(q) * 1e3 if values.count else None

        return BlockReport(
            status=self.status.value,
            interrupted=self.interrupted,
            simulator_ended=self.simulator_ended,
            received=stats.received,
            answered=stats.answered,
            stale=stats.stale,
            implausible_id=stats.implausible,
            malformed=link.malformed,
            rejected_peers=link.rejected,
            peer_takeovers=link.takeovers,
            resets=stats.resets,
            compute_ms={
                "median": ms(stats.compute, 50),
                "p99": ms(stats.compute, 99),
                "max": ms(stats.compute, 100),
            },
            round_trip_ms={"min": ms(stats.round_trip, 0), "median": ms(stats.round_trip, 50)},
            recommendation=self.recommendation(),
        )

    def close(self) -> None:
        """Close the socket (safe twice)."""
        self.link.close()
