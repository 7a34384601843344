"""What a client run did: the report ``ContractClient.run`` returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from vcosim.contracts.client.ports import ConnectionStatus
from vcosim.contracts.client.session import ClientSession
from vcosim.reports import Report


@dataclass
class RoundTrips(Report):
    """Ping round trips of a run (ms); None before any pong."""

    min: float | None
    median: float | None


@dataclass
class ClientReport(Report):
    """What a client run did: its status, counters and timing (``to_dict`` for JSON)."""

    status: ConnectionStatus
    status_name: str
    time: float
    steps: int
    reconnects: int
    sent: dict[int, int]  # updates sent, by contract id
    received: dict[int, int]  # updates taken, by contract id
    gaps: int
    stale: int
    stale_session: int
    malformed: dict[str, int]  # dropped datagrams, by reason
    errors: dict[str, int]  # the server's ERRORs, by code
    refused: list[str]
    blocks: int
    blocked_time: float
    round_trip_ms: RoundTrips
    error: str | None
    interrupted: bool = False  # ended by Ctrl-C (or SIGTERM turned into it)

    @classmethod
    def of(cls, session: ClientSession, **block: Any) -> ClientReport:
        """The report of a block (its counters in ``block``) and its session."""
        trips = np.asarray(session.round_trips) * 1e3
        return cls(
            status=session.status,
            status_name=session.status.name,
            reconnects=session.reconnects,
            sent={c.id: c.sent for c in session.outgoing},
            received={int(c.id or 0): c.received for c in session.incoming},
            gaps=sum(c.gaps for c in session.incoming),
            stale=sum(c.stale for c in session.incoming),
            stale_session=session.stale_session,
            malformed=dict(session.endpoint.malformed),
            errors=dict(session.errors),
            refused=[str(r) for r in session.refused],
            round_trip_ms=RoundTrips(
                float(trips.min()) if trips.size else None,
                float(np.median(trips)) if trips.size else None,
            ),
            error=session.error_text or None,
            **block,
        )
