"""Who the contract server listens to, and who it serves: per-peer throttles and the budget.

A flood of HELLOs must cost the server almost nothing and win the flooder almost nothing:

- ``Doorman`` reads a peer's HELLOs (those that are not repeats) at most every
  ``HELLO_INTERVAL``, and none for ``REFUSED_COOLDOWN`` after refusing one; the rest are
  dropped unread (``hellos_dropped``). It answers ERROR at most every ``ERROR_INTERVAL`` per
  peer and code, never with more bytes than it was sent.
- ``refusal``: a HELLO that is valid and within ``limits`` (what one client may ask) is still
  refused, with ERROR ``busy``, when the server has its ``max_clients`` or the new client
  would take the server's sends over ``max_rate`` bytes/s or ``max_sends`` datagrams/s.
"""

from __future__ import annotations

import time
from collections.abc import Hashable, Iterable

from vcosim.contracts import protocol as P
from vcosim.contracts.limits import DATA_OVERHEAD
from vcosim.contracts.options import ServerOptions
from vcosim.contracts.server.report import ServerStats
from vcosim.contracts.server.sessions import ServerSession
from vcosim.contracts.transport import Address, Endpoint

ERROR_INTERVAL = 0.2  # s between ERROR answers of one code to one peer (no reply storms)
HELLO_INTERVAL = 0.1  # s: a peer's HELLOs that need work (not repeats) are read this seldom
REFUSED_COOLDOWN = 1.0  # s: a peer's HELLOs are dropped unread this long after a refusal
MAX_PEERS = 4096  # peers a throttle remembers; beyond, it forgets those past their interval


class Throttle:
    """At most one action per ``interval`` seconds per key (a peer, or a peer and a code)."""

    def __init__(self, interval: float) -> None:
        self.interval = interval
        self._last: dict[Hashable, float] = {}

    def allow(self, key: Hashable, now: float) -> bool:
        """True (and noted) if ``key`` had no action within the interval before ``now``."""
        last = self._last.get(key)
        if last is not None and now - last < self.interval:
            return False
        if len(self._last) >= MAX_PEERS:
            self._forget(now)
        self._last[key] = now
        return True

    def hold(self, key: Hashable, now: float, seconds: float) -> None:
        """No action for ``key`` for ``seconds`` from ``now`` (longer than the interval)."""
        self._last[key] = now + seconds - self.interval

    def _forget(self, now: float) -> None:
        recent = {p: t for p, t in self._last.items() if now - t < self.interval}
        self._last = recent if len(recent) < MAX_PEERS else {}


def session_cost(session: ServerSession) -> tuple[float, float]:
    """(bytes/s, datagrams/s) the server sends to one session's client."""
    rate = sends = 0.0
    for c in session.to_client:
        rate += (DATA_OVERHEAD + 8 * len(c.message.values)) / c.period
        sends += 1.0 / c.period
    return rate, sends


def refusal(
    hello: P.Hello,
    others: Iterable[ServerSession],
    *,
    max_clients: int,
    max_rate: float,
    max_sends: float,
) -> tuple[str, str] | None:
    """Why the server refuses ``hello`` ((code, message)), or None to negotiate it.

    ``others``: the sessions that stay if it is accepted (a reconnecting client's old one
    excluded).
    """
    problems = hello.problems()
    if problems:
        return "bad_hello", "; ".join(problems)
    others = list(others)
    if len(others) >= max_clients:
        return "busy", f"the server serves at most {max_clients} clients"
    demands = [c.demand("") for c in hello.contracts]
    costs = [session_cost(s) for s in others]
    rate = sum(d.rate for d in demands) + sum(r for r, _ in costs)
    sends = sum(d.sends for d in demands) + sum(n for _, n in costs)
    if rate > max_rate or sends > max_sends:
        return (
            "busy",
            f"the server's clients would take {rate / 1e6:.3g} MB/s in {sends:.0f} updates/s; "
            f"it sends at most {max_rate / 1e6:g} MB/s and {max_sends:g} updates/s",
        )
    return None


class Doorman:
    """Reads HELLOs and answers ERRORs for the server, cheaply and never amplifying."""

    def __init__(self, endpoint: Endpoint, stats: ServerStats, options: ServerOptions) -> None:
        self.endpoint = endpoint
        self.stats = stats
        self.options = options
        self._hellos = Throttle(HELLO_INTERVAL)  # by peer
        self._errors = Throttle(ERROR_INTERVAL)  # by (peer, code)

    def may_answer(self, peer: Address) -> bool:
        """True if a repeated HELLO of ``peer`` may be answered now (its WELCOME again)."""
        return self._hellos.allow(peer, time.perf_counter())

    def admit(
        self, peer: Address, session_id: int, size: int, others: list[ServerSession]
    ) -> P.Hello | None:
        """The HELLO in the endpoint's buffer if the server may negotiate it, else None.

        Refused HELLOs are answered ERROR; ``Malformed`` is raised (to be counted) when the
        body is not a HELLO at all.
        """
        now = time.perf_counter()
        if not self._hellos.allow(peer, now):
            self.stats.hellos_dropped += 1
            return None
        try:
            hello = P.decode(self.endpoint.buffer, size, P.Hello)
        except P.Malformed as exc:
            if exc.reason == "bad_body":  # JSON, but not a valid HELLO: say why
                self.refuse(peer, session_id, "bad_hello", exc.detail, size, quiet=True)
            else:
                self._hellos.hold(peer, now, REFUSED_COOLDOWN)
            raise
        opts = self.options
        why = refusal(
            hello,
            others,
            max_clients=opts.max_clients,
            max_rate=opts.max_rate,
            max_sends=opts.max_sends,
        )
        ids = [c.id for c in hello.contracts]
        if why is None and len(set(ids)) != len(ids):
            why = "bad_hello", "contract ids repeat"
        if why is not None:
            self.refuse(peer, session_id, *why, size)
            return None
        return hello

    def refuse(
        self, peer: Address, session_id: int, code: str, why: str, size: int, quiet: bool = False
    ) -> None:
        """Refuse a HELLO: ERROR (if one may be sent), then no HELLO is read for a while.

        ``quiet``: not logged here (the malformed-datagram report says it already).
        """
        self.stats.refused_hellos += 1
        if not quiet:
            self.endpoint.report(code, peer, f"HELLO from {peer[0]}:{peer[1]} refused: {why}")
        self.error(peer, session_id, code, why, size)
        self._hellos.hold(peer, time.perf_counter(), REFUSED_COOLDOWN)

    def error(self, peer: Address, session_id: int, code: str, message: str, size: int) -> None:
        """Answer ERROR, at most once per ``ERROR_INTERVAL`` per peer and code.

        Never with more bytes than the ``size`` of the datagram it answers (none if no ERROR
        fits): an answer must not amplify.
        """
        if self._errors.allow((peer, code), time.perf_counter()):
            data = P.error(session_id, code, message, size)
            if data is not None:
                self.endpoint.send(data, peer)
                self.stats.errors_sent += 1
