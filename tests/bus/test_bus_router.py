"""The router and the client over real UDP on loopback."""

from __future__ import annotations

import socket

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vcosim.bus.catalogue import FMVM, IMFM, Shutdown, SoundOnce
from vcosim.bus.client import BusClient
from vcosim.bus.codec import Codec
from vcosim.bus.router import Router
from vcosim.errors import ConfigError, CouplingTimeout, ProtocolError


def where(client: BusClient) -> str:
    return "{}:{}".format(*client.address)


def refusal(port: int, module_id: int) -> str:
    """The error text of a refused handshake."""
    client = BusClient(module_id, port=port)
    try:
        with pytest.raises(ProtocolError) as info:
            client.connect(timeout=2.0)
    finally:
        client.close()
    return str(info.value)


def test_handshake_is_answered_from_a_socket_of_the_modules_own(router: Router):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.settimeout(2.0)
        sock.sendto(b"ID 17,END", router.address)
        data, sender = sock.recvfrom(100)
        assert data == b"ID 0,END"
        assert sender == router.address  # the module hears the address it sent to...
        own = router.modules[17].link.sock  # ...from a socket of its own, sharing it
        assert own is not router.listen.sock and own.getsockname() == router.address
        assert own.getpeername() == sock.getsockname()
        assert router.modules[17].address == sock.getsockname()
        sock.sendto(b"ID 17,END", router.address)  # a repeated handshake: answered again
        assert sock.recvfrom(100) == (b"ID 0,END", sender)


def test_routing_among_three_modules(connect, routed):
    vehicle, driver, viewer = connect(16), connect(17), connect(18)
    assert vehicle.router_id == 0
    driver.send(IMFM(100, 150, 156, 0, to=16, enqueue=True))
    vehicle.send(FMVM(1, 2, 3, 0, 0, 0.5, 10, to=18))
    viewer.send(SoundOnce("horn.wav", 200, to=17))
    driver.send(IMFM(0, 0, 128, 1, to=16, enqueue=True))
    routed(4)
    assert vehicle.next_message() == IMFM(100, 150, 156, 0, to=16, enqueue=True)
    assert vehicle.next_message() == IMFM(0, 0, 128, 1, to=16, enqueue=True)
    assert viewer.next_message() == FMVM(1, 2, 3, 0, 0, 0.5, 10, to=18)
    assert driver.next_message() == SoundOnce("horn.wav", 200, to=17)
    assert all(c.next_message() is None for c in (vehicle, driver, viewer))


def test_enqueue_appends_and_replace_keeps_the_latest_unread_value(connect, routed):
    vehicle, driver = connect(16), connect(17)
    sent = [
        IMFM(10, 0, 128, 0, to=16),  # replaced by the later IMFMs
        SoundOnce("start.wav", 255, to=16),  # events queue
        IMFM(20, 0, 128, 0, to=16),
        IMFM(0, 0, 128, 1, to=16, enqueue=True),  # an enqueued one is never replaced
        SoundOnce("gear.wav", 255, to=16),
        IMFM(30, 0, 128, 0, to=16),
        FMVM(0, 0, 0, 0, 0, 0, 0, to=16),  # another type: queues
    ]
    for message in sent:
        driver.send(message)
    routed(len(sent))
    received = []
    while (m := vehicle.next_message()) is not None:
        received.append(m)
    assert received == [sent[5], sent[1], sent[3], sent[4], sent[6]]
    assert vehicle.stats.replaced == 2 and vehicle.stats.received == 7


def test_an_id_already_taken_is_refused_with_a_clear_error(router: Router, connect, routed):
    first = connect(16)
    port = router.address[1]
    assert refusal(port, 16) == (
        f"the bus router at 127.0.0.1:{port} refused module id 16: "
        f"id 16 is already taken by the module at {where(first)}"
    )
    assert refusal(port, 0).endswith("refused module id 0: id 0 is the router's own")
    connect(17).send(IMFM(1, 2, 3, 0, to=16))  # the first module 16 is not disturbed
    routed(1)
    assert first.next_message(timeout=2.0) == IMFM(1, 2, 3, 0, to=16)
    assert router.stats.refused == 2


def test_a_full_router_refuses_more_modules():
    with Router("127.0.0.1", 0, max_modules=2).start() as router:
        port = router.address[1]
        with BusClient(1, port=port), BusClient(2, port=port):
            assert refusal(port, 3) == (
                f"the bus router at 127.0.0.1:{port} refused module id "
                "3: the router is full (2 modules)"
            )


def test_at_least_ten_modules(connect, routed):
    modules = [connect(i) for i in range(1, 13)]
    for i, module in enumerate(modules):
        module.send(IMFM(i, 0, 128, 0, to=modules[(i + 1) % 12].module_id))
    routed(12)
    for i, module in enumerate(modules):
        assert module.next_message() == IMFM((i - 1) % 12, 0, 128, 0, to=module.module_id)


def test_valid_messages_pass_byte_for_byte_however_they_are_spelt(router: Router, connect, routed):
    driver = connect(17)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as vehicle:  # a module by hand
        vehicle.bind(("127.0.0.1", 0))
        vehicle.settimeout(2.0)
        vehicle.sendto(b"ID 16,END", router.address)
        assert vehicle.recv(100) == b"ID 0,END"
        sent = [
            "§4§16§0+100§150§156§0¶",  # as ``encode`` writes it: the router's quick path
            "§4§016§0+007§150§156§0¶",  # valid all the same: the decoder's path
            "§6§16§0+1e-300§2§3§4§5§6§7¶",
        ]
        for text in sent:
            driver.send_raw(text.encode("latin-1"))
        driver.send_raw("§4§16§0+256§0§128§0¶".encode("latin-1"))  # plain-looking, out of range
        routed(3)
        assert [vehicle.recv(300).decode("latin-1") for _ in sent] == sent
        assert router.wait_until(lambda: router.stats.malformed == 1, 2.0)
        assert router.stats.malformed_by_reason == {"parameters": 1}
        assert router.modules[16].sent == 3 and router.modules[17].received == 4 + 1  # (+ ping)


def test_malformed_messages_are_counted_and_reported_with_the_senders_address(
    router: Router, connect, routed
):
    vehicle, driver = connect(16), connect(17)
    driver.send_raw(b"hello")
    driver.send_raw("§4§16§0+1§2§3¶".encode("latin-1"))
    driver.send(IMFM(1, 2, 3, 0, to=16))  # the router carries on
    routed(1)
    assert vehicle.next_message() == IMFM(1, 2, 3, 0, to=16)
    assert vehicle.next_message() is None
    sender = f"module 17 at {where(driver)}"
    assert router.stats.malformed == 2
    assert router.stats.malformed_by_sender == {sender: 2}
    assert router.stats.malformed_by_reason == {"start": 1, "parameters": 1}
    assert list(router.stats.problems) == [  # the first of each kind and sender
        f"malformed message from {sender}: message does not begin with '§': 'hello'",
        f"malformed message from {sender}: IMFM needs 4 parameter(s) (throttle, brake, "
        "steering, shift), got 3: '§4§16§0+1§2§3¶'",
    ]
    driver.send_raw("§4§16§0+1§2§3¶".encode("latin-1"))
    driver.send_raw(b"hello again")
    assert router.wait_until(lambda: router.stats.malformed == 4, 2.0)
    assert len(router.stats.problems) == 2  # the rest only counted


def test_garbage_at_the_handshake_port_is_counted_with_its_address(router: Router):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.sendto(b"HELLO?", router.address)
        address = "{}:{}".format(*sock.getsockname())
        assert router.wait_until(lambda: router.stats.malformed == 1, 2.0)
    assert router.stats.problems[-1] == (
        f"malformed message from {address}: not a handshake (expected 'ID <n>,END'): b'HELLO?'"
    )


def test_a_message_to_an_unknown_id_is_counted_and_reported(router: Router, connect):
    driver = connect(17)
    driver.send(FMVM(0, 0, 0, 0, 0, 0, 0, to=99))
    driver.send(IMFM(0, 0, 128, 0, to=0))
    assert router.wait_until(lambda: router.stats.unknown_destination == 2, 2.0)
    assert router.stats.unknown_by_id == {99: 1, 0: 1}
    assert list(router.stats.problems) == [
        f"FMVM from module 17 at {where(driver)} to unknown module 99: no module has that id; "
        "not passed on",
        f"IMFM from module 17 at {where(driver)} to unknown module 0: the router handles only "
        "Shutdown; not passed on",
    ]


def test_messages_at_and_over_the_maximum_length(router: Router, connect, routed):
    sound, driver = connect(19), connect(17)
    head = len(Codec().encode(SoundOnce("x", 255, to=19))) - 1
    exact = SoundOnce("x" * (256 - head), 255, to=19)
    driver.send(exact)
    routed(1)
    assert sound.next_message() == exact
    too_long = Codec(max_length=300).encode(SoundOnce("x" * (257 - head), 255, to=19))
    driver.send_raw(too_long)
    assert router.wait_until(lambda: router.stats.malformed == 1, 2.0)
    assert router.stats.problems[-1].endswith("message of 257 bytes is longer than the maximum 256")
    with pytest.raises(ProtocolError, match="is 257 bytes, more than the maximum 256"):
        driver.send(SoundOnce("x" * (257 - head), 255, to=19))


def test_a_monitor_gets_a_copy_of_every_message_with_its_sender(connect, routed, collect):
    logger = collect(connect(20, monitor=True))
    vehicle, driver = connect(16), connect(17)
    driver.send(IMFM(1, 2, 3, 0, to=16))
    vehicle.send(FMVM(1, 2, 3, 4, 5, 6, 7, to=18))  # nobody is 18: still copied
    driver.send(SoundOnce("horn.wav", 9, to=20))  # to the monitor itself: copied too
    assert logger.wait_for(lambda copies: len(copies) == 3)
    # (each sender's messages keep their order; between senders the router takes them as
    # they come)
    assert [c.message for c in logger.copies if c.sender == 17] == [
        IMFM(1, 2, 3, 0, to=16),
        SoundOnce("horn.wav", 9, to=20),
    ]
    assert [c.message for c in logger.copies if c.sender == 16] == [
        FMVM(1, 2, 3, 4, 5, 6, 7, to=18)
    ]
    assert vehicle.next_message(timeout=2.0) == IMFM(1, 2, 3, 0, to=16)


def test_shutdown_to_the_router_reaches_every_module_and_ends_the_router(router: Router, connect):
    modules = [connect(i) for i in (16, 17, 18, 20)]
    modules[1].send(Shutdown(to=0))
    assert router.stopped.wait(2.0)
    for module in modules:
        assert module.next_message(timeout=2.0) == Shutdown(to=module.module_id)
    assert router.stats.shutdowns == 1


def test_a_module_that_leaves_frees_its_id(router: Router, connect):
    connect(16).close()
    assert router.wait_until(lambda: 16 not in router.modules, 2.0)
    assert connect(16).connected


def test_a_module_whose_port_closed_is_dropped(router: Router, connect):
    vehicle, driver = connect(16), connect(17)
    vehicle.sock.close()  # a crash: no goodbye
    driver.send(IMFM(1, 2, 3, 0, to=16))
    driver.send(IMFM(1, 2, 3, 0, to=16))
    assert router.wait_until(lambda: 16 not in router.modules, 2.0)
    assert router.stats.gone == 1


def test_no_router_is_a_clear_timeout():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, silent: nobody answers
        client = BusClient(16, port=port)
        with pytest.raises(CouplingTimeout) as info:
            client.connect(timeout=0.3)
        client.close()
    assert str(info.value) == (
        f"no answer from the bus router at 127.0.0.1:{port} within 0.3 s "
        "(is `vcosim bus` running there?)"
    )


def test_a_handshake_that_cannot_be_sent_says_why_it_timed_out():
    client = BusClient(16, port=0)  # no router can listen on port 0
    with pytest.raises(CouplingTimeout) as info:
        client.connect(timeout=0.1)
    client.close()
    assert str(info.value) == (
        "no answer from the bus router at 127.0.0.1:0 within 0.1 s "
        "(is `vcosim bus` running there?; sending failed: [Errno 22] Invalid argument)"
    )


def test_a_module_whose_router_has_gone_knows_it(router: Router, connect):
    client = connect(16)
    router.stop()
    assert router.stopped.wait(2.0)
    assert client.send(IMFM(1, 2, 3, 0, to=17))  # the first finds the port closed...
    assert client.next_message(timeout=0.5) is None  # ...and the refusal comes back
    assert client.router_lost
    assert client.last_error == "receive failed: [Errno 111] Connection refused"


def test_a_port_in_use_is_a_clear_error(router: Router):
    with pytest.raises(ConfigError, match=f"cannot listen on 127.0.0.1:{router.address[1]}"):
        Router("127.0.0.1", router.address[1])


def test_the_router_never_crashes_on_input(router: Router, connect):
    client = connect(17)
    stats = router.stats

    @settings(max_examples=60, deadline=None)
    @given(st.binary(min_size=1, max_size=300))
    def send(data: bytes) -> None:
        before = stats.malformed + stats.routed + stats.unknown_destination
        client.send_raw(data)
        assert router.wait_until(
            lambda: stats.malformed + stats.routed + stats.unknown_destination > before, 2.0
        )

    send()
    assert not router.stopped.is_set() and 17 in router.modules
