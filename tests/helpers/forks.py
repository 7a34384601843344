"""``vcosim`` commands for the tests, forked from a Python that imported vcosim once.

A fresh ``python -m vcosim`` spends about 1 s of CPU importing before it does anything; the
suite starts hundreds. ``vcosim_command(*args)`` gives the command line of one that starts from this
worker's fork server instead (``forkserver``), still a process of its own. Tests of what a
fresh start does (a signal during start-up, an import that fails, an extra that is missing)
start ``python -m vcosim`` themselves; ``VCOSIM_TESTS_FRESH=1`` makes every test do so.
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

FORKSERVER = str(Path(__file__).with_name("forkserver.py"))
FRESH = os.environ.get("VCOSIM_TESTS_FRESH") == "1"
WIDE = "200"  # columns, for output read line by line


class ForkServer:
    """A Python that imported vcosim, in ``folder`` (inside a network namespace: ``prefix``)."""

    def __init__(self, folder: Path, prefix: Sequence[str] = ()) -> None:
        self.path = str(folder.with_suffix(".sock"))
        self.server = subprocess.Popen(  # in the folder: where multiprocessing finds scripts
            [*prefix, sys.executable, FORKSERVER, "serve", self.path],
            cwd=folder,
            env=dict(os.environ, COLUMNS=WIDE),
            stdin=subprocess.PIPE,  # the server ends when this process does
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        assert self.server.stdout is not None
        if self.server.stdout.readline().strip() != "ready":
            self.close()
            raise RuntimeError(f"the fork server did not start (exit {self.server.returncode})")

    def command(self, words: Sequence[str], group: bool = False) -> list[str]:
        """Run ``words`` (``vcosim …`` or ``python script.py …``) forked from this server.

        ``group``: signals to the client reach the command's process group, and killing the
        client kills the group (a terminal's Ctrl-C); else they reach the command alone.
        """
        mode = "group" if group else "pid"
        return [sys.executable, "-S", "-E", FORKSERVER, "run", self.path, mode, *words]

    def close(self) -> None:
        self.server.kill()
        self.server.wait()


_server: ForkServer | None = None


def vcosim_command(*args: str, group: bool = False) -> list[str]:
    """The command line of ``vcosim ARGS``, forked from this worker's server (started now)."""
    global _server
    if FRESH:
        return [sys.executable, "-m", "vcosim", *args]
    if _server is None:
        folder = Path(tempfile.mkdtemp(prefix="vcosim-forks-"))
        _server = ForkServer(folder)
        atexit.register(_server.close)
        atexit.register(shutil.rmtree, folder, True)
    return _server.command(["vcosim", *args], group)
