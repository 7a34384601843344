"""The logging module: records every bus message to MCAP, exports CSV, replays onto the bus.

Recording (``vcosim log OUT.mcap``). The logger joins the bus as a monitor (id 20 unless told
otherwise), so the router sends it a copy of every valid message with the sender's id, and
writes each to an MCAP file (the format: :mod:`vcosim.modules.recording`, whose names are
importable from here too). The file is flushed every second and finished on Shutdown, Ctrl-C
or SIGTERM; a file cut short by a crash still reads up to its last flush.

A router that falls silent (see ``vcosim.bus.client.Liveness``) is said in one line with how
long nothing has been recorded, and the file is flushed; the logger records again when the
router is back, and after 10 s of silence it finishes the file and ends (exit code 1).

Replay (``vcosim replay FILE``) joins as an ordinary module (id 21) and sends each recorded
message to its recorded destination, in recorded order, at the recorded pace or faster.
The router names the replayer as the sender: a module cannot speak in another's name.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vcosim.bus.catalogue import ModuleId, Shutdown, lookup
from vcosim.bus.codec import Codec
from vcosim.constants import BUS_PORT, LOOPBACK
from vcosim.modules.base import BusModule, RouterLost, run_module
from vcosim.modules.recording import (
    SCHEMA_PREFIX,
    TOPIC_PREFIX,
    McapRecorder,
    Recorded,
    export_csv,
    json_schema,
    read_recording,
)
from vcosim.reports import Report

__all__ = [
    "SCHEMA_PREFIX",
    "TOPIC_PREFIX",
    "Logger",
    "LoggerReport",
    "McapRecorder",
    "Recorded",
    "ReplayReport",
    "Replayer",
    "export_csv",
    "json_schema",
    "read_recording",
    "replay",
]

log = logging.getLogger("vcosim.modules")


@dataclass
class LoggerReport(Report):
    """What was recorded."""

    path: str
    messages: int
    by_type: dict[str, int]
    shutdown_received: bool
    malformed: int


class Logger(BusModule[LoggerReport]):
    """The logging module: joins the bus as a monitor and records until Shutdown or ``stop``.

    Args:
        path: the MCAP file to write.
        host, port: the router's handshake address.
        module_id: the logger's id on the bus.
        codec: message symbols and maximum length (the router's).
        flush_interval: seconds between flushes of the file.
    """

    name = "logger"

    def __init__(
        self,
        path: str | Path,
        host: str = LOOPBACK,
        port: int = BUS_PORT,
        *,
        module_id: int = ModuleId.LOGGING,
        codec: Codec | None = None,
        flush_interval: float = 1.0,
    ) -> None:
        super().__init__(module_id, host, port, codec=codec, monitor=True)
        self.path = Path(path)
        self.flush_interval = flush_interval
        self._stopping = False
        self.recorder: McapRecorder | None = None

    def describe(self) -> str:
        """Where the bus is and where it goes."""
        host, port = self.client.router_address
        return (
            f"recording the bus at {host}:{port} into {self.path} "
            f"(module {self.client.module_id}); Ctrl-C or a Shutdown ends it"
        )

    def loop(self, duration: float | None) -> None:
        """Record until Shutdown, ``stop()`` or ``duration`` seconds."""
        client = self.client
        codec, (host, port) = client.codec, client.router_address
        self.recorder = recorder = McapRecorder(
            self.path,
            {
                "router": f"{host}:{port}",
                "logger_id": str(client.module_id),
                "symbols": codec.start + codec.separator + codec.common_end + codec.end,
                "max_length": str(codec.max_length),
            },
        )
        end = None if duration is None else time.monotonic() + duration
        try:
            self._record(recorder, end)
        except RouterLost:
            log.warning(
                "logger: recorded nothing for the last %.0f s: the bus router is gone; "
                "%s is complete up to then",
                client.silent_for,
                self.path,
            )
            raise

    def _record(self, recorder: McapRecorder, end: float | None) -> None:
        """Write every copy until Shutdown, ``stop()`` or ``end``; flush every interval."""
        client = self.client
        next_flush = time.monotonic() + self.flush_interval
        said_lost = False
        while True:
            stopping = self._stopping or self.shutdown  # what came before is still recorded
            client.wait(0.0 if stopping else 0.2)
            while (copy := client.next_copy()) is not None:
                recorder.write(Recorded(copy.time_ns, copy.sender, copy.message))
            self.take_messages()
            if stopping:
                break
            if client.router_lost != said_lost:
                said_lost = client.router_lost
                self._say_lost(said_lost)
            now = time.monotonic()
            if now >= next_flush:
                recorder.flush()
                next_flush = now + self.flush_interval
            if end is not None and now >= end:
                break

    def _say_lost(self, lost: bool) -> None:
        """One line when the router falls silent (the file flushed), one when it is back."""
        if lost and self.recorder is not None:
            self.recorder.flush()
            log.warning(
                "logger: recorded nothing for the last %.0f s: the bus router is silent; "
                "%s has everything until then",
                self.client.silent_for,
                self.path,
            )
        elif not lost:
            log.warning("logger: the bus router is back; recording again")

    def stop(self) -> None:
        """Ask ``run`` to finish (from another thread) once it has recorded what has arrived."""
        self._stopping = True

    def release(self) -> None:
        """Finish the file, so it reads to its end."""
        if self.recorder is not None:
            self.recorder.close()

    def report(self) -> LoggerReport:
        """What was recorded."""
        recorder = self.recorder
        return LoggerReport(
            path=str(self.path),
            messages=recorder.count if recorder else 0,
            by_type=dict(recorder.by_type) if recorder else {},
            shutdown_received=self.shutdown,
            malformed=self.client.stats.malformed,
        )


@dataclass
class ReplayReport(Report):
    """What was sent."""

    path: str
    sent: int
    by_type: dict[str, int]
    wall_time: float  # s from the first message sent to the last
    stopped_by_shutdown: bool  # a Shutdown to everyone was replayed, or one came to the replayer


class Replayer(BusModule[ReplayReport]):
    """Sends a recording onto the bus, each message to its recorded destination.

    The router names the replayer as the sender: a module cannot speak in another's name.
    Stops early after replaying a Shutdown to the router (it ends every module) and on a
    Shutdown addressed to the replayer.

    Args:
        path: the MCAP recording.
        host, port: the router's handshake address.
        module_id: the replayer's id on the bus.
        speed: 1 keeps the recorded pace, 2 is twice as fast, 0 as fast as possible.
        only: message type names to send exclusively (e.g. IMFM, to drive a live vehicle
            with a recorded driver).
        skip: message type names to leave out (e.g. Shutdown).
        codec: message symbols and maximum length (the router's).
    """

    name = "replay"

    def __init__(
        self,
        path: str | Path,
        host: str = LOOPBACK,
        port: int = BUS_PORT,
        *,
        module_id: int = ModuleId.REPLAY,
        speed: float = 1.0,
        only: Collection[str] = (),
        skip: Collection[str] = (),
        codec: Codec | None = None,
    ) -> None:
        self.wanted = {lookup(n).__name__ for n in only}
        self.unwanted = {lookup(n).__name__ for n in skip}
        super().__init__(module_id, host, port, codec=codec)
        self.path = Path(path)
        self.speed = speed
        self.wall_time = 0.0

    def loop(self, duration: float | None) -> None:
        """Send every wanted message at its pace; ``duration`` is not used (the file ends)."""
        start = time.perf_counter()
        first: int | None = None
        try:
            for record in read_recording(self.path):
                message = record.message
                name = type(message).__name__
                if (self.wanted and name not in self.wanted) or name in self.unwanted:
                    continue
                first = record.time_ns if first is None else first
                if self.speed > 0:
                    due = start + (record.time_ns - first) / 1e9 / self.speed
                    while (delay := due - time.perf_counter()) > 0:  # pacing, polling on:
                        self.client.wait(delay)  # (a long pause must not cost the id)
                self.send(message)
                if isinstance(message, Shutdown) and message.to == self.client.router_id:
                    self.shutdown = True  # everyone, the replayer too, is shutting down
                self.take_messages()
                if self.shutdown:
                    break
        finally:
            self.wall_time = time.perf_counter() - start

    def report(self) -> ReplayReport:
        """What was sent."""
        return ReplayReport(
            path=str(self.path),
            sent=sum(self.sent.values()),
            by_type=dict(self.sent),
            wall_time=self.wall_time,
            stopped_by_shutdown=self.shutdown,
        )


def replay(
    path: str | Path,
    host: str = LOOPBACK,
    port: int = BUS_PORT,
    *,
    module_id: int = ModuleId.REPLAY,
    speed: float = 1.0,
    only: Collection[str] = (),
    skip: Collection[str] = (),
    codec: Codec | None = None,
    connect_timeout: float = 5.0,
) -> dict[str, Any]:
    """A :class:`Replayer`'s run, its report as a dict (``connect_timeout``: seconds to join)."""
    replayer = Replayer(
        path, host, port, module_id=module_id, speed=speed, only=only, skip=skip, codec=codec
    )
    replayer.connect_timeout = connect_timeout
    return run_module(replayer, None)
