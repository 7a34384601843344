"""Who may open the viewer: the Host every request names and the Origin of every websocket.

A browser lets any page it shows open a websocket to any address, the viewer's included, and
says where the page came from only in the ``Origin`` header; a page from elsewhere could then
drive the car. A name an attacker controls can also be made to resolve to 127.0.0.1 (DNS
rebinding); the browser then calls the viewer by that name, in the ``Host`` header. So the
viewer answers only requests that name it as it is served (the bound address, or one of the
loopback names at its port) and websockets opened by its own page, plus the addresses a user
allows on purpose (``allow``): someone who serves the page to the LAN names the address the
browsers there use. A websocket without an Origin comes from a program, not a browser's page,
and is served (any local program can reach the bus directly anyway).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from dataclasses import dataclass
from typing import Any

from vcosim.errors import ConfigError

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
WILDCARDS = ("", "0.0.0.0", "::")
DEFAULT_PORTS = {"http": 80, "https": 443}

_HOST = r"(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)(?::(?P<port>[0-9]{1,5}))?"
_HOST_HEADER = re.compile(_HOST)
_ORIGIN = re.compile(r"(?P<scheme>https?)://" + _HOST)

Scope = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]], Any]


def _name(host: str) -> str:
    """A host as compared: lower case, no IPv6 brackets, no trailing dot."""
    return host.strip("[]").rstrip(".").lower()


def _port(text: str | None, default: int) -> int | None:
    """The port of a header or allow entry; None if it is not one."""
    if text is None:
        return default
    port = int(text)
    return port if 0 < port < 65536 else None


@dataclass(frozen=True)
class Gate:
    """The (host, port) names a request may use and the origins a websocket may come from."""

    hosts: frozenset[tuple[str, int]]
    origins: frozenset[tuple[str, str, int]]

    @classmethod
    def serving(cls, bound: str, address: tuple[str, int], allow: Iterable[str] = ()) -> Gate:
        """The gate of a page served at ``address`` (bound as ``bound``), plus ``allow``.

        ``allow`` entries are origins (``http://192.168.1.5:8080``) or hosts with an optional
        port (``192.168.1.5``, ``viewer.lan:8080``); a host alone means ``http`` at the
        viewer's port.

        Raises:
            ConfigError: an entry is not an origin or host, listing every bad one.
        """
        port = address[1]
        names = {*LOOPBACK_NAMES, bound, address[0]} - set(WILDCARDS)
        origins = {("http", _name(n), port) for n in names}
        problems = []
        for entry in allow:
            origin = _allowed(entry, port)
            if origin is None:
                problems.append(
                    f"allowed origin {entry!r} is not an origin (http://HOST:PORT) or HOST[:PORT]"
                )
            else:
                origins.add(origin)
        if problems:
            raise ConfigError(problems, "viewer")
        return cls(frozenset((h, p) for _, h, p in origins), frozenset(origins))

    def admits_host(self, header: str | None) -> bool:
        """True if a request's Host header names this viewer."""
        match = _HOST_HEADER.fullmatch(header or "")
        if match is None:
            return False
        name = _name(match["host"])
        if match["port"] is None:  # the scheme's default port; the Host does not say which
            return any((name, port) in self.hosts for port in DEFAULT_PORTS.values())
        return (name, _port(match["port"], 0)) in self.hosts

    def admits_origin(self, header: str | None) -> bool:
        """True if a websocket may be opened from this Origin (None: not from a browser)."""
        if header is None:
            return True
        match = _ORIGIN.fullmatch(header.lower())
        if match is None:  # "null" (a file or a sandboxed frame) among others
            return False
        scheme = match["scheme"]
        at = _port(match["port"], DEFAULT_PORTS[scheme])
        return (scheme, _name(match["host"]), at) in self.origins


def _allowed(entry: str, port: int) -> tuple[str, str, int] | None:
    """An allow entry as (scheme, host, port); None if it is neither origin nor host."""
    text = entry.strip().lower().rstrip("/")
    if match := _ORIGIN.fullmatch(text):
        scheme = match["scheme"]
        at = _port(match["port"], DEFAULT_PORTS[scheme])
        return None if at is None else (scheme, _name(match["host"]), at)
    if match := _HOST_HEADER.fullmatch(text):
        name, at = _name(match["host"]), _port(match["port"], port)
        return None if at is None or name in WILDCARDS else ("http", name, at)
    return None


class GateMiddleware:
    """ASGI middleware: a wrong Host gets 400, a websocket from a foreign page 403.

    A refused websocket is closed before it is accepted, which the server answers with HTTP
    403 (ASGI). ``refused(kind, client, value)`` counts and reports each refusal.
    """

    def __init__(self, app: ASGIApp, gate: Gate, refused: Callable[[str, str, str], None]):
        self.app = app
        self.gate = gate
        self.refused = refused

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        """Pass an admitted request on; answer any other one here."""
        from starlette.datastructures import Headers
        from starlette.responses import PlainTextResponse

        kind = scope["type"]
        if kind not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        client = scope["client"][0] if scope.get("client") else "?"
        host, origin = headers.get("host"), headers.get("origin")
        if not self.gate.admits_host(host):
            self.refused("host", client, repr(host))
        elif kind == "websocket" and not self.gate.admits_origin(origin):
            self.refused("origin", client, repr(origin))
        else:
            await self.app(scope, receive, send)
            return
        if kind == "websocket":
            await send({"type": "websocket.close", "code": 1008})  # before accept: HTTP 403
        else:
            text = "this viewer does not answer to that host name"
            await PlainTextResponse(text, status_code=400)(scope, receive, send)
