"""No program on the machine can lock the page out of its viewer (issue 31, item 4).

Websockets without an Origin (programs) hold at most half the places and give theirs up to a
page; HTTP connections that never finish their headers are closed by a deadline, and the
oldest of them by a newer one, so a thousand cost the viewer no descriptor it needs. uvicorn's
complaints about fuzzed requests are counted lines, never tracebacks.
"""

from __future__ import annotations

import contextlib
import http.client
import logging
import random
import socket
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the viewer extra is not installed")
pytest.importorskip("uvicorn", reason="the viewer extra is not installed")
websockets_sync = pytest.importorskip("websockets.sync.client")

from websockets.exceptions import ConnectionClosed  # noqa: E402

from helpers.pages import recv_until, wait_for  # noqa: E402
from modules.test_viewer_hardening import DRIVE, open_ws, refused_status  # noqa: E402
from vcosim.bus.catalogue import IMFM  # noqa: E402
from vcosim.modules.viewer import Viewer  # noqa: E402
from vcosim.modules.viewer.connections import MAX_IDLE_CONNECTIONS  # noqa: E402
from vcosim.modules.viewer.server import EVICTED, MAX_ORIGINLESS, MAX_PAGES  # noqa: E402

from modules.test_viewer import message_until  # noqa: E402  # isort: skip

PATIENT = 30.0  # seconds: a loaded machine may be slow, never wrong


def own(viewer: Viewer) -> str:
    return f"http://127.0.0.1:{viewer.address[1]}"


def get_status(viewer: Viewer, path: str = "/config.json") -> int:
    conn = http.client.HTTPConnection("127.0.0.1", viewer.address[1], timeout=PATIENT)
    try:
        conn.request("GET", path)
        return conn.getresponse().status
    finally:
        conn.close()


def test_sixteen_held_programs_never_refuse_the_own_page(viewer: Viewer, client) -> None:
    monitor = client(20, monitor=True)
    with contextlib.ExitStack() as held:
        programs = []
        for _ in range(MAX_ORIGINLESS):  # a local program without Origin takes its share...
            ws = held.enter_context(open_ws(viewer))
            recv_until(ws, lambda f: f["type"] == "hello", PATIENT)
            programs.append(ws)
        for _ in range(MAX_PAGES - MAX_ORIGINLESS):  # ...and no more
            assert refused_status(lambda: open_ws(viewer)) == 403
        pages = []
        for _ in range(MAX_PAGES):  # every page opens: the programs make room
            ws = held.enter_context(open_ws(viewer, origin=own(viewer)))
            recv_until(ws, lambda f: f["type"] == "hello", PATIENT)
            pages.append(ws)
        for ws in programs:
            with pytest.raises(ConnectionClosed) as closed:
                while True:
                    ws.recv(timeout=PATIENT)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == EVICTED
        pages[-1].send(DRIVE)
        assert message_until(monitor, IMFM, PATIENT).throttle == 200
    report = viewer.report()
    assert report.evicted_pages == MAX_ORIGINLESS
    assert report.refused_pages == MAX_PAGES - MAX_ORIGINLESS


def test_sixteen_sockets_with_the_own_origin_never_lock_the_page_out(viewer: Viewer, client):
    """Issue 45, F: an Origin is a header any program can send. 16 sockets sending the
    viewer's own held every place, and its page got 403 for as long as they stayed. Now a page
    finding every place taken evicts the one idle longest; a page that drives stays."""
    monitor = client(20, monitor=True)
    with contextlib.ExitStack() as held:
        driver = held.enter_context(open_ws(viewer, origin=own(viewer)))  # the real page...
        recv_until(driver, lambda f: f["type"] == "hello", PATIENT)
        squatters = []
        for _ in range(MAX_PAGES - 1):  # ...and a program's sockets with the same Origin
            ws = held.enter_context(open_ws(viewer, origin=own(viewer)))
            recv_until(ws, lambda f: f["type"] == "hello", PATIENT)
            squatters.append(ws)
        driver.send(DRIVE)  # the page drives: it has sent last
        assert message_until(monitor, IMFM, PATIENT).throttle == 200
        wait_for(lambda: viewer.open_pages == MAX_PAGES, PATIENT)
        for _ in range(3):  # a page opens (three times): not 403, the idlest squatter goes
            ws = held.enter_context(open_ws(viewer, origin=own(viewer)))
            recv_until(ws, lambda f: f["type"] == "hello", PATIENT)
            squatters.append(ws)
        for ws in squatters[:3]:  # the oldest idle ones, in turn
            with pytest.raises(ConnectionClosed) as closed:
                while True:
                    ws.recv(timeout=PATIENT)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == EVICTED
        driver.send(DRIVE)  # the driving page was never evicted
        assert message_until(monitor, IMFM, PATIENT).throttle == 200
    report = viewer.report()
    assert report.evicted_pages == 3 and report.refused_pages == 0


def test_a_thousand_idle_half_requests_leave_the_page_reachable(viewer: Viewer) -> None:
    half = f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{viewer.address[1]}\r\nX-Slow: ".encode()
    with contextlib.ExitStack() as held:
        for _ in range(1100):
            sock = held.enter_context(socket.create_connection(viewer.address, timeout=PATIENT))
            sock.sendall(half)
        assert get_status(viewer) == 200
        assert get_status(viewer, "/") == 200
    closed = viewer.report().closed_connections
    assert closed.get("over the idle limit", 0) >= 1100 - MAX_IDLE_CONNECTIONS


def test_a_request_without_its_headers_is_closed_at_the_deadline(viewer_factory) -> None:
    viewer = viewer_factory(header_deadline=0.2)
    with socket.create_connection(viewer.address, timeout=PATIENT) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: ")
        assert sock.recv(100) == b""  # closed by the viewer, nothing answered
    assert viewer.report().closed_connections == {"header deadline": 1}
    assert get_status(viewer) == 200


def fuzzed_requests(host: bytes, count: int, seed: int = 31) -> list[bytes]:
    seeds = [
        b"GET / HTTP/1.1\r\nHost: %s\r\n\r\n" % host,
        b"GET /ws HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n" % host,
        b"POST /config.json HTTP/1.1\r\nHost: %s\r\nContent-Length: 5\r\n\r\nabc" % host,
        b"GET / HTTP/1.1\r\nHost: %s\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n" % host,
        b"GET / HTTP/1.1\r\nHost: %s\r\nExpect: 100-continue\r\nContent-Length: 9\r\n\r\n" % host,
        b"\x00\xff\r\n\r\n",
    ]
    rng = random.Random(seed)
    out = list(seeds)
    while len(out) < count:
        request = bytearray(rng.choice(seeds))
        for _ in range(rng.randint(1, 4)):
            request[rng.randrange(len(request))] = rng.randrange(256)
        out.append(bytes(request))
    return out


def test_fuzzed_requests_are_counted_lines_and_the_page_still_drives(
    viewer: Viewer, client, caplog: Any
) -> None:
    monitor = client(20, monitor=True)
    host = f"127.0.0.1:{viewer.address[1]}".encode()
    with caplog.at_level(logging.WARNING):
        for request in fuzzed_requests(host, 120):
            with socket.create_connection(viewer.address, timeout=PATIENT) as sock:
                sock.sendall(request)
                sock.shutdown(socket.SHUT_WR)
                while sock.recv(65536):
                    pass
    report = viewer.report()
    assert sum(report.http_errors.values()) >= 20, report.http_errors
    assert not [r for r in caplog.records if r.exc_info], "a traceback was logged"
    lines = [r for r in caplog.records if r.name.startswith("uvicorn")]
    assert not lines, [r.getMessage() for r in lines]
    assert len(caplog.records) <= 10  # one line per kind of complaint, not one per request
    with open_ws(viewer, origin=own(viewer)) as ws:
        recv_until(ws, lambda f: f["type"] == "hello", PATIENT)
        ws.send(DRIVE)
        assert message_until(monitor, IMFM, PATIENT).throttle == 200
    wait_for(lambda: get_status(viewer) == 200, PATIENT)


def test_a_chunked_get_whose_body_turns_bad_after_its_response_is_a_counted_close(
    viewer: Viewer, caplog: Any
) -> None:
    """Issue 45, J: a chunked GET's headers, then (once its response is under way) a bad
    chunk and a pipelined request made uvicorn answer 400 in the middle of the connection's
    first response: h11 raised inside ``data_received`` and asyncio logged "Fatal error:
    protocol.data_received() call failed" for the connection. Now it is closed, counted by
    its cause."""
    host = f"127.0.0.1:{viewer.address[1]}".encode()
    head = b"GET / HTTP/1.1\r\nHost: %s\r\nTransfer-Encoding: chunked\r\n\r\n" % host
    rest = b"zz\r\nGET / HTTP/1.1\r\nHost: %s\r\n\r\n" % host
    rounds = 3
    with caplog.at_level(logging.WARNING):
        for _ in range(rounds):
            with socket.create_connection(viewer.address, timeout=PATIENT) as sock:
                sock.sendall(head)
                assert sock.recv(65536).startswith(b"HTTP/1.1 200")  # the response began
                with contextlib.suppress(OSError):  # (the viewer may have closed already)
                    sock.sendall(rest)
                    sock.shutdown(socket.SHUT_WR)
                    while sock.recv(65536):
                        pass
        wait_for(lambda: get_status(viewer) == 200, PATIENT)
    report = viewer.report()
    assert report.closed_connections.get("bad request after its response") == rounds, report
    assert not [k for k in report.http_errors if "data_received" in k], report.http_errors
    assert not [r for r in caplog.records if r.exc_info], "a traceback was logged"
