"""Hardening, fourth pass (issue 45, K): ``vcosim connect --duration 3`` refused "busy" by the
server throughout exits 1 (it exited 0 though nothing was exchanged)."""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path

from contract_helpers import document, fields
from typer.testing import CliRunner

from vcosim.app import app
from vcosim.contracts import protocol as P


def refuse_busy(sock: socket.socket, stop: threading.Event) -> None:
    """Answer every HELLO with ERROR busy, as a server with no room does."""
    sock.settimeout(0.05)
    busy = P.ErrorBody(code="busy", message="the server serves at most 1 clients")
    while not stop.is_set():
        try:
            data, sender = sock.recvfrom(65535)
        except (TimeoutError, OSError):
            continue
        kind, session = P.read_header(data, len(data))
        if kind == P.Kind.HELLO:
            sock.sendto(P.encode(P.Kind.ERROR, session, busy), sender)


def test_connect_refused_busy_throughout_exits_1(tmp_path: Path) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    stop = threading.Event()
    server = threading.Thread(target=refuse_busy, args=(sock, stop), daemon=True)
    server.start()
    config = tmp_path / "client.json"
    config.write_text(
        json.dumps(document(sock.getsockname()[1], outputs=[{"ports": fields("rpm")}]))
    )
    try:
        result = CliRunner().invoke(app, ["connect", str(config), "--duration", "3"])
    finally:
        stop.set()
        server.join()
        sock.close()
    assert result.exit_code == 1, result.output
    assert "never served" in result.output and "busy" in result.output
