"""Who keeps an id on the router: ghosts give way, silence expires, a restart gives ids back.

Over real UDP on loopback. The timeouts are short by configuration; every wait is on a
condition, and no assertion depends on how fast the machine is: the live modules here ping
twenty times within the router's timeout.
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from helpers.forks import vcosim_command
from helpers.loop import free_port
from vcosim.bus.catalogue import IMFM, Shutdown
from vcosim.bus.client import BusClient, Liveness
from vcosim.bus.router import Router
from vcosim.errors import ConfigError, ProtocolError

BRISK = Liveness(ping_after=0.1, lost_after=3.0, give_up_after=60.0)
"""A module that keeps alive ten times a second (the default is once a second)."""

TIMEOUT = 2.0
"""The routers' timeout where silence is under test: twenty of BRISK's pings."""


def raw_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    sock.settimeout(5.0)
    return sock


def where(address: tuple[str, int]) -> str:
    return f"{address[0]}:{address[1]}"


def ghost(router: Router, module_id: int) -> tuple[tuple[str, int], bytes]:
    """One handshake from a socket that closes once answered; (its address, the answer)."""
    with raw_socket() as sock:
        sock.sendto(b"ID %d,END" % module_id, router.address)
        return sock.getsockname(), sock.recv(200)


def pump(
    clients: list[BusClient],
    router: Router,
    condition: Callable[[], bool],
    each: Callable[[], object] = lambda: None,
) -> bool:
    """Poll the clients (as a module's loop does), ``each`` turn, until ``condition``, or 30 s."""
    deadline = time.monotonic() + 30.0
    while time.monotonic() < deadline:
        each()
        for client in clients:
            client.poll()
        if router.wait_until(condition, 0.02):
            return True
    return False


def confirmed(router: Router, module_id: int) -> bool:
    module = router.modules.get(module_id)
    return module is not None and module.confirmed


@pytest.fixture
def brisk() -> Iterator[Callable[..., BusClient]]:
    """Join modules that keep alive ten times a second; all closed at the end."""
    clients: list[BusClient] = []

    def make(router: Router, module_id: int) -> BusClient:
        client = BusClient(module_id, port=router.address[1], liveness=BRISK)
        clients.append(client)
        client.connect(timeout=5.0)
        assert router.wait_until(lambda: confirmed(router, module_id), 5.0)  # (its first ping)
        return client

    yield make
    for client in clients:
        client.close()


# -- ghosts --------------------------------------------------------------------------------------
def test_32_ghost_handshakes_leave_the_real_modules_in_control(brisk):
    with Router("127.0.0.1", 0, max_modules=32).start() as router:
        vehicle, driver = brisk(router, 16), brisk(router, 17)
        answers = [ghost(router, module_id) for module_id in range(100, 130)]
        answers += [ghost(router, 16), ghost(router, 17)]  # ...and two for the real ids
        assert [answer for _, answer in answers[:30]] == [b"ID 0,END"] * 30
        for (_, answer), module in zip(answers[30:], (vehicle, driver), strict=True):
            taken = f"already taken by the module at {where(module.address)}"
            assert answer.startswith(b"REFUSED ") and taken.encode() in answer, answer
        # A host keeps 16 modules unheard since their handshake (the seed's protocol: they
        # only listen); at the 17th each is probed, and the closed ones give way (a sweep's
        # probe may have found some before).
        ghosts = {m for m in router.modules if m >= 100}
        assert ghosts <= set(range(116, 130)) and router.stats.unheard == 30 - len(ghosts)
        newcomer = brisk(router, 18)  # not "the router is full"
        driver.send(IMFM(1, 2, 3, 0, to=16))
        assert vehicle.next_message(timeout=5.0) == IMFM(1, 2, 3, 0, to=16)
        assert newcomer.connected and {16, 17, 18} <= set(router.modules)
        report = router.report()
        assert report["unheard"] >= 16 and report["refused"] == 2
        gave_way = [line for line in report["expired_modules"] if "unheard since joining" in line]
        assert len(gave_way) == report["unheard"] and gave_way[0].startswith("module 100 at ")


def test_a_ghost_holding_an_id_gives_it_to_the_real_module(router: Router):
    address, answer = ghost(router, 16)  # e.g. a probe that asked for the vehicle's id
    assert answer == b"ID 0,END" and router.modules[16].address == address
    with BusClient(16, port=router.address[1]) as vehicle:  # not refused
        assert router.modules[16].address == vehicle.address
    assert router.stats.unheard == 1


def test_a_live_id_is_refused_to_a_new_address(router: Router):
    with BusClient(16, port=router.address[1]) as vehicle:
        assert router.wait_until(lambda: router.modules[16].confirmed, 5.0)  # its ping
        address, answer = ghost(router, 16)
        assert answer == (
            b"REFUSED 16,id 16 is already taken by the module at "
            + where(vehicle.address).encode()
            + b",END"
        )
        assert router.modules[16].address == vehicle.address


# -- silence ---------------------------------------------------------------------------------
def test_a_silent_module_expires_and_a_live_quiet_one_stays(brisk):
    with Router("127.0.0.1", 0, timeout=TIMEOUT).start() as router:
        quiet = brisk(router, 19)  # like the sound module: it polls, and never sends
        driver = brisk(router, 17)
        with raw_socket() as silent:  # joins, says a word, then nothing (its port stays open)
            silent.sendto(b"ID 18,END", router.address)
            assert silent.recv(100) == b"ID 0,END"
            silent.sendto(b"ID 18,END", router.address)
            assert router.wait_until(lambda: confirmed(router, 18), 5.0)
            drive = lambda: driver.send(IMFM(1, 2, 3, 0, to=19))  # noqa: E731
            assert pump([quiet, driver], router, lambda: 18 not in router.modules, drive)
            report = router.report()
            assert report["expired"] == 1 and report["gone"] == 0
            [line] = report["expired_modules"]
            assert line.startswith(f"module 18 at {where(silent.getsockname())}: silent for ")
            assert {17, 19} <= set(router.modules)  # the pinging ones are all still there
            # it heard the driver all along, sent nothing, and pinged to keep its id
            assert quiet.stats.sent == 0 and quiet.stats.received > 0 and quiet.stats.pings > 2
            later, answer = ghost(router, 18)  # the id is free for a new address
            assert answer == b"ID 0,END" and router.modules[18].address == later


def test_a_dropped_module_rejoins_with_its_next_ping(brisk):
    with Router("127.0.0.1", 0, timeout=TIMEOUT).start() as router:
        driver = brisk(router, 17)
        vehicle = BusClient(16, port=router.address[1], liveness=BRISK).connect(timeout=5.0)
        try:  # the vehicle stops polling (a long pause): dropped, its messages refused
            assert pump([driver], router, lambda: 16 not in router.modules)
            vehicle.send(IMFM(0, 0, 128, 0, to=17))  # (at the handshake port now)
            assert router.wait_until(lambda: router.stats.not_joined == 1, 5.0)
            assert pump([driver, vehicle], router, lambda: 16 in router.modules)
            assert router.modules[16].address == vehicle.address
            driver.send(IMFM(1, 2, 3, 0, to=16))
            assert vehicle.next_message(timeout=5.0) == IMFM(1, 2, 3, 0, to=16)
        finally:
            vehicle.close()


def test_a_module_in_one_long_wait_keeps_its_id():
    router = Router("127.0.0.1", 0, timeout=1.0).start()
    with router, BusClient(19, port=router.address[1], liveness=BRISK) as sound:
        assert router.wait_until(lambda: confirmed(router, 19), 5.0)
        deadline = time.monotonic() + 2.0  # twice the router's timeout: the replayer's pause
        while (left := deadline - time.monotonic()) > 0:
            sound.wait(left)  # (back early only with the answers to its own pings)
        assert sound.stats.received == 0 and sound.stats.pings > 2
        assert router.modules[19].address == sound.address and router.stats.expired == 0


def test_what_a_closed_module_sent_before_the_refusal_is_still_routed(router: Router, connect):
    vehicle = connect(16)
    with raw_socket() as module:
        module.sendto(b"ID 30,END", router.address)
        assert module.recv(100) == b"ID 0,END"
        with router._changed:  # the router waits while the module pings, sends and leaves
            module.sendto(b"ID 30,END", router.address)  # its answer will be refused...
            module.sendto("§4§16§0+1§2§3§0¶".encode("latin-1"), router.address)
            module.sendto(b"BYE 30,END", router.address)
            module.close()
    assert vehicle.next_message(timeout=5.0) == IMFM(1, 2, 3, 0, to=16)  # ...after these
    assert router.wait_until(lambda: 30 not in router.modules, 5.0)
    assert router.stats.gone == 0  # it left: its goodbye was read


def test_bad_membership_settings_are_one_config_error():
    with pytest.raises(ConfigError) as info:
        Router("127.0.0.1", 0, timeout=0.0, max_unconfirmed=0)
    assert info.value.problems == [
        "timeout must be positive (seconds), not 0.0",
        "max_unconfirmed must be 1 or more, not 0",
    ]


# -- a restart -----------------------------------------------------------------------------
def test_after_a_restart_the_modules_keep_their_ids_and_a_squatter_is_refused(
    brisk, tmp_path: Path
):
    state = tmp_path / "bus.json"
    first = Router("127.0.0.1", 0, state=state).start()
    port = first.address[1]
    vehicle, driver = brisk(first, 16), brisk(first, 17)
    with raw_socket() as dead:  # a module that will not survive the restart
        dead.sendto(b"ID 18,END", first.address)
        assert dead.recv(100) == b"ID 0,END"
        lost = dead.getsockname()
    first.stop()  # Ctrl-C: the table stays in the file
    saved = json.loads(state.read_text())["modules"]
    assert {(m["id"], m["address"]) for m in saved} == {
        (16, where(vehicle.address)),
        (17, where(driver.address)),
        (18, where(lost)),
    }
    with Router("127.0.0.1", port, state=state) as second:  # back, before any handshake
        with raw_socket() as squatter:
            squatter.sendto(b"ID 16,END", second.address)
            second.start()
            assert squatter.recv(200).startswith(b"REFUSED 16,id 16 is already taken by")
        assert second.stats.restored == 3
        assert second.wait_until(lambda: 18 not in second.modules, 5.0)  # its port refused
        assert second.stats.gone == 1 and second.modules[16].address == vehicle.address
        driver.send(IMFM(1, 2, 3, 0, to=16))
        assert vehicle.next_message(timeout=5.0) == IMFM(1, 2, 3, 0, to=16)
        assert vehicle.router_id == 0 and vehicle.stats.losses == 0
    assert json.loads(state.read_text())["modules"]  # (stopped, not shut down: kept)


def test_a_reused_port_in_the_state_file_is_the_new_module(tmp_path: Path):
    state = tmp_path / "bus.json"
    with raw_socket() as newcomer:  # now at the address a lost module 19 had
        state.write_text(
            json.dumps({"modules": [{"id": 19, "address": where(newcomer.getsockname())}]})
        )
        with Router("127.0.0.1", 0, state=state).start() as router:
            assert newcomer.recv(100) == b"ID 0,END"  # the router's word to its module 19
            newcomer.sendto(b"ID 17,END", router.address)  # but it is a new module 17
            assert newcomer.recv(100) == b"ID 0,END"
            assert router.wait_until(lambda: set(router.modules) == {17}, 5.0)


def test_a_bad_state_file_starts_an_empty_router(tmp_path: Path, caplog):
    state = tmp_path / "bus.json"
    state.write_text('{"modules": [{"id": "sixteen", "address": "127.0.0.1:1"}]}')
    with Router("127.0.0.1", 0, state=state) as router:
        assert router.modules == {}
    assert any(
        "is not one (id 'sixteen'); starting empty" in r.getMessage() for r in caplog.records
    )


def test_a_shutdown_forgets_the_state(tmp_path: Path):
    state = tmp_path / "bus.json"
    router = Router("127.0.0.1", 0, state=state).start()
    with router, BusClient(16, port=router.address[1]) as vehicle:
        assert state.exists()
        vehicle.send(Shutdown(to=0))  # to the router: every module ends
        assert router.stopped.wait(5.0)
    assert not state.exists()


def test_vcosim_bus_restarted_gives_the_vehicle_its_id_back(tmp_path: Path):
    """The probe's reproduction: SIGKILL the router, a local process handshakes for 16 first."""
    port, state = free_port(), tmp_path / "bus.json"
    command = [*vcosim_command(), "bus", "--listen", f"127.0.0.1:{port}"]
    command += ["--state", str(state)]
    router = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    vehicle: BusClient | None = None
    try:
        vehicle = BusClient(16, port=port, liveness=BRISK).connect(timeout=30.0)
        assert vehicle.connected
        router.kill()
        router.wait(10.0)
        router = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        squatter = BusClient(16, port=port)  # (handshakes until the new router answers)
        try:
            with pytest.raises(ProtocolError, match="id 16 is already taken by the module at"):
                squatter.connect(timeout=30.0)
        finally:
            squatter.close()
        with BusClient(17, port=port) as driver:
            driver.send(IMFM(1, 2, 3, 0, to=16))
            deadline = time.monotonic() + 10.0
            while vehicle.pending == 0 and time.monotonic() < deadline:
                vehicle.wait(0.05)
            assert vehicle.next_message() == IMFM(1, 2, 3, 0, to=16)
        assert not vehicle.router_lost
    finally:
        if vehicle is not None:
            vehicle.close()
        router.kill()
        router.wait(10.0)
