"""The lifecycle every bus module shares (modules/base.py), on a real router."""

from __future__ import annotations

import json
import logging
import socket
import threading
from dataclasses import dataclass

import pytest

from vcosim.bus.catalogue import IMFM, Message, ModuleId, Shutdown
from vcosim.bus.client import BusClient
from vcosim.bus.router import Router
from vcosim.errors import CouplingTimeout
from vcosim.modules.base import BusModule, run_module
from vcosim.reports import Report


@dataclass
class EchoReport(Report):
    received: dict[str, int]
    loops: int
    released: int
    shutdown_received: bool


class Echo(BusModule[EchoReport]):
    """Answers every IMFM with a copy to the sender's module 16; ``fail`` raises in the loop."""

    name = "echo"

    def __init__(self, port: int, fail: type[BaseException] | None = None) -> None:
        super().__init__(30, "127.0.0.1", port)
        self.fail = fail
        self.loops = 0
        self.released = 0
        self.joined = threading.Event()

    def loop(self, duration: float | None) -> None:
        self.joined.set()
        while not self.shutdown:
            self.loops += 1
            if self.fail is not None:
                raise self.fail()
            self.client.wait(0.5)
            self.take_messages()

    def on_message(self, message: Message) -> None:
        if isinstance(message, IMFM):
            self.send(IMFM(*message.values, to=ModuleId.VEHICLE))

    def release(self) -> None:
        self.released += 1

    def report(self) -> EchoReport:
        return EchoReport(dict(self.received), self.loops, self.released, self.shutdown)


def test_run_joins_loops_until_shutdown_and_leaves(
    router: Router, caplog: pytest.LogCaptureFixture
) -> None:
    module = Echo(router.address[1])
    reports: list[EchoReport] = []
    with caplog.at_level(logging.INFO, logger="vcosim.modules"):
        thread = threading.Thread(target=lambda: reports.append(module.run()))
        thread.start()
        assert module.joined.wait(5.0)
        with BusClient(ModuleId.VEHICLE, port=router.address[1]) as vehicle:
            vehicle.send(IMFM(1, 2, 3, 0, to=30))
            assert vehicle.next_message(timeout=5.0) == IMFM(1, 2, 3, 0, to=ModuleId.VEHICLE)
            vehicle.send(Shutdown(to=30))
            thread.join(5.0)
    assert not thread.is_alive()
    (report,) = reports
    assert report.received == {"IMFM": 1, "Shutdown": 1} and report.shutdown_received
    assert report.released == 1 and module.sent == {"IMFM": 1}
    assert router.wait_until(lambda: 30 not in router.modules, 2.0)  # it left the bus
    assert "echo: module 30 on the bus at 127.0.0.1:" in caplog.text
    module.close()  # safe twice
    assert module.released == 1


def test_report_is_typed_json_and_reads_as_a_mapping() -> None:
    report = EchoReport({"IMFM": 2}, 3, 1, True)
    assert report.to_dict() == {
        "received": {"IMFM": 2},
        "loops": 3,
        "released": 1,
        "shutdown_received": True,
    }
    assert json.loads(json.dumps(report.to_dict()))["received"] == {"IMFM": 2}
    assert report["loops"] == 3 and dict(report) == report.to_dict() and len(report) == 4
    with pytest.raises(KeyError):
        report["to_dict"]
    copy = report.to_dict()
    copy["received"]["IMFM"] = 99
    assert report.received == {"IMFM": 2}  # the dict is a copy


def test_an_interrupt_ends_the_run_with_a_report(router: Router) -> None:
    module = Echo(router.address[1], fail=KeyboardInterrupt)
    report = module.run()
    assert report.loops == 1 and report.released == 1 and not report.shutdown_received
    assert not module.client.connected
    assert router.wait_until(lambda: 30 not in router.modules, 2.0)


def test_an_error_in_the_loop_closes_and_is_raised(router: Router) -> None:
    module = Echo(router.address[1], fail=RuntimeError)
    with pytest.raises(RuntimeError):
        module.run()
    assert module.released == 1 and not module.client.connected


def test_a_module_is_a_context_manager(router: Router) -> None:
    with Echo(router.address[1]) as module:
        module.connect()
        assert router.wait_until(lambda: 30 in router.modules, 2.0)
    assert module.released == 1 and not module.client.connected
    assert router.wait_until(lambda: 30 not in router.modules, 2.0)


def test_no_router_is_a_timeout_and_the_module_is_closed() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as silent:  # bound, never answers
        silent.bind(("127.0.0.1", 0))
        module = Echo(silent.getsockname()[1])
        module.connect_timeout = 0.3
        with pytest.raises(CouplingTimeout, match="no answer from the bus router"):
            run_module(module, None)
    assert module.released == 1 and module.loops == 0


def test_run_module_gives_the_dict_and_says_the_given_line(
    router: Router, caplog: pytest.LogCaptureFixture
) -> None:
    module = Echo(router.address[1], fail=KeyboardInterrupt)
    with caplog.at_level(logging.INFO, logger="vcosim.modules"):
        report = run_module(module, None, "echo started")
    assert type(report) is dict and report["loops"] == 1
    assert "echo started" in caplog.text and "echo: module 30" not in caplog.text
