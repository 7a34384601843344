"""The lifecycle every bus module shares: join the router, announce, loop, leave on every path.

A module subclasses :class:`BusModule` and writes only what is its own: ``loop`` (its work
until its end, a Shutdown or ``duration``), ``on_message`` (what a message means to it),
``release`` (its files and devices) and ``report``. Joining, counting what arrives, noticing
Shutdown, Ctrl-C and SIGTERM, and closing exactly once on every path live here, once.

This is also the one place where the modules meet the bus: only this file holds a
:class:`~vcosim.bus.client.BusClient`; the modules use the message catalogue and
``self.client``, and catch :class:`RouterLost` from here (raised by the client's ``poll``
and ``wait`` once the router has been silent too long; ``run`` closes the module and lets it
through, so the command ends with code 1).
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from typing import Any, ClassVar, Generic, TypeVar

from vcosim.bus.catalogue import Message, Shutdown
from vcosim.bus.client import BusClient
from vcosim.bus.client import RouterLost as RouterLost  # (for the modules)
from vcosim.bus.codec import Codec
from vcosim.interrupts import sigterm_as_interrupt
from vcosim.reports import Report

log = logging.getLogger("vcosim.modules")


R = TypeVar("R", bound=Report)  # the module's report: typed fields, to_dict() for JSON
M = TypeVar("M", bound="BusModule[Any]")


class BusModule(ABC, Generic[R]):
    """One module on the bus, from joining to its report.

    Args:
        module_id: the id asked of the router; messages to it come here.
        host, port: the router's handshake address.
        codec: message symbols and maximum length (the router's).
        monitor: also receive a copy of every message the router passes on.
    """

    name: ClassVar[str] = "module"
    """What the module is called in its announcement and its log lines."""

    connect_timeout: float = 5.0
    """Seconds ``run`` waits for the router's answer when it joins."""

    def __init__(
        self,
        module_id: int,
        host: str,
        port: int,
        *,
        codec: Codec | None = None,
        monitor: bool = False,
    ) -> None:
        self.client = BusClient(module_id, host, port, monitor=monitor, codec=codec)
        self.received: dict[str, int] = {}  # messages taken, by type name
        self.sent: dict[str, int] = {}  # messages sent, by type name
        self.shutdown = False  # a Shutdown arrived: the loop ends
        self.interrupted = False  # Ctrl-C or SIGTERM ended the run
        self._closed = False

    # -- the module's own part ------------------------------------------------------------
    @abstractmethod
    def loop(self, duration: float | None) -> None:
        """Work until the module's own end, ``self.shutdown`` or ``duration`` seconds."""

    def on_message(self, message: Message) -> None:
        """React to one message taken from the queue (a Shutdown too, after it is noted)."""

    def release(self) -> None:
        """Complete files and free devices; called once, before the module leaves the bus."""

    @abstractmethod
    def report(self) -> R:
        """What the module did."""

    def describe(self) -> str:
        """The line that says the module is on the bus."""
        host, port = self.client.router_address
        return f"{self.name}: module {self.client.module_id} on the bus at {host}:{port}"

    def announce(self, line: str) -> None:
        """Say ``line`` once the module has joined (a log line; the viewer prints its page)."""
        log.info("%s", line)

    # -- the lifecycle ----------------------------------------------------------------------
    def connect(self, timeout: float | None = None) -> None:
        """Join the bus (``run`` does it if needed)."""
        self.client.connect(self.connect_timeout if timeout is None else timeout)

    def run(self, duration: float | None = None, *, started: str | None = None) -> R:
        """Join, announce, loop until the end, a Shutdown, ``duration``, Ctrl-C or SIGTERM.

        The module is closed on every path (its files complete); an interrupt ends the run
        like a Shutdown, anything else is raised. ``started`` replaces ``describe()``.
        """
        with sigterm_as_interrupt():
            try:
                if not self.client.connected:
                    self.connect()
                self.announce(self.describe() if started is None else started)
                self.loop(duration)
            except KeyboardInterrupt:
                self.interrupted = True
            finally:
                self.close()
        return self.report()

    def take_messages(self) -> None:
        """Hand every queued message to ``on_message``, counted by type; note a Shutdown."""
        while (message := self.client.next_message()) is not None:
            kind = type(message).__name__
            self.received[kind] = self.received.get(kind, 0) + 1
            if isinstance(message, Shutdown):
                self.shutdown = True
            self.on_message(message)

    def send(self, message: Message) -> None:
        """Send through the router, counted by type (a failed send is the client's to count)."""
        kind = type(message).__name__
        self.sent[kind] = self.sent.get(kind, 0) + 1
        self.client.send(message)

    def close(self) -> None:
        """Release the module's files and devices, then leave the bus; safe twice."""
        if self._closed:
            return
        self._closed = True
        try:
            self.release()
        finally:
            self.client.close()

    def __enter__(self: M) -> M:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def run_module(
    module: BusModule[Any], duration: float | None, started: str | None = None
) -> dict[str, Any]:
    """``module.run`` with the report as a dict, and whether an interrupt ended it."""
    report = module.run(duration, started=started).to_dict()
    return {**report, "interrupted": module.interrupted}
