"""The lifecycle every bus module shares: connect, run, close on every path."""

from __future__ import annotations

import logging
from typing import Any, Protocol

from vcosim.interrupts import sigterm_as_interrupt

log = logging.getLogger("vcosim.modules")


class BusModule(Protocol):
    """What ``run_module`` needs of a module (logger, input, sound, viewer)."""

    def connect(self) -> Any:
        """Join the bus."""

    def run(self, duration: float | None) -> dict[str, Any]:
        """Work until ``duration``, a Shutdown or the module's own end; the report."""

    def close(self) -> None:
        """Leave the bus and complete any files (safe twice)."""

    def report(self) -> dict[str, Any]:
        """What the module did."""


def run_module(module: BusModule, duration: float | None, started: str) -> dict[str, Any]:
    """Connect a bus module and run it until it ends, Shutdown, Ctrl-C or SIGTERM.

    The module is closed on every path (its files complete); returns its report.
    """
    with sigterm_as_interrupt():
        try:
            module.connect()
            log.info(started)
            return module.run(duration)
        except KeyboardInterrupt:
            module.close()
            return module.report()
        except BaseException:
            module.close()
            raise
