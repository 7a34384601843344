"""The contract server: a face on the Simulation that serves VS Connect-style contracts over UDP.

(Past 400 lines on purpose: the per-step receive, hold and send of every session share the server's
sessions and clock on the hot path; admission, negotiation and limits already live in the modules
beside it.)

``sim.attach("contracts", ContractServer(port=4367))``, or ``vcosim sim --contracts``. Each
client (one UDP address) has a session: the contracts it proposed in its HELLO, with each
field accepted or refused (``sessions.negotiate``), once ``admission.Doorman`` has let the
HELLO in (within ``limits`` and the server's budget). Then, every physics step:

- ``before_step`` receives what has arrived (data, pings, handshakes, goodbyes) and applies
  the clients' inputs to the vehicle. It *holds* (waits inside ``before_step``, still serving
  every client) while a contract forbids the step: a time-synced contract from a client (the
  client is the time master) whose data does not reach the end of the step, an overdue one,
  or, in lock-step pacing, a client that has not answered the latest update yet. A hold
  gives up after ``sync_timeout`` seconds without data from the awaited contract: the
  contract is released (counted in ``sync_timeouts``) until its next data, so a vanished
  client cannot hang the simulation.
- ``after_step`` sends each contract that is due: at most once per update period of
  simulation time, stamped with the simulation time after the step.

Sessions end with the client's BYE, or after ``session_timeout`` seconds of silence (clients
ping several times a second). ``close`` says BYE to every client.
"""

from __future__ import annotations

import logging
import math
import os
import time
from typing import Any, ClassVar

from vcosim.constants import PEER_STATUS_EVERY
from vcosim.contracts import protocol as P
from vcosim.contracts import wire
from vcosim.contracts.objects import Catalogue
from vcosim.contracts.options import LOCKSTEP_SPIN, ServerOptions
from vcosim.contracts.server.admission import Doorman
from vcosim.contracts.server.lockstep import LeanExchange
from vcosim.contracts.server.report import ServerReport, ServerStats
from vcosim.contracts.server.sessions import ServerSession, ToServer, open_session
from vcosim.contracts.transport import Address, Endpoint
from vcosim.errors import ProtocolError
from vcosim.net import Tally
from vcosim.sim.face import Face
from vcosim.sim.simulation import Simulation
from vcosim.vehicle import Vehicle

log = logging.getLogger("vcosim.contracts")
EPS = 1e-9
WELCOME_GAIN = 3  # a WELCOME is at most this many times its HELLO (reasons left out if need be)
HOLD_POLL = 0.05  # s: a hold re-checks timeouts at least this often
EXPIRE_EVERY = 0.05  # s: silent sessions are looked for at most this often
EVICT_GRACE = 1.0  # s of run time: a session with a HELLO or data this recent is not evicted
EVICTED_BYTES = 256  # the ERROR telling a client its session was evicted, at most
QUIET_MAX = 1 << 30  # steps: no send due (no client yet)
_DATA, _PING, _HELLO = int(P.Kind.DATA), int(P.Kind.PING), int(P.Kind.HELLO)


class ContractServer(Face):
    """VS Connect-style contract server; a face (``sim.attach("contracts", server)``).

    Takes ``ServerOptions`` (``options=``) or its fields as keywords: host, port,
    vehicle_name, points, allowed_hosts, sync_timeout, session_timeout, wait_for_clients,
    wait_timeout, goodbye, spin.
    """

    kind: ClassVar[str] = "contracts"

    def __init__(self, options: ServerOptions | None = None, **given: Any) -> None:
        opts = ServerOptions(**{**(options.model_dump() if options else {}), **given})
        self.options = opts
        allowed = set(opts.allowed_hosts) if opts.allowed_hosts else {"127.0.0.1", opts.host}
        self.endpoint = Endpoint(
            (opts.host, opts.port),
            allowed_hosts=allowed - {"0.0.0.0", ""} or None,
            name="contract server",
        )
        self._ready = self.endpoint.ready
        self._reader = P.DataReader(self.endpoint.buffer)
        self._dt = 0.0
        self.sync_timeout = opts.sync_timeout
        self.session_timeout = opts.session_timeout
        self.sessions: dict[Address, ServerSession] = {}
        self.stats = ServerStats()
        self.blocking = False
        self.catalogue: Catalogue | None = None
        self.lockstep = False
        self.spin = opts.spin or 0.0
        self._inputs: Any = None  # the vehicle's arrays, from start()
        self._outputs: Any = None
        self._waiters: list[ToServer] = []  # the contracts a hold may wait for
        self._timed: list[ToServer] = []  # those that may forbid a step as time passes
        self._answers_due = False  # a lock-step update went out: its answers may forbid
        self._next_due = math.inf
        self._sync_data = 0  # data messages applied to contracts a hold may wait for
        self._next_expiry = 0.0  # perf_counter time of the next look for silent sessions
        self._lean: LeanExchange | None = None  # lock-step with one client (``_rebuild``)
        self._lean_steps = 0  # its steps to the next update, from before_step to quiet_steps
        self._vehicle: tuple[object, ...] | None = None  # its kernel's arguments, if we step it
        self._awaiting: LeanExchange | None = None  # the hold left to ``advance``
        self.doorman = Doorman(self.endpoint, self.stats, opts)
        self._tally = Tally(log, "contract server")  # sessions opening and ending, counted
        self._closed = False

    @property
    def address(self) -> Address:
        """Where the server listens (host, port)."""
        return self.endpoint.address

    # -- face hooks -------------------------------------------------------------------------
    def start(self, sim: Simulation) -> None:
        """Bind the catalogue to this simulation's vehicle; wait for clients if asked to."""
        opts = self.options
        self.lockstep = sim.pacer.lockstep
        self._dt = sim.dt
        self.spin = opts.spin if opts.spin is not None else LOCKSTEP_SPIN * self.lockstep
        if self.catalogue is None:  # a world's: every vehicle, each an object by its name
            world = sim.world
            self.catalogue = Catalogue(sim.vehicle, opts.vehicle_name, opts.points, world=world)
            log.info(
                "contract server: listening on %s:%d; objects %s",
                *self.address,
                ", ".join(self.catalogue.objects),
            )
        self._inputs = self.catalogue.inputs
        self._outputs = self.catalogue.outputs
        self._vehicle = None
        if self.lockstep:  # the lean exchange's kernels now, not while a client connects
            wire.warm_up(server=True)
            vehicle = sim.body
            if sim.stepper() is self and isinstance(vehicle, Vehicle):
                args = vehicle.kernel_args
                if args[1] is self._inputs and args[3] is self._outputs:
                    self._vehicle = args
                    wire.warm_up_exchange(args)
        if opts.wait_for_clients:
            self._wait_for_clients(sim, opts.wait_for_clients, opts.wait_timeout)
        elif self.lockstep:
            log.info(
                "contract server: lock-step with no client to wait for: the run goes on as "
                "fast as it can until one joins (wait_for_clients)"
            )

    def before_step(self, sim: Simulation) -> None:
        """Take what has arrived; hold while a contract forbids the step."""
        lean = self._lean
        if lean is not None and self._answers_due:  # lock-step with one client
            self._answers_due = False
            if lean.due():
                if self._vehicle is not None:
                    self._awaiting = lean  # the hold, the steps and the send in one call
                else:
                    self._hold(sim, lean)
            if self._lean is lean:  # (no step since the update: as quiet_steps would say)
                self._lean_steps = lean.steps
            return
        if not self._answers_due and self._ready():  # (a hold looks first itself)
            self._receive(sim)
        if self._timed or self._answers_due:
            now = sim.time
            if self._must_hold(now, now + self._dt):
                self._hold(sim)
            self._answers_due = False  # a lock-step answer is due again after the next send

    def quiet_steps(self, sim: Simulation) -> int:
        """In lock-step, the steps up to the next send run in one call (``Face.quiet_steps``).

        Once the answer to the latest update is in, nothing can forbid a step before the next
        update is sent: what arrives meanwhile (pings, an input of a shorter period) waits for
        the next ``before_step``, one update later at most. Not with time-synced or overdue
        contracts (each step's end is checked) nor in real time (data applies on arrival).
        A server that runs the steps itself takes the whole frame (``advance``).
        """
        return QUIET_MAX if self._vehicle is not None else self._ahead(sim)

    def _ahead(self, sim: Simulation) -> int:
        """The steps that may run in one call from now (``quiet_steps``)."""
        steps = self._lean_steps
        if steps:
            self._lean_steps = 0
            return steps
        if not self.lockstep or self._timed:
            return 1
        ahead = (self._next_due - sim.time) / self._dt
        return QUIET_MAX if ahead > QUIET_MAX else max(math.ceil(ahead - 1e-6), 1)

    def advance(self, sim: Simulation, steps: int) -> int:
        """The frame's steps, with this face's hooks between its sends as the host calls them.

        In lock-step with one client, each wait for its answer, the steps up to the next
        update and its send are one compiled call, which goes on with the next wait while
        the frame has steps left (``LeanExchange.take_answer``): the update leaves the
        moment the steps end and the next answer is taken the moment it comes, no Python
        in between; the bookkeeping of ``after_step`` and ``before_step`` for those turns
        runs after the call. Otherwise (the wait ended another way) the steps run after the
        hold.
        """
        if self._vehicle is None:  # not the lock-step server of a lone vehicle: as the host
            _run(sim, steps)  # (quiet_steps counted them)
            return steps
        left = steps
        while True:
            k = min(left, self._ahead(sim))
            lean, self._awaiting = self._awaiting, None
            ran = 0 if lean is None else self._hold(sim, lean, k, left)
            if not ran:
                _run(sim, k)
                ran = k
            left -= ran
            if not left:
                return steps
            self.after_step(sim)
            self.before_step(sim)

    def after_step(self, sim: Simulation) -> None:
        """Send every contract that is due, stamped with the simulation time after the step."""
        now = sim.time
        lean = self._lean
        if now + EPS < self._next_due:
            if lean is not None:
                lean.settle()
            return
        if lean is not None:
            lean.send(now)
            self._next_due = lean.update.due
            self._answers_due = True
            return
        outputs, sendto, stats = self._outputs, self.endpoint.sock.sendto, self.stats
        next_due = math.inf
        for session in self.sessions.values():
            sent = False
            for c in session.to_client:
                if now + EPS >= c.due:
                    c.fill(outputs)
                    try:  # (``Endpoint.send``'s work inline: once per update)
                        sendto(c.message.pack(session.id, now), session.address)
                    except OSError as exc:
                        self.endpoint.send_failed(exc)
                    c.sent_at(now)
                    stats.sent += 1
                    sent = True
                next_due = min(next_due, c.due)
            if sent and session.locked:
                for answer in session.to_server.values():
                    answer.answered(now)
                self._answers_due = True
        self._next_due = next_due

    def on_frame(self, sim: Simulation) -> None:
        """End the sessions of clients that went silent (looked for every ``EXPIRE_EVERY``)."""
        if time.perf_counter() >= self._next_expiry:
            self._expire()

    # -- receiving --------------------------------------------------------------------------
    def _receive(self, sim: Simulation, drain: bool = True) -> None:
        """Handle the datagrams waiting (the caller saw one ready): all, or (``drain`` off) one.

        A hold takes one at a time: the answer it waits for ends it without another look.
        """
        endpoint, ready = self.endpoint, self._ready
        while True:
            got = endpoint.receive()
            if got is None:
                return
            self._take(sim, *got)
            if not (drain and ready()):
                return

    def _take(self, sim: Simulation, size: int, sender: Address) -> None:
        """Handle the datagram of ``size`` bytes from ``sender`` in the endpoint's buffer."""
        endpoint, buffer = self.endpoint, self.endpoint.buffer
        try:
            kind, session_id = P.read_header(buffer, size)
            self._handle(sim, kind, session_id, size, sender)
        except P.Malformed as exc:
            endpoint.count_malformed(exc.reason, sender, str(exc))
            if exc.reason == "version" and buffer[3] == P.Kind.HELLO:  # (not to answers)
                message = f"this server speaks contract protocol version {P.VERSION}"
                self.doorman.error(sender, 0, "version", message, size)
        except Exception as exc:  # a bug must not let one datagram end the run
            log.debug("contract server: datagram from %s:%d", *sender, exc_info=True)
            endpoint.count_malformed("unhandled", sender, f"{type(exc).__name__}: {exc}")

    def _handle(
        self, sim: Simulation, kind: int, session_id: int, size: int, sender: Address
    ) -> None:
        session = self.sessions.get(sender)
        if kind == _DATA and session is not None and session.id == session_id:  # the hot path
            session.heard = time.perf_counter()
            self._data(session, *self._reader.read(size), sim.time)
            return
        buffer = self.endpoint.buffer
        if kind == _HELLO:
            self._hello(sim, session_id, size, sender)
            return
        if session is None or session.id != session_id:
            if kind in (P.Kind.DATA, P.Kind.PING):  # a client that lost its session
                self.stats.unknown_session += 1
                self.doorman.error(
                    sender, session_id, "unknown_session", "no session: send HELLO", size
                )
            elif kind == P.Kind.BYE:
                self.endpoint.send(P.header(P.Kind.BYE_ACK, session_id), sender)
            elif kind != P.Kind.BYE_ACK:  # a server's kind of message: never answered (no
                # two servers answer each other's answers for ever)
                raise P.Malformed("unexpected_kind", f"{P.Kind(kind).name} sent to the server")
            return
        session.heard = time.perf_counter()
        if kind == _DATA:
            self._data(session, *self._reader.read(size), sim.time)
        elif kind == _PING:
            echoed = P.read_ping(buffer, size)
            self.endpoint.send(P.pong(session.id, echoed, time.time(), sim.time), sender)
        elif kind == P.Kind.BYE:
            self._end(session, "said goodbye")
            self.endpoint.send(P.header(P.Kind.BYE_ACK, session.id), sender)
        elif kind != P.Kind.BYE_ACK:
            raise P.Malformed("unexpected_kind", f"{P.Kind(kind).name} sent to the server")

    def _data(
        self,
        session: ServerSession,
        contract: int,
        serial: int,
        sent_at: float,
        values: Any,
        now: float,
    ) -> None:
        c = session.to_server.get(contract)
        if c is None:
            raise P.Malformed("unknown_contract", f"contract {contract}")
        if len(values) != c.width:
            raise P.Malformed(
                "bad_width", f"contract {contract}: {len(values)} values, expected {c.width}"
            )
        stats = self.stats
        if serial <= c.serial:
            c.stale += 1
            stats.stale += 1
            return
        if c.serial and serial > c.serial + 1:
            c.gaps += serial - c.serial - 1
            stats.gaps += serial - c.serial - 1
        c.serial, c.latest_time, c.last_rx = serial, sent_at, now
        c.received += 1
        stats.received += 1
        if c.waited_for:
            c.released = False
            self._sync_data += 1
        c.apply(values, self._inputs, stats.clamped)

    def _hello(self, sim: Simulation, session_id: int, size: int, sender: Address) -> None:
        """Open the session a HELLO asks for and answer WELCOME (``Doorman`` may refuse it)."""
        old = self.sessions.get(sender)
        if old is not None and old.id == session_id:  # a repeated HELLO: answer again
            old.heard = time.perf_counter()
            if self.doorman.may_answer(sender):
                self.endpoint.send(old.welcome, sender)
            return
        others = [s for s in self.sessions.values() if s is not old]
        idlest = None
        if len(others) >= self.options.max_clients:  # full: make room if a session idles
            idlest = self._idlest(others, sim.time)
            if idlest is not None:
                others.remove(idlest)
        hello = self.doorman.admit(sender, session_id, size, others)
        if hello is None:
            return
        if old is not None:
            self._end(old, "reconnected")
        assert self.catalogue is not None, "the server serves only while attached and started"
        try:
            session = open_session(
                hello, self.catalogue, sender, session_id, sim.time, sim.dt, WELCOME_GAIN * size
            )
        except ProtocolError as exc:  # the answers do not fit one datagram
            self.doorman.refuse(sender, session_id, "bad_hello", str(exc), size)
            return
        if idlest is not None:
            self._evict(idlest, sender)
        if self.lockstep:
            session.lock()
        self.sessions[sender] = session
        self.stats.sessions += 1
        self.stats.refused_fields += session.refused
        self._rebuild()
        self.endpoint.send(session.welcome, sender)
        self._tally(
            "connected",
            "contract server: client %s:%d connected (%d contracts, %d fields refused)",
            sender[0],
            sender[1],
            len(hello.contracts),
            session.refused,
        )

    # -- sessions ---------------------------------------------------------------------------
    def _end(self, session: ServerSession, why: str, *, lost: bool = False) -> None:
        if self.sessions.get(session.address) is session:
            del self.sessions[session.address]
            self.stats.ended += 1
            self._rebuild()
            cause = "ended" if why in ("reconnected", "said goodbye") else why.split()[0]
            level = logging.WARNING if lost else logging.INFO
            self._tally(
                cause, "contract server: client %s:%d %s", *session.address, why, level=level
            )

    def _idlest(self, sessions: list[ServerSession], now: float) -> ServerSession | None:
        """The session a newcomer may take the place of when the server is full, or None.

        Sessions that agreed nothing go first, then the one longest without data from its
        client (``ServerSession.last_data``: a PING does not count, so a monitor that only
        receives is as old as its HELLO); none whose HELLO or data is within ``EVICT_GRACE``
        of run time, so a newcomer is not evicted by the next and a client that sends data
        at least that often is never.
        """
        idle = [s for s in sessions if s.last_data <= now - EVICT_GRACE + EPS]
        return min(idle, key=lambda s: (s.agreed, s.last_data), default=None)

    def _evict(self, session: ServerSession, newcomer: Address) -> None:
        """End ``session`` for a newcomer's and tell its client (ERROR ``evicted``)."""
        self.stats.evicted += 1
        message = (
            f"the server was full ({self.options.max_clients} clients) and this session was "
            f"the idlest; {newcomer[0]}:{newcomer[1]} has its place"
        )
        data = P.error(session.id, "evicted", message, EVICTED_BYTES)
        if data is not None:
            self.endpoint.send(data, session.address)
        self._end(session, "evicted (the server was full and it was the idlest)", lost=True)

    def _expire(self) -> None:
        """End silent sessions; name a client silent for one timeout, then every few seconds.

        Clients ping several times a second, so a client not heard for ``sync_timeout`` (or
        ``session_timeout``, if shorter) has gone or is stuck: the run says so at once and
        goes on serving the others, and ends its session after ``session_timeout``.
        """
        now = time.perf_counter()
        self._next_expiry = now + min(EXPIRE_EVERY, self.session_timeout)
        silent_after = min(self.sync_timeout, self.session_timeout)
        for session in list(self.sessions.values()):
            silent = now - session.heard
            if silent > self.session_timeout:
                self.stats.expired += 1
                why = f"silent for {self.session_timeout:g} s: session ended"
                self._end(session, f"{why}; the run goes on without it", lost=True)
            elif silent > silent_after:
                if now - session.told_silent >= PEER_STATUS_EVERY:
                    first = session.told_silent == 0.0
                    session.told_silent = now
                    log.warning(
                        "contract server: client %s:%d %s for %.1f s; the run goes on without "
                        "its data (its session ends after %g s of silence)",
                        *session.address,
                        "lost: nothing heard" if first else "still silent",
                        silent,
                        self.session_timeout,
                    )
            elif session.told_silent:
                session.told_silent = 0.0
                log.warning("contract server: client %s:%d heard again", *session.address)

    def _rebuild(self) -> None:
        """Recompute who a hold may wait for and when the next send is due."""
        if self._lean is not None:
            self._lean.settle()
        sessions = self.sessions.values()
        self._waiters = [c for s in sessions for c in s.to_server.values() if c.waited_for]
        self._timed = [c for c in self._waiters if c.time_sync or c.overdue is not None]
        self._next_due = min((c.due for s in sessions for c in s.to_client), default=math.inf)
        self._lean = LeanExchange.of(self, self._inputs, self._outputs, self._dt, self._vehicle)
        self._lean_steps = 0
        self._awaiting = None

    def _wait_for_clients(self, sim: Simulation, count: int, timeout: float | None) -> None:
        """Hold the run at its start until ``count`` clients have connected."""
        deadline = math.inf if timeout is None else time.perf_counter() + timeout
        if len(self.sessions) < count:
            log.info("contract server: waiting for %d client(s)", count - len(self.sessions))
        while len(self.sessions) < count and not sim.stopping:
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                log.warning(
                    "contract server: %d of %d clients after %g s; running anyway",
                    len(self.sessions),
                    count,
                    timeout,
                )
                return
            if self.endpoint.wait(min(remaining, HOLD_POLL)):
                self._receive(sim)

    # -- holding ----------------------------------------------------------------------------
    def _must_hold(self, now: float, end: float) -> bool:
        """True if a contract forbids the step from ``now`` to ``end``."""
        return any(c.forbids(now, end) for c in self._waiters)

    def _hold(
        self, sim: Simulation, lean: LeanExchange | None = None, steps: int = 0, budget: int = 0
    ) -> int:
        """Wait (serving every client) until no contract forbids the step, or give up.

        Busy-polls for ``spin`` seconds first (a lock-step client answers within
        microseconds, sooner than a sleeping process wakes up), yielding the core after each
        empty poll (a plain spin keeps a client that shares the core waiting a time slice),
        then sleeps between checks. ``lean``: the lock-step exchange with one client spins
        for its answer first (``LeanExchange.take_answer``), and with ``steps`` runs them and
        sends once it is in, and further turns within ``budget`` steps: the steps run if so.
        """
        stats, endpoint = self.stats, self.endpoint
        start = progress = time.perf_counter()
        spin_end = start + self.spin
        stats.holds += 1
        self.blocking = True
        try:
            if lean is not None and lean.take_answer(sim, spin_end, steps, budget):
                return lean.ran
            now = sim.time
            end = now + self._dt
            while self._must_hold(now, end) and not sim.stopping:
                before = self._sync_data
                wall = time.perf_counter()
                if wall < spin_end:
                    if self._ready():
                        self._receive(sim, drain=False)
                    else:  # let the peer have the core, should it be waiting for one
                        os.sched_yield()
                else:
                    if wall - progress >= self.sync_timeout:
                        self._release(now, end, sim.time)
                        sim.pacer.excuse(self.sync_timeout)  # real time: catch it up
                        continue
                    if endpoint.wait(min(self.sync_timeout - (wall - progress), HOLD_POLL)):
                        self._receive(sim)
                    self._expire()
                if self._sync_data != before:
                    progress = time.perf_counter()
            return 0
        finally:
            self.blocking = False
            stats.blocked_time += time.perf_counter() - start

    def _release(self, now: float, end: float, sim_time: float) -> None:
        """Give up on the contracts that still forbid the step, until they send again."""
        for c in self._waiters:
            if c.forbids(now, end):
                c.released = True
        self.stats.sync_timeouts += 1
        log.warning(
            "contract server: no data from the awaited client for %g s at t = %.3f s; "
            "stepping on without it until it sends again",
            self.sync_timeout,
            sim_time,
        )

    # -- reporting and closing --------------------------------------------------------------
    def report(self) -> ServerReport:
        """The server's counters."""
        if self._lean is not None:
            self._lean.settle()
        return ServerReport.of(self.stats, self.endpoint, len(self.sessions))

    def close(self) -> None:
        """Say BYE to every client (unless ``goodbye`` is off) and close (safe twice)."""
        if self._closed:
            return
        self._closed = True
        self._tally.flush()
        if self.options.goodbye:
            for session in self.sessions.values():
                self.endpoint.send(P.header(P.Kind.BYE, session.id), session.address)
        self.endpoint.close()


def _run(sim: Simulation, steps: int) -> None:
    """``steps`` physics steps, as the host runs them."""
    if steps > 1:
        sim.body.run(steps)
    else:
        sim.body.step()
