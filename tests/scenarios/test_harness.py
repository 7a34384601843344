"""The process harness: children started, waited for, stopped (escalating), their results kept."""

from __future__ import annotations

import multiprocessing
import os
import queue
import signal
import socket
import sys
import threading
import time

import pytest

from vcosim.errors import VcosimError
from vcosim.scenarios.harness import ChildLink, ChildProcess, CommandProcess, ControllerProcess


# -- children (module level: a spawned process imports them by name) ---------------------------
def echo(link: ChildLink) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    sock.settimeout(0.1)
    link.ready(sock.getsockname()[1])
    count = 0
    while not link.stopping:
        try:
            data, sender = sock.recvfrom(64)
        except TimeoutError:
            continue
        sock.sendto(data, sender)
        count += 1
    sock.close()
    link.result({"echoed": count})


def refuse(link: ChildLink) -> None:
    raise VcosimError("unknown vehicle 'x'")


def vanish(link: ChildLink) -> None:
    os._exit(3)


def never_ready(link: ChildLink) -> None:
    link.wait()


def deaf(link: ChildLink) -> None:
    link.ready()
    time.sleep(60)


def break_after_ready(link: ChildLink) -> None:
    link.ready()
    link.wait()
    raise ValueError("boom")


def watch_briefly(link: ChildLink) -> None:
    link.on_stop(lambda: None)
    link.ready()
    link.result("done")


def step_nan(message: object) -> None:
    return None


# -- ChildProcess ------------------------------------------------------------------------------
def test_child_is_reached_at_its_port_and_hands_back_its_result():
    with ChildProcess(echo, name="echo") as child:
        port = child.ready()
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.settimeout(5.0)
        for i in range(3):
            sock.sendto(bytes([i]), ("127.0.0.1", port))
            assert sock.recv(64) == bytes([i])
        sock.close()
        assert child.stop() == {"echoed": 3}
    assert child.exitcode == 0  # it ended on the request, not a signal
    assert child.stop() == {"echoed": 3}  # safe twice, the result kept


def test_an_error_in_the_child_reaches_the_parent_as_one_line():
    with (
        ChildProcess(refuse, name="controller process") as child,
        pytest.raises(VcosimError, match="controller process failed: .*unknown vehicle 'x'"),
    ):
        child.ready()
    assert child.exitcode == 1


def test_a_child_that_ends_before_it_is_ready_is_reported_with_its_exit_code():
    with (
        ChildProcess(vanish, name="peer") as child,
        pytest.raises(VcosimError, match=r"peer ended before it was ready \(exit code 3\)"),
    ):
        child.ready()


def test_readiness_times_out_and_the_child_still_stops_when_asked():
    with ChildProcess(never_ready, name="server") as child:
        with pytest.raises(VcosimError, match="server did not start in 0.5 s"):
            child.ready(timeout=0.5)
        assert child.stop() is None
    assert child.exitcode == 0


def test_a_child_deaf_to_the_request_is_terminated():
    child = ChildProcess(deaf, name="deaf").start()
    child.ready()
    begin = time.perf_counter()
    assert child.stop(grace=0.3) is None
    assert child.exitcode == -signal.SIGTERM
    assert time.perf_counter() - begin < 5.0


def test_an_error_after_readiness_is_kept_when_stopping():
    with ChildProcess(break_after_ready, name="block") as child:
        child.ready()
    assert child.error == "ValueError: boom"
    assert child.exitcode == 1


def test_leaving_the_context_on_an_error_stops_the_child():
    with pytest.raises(RuntimeError), ChildProcess(never_ready, name="c") as child:
        raise RuntimeError
    assert child.exitcode == 0


def test_stopping_before_the_start_does_nothing():
    child = ChildProcess(never_ready, name="c")
    assert child.stop() is None and child.pid is None


def test_link_reports_the_stop_request_and_an_absent_parent():
    reader, writer = multiprocessing.Pipe(duplex=False)
    link = ChildLink(queue.Queue(), queue.Queue(), reader, parent=os.getppid())
    assert not link.stopping and link.wait(0.05) is False
    called = threading.Event()
    link.on_stop(called.set)
    writer.close()  # how the parent asks
    assert link.stopping and link.wait() is True
    assert called.wait(5.0)
    orphan = ChildLink(queue.Queue(), queue.Queue(), multiprocessing.Pipe()[0], parent=-1)
    assert orphan.stopping and orphan.wait() is True


def test_stopping_a_child_that_just_ended_by_itself():
    # Its stop watch was waiting when it ended: asking it to stop must not hang on that.
    for _ in range(3):
        with ChildProcess(watch_briefly, name="brief") as child:
            assert child.ready() is None
            assert child.result() == "done"
        assert child.exitcode == 0


def test_controller_process_answers_a_lockstep_simulation():
    from vcosim.scenarios import CouplingFaceSpec, PacingSpec, RunSpec, build_simulation

    with ControllerProcess(step_nan, step=0.005, duration=0.25) as peer:
        coupling = CouplingFaceSpec(listen_port=0, controller_port=peer.port(), ext_time=0.005)
        spec = RunSpec(pacing=PacingSpec(mode="lockstep"), faces=[coupling])
        report = build_simulation(spec).run(0.25)
        block = peer.result()  # it ends by itself after the 50th message
    assert report.faces["coupling"]["sent"] == 50 and report.faces["coupling"]["timeouts"] == 0
    assert block is not None and block["answered"] == 50 and block["resets"] == 0
    assert peer.stop() is block and peer.report is block and peer.exitcode == 0


# -- CommandProcess ----------------------------------------------------------------------------
def python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def test_command_output_and_exit_code_are_kept():
    with CommandProcess(python("print('hi'); import sys; sys.exit(3)"), name="c") as command:
        finished = command.wait(30)
    assert finished is not None and finished.returncode == 3
    assert finished.stdout == "hi\n"
    assert command.stop() is finished


def test_stopping_a_command_is_ctrl_c_first():
    code = (
        "import time\nprint('ready', flush=True)\ntry:\n    time.sleep(60)\n"
        "except KeyboardInterrupt:\n    print('interrupted')\n    raise SystemExit(130)"
    )
    command = CommandProcess(python(code), name="c").start()
    assert command.popen is not None and command.popen.stdout is not None
    assert command.popen.stdout.readline() == "ready\n"
    assert command.wait(0.05) is None  # still running
    finished = command.stop()
    assert finished is not None and finished.returncode == 130
    assert "interrupted" in finished.stdout


def test_a_command_deaf_to_ctrl_c_is_terminated():
    code = (
        "import signal, sys, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
        "print('ready', flush=True)\ntime.sleep(60)"
    )
    with CommandProcess(python(code), name="c") as command:
        assert command.popen is not None and command.popen.stdout is not None
        assert command.popen.stdout.readline() == "ready\n"
        finished = command.stop(grace=0.3)
    assert finished is not None and finished.returncode == -signal.SIGTERM


def test_last_lines_of_a_failed_command():
    with CommandProcess(
        python("import sys; sys.stderr.write('a\\n\\nb\\nc\\nd\\n'); sys.exit(2)"), name="c"
    ) as command:
        finished = command.wait(30)
    assert finished is not None and finished.last_lines() == "b / c / d"
