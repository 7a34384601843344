"""The viewer against hostile pages and programs: Origin, Host, size, junk, and the dead-man.

Real websockets and HTTP on 127.0.0.1; a rebinding name is simulated by connecting to the
viewer's port while naming another host, as a browser does once DNS answers 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import time
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("starlette", reason="the viewer extra is not installed")
pytest.importorskip("uvicorn", reason="the viewer extra is not installed")
websockets_sync = pytest.importorskip("websockets.sync.client")

from websockets.exceptions import ConnectionClosed, InvalidStatus  # noqa: E402

from helpers.pages import recv_until, wait_for, ws_url  # noqa: E402
from modules.test_viewer import message_until  # noqa: E402
from vcosim.bus.catalogue import IMFM  # noqa: E402
from vcosim.bus.router import Router  # noqa: E402
from vcosim.errors import ConfigError  # noqa: E402
from vcosim.modules.viewer import Viewer  # noqa: E402
from vcosim.modules.viewer.commands import CommandError, decode_command  # noqa: E402
from vcosim.modules.viewer.deadman import DEADMAN_BRAKE, DeadMan, released  # noqa: E402
from vcosim.modules.viewer.gate import Gate  # noqa: E402

DRIVE = json.dumps({"type": "input", "throttle": 200, "brake": 0, "steering": 100})


def open_ws(viewer: Viewer, *, host: str | None = None, origin: str | None = None) -> Any:
    """A websocket to the viewer's port that names ``host`` and ``origin`` as a browser would."""
    port = viewer.address[1]
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    uri = f"ws://{host or f'127.0.0.1:{port}'}/ws"
    return websockets_sync.connect(uri, sock=sock, origin=origin, open_timeout=5)  # type: ignore[arg-type]


def http_status(viewer: Viewer, host: str, path: str = "/config.json") -> int:
    """The status of a GET that names ``host`` in its Host header."""
    conn = http.client.HTTPConnection("127.0.0.1", viewer.address[1], timeout=5)
    try:
        conn.putrequest("GET", path, skip_host=True)
        conn.putheader("Host", host)
        conn.endheaders()
        return conn.getresponse().status
    finally:
        conn.close()


def refused_status(opening: Callable[[], Any]) -> int:
    with pytest.raises(InvalidStatus) as refused, opening():
        pass
    return refused.value.response.status_code


def test_a_page_over_the_limit_evicts_the_idlest_and_a_closed_one_frees_its_place(
    viewer: Viewer,
):
    """Over the limit a page evicts the page idle longest (issue 45, F: an Origin proves
    nothing, so pages holding every place must not lock the next one out)."""
    from websockets.exceptions import ConnectionClosed

    from vcosim.modules.viewer.server import EVICTED, MAX_PAGES

    origin = f"http://127.0.0.1:{viewer.address[1]}"
    with contextlib.ExitStack() as pages:
        held = []
        for _ in range(MAX_PAGES):
            ws = pages.enter_context(open_ws(viewer, origin=origin))
            recv_until(ws, lambda f: f["type"] == "hello")
            held.append(ws)
        ws = pages.enter_context(open_ws(viewer, origin=origin))  # not 403
        recv_until(ws, lambda f: f["type"] == "hello")
        with pytest.raises(ConnectionClosed) as closed:
            while True:
                held[0].recv(timeout=30)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == EVICTED
        assert viewer.stats.refused_pages == 0 and viewer.stats.evicted == 1
    wait_for(lambda: viewer.open_pages == 0)  # the server has seen them go
    with open_ws(viewer, origin=origin) as ws:  # there is room again
        assert recv_until(ws, lambda f: f["type"] == "hello")["module"] == 18
    assert viewer.report().refused_pages == 0 and viewer.stats.pages == MAX_PAGES + 2


# -- Origin ----------------------------------------------------------------------------------
def test_a_foreign_page_gets_403_and_the_own_page_drives(viewer: Viewer, client):
    port = viewer.address[1]
    monitor = client(20, monitor=True)
    for origin in ("http://evil.example", "null", f"http://127.0.0.1:{port + 1}", "file://"):
        assert refused_status(lambda o=origin: open_ws(viewer, origin=o)) == 403
    assert viewer.stats.refused_origins == 4 and viewer.stats.pages == 0
    for own in (f"http://127.0.0.1:{port}", f"http://localhost:{port}", f"http://[::1]:{port}"):
        with open_ws(viewer, origin=own) as ws:
            assert recv_until(ws, lambda f: f["type"] == "hello")["module"] == 18
    with open_ws(viewer, origin=f"http://localhost:{port}") as ws:
        ws.send(DRIVE)
        assert message_until(monitor, IMFM).throttle == 200
    assert viewer.report().refused_origins == 4


def test_a_rebinding_host_is_refused_on_http_and_websocket(viewer: Viewer):
    port = viewer.address[1]
    assert http_status(viewer, f"evil.example:{port}") == 400
    assert http_status(viewer, "evil.example") == 400
    assert http_status(viewer, f"127.0.0.1:{port + 1}") == 400
    assert http_status(viewer, f"evil.example@127.0.0.1:{port}") == 400
    assert refused_status(lambda: open_ws(viewer, host=f"evil.example:{port}")) == 403
    assert viewer.stats.refused_hosts == 5
    for own in (f"127.0.0.1:{port}", f"localhost:{port}", f"LOCALHOST:{port}", f"[::1]:{port}"):
        assert http_status(viewer, own) == 200, own
        assert http_status(viewer, own, "/") == 200


def test_names_allowed_on_purpose_are_served(viewer_factory):
    viewer = viewer_factory(allow_origins=["viewer.lan", "https://proxy.example"])
    port = viewer.address[1]
    assert http_status(viewer, f"viewer.lan:{port}") == 200
    assert http_status(viewer, "proxy.example") == 200  # port 443, as its origin says
    with open_ws(viewer, host=f"viewer.lan:{port}", origin=f"http://viewer.lan:{port}") as ws:
        recv_until(ws, lambda f: f["type"] == "hello")
    assert refused_status(lambda: open_ws(viewer, origin="http://proxy.example")) == 403


def test_bad_allowed_names_are_a_config_error_listing_each(router: Router):
    with pytest.raises(ConfigError) as error:
        Viewer("127.0.0.1", router.address[1], port=0, allow_origins=["0.0.0.0", "a b", "ok"])
    assert len(error.value.problems) == 2
    assert "'0.0.0.0'" in error.value.problems[0] and "'a b'" in error.value.problems[1]


@pytest.mark.parametrize(
    ("header", "admitted"),
    [
        ("127.0.0.1:8765", True),
        ("localhost.:8765", True),
        ("[::1]:8765", True),
        ("127.0.0.1", False),  # port 80
        ("127.0.0.1:8766", False),
        ("127.0.0.1:99999", False),
        ("evil.example:8765", False),
        ("evil@127.0.0.1:8765", False),
        ("127.0.0.1:8765/x", False),
        ("", False),
        (None, False),
    ],
)
def test_gate_admits_only_the_viewers_names(header: str | None, admitted: bool):
    assert Gate.serving("0.0.0.0", ("0.0.0.0", 8765)).admits_host(header) is admitted


@given(st.text(max_size=80), st.one_of(st.none(), st.text(max_size=80)))
def test_gate_never_raises(host: str, origin: str | None):
    gate = Gate.serving("127.0.0.1", ("127.0.0.1", 8765), ["viewer.lan"])
    assert isinstance(gate.admits_host(host), bool)
    assert isinstance(gate.admits_origin(origin), bool)


# -- messages --------------------------------------------------------------------------------
JUNK: list[tuple[str | bytes, str]] = [
    ("[1]", "not an object"),
    ("null", "not an object"),
    ('"input"', "not an object"),
    ("{}", "unknown"),
    ('{"type": "fly"}', "unknown"),
    ("{", "json"),
    ("NaN", "json"),
    ('{"type": "input", "throttle": NaN, "brake": 0, "steering": 0}', "json"),
    ("[" * 2000 + "]" * 2000, "json"),
    (b"\xff\xfe\x00", "json"),
    ('{"type": "input", "throttle": 1e999, "brake": 0, "steering": 0}', "field"),
    ('{"type": "input", "throttle": ' + "9" * 3000 + ', "brake": 0, "steering": 0}', "field"),
    ('{"type": "input", "throttle": 10, "brake": 0, "steering": "left"}', "field"),
    ('{"type": "input", "throttle": 10, "brake": 0, "steering": 0, "x": 1}', "field"),
    ('{"type": "ground", "height": "abcd", "friction": [1, 1, 1, 1]}', "field"),
    ('{"type": "ground", "height": [0, 0, 0, 1e6], "friction": [1, 1, 1, 1]}', "field"),
]


def test_junk_gets_error_frames_and_the_socket_stays_open(viewer_factory, client):
    viewer = viewer_factory(send_ground=True)
    monitor = client(20, monitor=True)
    with websockets_sync.connect(ws_url(viewer)) as ws:
        recv_until(ws, lambda f: f["type"] == "hello")
        for junk, reason in JUNK:
            before = viewer.stats.malformed[reason]
            ws.send(junk)
            assert recv_until(ws, lambda f: f["type"] == "error")["error"]
            assert viewer.stats.malformed[reason] == before + 1, (junk, reason)  # counted first
        ws.send(DRIVE)  # the same socket still drives
        assert message_until(monitor, IMFM).throttle == 200
    report = viewer.report()
    assert report.bad_commands == len(JUNK) and report.commands == 1
    assert sum(report.malformed.values()) == len(JUNK)


def test_a_1_mb_message_is_refused_and_counted(viewer: Viewer, client):
    monitor = client(20, monitor=True)
    with websockets_sync.connect(ws_url(viewer)) as ws:
        recv_until(ws, lambda f: f["type"] == "hello")
        ws.send("x" * 1_000_000)
        with pytest.raises(ConnectionClosed) as closed:
            while True:
                ws.recv(timeout=5)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
    deadline = time.monotonic() + 5
    while viewer.stats.malformed["too long"] < 1:
        assert time.monotonic() < deadline
        time.sleep(0.001)
    with websockets_sync.connect(ws_url(viewer)) as ws:  # the viewer serves on
        ws.send(DRIVE)
        assert message_until(monitor, IMFM).throttle == 200


@given(st.one_of(st.text(max_size=300), st.binary(max_size=300)))
def test_decode_command_raises_nothing_but_command_errors(data: str | bytes):
    try:
        decode_command(data, viewer_id=18, send_ground=True)
    except CommandError as exc:
        assert exc.reason in ("too long", "json", "not an object", "unknown", "field", "invalid")


@given(
    st.dictionaries(
        st.sampled_from(["type", "throttle", "brake", "steering", "shift", "height", "friction"]),
        st.one_of(
            st.sampled_from(["input", "camera", "horn", "ground"]),
            st.integers(),
            st.floats(),
            st.lists(st.one_of(st.floats(), st.integers(), st.text()), max_size=5),
            st.none(),
            st.booleans(),
        ),
    )
)
def test_near_miss_commands_raise_nothing_but_command_errors(cmd: dict):
    with contextlib.suppress(CommandError):
        decode_command(json.dumps(cmd), viewer_id=18, send_ground=True)


# -- the dead-man rule -----------------------------------------------------------------------
def test_a_silent_driving_page_is_taken_off_the_throttle(viewer_factory, client):
    viewer = viewer_factory(deadman=0.5)
    monitor = client(20, monitor=True)
    with websockets_sync.connect(ws_url(viewer)) as ws:
        recv_until(ws, lambda f: f["type"] == "hello")
        sent = time.monotonic()  # before the viewer notes the input's time
        ws.send(DRIVE)
        assert message_until(monitor, IMFM) == IMFM(200, 0, 100, 0, to=16)
        release = message_until(monitor, IMFM, timeout=10)  # the page says nothing more
        assert time.monotonic() - sent >= 0.5
        assert release == IMFM(0, DEADMAN_BRAKE, 100, 0, to=16)
        assert viewer.stats.releases == 1
        ws.send(DRIVE)  # the page drives again
        assert message_until(monitor, IMFM).throttle == 200


def test_a_page_that_leaves_while_driving_is_released_at_once(viewer_factory, client):
    viewer = viewer_factory(deadman=10.0)
    monitor = client(20, monitor=True)
    with websockets_sync.connect(ws_url(viewer)) as ws:
        recv_until(ws, lambda f: f["type"] == "hello")
        ws.send(json.dumps({"type": "input", "throttle": 255, "brake": 250, "steering": 0}))
        assert message_until(monitor, IMFM).throttle == 255
    assert message_until(monitor, IMFM, timeout=5) == IMFM(0, 250, 0, 0, to=16)  # harder brake
    assert viewer.stats.releases == 1


def test_a_watching_page_is_never_released(viewer_factory, client):
    viewer = viewer_factory(deadman=0.2)
    with websockets_sync.connect(ws_url(viewer)) as ws:
        recv_until(ws, lambda f: f["type"] == "hello")
        ws.send(json.dumps({"type": "camera"}))
        recv_until(ws, lambda f: f["type"] == "camera")
    viewer.stop()
    assert viewer.stats.releases == 0


def test_deadman_rule_on_its_own_clock():
    rule = DeadMan(timeout=0.5)
    drive = IMFM(180, 0, 90, 1, to=16, enqueue=True)
    for n in range(100):  # inputs every 0.4 s: never released
        rule.input("page", drive, n * 0.4)
        assert rule.due(n * 0.4 + 0.39) == []
    assert rule.due(39.6 + 0.5) == [IMFM(0, DEADMAN_BRAKE, 90, 0, to=16)]
    assert rule.due(100.0) == []  # once
    assert rule.leave("page") is None  # released already
    rule.input("a", drive, 0.0)
    rule.input("b", IMFM(0, 200, 128, 0, to=16), 0.0)
    assert [m.brake for m in rule.everyone()] == [DEADMAN_BRAKE, 200]
    assert released(IMFM(255, 255, 0, 0, to=16)).brake == 255
