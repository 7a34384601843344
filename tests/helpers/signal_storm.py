"""SIGTERM and Ctrl-C at instants spread over the first seconds of every long-running command.

Each command runs as ``python -m vcosim ...`` in a session of its own, all at once. The clock
of each starts when its process can have a policy at all: when the kernel shows a handler for
SIGTERM (``/proc/PID/status``; before that the interpreter itself is still starting, and the
operating system's default applies). At its instant, the signal goes to that process alone.

What every run must show: exit code 130, a line saying it was interrupted, no traceback, and
no process left behind (its own modules included: every process whose command line names the
run's unique port is looked for).

The suite runs a few instants per command (``tests/app/test_signal_storm.py``); the issue's
20 per command run on demand (minutes of CPU):

    python tests/helpers/signal_storm.py --instants 20
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

COMMANDS = ("sim", "controller", "bus", "connect", "drive", "view")
ROOT = Path(__file__).resolve().parents[2]
SIGTERM_BIT = 1 << (signal.SIGTERM - 1)


def free_port(kind: int = socket.SOCK_DGRAM) -> int:
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def command_line(name: str, folder: Path) -> tuple[list[str], str]:
    """The arguments of ``vcosim NAME`` for a run, and the marker its processes carry."""
    port, other = free_port(), free_port()
    marker = f"127.0.0.1:{port}"
    contract = folder / f"contract-{port}.json"
    if name == "connect":
        text = (ROOT / "examples/contracts/cruise.json").read_text()
        contract.write_text(text.replace('"remotePort": 4367', f'"remotePort": {port}'))
    return {
        "sim": ["sim", "--listen", marker, "--controller", f"127.0.0.1:{other}"],
        "controller": ["controller", "cruise", "--listen", marker, "--sim", f"127.0.0.1:{other}"],
        "bus": ["bus", "--listen", marker],
        "connect": ["connect", str(contract), "--keep-connecting"],
        "drive": [
            "drive",
            "--bus",
            marker,
            "--out",
            str(folder / f"drive-{port}"),
            "--skip-missing",
        ],
        "view": ["view", "--listen", f"127.0.0.1:{free_port(socket.SOCK_STREAM)}", "--bus", marker],
    }[name], marker


@dataclass
class Run:
    """One command, one signal at one instant after it could first catch one."""

    name: str
    delay: float
    signum: signal.Signals
    marker: str = ""
    process: subprocess.Popen[str] | None = None
    ready_at: float | None = None
    output: str = ""
    code: int | None = None
    survivors: list[int] = field(default_factory=list)

    @property
    def problems(self) -> list[str]:
        found = []
        if self.code != 130:
            found.append(f"exit code {self.code}")
        if "Traceback" in self.output:
            found.append("a traceback")
        if "interrupt" not in self.output:  # "interrupted ...", "ended by: interrupt (...)"
            found.append('no "interrupt"')
        if self.survivors:
            found.append(f"survivors {self.survivors}")
        return found

    def to_dict(self) -> dict[str, object]:
        return {
            "command": self.name,
            "delay_s": round(self.delay, 3),
            "signal": self.signum.name,
            "exit_code": self.code,
            "problems": self.problems,
            **({"tail": self.output[-800:]} if self.problems else {}),
        }


def catches_sigterm(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return True  # gone already: nothing to wait for
    caught = next(line for line in status.splitlines() if line.startswith("SigCgt:"))
    return bool(int(caught.split()[1], 16) & SIGTERM_BIT)


def processes_naming(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            words = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(marker.encode() in word for word in words) and b"pgrep" not in words[0]:
            found.append(int(entry.name))
    return found


def storm(runs: list[Run], folder: Path, timeout: float = 60.0) -> list[Run]:
    """Start every run at once, signal each at its instant, collect what each left."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    for run in runs:
        args, run.marker = command_line(run.name, folder)
        run.process = subprocess.Popen(
            [sys.executable, "-m", "vcosim", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
            env=env,
            cwd=folder,
        )
    try:
        return _signal_and_collect(runs, timeout)
    finally:  # this storm interrupted itself: no command of it outlives it
        for run in runs:
            if run.process is not None and run.process.poll() is None:
                run.process.kill()


def _signal_and_collect(runs: list[Run], timeout: float) -> list[Run]:
    waiting = list(runs)
    give_up = time.monotonic() + timeout
    while waiting and time.monotonic() < give_up:
        now = time.monotonic()
        for run in list(waiting):
            assert run.process is not None
            if run.ready_at is None and catches_sigterm(run.process.pid):
                run.ready_at = now
            if run.ready_at is not None and now >= run.ready_at + run.delay:
                run.process.send_signal(run.signum)
                waiting.remove(run)
        time.sleep(0.002)
    for run in runs:
        assert run.process is not None
        try:
            run.output, _ = run.process.communicate(timeout=max(1.0, give_up - time.monotonic()))
        except subprocess.TimeoutExpired:
            run.process.kill()
            run.output = run.process.communicate()[0] + "\n(still running: killed)"
        run.code = run.process.returncode
    for run in runs:  # the modules of drive end after drive: give them their moment
        end = time.monotonic() + 15.0
        while (left := processes_naming(run.marker)) and time.monotonic() < end:
            time.sleep(0.05)
        run.survivors = left
        for pid in left:
            os.kill(pid, signal.SIGKILL)
    return runs


def plan(commands: tuple[str, ...], instants: int, span: float, seed: int) -> list[Run]:
    """``instants`` per command, one in each equal slice of ``span`` seconds, alternating."""
    rng = random.Random(seed)
    signals = (signal.SIGTERM, signal.SIGINT)
    return [
        Run(name, span * (i + rng.random()) / instants, signals[(i + j) % 2])
        for j, name in enumerate(commands)
        for i in range(instants)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instants", type=int, default=20, help="per command")
    parser.add_argument("--span", type=float, default=2.0, help="seconds the instants cover")
    parser.add_argument("--commands", default=",".join(COMMANDS))
    parser.add_argument("--parallel", type=int, default=6, help="runs at once")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    # Started in the background, this script ignores Ctrl-C, and so would every command it
    # starts (an ignored signal stays ignored across exec); a handler of its own is not kept.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    runs = plan(tuple(args.commands.split(",")), args.instants, args.span, args.seed)
    bad = 0
    with tempfile.TemporaryDirectory(prefix="vcosim-storm-") as folder:  # noqa: SIM117
        for start in range(0, len(runs), args.parallel):
            for run in storm(runs[start : start + args.parallel], Path(folder)):
                bad += bool(run.problems)
                print(json.dumps(run.to_dict()), flush=True)
    print(f"{len(runs) - bad}/{len(runs)} runs ended 130, interrupted, no traceback, no survivor")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
