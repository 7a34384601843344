"""The tight coupling's UDP link: exact-size float64 messages, counted drops, the spinning wait."""

from __future__ import annotations

import contextlib
import logging
import signal
import socket
import time
from collections.abc import Iterator

import numpy as np
import pytest

from vcosim.net import Allowlist
from vcosim.tight import native, transport
from vcosim.tight.transport import ANSWERED, TAKEN, UdpLink


@pytest.fixture
def peer() -> Iterator[socket.socket]:
    """A plain UDP socket on loopback standing for the other end."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    sock.settimeout(2.0)
    yield sock
    sock.close()


@pytest.fixture(
    params=[(False, 0.05), (True, 0.05), (True, 0.0)], ids=["python", "native", "native-blocking"]
)
def link(peer: socket.socket, request: pytest.FixtureRequest) -> Iterator[UdpLink]:
    """A link expecting 4 values from ``peer``, spinning 50 ms before it sleeps (or not).

    Each test runs with Python's socket calls, with the compiled look (``tight.native``),
    and with the compiled sleeping wait alone (spin 0, the blocking lock-step's).
    """
    native_calls, spin = request.param
    with_peer = UdpLink(
        ("127.0.0.1", 0), peer.getsockname(), 4, spin=spin, name="probe", native=native_calls
    )
    yield with_peer
    with_peer.close()


def test_a_message_is_read_in_place_and_others_sizes_are_dropped_and_counted(
    link: UdpLink, peer: socket.socket, caplog: pytest.LogCaptureFixture
):
    message = link.message
    peer.sendto(np.arange(3.0).tobytes(), link.address)  # one value short
    peer.sendto(np.arange(5.0).tobytes(), link.address)  # one too many
    peer.sendto(np.array([7.0, 1.5, -2.0, 0.25]).tobytes(), link.address)
    with caplog.at_level(logging.WARNING, logger="vcosim.tight"):
        assert link.wait(2.0)
    np.testing.assert_array_equal(message, [7.0, 1.5, -2.0, 0.25])
    assert link.message is message and link.sender == peer.getsockname()
    assert link.malformed == 2 and link.rejected == 0
    host, port = peer.getsockname()
    assert [r.getMessage() for r in caplog.records] == [
        f"probe: malformed datagram from {host}:{port} dropped (24 bytes, expected 32) "
        "(further ones are only counted)"
    ]


def test_messages_go_to_the_peer_or_to_the_address_given(link: UdpLink, peer: socket.socket):
    link.send(np.array([1.0, 2.0]))
    assert peer.recvfrom(64) == (np.array([1.0, 2.0]).tobytes(), link.address)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as other:
        other.bind(("127.0.0.1", 0))
        other.settimeout(2.0)
        link.send(np.array([3.0]), other.getsockname())
        assert other.recv(64) == np.array([3.0]).tobytes()
        link.peer = other.getsockname()
        link.send(np.array([4.0]))
        assert other.recv(64) == np.array([4.0]).tobytes()


def test_a_failed_send_is_counted_and_logged_once_not_raised(
    link: UdpLink, caplog: pytest.LogCaptureFixture
):
    link.peer = ("127.0.0.1", 0)  # no one can be sent to there
    with caplog.at_level(logging.WARNING, logger="vcosim.tight"):
        link.send(np.zeros(4))
        link.send(np.zeros(4))
    assert link.send_errors == 2
    assert [r.getMessage() for r in caplog.records] == [
        "probe: sending to 127.0.0.1:0 failed: [Errno 22] Invalid argument "
        "(further ones are only counted)"
    ]


def test_wait_gives_up_after_the_timeout_and_poll_never_waits(link: UdpLink):
    start = time.perf_counter()
    assert link.wait(0.08) is False  # spins (50 ms), then sleeps the rest
    assert time.perf_counter() - start >= 0.079
    assert link.poll() is False


def test_a_taken_port_is_an_os_error_naming_it(link: UdpLink, peer: socket.socket):
    with pytest.raises(OSError, match=f"cannot bind 127.0.0.1:{link.address[1]}: Address"):
        UdpLink(link.address, peer.getsockname(), 4)


def test_strangers_are_dropped_and_counted_and_a_closed_link_takes_nothing(
    link: UdpLink, peer: socket.socket
):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as stranger:
        stranger.bind(("127.0.0.2", 0))
        for _ in range(3):
            stranger.sendto(np.ones(4).tobytes(), link.address)
        peer.sendto(np.full(4, 2.0).tobytes(), link.address)
        assert link.wait(2.0)
    np.testing.assert_array_equal(link.message, np.full(4, 2.0))
    assert link.rejected == 3 and link.malformed == 0 and link.sender == peer.getsockname()
    peer.sendto(np.full(4, 3.0).tobytes(), link.address)
    link.close()
    assert link.poll() is False and link.wait(0.5) is False


def test_a_pinned_link_hears_only_its_peer_until_unpinned(link: UdpLink, peer: socket.socket):
    """Before a pin any port of the peer's host may send (BeamNG's components send from a
    second socket); after it only the pinned sender; ``unpin`` (a reset) opens it again."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as other:
        other.bind(("127.0.0.1", 0))
        other.sendto(np.full(4, 1.0).tobytes(), link.address)
        assert link.wait(2.0) and link.sender == other.getsockname()
        link.pin()
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as third:
            third.sendto(np.full(4, 9.0).tobytes(), link.address)  # another port: dropped
        other.sendto(np.full(4, 3.0).tobytes(), link.address)
        assert link.wait(2.0) and link.message[0] == 3.0 and link.rejected == 1
        link.unpin()
        peer.sendto(np.full(4, 5.0).tobytes(), link.address)
        assert link.wait(2.0) and link.message[0] == 5.0 and link.sender == peer.getsockname()


def test_the_peers_own_address_takes_the_pin_from_the_first_sender(
    link: UdpLink, peer: socket.socket
):
    """The first answer is not a licence (issue 45, A): the configured address (where the
    peer listens; nobody else can send from it while the peer holds it) outranks the port
    that spoke first, and once heard it is the only one admitted, after a reset too."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as other:
        other.bind(("127.0.0.1", 0))
        other.sendto(np.full(4, 1.0).tobytes(), link.address)
        assert link.wait(2.0) and link.sender == other.getsockname()
        link.pin()
        peer.sendto(np.full(4, 2.0).tobytes(), link.address)
        other.sendto(np.full(4, 3.0).tobytes(), link.address)
        assert link.wait(2.0) and link.message[0] == 2.0 and link.taken_over
        assert link.pinned == link.sender == peer.getsockname() and link.takeovers == 1
        assert not link.poll() and link.rejected == 1  # (loopback: 3.0 is in, and dropped)
        link.unpin()
        other.sendto(np.full(4, 4.0).tobytes(), link.address)
        peer.sendto(np.full(4, 5.0).tobytes(), link.address)
        assert link.wait(2.0) and link.message[0] == 5.0 and link.rejected == 2


def test_an_exact_link_hears_only_the_peers_address_and_the_allowed(peer: socket.socket):
    with (
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as allowed,
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as other,
    ):
        allowed.bind(("127.0.0.1", 0))
        exact = UdpLink(
            ("127.0.0.1", 0),
            peer.getsockname(),
            4,
            allow=Allowlist.of(peers=[allowed.getsockname()]),
            exact=True,
        )
        other.sendto(np.full(4, 1.0).tobytes(), exact.address)  # same host, another port
        allowed.sendto(np.full(4, 2.0).tobytes(), exact.address)
        peer.sendto(np.full(4, 3.0).tobytes(), exact.address)
        assert exact.wait(2.0) and exact.message[0] == 2.0
        assert exact.wait(2.0) and exact.message[0] == 3.0
        assert exact.rejected == 1
        exact.close()


def test_the_awaited_message_of_the_pinned_peer_is_answered_the_moment_it_is_in(
    link: UdpLink, peer: socket.socket
):
    """With the compiled look the answer leaves before Python runs; only a whole id in
    (low, high] from the pinned peer gets one. Without it the caller answers (``TAKEN``)."""
    answered = ANSWERED if link._native is not None else TAKEN
    answer = np.array([9.0, 8.0])
    peer.sendto(np.array([1.0, 0.0, 0.0, 0.0]).tobytes(), link.address)
    assert link.wait_answer(2.0, answer, 0.0, 5.0) == TAKEN  # not pinned yet: judged first
    link.pin()
    for message_id, got in ((3.0, answered), (6.0, TAKEN), (2.5, TAKEN), (1.0, TAKEN)):
        peer.sendto(np.array([message_id, 0.0, 0.0, 0.0]).tobytes(), link.address)
        assert link.wait_answer(2.0, answer, 1.0, 5.0) == got
        assert link.message[0] == message_id and link.sender == peer.getsockname()
    peer.settimeout(0.05)
    answers = []
    with contextlib.suppress(TimeoutError):
        while True:
            answers.append(peer.recv(64))
    assert answers == ([answer.tobytes()] if answered == ANSWERED else [])


def test_a_failed_receive_is_counted_and_ends_the_wait(link: UdpLink):
    link.sock.close()  # the descriptor goes, under the link: the next receive fails
    assert link.wait(0.5) is False
    assert link.net.receive_errors == 1


def test_a_signal_handler_runs_while_the_link_sleeps_and_can_end_the_wait(link: UdpLink):
    """Ctrl-C (or SIGTERM turned into an exception) stops a blocked run: the sleep is cut
    short and the handler's exception leaves the wait."""

    class Interrupted(Exception):
        pass

    def interrupt(*_: object) -> None:
        raise Interrupted

    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.06)
        with pytest.raises(Interrupted):
            link.wait(30.0)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0.0)
        signal.signal(signal.SIGALRM, previous)


def test_the_compiled_look_speaks_the_links_codes():
    assert (native.TAKEN, native.ANSWERED, native.FAILED) == (
        transport._LOOK_TAKEN,
        transport._LOOK_ANSWERED,
        transport._LOOK_FAILED,
    )


def test_a_link_whose_compiled_look_cannot_load_keeps_to_python(
    monkeypatch: pytest.MonkeyPatch, peer: socket.socket, caplog: pytest.LogCaptureFixture
):
    def broken(*_: object) -> None:
        raise RuntimeError("no machine code here")

    monkeypatch.setattr(native, "Descriptor", broken)
    with caplog.at_level(logging.WARNING, logger="vcosim.tight"):
        link = UdpLink(("127.0.0.1", 0), peer.getsockname(), 4, name="probe", native=True)
    assert link._native is None
    assert caplog.messages == ["probe: receiving with Python's socket calls (no machine code here)"]
    peer.sendto(np.ones(4).tobytes(), link.address)
    assert link.wait_answer(2.0, np.zeros(2), 0.0, 5.0) == TAKEN and link.message[0] == 1.0
    link.close()
