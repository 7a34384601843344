"""Who the contract server listens to, and who it serves: per-peer throttles and the budget.

A flood of HELLOs must cost the server almost nothing and win the flooder almost nothing:

- ``Throttle``: an action (parsing a HELLO, answering with an ERROR) is done for one peer at
  most once per interval; the rest are dropped before any work, counted by the caller. It
  remembers a bounded number of peers.
- ``refusal``: a HELLO that is valid and within ``limits`` (what one client may ask) is still
  refused, with ERROR ``busy``, when the server has its ``max_clients`` or the new client
  would take the server's sends over ``max_rate`` bytes/s or ``max_sends`` datagrams/s.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable

from vcosim.contracts import protocol as P
from vcosim.contracts.limits import DATA_OVERHEAD
from vcosim.contracts.server.sessions import ServerSession

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
