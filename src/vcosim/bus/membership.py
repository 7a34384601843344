"""How long a module keeps its id on the router, and the state file that outlives a restart.

Membership rules (the router applies them; see docs/bus.md, "Membership"):

- A module is *confirmed* once the router has heard from it after its handshake (a client
  pings at once when it is answered). A confirmed module the router has heard nothing from
  for ``MODULE_TIMEOUT`` seconds is dropped and its id freed: vcosim's modules keep alive by
  repeating their handshake (a ping) whenever they have sent nothing else for a second, so
  only one that has stopped is silent that long.
- A module that keeps to the seed's protocol (handshake, then only listen) is never confirmed
  and keeps its id as long as its socket exists. The router learns that a socket has gone
  from the refusal (ICMP "port unreachable", at once on loopback and a LAN; "host
  unreachable" when its host has vanished from a LAN) of a datagram its connected per-module
  socket sends: the handshake's answer again, at each silence sweep and whenever the id, or
  room on the host, is asked for. A ghost (a socket that handshook and closed) gives way so.
  Each host may have at most ``MAX_UNCONFIRMED`` such modules; past it, a handshake from
  that host is refused while all of them are still there.

The state file is the router's table of ids and addresses (JSON, written on every change,
atomically). A router restarted on the same address reads it and takes every module back at
once, before any handshake is read: a module keeps its socket (its address) while the router
is away, so the address in the file is the module itself, and nobody else can have it while
the module lives. A module that did not survive the restart is dropped as soon as its port
refuses the router's first datagram (at once on loopback and a LAN), or after the timeout.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from vcosim.address import AddressError, parse_address
from vcosim.errors import ConfigError

log = logging.getLogger("vcosim.bus")

MODULE_TIMEOUT = 5.0
"""Seconds of silence after which the router drops a module (``vcosim bus --timeout``)."""

MAX_UNCONFIRMED = 16
"""Modules per host the router keeps while it has heard nothing from them since their handshake
(the seed's protocol: NightRider's modules on one machine, about ten)."""
PROBE_WAIT = 0.002
"""Seconds a handshake waits for a refusal from another host's module it probes (a LAN's round
trip; on loopback the refusal is there when the probe's send returns)."""
PROBE_EVERY = 1.0
"""Seconds between two probes of a module that wait ``PROBE_WAIT``: a handshake flood for a
live id on another host costs at most one such wait a second."""

MAX_STATE_BYTES = 1 << 16
"""A state file larger than this is not read (a router has at most a few dozen modules)."""


@dataclass(frozen=True)
class Member:
    """One row of the state file: a module's id, address and whether it is a monitor."""

    id: int
    address: tuple[str, int]
    monitor: bool = False


def default_state_path(host: str, port: int) -> Path:
    """Where ``vcosim bus`` keeps its table for a listening address (private to the user).

    In ``$XDG_RUNTIME_DIR`` (emptied at logout and reboot, when no module can have survived),
    else in a folder of the user's own in the temporary directory.
    """
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    base = (
        Path(runtime) / "vcosim"
        if runtime
        else Path(tempfile.gettempdir()) / f"vcosim-{os.getuid()}"
    )
    return base / f"bus-{host}-{port}.json"


class StateFile:
    """The router's table on disk: ``load`` once at the start, ``save`` on every change.

    Raises:
        ConfigError: the file's folder cannot be made, or belongs to another user.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        folder = path.parent
        try:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            owner = folder.stat().st_uid
        except OSError as exc:
            raise ConfigError(
                [f"--state {path}: cannot make its folder ({exc.strerror or exc})"], "bus router"
            ) from None
        if owner != os.getuid():
            raise ConfigError(
                [f"--state {path}: its folder {folder} belongs to another user"], "bus router"
            )
        self._failed = False

    def load(self) -> list[Member]:
        """The modules of the router's previous life (none if there is no readable file)."""
        try:
            with self.path.open("rb") as file:
                data = file.read(MAX_STATE_BYTES + 1)
        except FileNotFoundError:
            return []
        except OSError as exc:
            log.warning("bus: cannot read the state file %s (%s); starting empty", self.path, exc)
            return []
        try:
            if len(data) > MAX_STATE_BYTES:
                raise ValueError(f"longer than {MAX_STATE_BYTES} bytes")
            rows = json.loads(data)["modules"]
            members = [_member(row) for row in rows]
        except (ValueError, KeyError, TypeError) as exc:
            log.warning("bus: the state file %s is not one (%s); starting empty", self.path, exc)
            return []
        return members

    def save(self, members: list[Member]) -> None:
        """Write the table (atomically: a reader sees the old one or the new one); none: no file."""
        if not members:
            self.remove()
            return
        rows = [
            {"id": m.id, "address": f"{m.address[0]}:{m.address[1]}", "monitor": m.monitor}
            for m in members
        ]
        temporary = self.path.with_name(self.path.name + ".new")
        try:
            temporary.write_text(json.dumps({"modules": rows}))
            os.replace(temporary, self.path)
        except OSError as exc:
            if not self._failed:  # (said once; the router routes on without it)
                log.warning("bus: cannot write the state file %s (%s)", self.path, exc)
            self._failed = True
        else:
            self._failed = False

    def remove(self) -> None:
        """Forget the table (no module, or every module was told to end)."""
        with contextlib.suppress(OSError):
            self.path.unlink()


def _member(row: object) -> Member:
    """A state file row, checked; ValueError, KeyError or TypeError if it is not one."""
    if not isinstance(row, dict):
        raise TypeError(f"a row is {type(row).__name__}, not an object")
    module_id, address, monitor = row["id"], row["address"], row.get("monitor", False)
    if not isinstance(module_id, int) or not 0 <= module_id <= 65535:
        raise ValueError(f"id {module_id!r}")
    try:
        host, port = parse_address(str(address), default_host=None, check_host=False)
    except AddressError:
        raise ValueError(f"address {address!r}") from None
    return Member(module_id, (host, port), bool(monitor))
