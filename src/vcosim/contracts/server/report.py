"""What the contract server counts while it runs, and the report of a run."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from vcosim.contracts.transport import Endpoint
from vcosim.reports import Report


@dataclass
class ServerStats:
    """What the server did; every dropped or changed value is counted here."""

    sessions: int = 0
    ended: int = 0
    expired: int = 0
    sent: int = 0
    received: int = 0
    stale: int = 0
    gaps: int = 0
    refused_fields: int = 0
    refused_hellos: int = 0  # HELLOs answered ERROR (beyond the limits, the budget, ...)
    hellos_dropped: int = 0  # HELLOs not read: too soon after the peer's previous one
    errors_sent: int = 0
    unknown_session: int = 0
    holds: int = 0
    blocked_time: float = 0.0
    sync_timeouts: int = 0
    evicted: int = 0  # sessions ended for a newcomer's when the server was full
    clamped: Counter[str] = field(default_factory=Counter)


@dataclass
class ServerReport(Report):
    """The server's counters at the end of a run (the ``contracts`` entry of a run's JSON)."""

    address: str | None  # "host:port" while open
    clients: int  # sessions open now
    sessions: int
    ended: int
    expired: int
    sent: int
    received: int
    stale: int
    gaps: int
    refused_fields: int
    refused_hellos: int
    hellos_dropped: int
    errors_sent: int
    unknown_session: int
    malformed: dict[str, int]  # dropped datagrams, by reason
    malformed_total: int
    rejected_peers: int
    clamped: dict[str, int]  # values limited to the property's range, by property
    holds: int
    blocked_time: float
    sync_timeouts: int
    evicted: int

    @classmethod
    def of(cls, stats: ServerStats, endpoint: Endpoint, clients: int) -> ServerReport:
        """The report of a server from its counters and its link."""
        return cls(
            address=None if endpoint.closed else "{}:{}".format(*endpoint.address),
            clients=clients,
            sessions=stats.sessions,
            ended=stats.ended,
            expired=stats.expired,
            sent=stats.sent,
            received=stats.received,
            stale=stats.stale,
            gaps=stats.gaps,
            refused_fields=stats.refused_fields,
            refused_hellos=stats.refused_hellos,
            hellos_dropped=stats.hellos_dropped,
            errors_sent=stats.errors_sent,
            unknown_session=stats.unknown_session,
            malformed=dict(endpoint.malformed),
            malformed_total=sum(endpoint.malformed.values()),
            rejected_peers=endpoint.rejected,
            clamped=dict(stats.clamped),
            holds=stats.holds,
            blocked_time=stats.blocked_time,
            sync_timeouts=stats.sync_timeouts,
            evicted=stats.evicted,
        )
