"""The contract client block: the Python counterpart of CarSim's VS Connect S-function.

``ContractClient("cruise.json", step_fn, step=0.001).run(30.0)`` connects to the server the
file names, proposes the file's contracts and steps a local clock: each step it hands
``step_fn`` the output ports (received data, by name) and sends the input ports it returns.

The block owns the clock and the values; the link is its ``ClientSession``. Its clock waits
while an incoming contract says so (time sync, overdue data) and otherwise follows the
dilated wall clock by the simulator's own pacing rule (``vcosim.sim.pacing``), unless a
time-synced server paces it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import ValidationError

from vcosim.config import validation_problems
from vcosim.contracts.client.lockstep import LeanUpdate
from vcosim.contracts.client.ports import (
    STATUS_PORT,
    ConnectionStatus,
    InputPorts,
    Ports,
    Refusal,
    StepFunction,
)
from vcosim.contracts.client.recording import PortLog
from vcosim.contracts.client.report import ClientReport
from vcosim.contracts.client.session import ClientSession
from vcosim.contracts.config import ContractConfig, load_config, parse_config
from vcosim.contracts.layout import BlockLayout
from vcosim.contracts.options import ClientOptions
from vcosim.contracts.transport import Endpoint
from vcosim.errors import ConfigError
from vcosim.sim.pacing import Pacer, PacingMode

WAIT_POLL = 0.05  # s: a waiting client re-checks link and stop at least this often
MAX_LAG = 0.1  # s behind the dilated wall clock: stop owing time (slow motion, no burst)


def as_config(source: ContractConfig | str | Path | Mapping[str, Any]) -> ContractConfig:
    """A validated configuration from a file path, a decoded document or a model."""
    if isinstance(source, ContractConfig):
        return parse_config(source.model_dump(exclude_unset=True), "contract configuration")
    if isinstance(source, Mapping):
        return parse_config(dict(source))
    return load_config(source)


def _validated(
    config: ContractConfig | str | Path | Mapping[str, Any],
    options: ClientOptions | None,
    given: Mapping[str, Any],
) -> tuple[ClientOptions, ContractConfig]:
    """The file and the options, validated together: one ConfigError lists every problem.

    The file's problems keep their JSON paths, the options' are named ``options.NAME``.
    """
    problems: list[str] = []
    source = "contract client"
    opts = cfg = None
    try:
        cfg = as_config(config)
    except ConfigError as exc:
        problems, source = list(exc.problems), exc.source
    try:
        opts = ClientOptions(**{**(options.model_dump() if options else {}), **given})
    except ValidationError as exc:
        problems += validation_problems(exc, prefix="options.")
    if problems or opts is None or cfg is None:
        raise ConfigError(problems, source)
    return opts, cfg


class BlockClock(Pacer):
    """The block's clock held to ``dilation`` simulated seconds per wall second.

    The simulator's real-time pacer with one frame per step: it says when each step is due
    and, more than ``MAX_LAG`` behind, drops the debt (slow motion, not a burst). Waiting for
    the due time serves the link instead of sleeping.
    """

    def __init__(self, step: float, dilation: float) -> None:
        super().__init__(
            PacingMode.realtime,
            frame_rate=dilation / step,
            time_dilation=dilation,
            dt=step,
            max_lag=MAX_LAG,
        )
        self.anchored = False

    def start(self, sim_time: float) -> None:
        """Count the schedule from now, at local time ``sim_time``."""
        super().start(sim_time)
        self.anchored = True

    def hold(self, step_index: int, endpoint: Endpoint, serve: Callable[[], object]) -> None:
        """Wait until step ``step_index`` is due, handing datagrams to ``serve`` meanwhile."""
        self.steps_for_next_frame(step_index)
        deadline = self.deadline
        now = time.perf_counter()
        while now < deadline:
            if endpoint.wait(deadline - now):
                serve()
            now = time.perf_counter()


class ContractClient:
    """A step-based contract client block; ``run`` steps it, ``stop`` ends it.

    Args:
        config: The VS Connect JSON file (path), its decoded document, or a ContractConfig.
        step_fn: Called each step with the output ``Ports``; returns a mapping of input port
            names to values (a width-N port takes N values), optionally with
            ``"connection_directive"``. Inputs not returned keep their value (initially the
            field's initialValue). None: a monitor that sends its initial values.
        options: ``ClientOptions`` (step, directive, link_timeout, retry_period, bye_timeout,
            local_host, local_port, spin), or give them as keywords.
    """

    def __init__(
        self,
        config: ContractConfig | str | Path | Mapping[str, Any],
        step_fn: StepFunction | None = None,
        options: ClientOptions | None = None,
        **given: Any,
    ) -> None:
        opts, cfg = _validated(config, options, given)
        self.options = opts
        self.config = cfg
        self.layout = layout = BlockLayout.of(cfg)
        self.step_fn = step_fn
        self.step = opts.step
        server = (cfg.remoteIP, cfg.remotePort)
        loopback = cfg.remoteIP in ("127.0.0.1", "localhost") or cfg.remoteIP.startswith("127.")
        bind_host = opts.local_host or ("127.0.0.1" if loopback else "0.0.0.0")
        try:
            endpoint = Endpoint((bind_host, opts.local_port), peer=server, name="contract client")
        except OSError as exc:
            raise ConfigError(
                [
                    f"$.remoteIP/remotePort: cannot reach {cfg.remoteIP}:"
                    f"{cfg.remotePort}: {exc.strerror or exc}"
                ],
                "contract configuration",
            ) from None
        # flat arrays: slot 0 is the status (outputs) / the directive (inputs)
        self._out = np.zeros(1 + layout.n_outputs)
        self._in = np.zeros(1 + layout.n_inputs)
        self.outputs = Ports(
            [(STATUS_PORT, 0, 1)] + [(p.name, 1 + p.start, p.width) for p in layout.outputs],
            self._out,
            opts.step,
        )
        self.inputs = InputPorts(layout.inputs, self._in)
        self.session = ClientSession(layout, endpoint, self._out, self._in, opts)
        self._reset_values()
        self.inputs.directive = opts.directive
        dilation = cfg.timeDilation
        self._clock = BlockClock(opts.step, dilation) if dilation > 0 else None
        self.spin = opts.spin
        self.time = 0.0
        self.blocking = False
        self.blocks = 0
        self.blocked_time = 0.0
        self._k = 0
        self._stopping = False
        self.recording: PortLog | None = None

    def record_to(self, path: str | Path) -> PortLog:
        """Write every port at every step to the CSV file ``path`` (``PortLog``) from now."""
        if self.recording is not None:
            self.recording.close()
        self.recording = PortLog(path, self.layout, self._out, self._in)
        return self.recording

    # -- what there is to watch -------------------------------------------------------------
    @property
    def endpoint(self) -> Endpoint:
        """The client's UDP socket (its counters: ``malformed``, ``send_errors``)."""
        return self.session.endpoint

    @property
    def address(self) -> tuple[str, int]:
        """Where the client's socket is bound."""
        return self.session.endpoint.address

    @property
    def status(self) -> ConnectionStatus:
        """The connection status (docs/contracts.md)."""
        return self.session.status

    @property
    def status_history(self) -> list[tuple[float, ConnectionStatus]]:
        """(local time, status) of every change."""
        return self.session.status_history

    @property
    def on_status(self) -> Callable[[ConnectionStatus], None] | None:
        """Called with the new status on every change (or None)."""
        return self.session.on_status

    @on_status.setter
    def on_status(self, callback: Callable[[ConnectionStatus], None] | None) -> None:
        self.session.on_status = callback

    @property
    def refused(self) -> list[Refusal]:
        """The fields the server refused in the latest WELCOME."""
        return self.session.refused

    @property
    def directive(self) -> float:
        """The connection directive; set it to connect (non-zero) or disconnect (0)."""
        return self.inputs.directive

    @directive.setter
    def directive(self, value: float) -> None:
        self.inputs.directive = float(value)

    @property
    def link_timeout(self) -> float:
        """Seconds of silence after which the link counts as lost."""
        return self.session.link_timeout

    @link_timeout.setter
    def link_timeout(self, seconds: float) -> None:
        self.session.link_timeout = seconds

    @property
    def received(self) -> int:
        """Data updates taken from the server, over every incoming contract."""
        return self.session.received

    @property
    def sent_time(self) -> float:
        """The local time stamped on the latest data sent (-inf before any)."""
        return self.session.sent_time

    # -- running ----------------------------------------------------------------------------
    def _stop_asked(self) -> bool:
        return self._stopping

    def stop(self) -> None:
        """End ``run`` after the current step (from the step function or another thread)."""
        self._stopping = True

    def run(self, duration: float | None = None) -> ClientReport:
        """Step for ``duration`` seconds of local time (None: until ``stop`` or Ctrl-C).

        Says goodbye to the server and closes the socket at the end; returns the report.
        """
        limit = None if duration is None else self._k + round(duration / self.step)
        self._stopping = False
        interrupted = False
        if self._clock is not None:
            self._clock.start(self._k * self.step)
        try:
            while not self._stopping and (limit is None or self._k < limit):
                self.step_once()
                if self.session.server_ended:  # end_with_server: the simulation is over
                    break
        except KeyboardInterrupt:
            interrupted = True
        finally:
            self.close()
        return self.report(interrupted=interrupted)

    def step_once(self) -> None:
        """One step: serve the link, wait if a contract says so, call step_fn, send, pace."""
        session = self.session
        t = self._k * self.step
        self.time = session.time = t
        lean = session.lean
        if lean is not None and session.quiet() and lean.holds(t):
            self._wait(t, lean)  # lock-step: the update is all there is to wait for
        else:
            session.service()
            if session.holds(t):
                self._wait(t, session.lean)
        outputs, step_fn = self.outputs, self.step_fn
        outputs.time = t
        if step_fn is not None and (result := step_fn(outputs)) is not None:
            self.inputs.take(result)
        lean = session.lean
        if lean is not None:
            lean.send_due(t)
        elif session.status == ConnectionStatus.connected:
            session.send_due(t)
        if self.recording is not None:
            self.recording.record(t)
        self._k += 1
        self._pace()

    def _reset_values(self) -> None:
        """Every output and input at its field's initialValue."""
        for c in (*self.layout.contracts, *self.layout.comm):
            target = self._out if c.direction == "to_client" else self._in
            for f in c.fields:
                target[1 + f.flat : 1 + f.flat + f.width] = f.config.initialValue

    def _wait(self, t: float, lean: LeanUpdate | None = None) -> None:
        """Block (serving the link) until the contracts allow the step, or the link is lost.

        Busy-polls for ``spin`` seconds first: a server in lock-step answers within
        microseconds, sooner than a sleeping process wakes up. Each empty poll yields the
        core: on a machine with more runnable processes than cores, a plain spin would keep
        the server from running for a whole time slice (milliseconds per update). ``lean``:
        a time-synced update is spun for first (``LeanUpdate.take``).
        """
        session, endpoint, ready = self.session, self.session.endpoint, self.session.ready
        start = time.perf_counter()
        spin_end = start + self.spin
        self.blocks += 1
        self.blocking = True
        try:
            if lean is not None and lean.take(t, spin_end, self._stop_asked):
                return
            while not self._stopping and session.holds(t):
                if time.perf_counter() < spin_end:
                    if ready():
                        session.drain(one=True)
                    else:  # let the peer have the core, should it be waiting for one
                        os.sched_yield()
                    continue
                if endpoint.wait(WAIT_POLL):
                    session.drain()
                session.service()
        finally:
            self.blocking = False
            self.blocked_time += time.perf_counter() - start
            if self._clock is not None:
                self._clock.start(t)

    def _pace(self) -> None:
        """Hold the local clock to the (dilated) wall clock unless a time master paces it."""
        clock = self._clock
        if clock is None:
            return
        if self.session.synced_in and self.status == ConnectionStatus.connected:
            clock.anchored = False
            return
        if not clock.anchored:
            clock.start(self.time)
        clock.hold(self._k, self.session.endpoint, self.session.drain)

    # -- reporting and closing --------------------------------------------------------------
    def report(self, *, interrupted: bool = False) -> ClientReport:
        """Status, counters and timing."""
        return ClientReport.of(
            self.session,
            time=self.time,
            steps=self._k,
            blocks=self.blocks,
            blocked_time=self.blocked_time,
            interrupted=interrupted,
        )

    def close(self) -> None:
        """Say goodbye if connected, then close the socket and the recording (safe twice)."""
        self.session.close()
        if self.recording is not None:
            self.recording.close()

    def __enter__(self) -> ContractClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
