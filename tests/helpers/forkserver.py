"""A Python with vcosim already imported that forks a process for each documented command.

Every ``vcosim`` command and ``python script.py`` of the docs is a real process of its own:
its own pid, session, folder, environment, standard streams, signals and exit code. Started
from scratch, each would spend most of its ~1 s of CPU importing numpy, numba, pydantic and
vcosim and loading the physics kernels, over 160 times per suite run. Forked from a server
that did that once, it starts with them in memory.

Two roles in one file, so that the client needs nothing but the standard library:

    python forkserver.py serve SOCKET                 import, listen, fork one child per client
    python -S -E forkserver.py run SOCKET MODE WORD.. what a test starts for a command

The client is the process the test sees: it hands the server its arguments, folder,
environment and standard streams, forwards the signals it gets (Ctrl-C, SIGTERM) to the child,
and exits as the child did; killed itself, its server kills the child. MODE ``pid`` forwards
to the child alone, as a signal sent to one process reaches it; ``group`` forwards to the
child's process group and kills the group with the client, as a terminal's Ctrl-C reaches a
command and whatever it started.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import struct
import sys
from typing import Any

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)
INT = struct.Struct("!i")


def receive_exactly(connection: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = connection.recv(size - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


# -- the client -------------------------------------------------------------------------------
def run_client(path: str, mode: str, words: list[str]) -> int:
    """Have the server start ``words`` here; forward signals to it; its exit code."""
    child: list[int] = []
    pending: list[int] = []
    send = os.killpg if mode == "group" else os.kill

    def forward(number: int, _frame: Any) -> None:
        if not child:
            pending.append(number)  # before the child said who it is
            return
        with contextlib.suppress(ProcessLookupError):
            send(child[0], number)

    for number in SIGNALS:
        signal.signal(number, forward)
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    connection.connect(path)
    said = {"words": words, "cwd": os.getcwd(), "env": dict(os.environ), "mode": mode}
    header = json.dumps(said).encode()
    socket.send_fds(connection, [INT.pack(len(header)) + header], [0, 1, 2])
    try:
        child.append(INT.unpack(receive_exactly(connection, INT.size))[0])
        for number in pending:
            forward(number, None)
        code = INT.unpack(receive_exactly(connection, INT.size))[0]
    except EOFError:
        print("forkserver: the server ended before the command did", file=sys.stderr)
        return 1
    if code < 0:  # killed by a signal: end the same way
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return code


# -- the server -------------------------------------------------------------------------------
def preload() -> None:
    """What a simulator, a controller or a bench imports, and the lone vehicle's kernels."""
    import vcosim.app.cli  # noqa: F401 - the commands and their options
    import vcosim.app.simulator  # noqa: F401
    import vcosim.scenarios.build  # noqa: F401
    from vcosim.vehicle import Vehicle

    Vehicle(engine_running=True).run(2, throttle=0.1)  # loads the compiled kernels


def serve(path: str) -> None:
    """Fork a child per client until killed or left alone; tell each client its child's end."""
    import selectors

    preload()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # only to wake the selector
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    selector.register(wake_read, selectors.EVENT_READ)
    selector.register(0, selectors.EVENT_READ)  # the starter's pipe: closed, it is gone
    clients: dict[int, socket.socket] = {}  # child pid: its client, until the client ends
    groups: dict[int, bool] = {}  # child pid: whether its group ends with its client
    running: set[int] = set()  # children not reaped yet
    print("ready", flush=True)
    while True:
        for key, _ in selector.select():
            if key.fileobj is listener:
                connection, _ = listener.accept()
                header, fds = receive_header(connection)
                sys.stdout.flush()
                sys.stderr.flush()
                pid = os.fork()
                if pid == 0:
                    become(header, fds, connection, [listener, *clients.values()])
                for fd in fds:
                    os.close(fd)
                clients[pid] = connection
                groups[pid] = header["mode"] == "group"
                running.add(pid)
                selector.register(connection, selectors.EVENT_READ, pid)
            elif key.fileobj == wake_read:
                os.read(wake_read, 4096)
            elif key.fileobj == 0:
                if not os.read(0, 4096):
                    return  # whoever started the server ended, even if killed: so does it
            elif not key.fileobj.recv(1):  # type: ignore[union-attr]
                # its client ended or was killed: so does the child (or its group)
                selector.unregister(key.fileobj)
                key.fileobj.close()  # type: ignore[union-attr]
                del clients[key.data]
                with contextlib.suppress(ProcessLookupError):
                    if groups.pop(key.data):
                        os.killpg(key.data, signal.SIGKILL)
                    elif key.data in running:  # a pid once reaped may be another's now
                        os.kill(key.data, signal.SIGKILL)
        reap(clients, running)


def receive_header(connection: socket.socket) -> tuple[dict[str, Any], list[int]]:
    data, fds, _, _ = socket.recv_fds(connection, 1 << 20, 3)
    (size,) = INT.unpack(data[: INT.size])
    data = data[INT.size :]
    if len(data) < size:
        data += receive_exactly(connection, size - len(data))
    return json.loads(data), fds


def reap(clients: dict[int, socket.socket], running: set[int]) -> None:
    """Tell the client of every child that ended how it ended."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        running.discard(pid)
        client = clients.get(pid)
        if client is not None:
            with contextlib.suppress(OSError):
                client.sendall(INT.pack(os.waitstatus_to_exitcode(status)))


def become(
    header: dict[str, Any],
    fds: list[int],
    connection: socket.socket,
    others: list[socket.socket],
) -> None:
    """In the child: take the client's streams, folder, environment and arguments, and run."""
    code = 1
    try:
        os.setsid()  # a process group of its own, for the signals the client forwards
        signal.set_wakeup_fd(-1)
        for number in (signal.SIGCHLD, *SIGNALS):  # as a fresh Python has them
            signal.signal(number, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for other in others:
            other.close()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in set(fds) - {0, 1, 2}:
            os.close(fd)
        connection.sendall(INT.pack(os.getpid()))
        connection.close()
        os.chdir(header["cwd"])
        os.environ.clear()
        os.environ.update(header["env"])
        added = os.environ.get("PYTHONPATH", "").split(os.pathsep)  # as a fresh start reads it
        sys.path[1:1] = [os.path.abspath(p) for p in added if p and p not in sys.path]
        for stream in (sys.stdout, sys.stderr):
            stream.reconfigure(line_buffering=True)  # type: ignore[attr-defined]
        code = run(header["words"])
    except SystemExit as stop:
        code = exit_code(stop.code)
    except KeyboardInterrupt:
        import traceback

        traceback.print_exc()
        code = 130
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        os._exit(finish(code))


def run(words: list[str]) -> int:
    """Run the command as its program would; anything else is executed as it is."""
    import runpy
    import shutil
    import types

    program = shutil.which(words[0]) or words[0]
    if words[0] == "vcosim":
        from vcosim.app import main

        sys.argv = [program, *words[1:]]
        sys.path[0] = os.path.dirname(program)
        console_script = types.ModuleType("__main__")  # as the console script's main module
        console_script.__file__ = program
        sys.modules["__main__"] = console_script
        return exit_code(main())
    if words[0] == "python" and len(words) > 1 and not words[1].startswith("-"):
        script = os.path.abspath(words[1])  # as __main__.__file__ is since Python 3.9
        sys.argv = words[1:]
        sys.path[0] = os.path.dirname(script)
        runpy.run_path(script, run_name="__main__")
        return 0
    os.execvp(program, [program, *words[1:]])
    return 1  # not reached


def exit_code(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def finish(code: int) -> int:
    """What the interpreter does at its end: wait for threads, run atexit, flush."""
    import atexit
    import threading

    for thread in threading.enumerate():
        if thread is not threading.main_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    return code


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(sys.argv[2])
    else:
        sys.exit(run_client(sys.argv[2], sys.argv[3], sys.argv[4:]))
