"""``HOST:PORT``: how every command, file and state row writes an address, read in one place.

Each reader says what it may leave out (the host: loopback; the port: its default; a port
alone) and turns an ``AddressError`` into its own refusal, naming its option or key.
"""

from __future__ import annotations

from typing import NamedTuple

from vcosim.constants import LOOPBACK

MAX_HOST = 253
"""The longest host name (DNS's limit; each dot-separated label at most 63)."""


class HostPort(NamedTuple):
    """A UDP or HTTP endpoint: host and port."""

    host: str
    port: int

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"


class AddressError(ValueError):
    """Not an address; ``host_problem`` says what is wrong with its host, if that is it."""

    def __init__(self, text: str, host_problem: str | None = None) -> None:
        super().__init__(host_problem or f"{text!r} is not HOST:PORT")
        self.host_problem = host_problem


def host_problem(host: str) -> str | None:
    """Why ``host`` is no host name or address (None: it is one).

    Checked where it is read, so a name the resolver cannot take (too long, an empty label,
    a space) is a refusal naming the key, not an encoding error at the first send.
    """
    if not host:
        return "an empty host"
    if len(host) > MAX_HOST:
        return f"a host of {len(host)} characters (at most {MAX_HOST})"
    if any(c.isspace() or not c.isprintable() for c in host):
        return f"{host!r} is not a host name or address"
    if ":" not in host:  # an IPv6 address has no labels to encode
        try:
            host.encode("idna")
        except UnicodeError:
            return f"{host!r} is not a host name (a label is empty or over 63 characters)"
    return None


def parse_address(
    text: str,
    *,
    default_host: str | None = LOOPBACK,
    default_port: int | None = None,
    bare_port: bool = False,
    lowest_port: int = 1,
    check_host: bool = True,
) -> HostPort:
    """``HOST:PORT`` split at its last colon; ``AddressError`` for anything else.

    ``default_host`` stands in for a missing host (None: a host is needed), ``default_port``
    for a missing port (None: a port is needed); ``bare_port``: digits alone are a port, not a
    host. A port is a whole number from ``lowest_port`` to 65535; the host passes
    :func:`host_problem` unless ``check_host`` is off (whitespace is refused always).
    """
    stripped = text.strip()
    host, colon, port_text = stripped.rpartition(":")
    if not colon:
        host, port_text = ("", stripped) if bare_port and stripped.isdigit() else (stripped, "")
    if not host:
        if default_host is None:
            raise AddressError(text)
        host = default_host
    if not port_text:
        if default_port is None:
            raise AddressError(text)
        port = default_port
    elif port_text.isdigit():
        port = int(port_text)
    else:
        raise AddressError(text)
    if not lowest_port <= port <= 65535 or any(c.isspace() for c in host):
        raise AddressError(text)
    problem = host_problem(host) if check_host else None
    if problem is not None:
        raise AddressError(text, problem)
    return HostPort(host, port)
