"""What the two bus faces share: joining the bus, a Shutdown, the counters, leaving.

``BusVehicle`` (a vehicle as module 16, or 64 + row) and ``BusWorld`` (module 22) are both a
``BusClient`` in a Simulation face; this base joins the bus at start, ends the run on a
Shutdown, counts what arrived, and leaves the bus once (``close`` is safe twice). Each
report is a ``BusReport`` subclass: the counters here, the face's own after them.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from vcosim.bus.catalogue import Message, Shutdown
from vcosim.bus.client import BusClient
from vcosim.bus.codec import Codec
from vcosim.reports import Report
from vcosim.sim.face import Face

if TYPE_CHECKING:
    from vcosim.sim.simulation import Simulation


@dataclass
class BusReport(Report):
    """What a bus face sent and received; its subclasses add the face's own figures."""

    module_id: int
    publish_every_steps: int
    received: dict[str, int]
    shutdown_received: bool
    sent: int
    send_failures: int
    malformed: int
    publish_errors: int
    router_losses: int


class BusFace(Face):
    """A Simulation face that is a module on a NightRider bus."""

    kind: ClassVar[str] = "bus"

    def __init__(
        self,
        module_id: int,
        host: str,
        port: int,
        codec: Codec | None,
        connect_timeout: float,
    ) -> None:
        self.client = BusClient(module_id, host, port, codec=codec)
        self.connect_timeout = connect_timeout
        self.every = 1
        self.received: Counter[str] = Counter()
        self.publish_errors = 0
        self.shutdown = False
        self._closed = False

    def join(self) -> None:
        """Connect to the router (the client closed again if that fails)."""
        try:
            self.client.connect(self.connect_timeout)
        except BaseException:
            self.client.close()
            raise

    def received_shutdown(self, sim: Simulation, message: Message) -> bool:
        """Count ``message``; a Shutdown ends the run after the current frame (True)."""
        self.received[type(message).__name__] += 1
        if isinstance(message, Shutdown):
            self.shutdown = True
            sim.stop()
            return True
        return False

    def counters(self) -> BusReport:
        """The counters every bus face reports (a subclass's report starts from these)."""
        stats = self.client.stats
        return BusReport(
            module_id=self.client.module_id,
            publish_every_steps=self.every,
            received=dict(self.received),
            shutdown_received=self.shutdown,
            sent=stats.sent,
            send_failures=stats.send_failures,
            malformed=stats.malformed,
            publish_errors=self.publish_errors,
            router_losses=stats.losses,
        )

    def report(self) -> BusReport:
        """What the module sent and received."""
        return self.counters()

    def leave(self) -> None:
        """Called once by ``close`` before the client leaves the bus (say goodbye here)."""

    def close(self) -> None:
        """Leave the bus; safe twice."""
        if self._closed:
            return
        self._closed = True
        self.leave()
        self.client.close()
