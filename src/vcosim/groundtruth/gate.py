"""A websocket listener that answers only admitted handshakes and forwards them upstream.

foxglove-sdk's server (0.30) checks no ``Origin``: any web page a user opens could read a run's
stream from it. So it binds a private loopback port, and ``OriginGate`` listens where the user
asked: it answers a handshake only if the viewer's ``Gate`` (``vcosim.modules.viewer.gate``)
admits its ``Host`` and ``Origin``, refuses any other with HTTP 400 or 403 before anything is
forwarded, and passes an admitted connection's frames to and from the private port.

It speaks both of Foxglove's subprotocols: ``foxglove.sdk.v1`` (foxglove-sdk's) and the
classic ``foxglove.websocket.v1`` (Lichtblick, older Foxglove apps), the same protocol under
two names (Foxglove's stance since the SDK), so a classic client's frames go to the upstream
as they are. And it holds the server's binary frames (its clock) back from a client until the
channels are advertised: a client sees ``serverInfo`` and ``advertise`` before any data.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from http import HTTPStatus
from typing import Any

from vcosim.constants import LOOPBACK
from vcosim.errors import ConfigError

log = logging.getLogger("vcosim.foxglove")
_QUIET = logging.getLogger("vcosim.foxglove.gate")
_QUIET.setLevel(logging.WARNING)  # its opening and closing are not news

SUBPROTOCOL = "foxglove.sdk.v1"
"""The websocket subprotocol ``foxglove-sdk`` 0.30 speaks (it refuses foxglove.websocket.v1)."""
CLASSIC_SUBPROTOCOL = "foxglove.websocket.v1"
"""Foxglove's classic name of the same protocol, which Lichtblick and older apps ask for."""
SUBPROTOCOLS = (SUBPROTOCOL, CLASSIC_SUBPROTOCOL)
"""What the gate answers, its preference first."""
MAX_CLIENT_MESSAGE = 1 << 16
"""The longest message a client may send (bytes): a client's are small (subscriptions; the
server takes no data from clients). A longer one closes its connection (1009, "message too
big") as its frame header announces it, before the frame is read: the simulator's process
never holds it (a 512 MB frame took it to 2.1 GB). The server's own frames, from the private
upstream port, are not bounded."""


class OriginGate:
    """A websocket listener that forwards admitted handshakes to a private upstream server.

    ``bind`` starts it on its own thread and event loop and returns the bound port; each
    admitted client gets its own connection to the upstream, bytes passed both ways as they
    come. ``gate`` (a ``vcosim.modules.viewer.gate.Gate``) decides; it is set once the port is
    known (a port of 0 binds a free one, and the gate names the bound port).
    """

    def __init__(self, host: str, port: int, upstream_port: int) -> None:
        self.host, self.port = host, port
        self.upstream = f"ws://{LOOPBACK}:{upstream_port}"
        self.gate: Any = None
        self.clients = 0
        self.refused: dict[str, int] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stop: asyncio.Event | None = None

    def bind(self) -> int:
        """Listen (on a thread of its own); the bound port.

        Raises:
            ConfigError: the address cannot be bound (in use, not this machine's).
        """
        ready = threading.Event()
        failure: list[BaseException] = []
        self._thread = threading.Thread(
            target=self._run, args=(ready, failure), name="foxglove-gate", daemon=True
        )
        self._thread.start()
        ready.wait()
        if failure:
            self._thread.join()
            self._thread = None
            raise ConfigError(
                [f"--foxglove {self.host}:{self.port}: cannot listen there ({failure[0]})"],
                "foxglove",
            )
        return self.port

    def _run(self, ready: threading.Event, failure: list[BaseException]) -> None:
        loop = self._loop = asyncio.new_event_loop()
        try:
            loop.run_until_complete(self._serve(ready))
        except Exception as error:  # binding failed (or anything before): bind() says so
            failure.append(error)
            ready.set()
        finally:
            loop.close()

    async def _serve(self, ready: threading.Event) -> None:
        from websockets.asyncio.server import serve
        from websockets.typing import Subprotocol

        self._stop = asyncio.Event()
        async with serve(
            self._forward,
            self.host,
            self.port,
            process_request=self._admit,
            subprotocols=[Subprotocol(name) for name in SUBPROTOCOLS],
            compression=None,
            max_size=MAX_CLIENT_MESSAGE,
            logger=_QUIET,
        ) as server:
            self.port = next(iter(server.sockets)).getsockname()[1]
            ready.set()
            await self._stop.wait()

    def _admit(self, connection: Any, request: Any) -> Any:
        """None to go on with the handshake; a refusal (400, 403) otherwise."""
        host, origin = request.headers.get("Host"), request.headers.get("Origin")
        client = connection.remote_address[0] if connection.remote_address else "?"
        if self.gate is None or not self.gate.admits_host(host):
            return self._refuse(connection, "host", client, host, HTTPStatus.BAD_REQUEST)
        if not self.gate.admits_origin(origin):
            return self._refuse(connection, "origin", client, origin, HTTPStatus.FORBIDDEN)
        return None

    def _refuse(
        self, connection: Any, kind: str, client: str, value: str | None, status: HTTPStatus
    ) -> Any:
        if not self.refused.get(kind):
            log.warning(
                "foxglove: refused a connection from %s with %s %r (allow it with "
                "--foxglove-allow)",
                client,
                kind.capitalize(),
                value,
            )
        self.refused[kind] = self.refused.get(kind, 0) + 1
        return connection.respond(status, f"this server does not answer that {kind}\n")

    async def _forward(self, client: Any) -> None:
        from websockets.asyncio.client import connect
        from websockets.exceptions import ConnectionClosed
        from websockets.typing import Subprotocol

        if client.subprotocol not in SUBPROTOCOLS:
            await client.close(1002, f"speak {' or '.join(SUBPROTOCOLS)}")
            return
        self.clients += 1
        async with connect(
            self.upstream,
            subprotocols=[Subprotocol(SUBPROTOCOL)],
            compression=None,
            max_size=None,
        ) as upstream:

            async def pump(source: Any, sink: Any) -> None:
                try:
                    async for message in source:
                        await sink.send(message)
                except ConnectionClosed:
                    pass

            async def advertised_first(source: Any, sink: Any) -> None:
                """The server's frames, its binary ones (the clock) only after an advertise.

                Until then the latest binary frame waits and goes right after it.
                """
                held: bytes | None = None
                try:
                    async for message in source:
                        if isinstance(message, bytes):
                            held = message
                            continue
                        await sink.send(message)
                        if json.loads(message).get("op") == "advertise":
                            break
                    if held is not None:
                        await sink.send(held)
                    async for message in source:
                        await sink.send(message)
                except ConnectionClosed:
                    pass

            tasks = [
                asyncio.ensure_future(pump(client, upstream)),
                asyncio.ensure_future(advertised_first(upstream, client)),
            ]
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in tasks:
                task.cancel()

    def close(self) -> None:
        """Stop listening and end every forwarded connection (safe twice)."""
        loop, stop, thread = self._loop, self._stop, self._thread
        if thread is None or loop is None or stop is None:
            return
        self._thread = None
        if not loop.is_closed():
            loop.call_soon_threadsafe(stop.set)
        thread.join(timeout=5.0)
