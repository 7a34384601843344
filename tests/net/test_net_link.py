"""The datagram link over real UDP on loopback: bind, allowlist, counters, reports, waiting."""

from __future__ import annotations

import errno
import logging
import socket
import time
from collections.abc import Callable, Iterator

import pytest

from vcosim.contracts.transport import Endpoint
from vcosim.net import (
    Address,
    Allowlist,
    BindError,
    DatagramLink,
    Link,
    Reports,
    parse_allow,
)


@pytest.fixture
def sockets() -> Iterator[Callable[..., socket.socket]]:
    """Plain UDP sockets bound on loopback (any 127.x host), closed at the end."""
    made: list[socket.socket] = []

    def make(host: str = "127.0.0.1") -> socket.socket:
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.bind((host, 0))
        made.append(sock)
        return sock

    yield make
    for sock in made:
        sock.close()


@pytest.fixture
def links() -> Iterator[Callable[..., DatagramLink]]:
    """Datagram links bound to an ephemeral loopback port, closed at the end."""
    made: list[DatagramLink] = []

    def make(**options: object) -> DatagramLink:
        link = DatagramLink(("127.0.0.1", 0), **options)  # type: ignore[arg-type]
        made.append(link)
        return link

    yield make
    for link in made:
        link.close()


def take(link: DatagramLink, timeout: float = 2.0) -> tuple[bytes, Address]:
    """The next accepted datagram, waited for (a condition, not a sleep)."""
    found: list[tuple[bytes, Address]] = []

    def attempt() -> bool:
        got = link.receive_bytes()
        if got is not None:
            found.append(got)
        return got is not None

    assert link.wait_for(attempt, timeout), "no datagram arrived"
    return found[0]


def warnings(caplog: pytest.LogCaptureFixture, text: str) -> int:
    return sum(text in r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)


def test_a_taken_address_is_a_bind_error_that_names_it(links):
    taken = links().address
    with pytest.raises(OSError) as info:
        DatagramLink(taken)
    assert isinstance(info.value, BindError)
    assert info.value.errno == errno.EADDRINUSE
    assert info.value.strerror == "Address already in use"  # what callers quote today
    assert str(info.value) == f"cannot bind 127.0.0.1:{taken[1]}: Address already in use"


def test_datagrams_from_hosts_not_allowed_are_dropped_counted_and_reported_once(
    links, sockets, caplog
):
    link = links(allow=Allowlist.of(["127.0.0.1"]), name="probe")
    stranger, friend = sockets("127.0.0.2"), sockets()
    for i in range(3):
        stranger.sendto(b"intruder %d" % i, link.address)
    friend.sendto(b"hello", link.address)
    with caplog.at_level(logging.WARNING, logger="vcosim.net"):
        assert take(link) == (b"hello", friend.getsockname())
    assert link.rejected == 3
    host, port = stranger.getsockname()
    line = f"probe: datagram from {host}:{port} dropped: not an allowed peer (127.0.0.1)"
    assert warnings(caplog, line) == 1
    assert warnings(caplog, "further ones are only counted") == 1


def test_an_exact_peer_pair_admits_that_socket_only(links, sockets, caplog):
    friend, neighbour = sockets(), sockets()  # the same host, another port
    pair = friend.getsockname()
    link = links(allow=Allowlist.of(peers=[pair]))
    neighbour.sendto(b"me too", link.address)
    friend.sendto(b"hello", link.address)
    with caplog.at_level(logging.WARNING, logger="vcosim.net"):
        assert take(link) == (b"hello", pair)
    assert link.rejected == 1
    assert warnings(caplog, f"not an allowed peer ({pair[0]}:{pair[1]})") == 1


def test_hosts_and_pairs_together_admit_either():
    allow = Allowlist.of(["10.0.0.1"], [("127.0.0.1", 4000)])
    assert allow.admits(("10.0.0.1", 1)) and allow.admits(("127.0.0.1", 4000))
    assert not allow.admits(("127.0.0.1", 4001)) and not allow.admits(("10.0.0.2", 4000))
    assert str(allow) == "10.0.0.1, 127.0.0.1:4000"
    assert str(Allowlist()) == "nobody"


def test_allow_takes_hosts_and_exact_sockets_the_same_way_everywhere():
    allow, problems = parse_allow(["10.0.0.1,localhost:4000", " 127.0.0.2 "])
    assert allow == Allowlist.of(["10.0.0.1", "127.0.0.2"], [("127.0.0.1", 4000)])
    assert problems == []
    _, problems = parse_allow(["127.0.0.1:0", "127.0.0.1:x", "no.such.host.invalid"], "--peer")
    assert problems[:2] == [
        "--peer '127.0.0.1:0': port '0' is not 1..65535",
        "--peer '127.0.0.1:x': port 'x' is not 1..65535",
    ]
    assert problems[2].startswith("--peer 'no.such.host.invalid': host")


def test_without_an_allowlist_anyone_may_send(links, sockets):
    link = links()
    stranger = sockets("127.0.0.2")
    stranger.sendto(b"hi", link.address)
    assert take(link) == (b"hi", stranger.getsockname())
    assert link.rejected == 0


def test_malformed_datagrams_are_counted_by_reason_and_logged_once_per_reason_and_host(
    links, caplog
):
    link = links(name="probe")
    with caplog.at_level(logging.WARNING, logger="vcosim.net"):
        for _ in range(3):
            link.count_malformed("short", ("127.0.0.1", 5000), "3 bytes")
        link.count_malformed("short", ("127.0.0.2", 5000), "2 bytes")
        link.count_malformed("bad_magic", ("127.0.0.1", 5001), "b'XX'")
    assert link.malformed == {"short": 4, "bad_magic": 1}
    texts = [r.getMessage() for r in caplog.records]
    assert texts == [
        "probe: malformed datagram from 127.0.0.1:5000 dropped (3 bytes) "
        "(further ones are only counted)",
        "probe: malformed datagram from 127.0.0.2:5000 dropped (2 bytes) "
        "(further ones are only counted)",
        "probe: malformed datagram from 127.0.0.1:5001 dropped (b'XX') "
        "(further ones are only counted)",
    ]


def test_reports_log_the_first_of_each_kind_and_peer(caplog):
    reports = Reports(logging.getLogger("vcosim.test"), "face")
    with caplog.at_level(logging.WARNING, logger="vcosim.test"):
        assert reports("send", "h1", "one") is True
        assert reports("send", "h1", "two") is False
        assert reports("send", "h2", "three") is True
        assert reports("receive", "h1", "four") is True
    assert [r.getMessage() for r in caplog.records] == [
        f"face: {text} (further ones are only counted)" for text in ("one", "three", "four")
    ]


def test_receive_fills_one_reusable_buffer_and_receive_bytes_copies(links, sockets):
    link = links(size=16)
    buffer = link.buffer
    peer = sockets()
    peer.sendto(b"first", link.address)
    assert link.wait(2.0)
    assert link.receive() == (5, peer.getsockname())
    assert bytes(link.buffer[:5]) == b"first" and link.buffer is buffer
    assert link.receive() is None  # nothing else waits: no blocking
    peer.sendto(b"second", link.address)
    data, _ = take(link)
    peer.sendto(b"THIRD!", link.address)
    take(link)
    assert data == b"second" and bytes(buffer[:6]) == b"THIRD!"


def test_a_datagram_longer_than_the_buffer_shows_by_its_size(links, sockets):
    link = links(size=9)
    sockets().sendto(b"x" * 20, link.address)
    assert link.wait(2.0)
    got = link.receive()
    assert got is not None and got[0] == 9


def test_a_refusal_from_a_connected_peer_that_has_gone_is_counted_and_kept(links, sockets):
    gone = sockets()
    address = gone.getsockname()
    gone.close()
    link = links(peer=address, connect=True)
    assert link.send(b"anyone?")
    assert link.wait(2.0)  # the ICMP "port unreachable" makes the socket readable
    assert link.receive() is None
    assert link.refused == 1
    assert isinstance(link.take_error(), ConnectionRefusedError)
    assert link.take_error() is None  # handed out once


def test_a_failed_send_is_counted_and_kept_never_raised(links, sockets):
    gone = sockets()
    address = gone.getsockname()
    gone.close()
    link = links(peer=address, connect=True)
    assert link.send(b"anyone?")
    assert link.wait(2.0)
    assert link.send(b"still there?") is False  # the refusal comes back on the next send
    assert link.send_errors == 1
    assert isinstance(link.take_error(), ConnectionRefusedError)
    nowhere = links()
    assert nowhere.send(b"x") is False  # neither a peer nor an address
    assert nowhere.take_error().errno == errno.EDESTADDRREQ  # type: ignore[union-attr]


def test_send_goes_to_the_peer_or_to_the_address_given(links, sockets):
    peer, other = sockets(), sockets()
    link = links(peer=peer.getsockname())
    peer.settimeout(2.0)
    other.settimeout(2.0)
    assert link.send(b"to the peer") and link.send(b"to the other", other.getsockname())
    assert peer.recvfrom(100) == (b"to the peer", link.address)
    assert other.recvfrom(100) == (b"to the other", link.address)


def test_a_connected_link_hears_only_its_peer(links, sockets):
    peer, neighbour = sockets(), sockets()
    link = links(peer=peer.getsockname(), connect=True)
    neighbour.sendto(b"ignored", link.address)
    peer.sendto(b"heard", link.address)
    assert take(link) == (b"heard", peer.getsockname())
    assert link.receive() is None and link.rejected == 0  # the kernel dropped it


def test_wait_sleeps_until_a_datagram_waits_or_the_timeout(links, sockets):
    link = links()
    start = time.perf_counter()
    assert link.wait(0.02) is False
    assert time.perf_counter() - start >= 0.019
    sockets().sendto(b"x", link.address)
    assert link.wait(2.0) is True
    link.close()
    assert link.wait(2.0) is False


def test_wait_for_receives_again_and_again_while_spinning(links, sockets):
    link = links()
    peer = sockets()
    calls = 0

    def attempt() -> bool:
        nonlocal calls
        calls += 1
        if calls == 3:
            peer.sendto(b"now", link.address)
        return link.receive() is not None

    start = time.perf_counter()
    assert link.wait_for(attempt, timeout=5.0, spin=5.0)
    assert calls == 3 and time.perf_counter() - start < 5.0  # tried again and again


def test_ready_says_whether_a_datagram_waits_without_receiving_it(links, sockets):
    link = links()
    assert link.ready() is False
    sockets().sendto(b"x", link.address)
    assert link.wait(2.0)
    assert link.ready() is True and link.ready() is True  # still there
    assert link.receive_bytes() is not None and link.ready() is False
    link.close()
    assert link.ready() is True  # closed: a receive now reports the end


def test_wait_for_without_spin_sleeps_and_tries_once_per_wake_up(links, sockets):
    link = links()
    peer = sockets()
    calls = 0

    def attempt() -> bool:
        nonlocal calls
        calls += 1
        if calls == 1:  # the first try finds nothing; the datagram then wakes the sleep
            peer.sendto(b"now", link.address)
            return False
        return link.receive() is not None

    assert link.wait_for(attempt, timeout=5.0)
    assert calls == 2


def test_wait_for_gives_up_at_the_timeout_and_at_once_when_closed(links):
    link = links()
    start = time.perf_counter()
    assert link.wait_for(lambda: False, timeout=0.03, spin=0.01) is False
    assert time.perf_counter() - start >= 0.029
    link.close()
    start = time.perf_counter()
    assert link.wait_for(lambda: False, timeout=5.0) is False
    assert time.perf_counter() - start < 1.0


def test_close_is_safe_twice_and_ends_receiving_and_sending(links):
    link = links(peer=("127.0.0.1", 9))
    with link:
        assert not link.closed
    assert link.closed
    link.close()
    assert link.receive() is None and link.receive_bytes() is None
    assert link.send(b"x") is False and link.send_errors == 1


def test_every_face_link_is_a_link(links):
    assert isinstance(links(), Link)
    with Endpoint(("127.0.0.1", 0)) as endpoint:
        assert isinstance(endpoint, Link)
