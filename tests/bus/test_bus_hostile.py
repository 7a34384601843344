"""What hostile datagrams get, over real UDP on loopback: counted, never obeyed, never a crash."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vcosim.bus.catalogue import FMVM, IMFM
from vcosim.bus.client import BusClient
from vcosim.bus.codec import Codec
from vcosim.bus.router import Router
from vcosim.bus.sockets import allowlist
from vcosim.errors import ConfigError, CouplingTimeout
from vcosim.net import Allowlist

DIGITS = b"9" * 5000


@pytest.fixture
def raw() -> Iterator[socket.socket]:
    """A bare UDP socket on loopback: the attacker's."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.settimeout(2.0)
        yield sock


def test_5000_digit_ids_do_not_kill_the_router_and_it_still_routes(router: Router, connect, raw):
    stats = router.stats
    for frame in (b"ID " + DIGITS + b",END", b"BYE " + DIGITS + b",END", b"ID 65536,END"):
        raw.sendto(frame, router.address)  # at the handshake port
    assert router.wait_until(lambda: stats.malformed == 3, 2.0), router.report()
    vehicle, driver = connect(16), connect(17)
    for frame in (  # on a module's own socket
        b"BYE " + DIGITS + b",END",
        b"ID " + DIGITS + b",END",
        "§4§16§0+".encode("latin-1") + DIGITS[:200] + "§2§3§0¶".encode("latin-1"),
    ):
        driver.send_raw(frame)
    assert router.wait_until(lambda: stats.malformed == 6, 2.0), router.report()
    driver.send(IMFM(1, 2, 3, 0, to=16))
    assert vehicle.next_message(timeout=2.0) == IMFM(1, 2, 3, 0, to=16)
    assert not router.stopped.is_set() and {16, 17} <= set(router.modules)
    assert router.stats.malformed_by_reason == {"handshake": 3, "length": 2, "number": 1}
    # one report per kind and sender: the handshake port's, then the module's two kinds
    assert len(router.stats.problems) == 3, router.stats.problems


@st.composite
def hostile(draw: st.DrawFn) -> bytes:
    """Random bytes, or a valid message or frame with a part replaced by a long number."""
    if draw(st.booleans()):
        return draw(st.binary(min_size=1, max_size=300))
    valid = draw(
        st.sampled_from(
            [
                "§4§16§0+100§150§156§0¶".encode("latin-1"),
                "§6§18§0+1.5§2§3§0§0§0.5§10¶".encode("latin-1"),
                b"ID 17,END",
                b"BYE 17,END",
            ]
        )
    )
    at = draw(st.integers(0, len(valid)))
    return valid[:at] + b"9" * draw(st.integers(1, 5000)) + valid[at + 1 :]


def test_the_router_survives_fuzz_at_both_of_its_doors(router: Router, connect, raw):
    vehicle, driver = connect(16), connect(17)
    stats = router.stats

    def handled() -> int:
        return (
            stats.malformed
            + stats.routed
            + stats.unknown_destination
            + stats.pings
            + stats.not_joined
        )

    @settings(max_examples=80, deadline=None)
    @given(hostile(), st.booleans())
    def send(data: bytes, at_handshake_port: bool) -> None:
        before = handled() + stats.refused
        if at_handshake_port:
            raw.sendto(data, router.address)
        else:
            driver.send_raw(data)
        # every datagram is handled one way or another (a valid handshake from `raw`: joined)
        assert router.wait_until(
            lambda: handled() + stats.refused > before or len(router.modules) > 2, 2.0
        ), data

    send()
    assert not router.stopped.is_set()
    driver.send(FMVM(1, 2, 3, 0, 0, 0, 5, to=16))
    while (message := vehicle.next_message(timeout=2.0)) is not None:  # fuzz first, then ours
        if message == FMVM(1, 2, 3, 0, 0, 0, 5, to=16):
            break
    assert message == FMVM(1, 2, 3, 0, 0, 0, 5, to=16)


# -- who may join -------------------------------------------------------------------------------
def test_the_handshake_port_takes_only_allowed_peers(router: Router):
    stranger = BusClient(16, port=router.address[1], bind_host="127.0.0.2")  # not loopback's .1
    try:
        with pytest.raises(CouplingTimeout):
            stranger.connect(timeout=0.5)  # (repeated every 0.2 s: a few datagrams)
    finally:
        stranger.close()
    assert router.wait_until(lambda: router.listen.rejected >= 1, 2.0)  # (it may lag)
    report = router.report()
    assert report["not_allowed"] >= 1 and report["modules"] == {}
    assert report["malformed"] == 0 and report["refused"] == 0  # dropped, never answered


def test_an_allowed_host_or_exact_socket_may_join():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as exact:
        exact.bind(("127.0.0.3", 0))
        exact.settimeout(2.0)
        allow = allowlist(["127.0.0.2", f"127.0.0.3:{exact.getsockname()[1]}"], "127.0.0.1")
        with Router("127.0.0.1", 0, allow=allow).start() as router:
            client = BusClient(16, port=router.address[1], bind_host="127.0.0.2")
            assert client.connect(timeout=2.0).connected
            client.close()
            exact.sendto(b"ID 17,END", router.address)
            assert exact.recvfrom(100) == (b"ID 0,END", router.address)
            other = BusClient(18, port=router.address[1], bind_host="127.0.0.3")  # other port
            with pytest.raises(CouplingTimeout):
                other.connect(timeout=0.3)
            other.close()
            assert router.wait_until(lambda: router.report()["not_allowed"] >= 1, 2.0)


def test_allowlist_items_hosts_pairs_commas_and_every_problem():
    allow = allowlist(["localhost,127.0.0.5:7000", "10.1.2.3"], "0.0.0.0")
    assert allow == Allowlist.of(["127.0.0.1", "10.1.2.3"], [("127.0.0.5", 7000)])
    assert allowlist([], "10.0.0.5").hosts == {"127.0.0.1", "10.0.0.5"}
    with pytest.raises(ConfigError) as info:
        allowlist(["no.such.host.invalid", "127.0.0.1:99999", "127.0.0.1:x"], "127.0.0.1")
    assert len(info.value.problems) == 3
    assert "--allow 'no.such.host.invalid'" in info.value.problems[0]
    assert info.value.problems[1] == "--allow '127.0.0.1:99999': port '99999' is not 1..65535"


# -- a forger on the router's host --------------------------------------------------------------
def test_a_forged_answer_from_another_port_is_not_believed(raw):
    """The handshake goes to a silent 'router'; a forger answers from another port: ignored."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as silent:
        silent.bind(("127.0.0.1", 0))
        silent.settimeout(2.0)
        client = BusClient(16, port=silent.getsockname()[1])
        try:
            for _ in range(20):  # the forger floods the module's port with answers
                raw.sendto(b"ID 0,END", client.address)
            with pytest.raises(CouplingTimeout):
                client.connect(timeout=0.5)
            assert not client.connected
            assert client.rejected == 20  # each forged answer dropped and counted
            assert silent.recvfrom(100)[0] == b"ID 16,END"  # the real address got the join
        finally:
            client.close()


def test_a_joined_module_obeys_only_its_router(router: Router, connect, raw):
    vehicle, driver = connect(16), connect(17)
    raw.sendto("§4§16§0+255§0§0§0¶".encode("latin-1"), vehicle.address)  # forged throttle
    raw.sendto(b"ID 99,END", vehicle.address)
    driver.send(IMFM(1, 2, 3, 0, to=16))
    assert vehicle.next_message(timeout=2.0) == IMFM(1, 2, 3, 0, to=16)
    assert vehicle.next_message(timeout=0.2) is None  # the forged one never arrived
    assert vehicle.router_id == 0 and vehicle.stats.malformed == 0
    vehicle.send(FMVM(0, 0, 0, 0, 0, 0, 0, to=17))  # and our poses still go to the router
    assert driver.next_message(timeout=2.0) == FMVM(0, 0, 0, 0, 0, 0, 0, to=17)
    raw.settimeout(0.2)
    with pytest.raises(TimeoutError):
        raw.recvfrom(100)  # nothing reached the forger


def test_a_long_codec_router_survives_a_5000_digit_parameter(raw):
    with Router("127.0.0.1", 0, codec=Codec(max_length=65000)).start() as router:
        client = BusClient(17, port=router.address[1], codec=Codec(max_length=65000))
        client.connect(timeout=2.0)
        client.send_raw("§4§16§0+".encode("latin-1") + DIGITS + "§2§3§0¶".encode("latin-1"))
        assert router.wait_until(lambda: router.stats.malformed == 1, 2.0)
        assert router.stats.malformed_by_reason == {"number": 1}
        client.close()


def test_nothing_a_router_sends_raises_past_a_modules_decoder(raw):
    """A hostile 'router' (a bare socket) answers the handshake, then sends fuzz: all counted."""
    client = BusClient(20, port=raw.getsockname()[1], monitor=True)
    try:
        joined: list[tuple[str, int]] = []

        def answer() -> None:
            data, module = raw.recvfrom(100)
            raw.sendto(b"ID 0,END", module)
            joined.append(module)

        answering = threading.Thread(target=answer, daemon=True)
        answering.start()
        client.connect(timeout=2.0)
        answering.join(2.0)
        module = joined[0]

        @settings(max_examples=150, deadline=None)
        @given(hostile().map(lambda d: d if d[:1] != b"\xa7" or len(d) % 2 else b"COPY 1," + d))
        def send(data: bytes) -> None:
            before = client.stats.malformed + client.stats.received + client.stats.copies
            raw.sendto(data, module)
            deadline = time.monotonic() + 2.0
            while time.monotonic() < deadline:  # every datagram is taken one way or another
                client.wait(0.05)
                taken = client.stats.malformed + client.stats.received + client.stats.copies
                if taken > before or data.startswith((b"ID ", b"REFUSED ")):
                    break
            while client.next_message() or client.next_copy():
                pass

        send()
        assert client.connected and client.stats.malformed > 0
    finally:
        client.close()
