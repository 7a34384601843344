"""Who may send to a link, and how problems with peers are told: once, then only counted."""

from __future__ import annotations

import logging
import socket
import time
from collections import Counter
from collections.abc import Hashable, Iterable
from dataclasses import dataclass

from vcosim.address import AddressError, parse_address
from vcosim.errors import ConfigError

Address = tuple[str, int]
"""An IPv4 (host, port)."""
PRINTED_LINE = 300
"""The longest problem line printed (it quotes what a peer sent)."""


@dataclass(frozen=True, slots=True)
class Allowlist:
    """The senders a link accepts: any port of ``hosts``, or exactly the (host, port) ``peers``.

    Whole hosts are what every face allows today; exact pairs are there to harden a link to
    one peer socket later without a second mechanism.
    """

    hosts: frozenset[str] = frozenset()
    peers: frozenset[Address] = frozenset()

    @classmethod
    def of(cls, hosts: Iterable[str] = (), peers: Iterable[Address] = ()) -> Allowlist:
        """An allowlist from any iterables of hosts and (host, port) pairs."""
        return cls(frozenset(hosts), frozenset((str(h), int(p)) for h, p in peers))

    def admits(self, sender: Address) -> bool:
        """True if ``sender`` may send: its host is allowed, or the exact pair is."""
        return sender[0] in self.hosts or sender in self.peers

    def __or__(self, other: Allowlist) -> Allowlist:
        return Allowlist(self.hosts | other.hosts, self.peers | other.peers)

    def __str__(self) -> str:
        pairs = sorted(f"{host}:{port}" for host, port in self.peers)
        return ", ".join([*sorted(self.hosts), *pairs]) or "nobody"


def parse_allow(items: Iterable[str], option: str = "--allow") -> tuple[Allowlist, list[str]]:
    """What ``--allow`` takes, in every command: ``HOST`` (any port) or ``HOST:PORT`` (exactly).

    Items may also be comma-separated. Names are resolved to IPv4 addresses, since a sender
    is known by its address. Returns the allowlist and one problem line per bad item (the
    caller raises them together, with its own context).
    """
    hosts, peers, problems = set(), set(), []
    for item in (i.strip() for text in items for i in text.split(",")):
        host, colon, port = item.rpartition(":") if ":" in item else (item, "", "")
        address = resolve(host)
        if address is None:
            problems.append(f"{option} {item!r}: host {host!r} does not resolve")
        elif not colon:
            hosts.add(address)
        else:
            try:
                peers.add((address, parse_address(item, check_host=False).port))
            except AddressError:
                problems.append(f"{option} {item!r}: port {port!r} is not 1..65535")
    return Allowlist.of(hosts, peers), problems


def resolve(host: str) -> str | None:
    """``host``'s IPv4 address (an address stays as it is); None if it does not resolve."""
    try:
        return socket.gethostbyname(host) if host else None
    except (OSError, UnicodeError, ValueError):
        return None


def peer_address(host: str, port: int, what: str) -> Address:
    """(IPv4 address, port) of a peer to send to, resolved once, before any datagram.

    A name given to ``sendto`` is resolved at every send: a name that does not resolve then
    fails every one of them, and a slow resolver stalls the loop that sends. Resolved here
    once, at the start, a name that does not resolve is refused before the run.

    Raises:
        ConfigError: ``host`` does not resolve (``what`` names the option).
    """
    address = resolve(host)
    if address is None:
        shown = printable(host)
        raise ConfigError([f"{what}: host {shown!r} does not resolve to an IPv4 address"], what)
    return address, port


PRINTED_CHARS = 120
"""The most characters of a peer's text (an error code, a name) that a log line prints."""


def printable(text: object, limit: int = PRINTED_CHARS) -> str:
    """A peer's ``text`` as one short printable line, so no peer can flood a log.

    Control characters are escaped; past ``limit`` characters it is cut, its length said.
    """
    line = str(text)
    if not line.isprintable():
        line = line.encode("unicode_escape").decode("ascii")
    if len(line) <= limit:
        return line
    return f"{line[:limit]}... ({len(line)} characters)"


class Tally:
    """Log lines by cause, so that no flood of events floods a log (issue 45, J).

    The first ``burst`` events of each cause are logged one by one (what a person starting a
    run wants to see: the modules joining, the pages opening); past them a cause is counted,
    and one line every ``every`` seconds says how many more came (when the next one comes),
    as ``flush`` does at the end. ``counts`` keeps every cause's total for the final summary.
    """

    def __init__(
        self, log: logging.Logger, name: str, burst: int = 20, every: float = 10.0
    ) -> None:
        self.log, self.name, self.burst, self.every = log, name, burst, every
        self.counts: Counter[str] = Counter()
        self._unlogged: Counter[str] = Counter()
        self._since: dict[str, float] = {}

    def __call__(self, cause: str, text: str, *args: object, level: int = logging.INFO) -> bool:
        """Count an event of ``cause``; log ``text % args`` if it is among the first; True if so."""
        self.counts[cause] += 1
        if self.counts[cause] <= self.burst:
            self.log.log(level, text, *args)
            return True
        now = time.monotonic()
        since = self._since.setdefault(cause, now)
        if self._unlogged[cause] == 0 and since == now:
            self.log.log(
                level,
                "%s: more than %d '%s' events: from now on counted, with a line every %g s",
                self.name,
                self.burst,
                cause,
                self.every,
            )
        self._unlogged[cause] += 1
        if now - since >= self.every:
            self._summary(cause, now - since, level)
            self._since[cause] = now
        return False

    @property
    def unlogged(self) -> int:
        """Events counted and not logged one by one, over all causes (summaries aside)."""
        return sum(self.counts.values()) - sum(min(n, self.burst) for n in self.counts.values())

    def flush(self, level: int = logging.INFO) -> None:
        """Log every cause's events not told yet, in one line each (at the end)."""
        now = time.monotonic()
        for cause in list(self._unlogged):
            if self._unlogged[cause]:
                self._summary(cause, now - self._since.get(cause, now), level)

    def _summary(self, cause: str, seconds: float, level: int) -> None:
        self.log.log(
            level,
            "%s: %d more '%s' events in %.0f s (%d in all)",
            self.name,
            self._unlogged[cause],
            cause,
            seconds,
            self.counts[cause],
        )
        self._unlogged[cause] = 0


class Reports:
    """Logs a problem the first time it happens for a (kind, peer); callers count the rest.

    A flood of bad datagrams from one peer then costs one log line, not one per datagram,
    while a new kind of problem or a new peer is still seen at once. Peers are many when a
    flood comes from ever new ports: after ``limit`` lines only one more says so, and the rest
    are counted in ``suppressed``. A peer's words are printed cut short (``printable``).
    """

    def __init__(self, log: logging.Logger, name: str, limit: int = 50) -> None:
        self.log = log
        self.name = name
        self.limit = limit
        self.suppressed = 0
        self._seen: set[tuple[Hashable, Hashable]] = set()

    def __call__(self, kind: Hashable, peer: Hashable, text: str) -> bool:
        """Log ``text`` unless this (kind, peer) was reported before; True if it was logged."""
        key = (kind, peer)
        if key in self._seen:
            return False
        if len(self._seen) >= self.limit:
            self.suppressed += 1
            if self.suppressed == 1:
                self.log.warning(
                    "%s: %d problems told; new ones of other kinds or peers are only counted",
                    self.name,
                    self.limit,
                )
            return False
        self._seen.add(key)
        self.log.warning(
            "%s: %s (further ones are only counted)", self.name, printable(text, PRINTED_LINE)
        )
        return True
