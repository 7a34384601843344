"""HTTP connections that cannot pin the viewer: a header deadline and a cap on idle ones.

uvicorn closes an idle keep-alive connection, but keeps a connection that has sent half a
request's headers for as long as the peer likes. A program opening a thousand such
connections would use up the viewer's file descriptors and lock every page out. Here:

- a connection must complete a request's headers within ``HEADER_DEADLINE_S`` of opening
  (and of its last response), or it is closed;
- at most ``MAX_IDLE_CONNECTIONS`` connections may wait for headers at once; a new one
  closes the oldest waiting one, so a flood costs its sender its own connections, never the
  page's next request. A connection that has sent its headers (or became a websocket) is
  never closed here.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

HEADER_DEADLINE_S = 10.0
MAX_IDLE_CONNECTIONS = 64
MAX_HEADER_BYTES = 16 * 1024
"""h11's limit on a request's headers (its default, written down): more is a 400."""


def guarded_http(
    *,
    deadline: float = HEADER_DEADLINE_S,
    max_idle: int = MAX_IDLE_CONNECTIONS,
    closed: Callable[[str], None] = lambda reason: None,
) -> type[asyncio.Protocol]:
    """The h11 protocol of uvicorn with the deadline and the cap; ``closed(reason)`` counts."""
    import h11  # the viewer extra: imported when a viewer serves
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class GuardedH11(H11Protocol):
        """One connection; waiting for headers, it may be closed by the deadline or a newer one."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.deadline: asyncio.TimerHandle | None = None

        def waiting_for_headers(self) -> bool:
            """Still this connection's protocol, and no request's headers are in."""
            return (
                self.transport.get_protocol() is self
                and not self.transport.is_closing()
                and self.conn.their_state is h11.IDLE
            )

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self.arm()
            waiting = [c for c in self.connections if isinstance(c, GuardedH11) and c is not self]
            waiting = [c for c in waiting if c.waiting_for_headers()]
            if len(waiting) >= max_idle:
                oldest = min(waiting, key=lambda c: c.opened)
                oldest.close("over the idle limit")

        def arm(self) -> None:
            self.opened = self.loop.time()
            if self.deadline is not None:
                self.deadline.cancel()
            self.deadline = self.loop.call_later(deadline, self.expire)

        def expire(self) -> None:
            if self.waiting_for_headers():
                self.close("header deadline")

        def close(self, reason: str) -> None:
            closed(reason)
            self.transport.close()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self.arm()

        def send_400_response(self, msg: str) -> None:
            """Answer a bad request 400, or close if its response is under way already.

            A chunked GET whose body turns bad (with a pipelined request behind it) once
            its response has begun cannot be answered 400 in the middle: h11 refused, inside
            ``data_received``, and asyncio logged a fatal error per connection (issue 45, J).
            """
            try:
                super().send_400_response(msg)
            except h11.LocalProtocolError:
                self.close("bad request after its response")

        def connection_lost(self, exc: Exception | None) -> None:
            if self.deadline is not None:
                self.deadline.cancel()
            super().connection_lost(exc)

    return GuardedH11
