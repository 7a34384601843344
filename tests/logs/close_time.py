"""How long ``vcosim sim --debug-log`` takes to exit after SIGTERM at the end of a long run.

Not a test (speed is never asserted): a measurement. Run it against this tree, or another
(``PYTHONPATH=/old/src python tests/logs/close_time.py``) to compare:

    python tests/logs/close_time.py --seconds 30

It couples a lock-step ``vcosim sim`` to ``vcosim controller cruise``, sends SIGTERM after
``--seconds`` of wall time, and prints one JSON object: the steps run, the seconds from
SIGTERM to exit, the exit code, and the files left in the log folder.

With ``--rows STEPS`` it measures the debug log alone, in this process: STEPS physics steps
with a send and a reply every 10 (as at T_ext 5 ms), then SIGTERM (turned into an interrupt
as ``vcosim sim`` does) and ``close``, timed: the part of the exit that grows with the run.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def close_after(steps: int) -> dict[str, object]:
    """Log ``steps`` steps into a DebugLog, interrupt with SIGTERM, time its close."""
    import numpy as np

    from vcosim.interrupts import sigterm_as_interrupt
    from vcosim.tight.debuglog import DebugLog

    folder = Path(tempfile.mkdtemp(prefix="vcosim-close-"))
    log = DebugLog(folder)
    sent, back = np.random.default_rng(0).standard_normal((2, 111))
    sent[40:] = 0.0  # as in a run: many slots unused
    t0 = time.perf_counter()
    for step in range(steps):
        now = time.perf_counter() - t0
        log.steps.add(now)
        if step % 10 == 0:
            log.send.add(now, sent)
            log.receive.add(now, back[:64])
    logging_s = time.perf_counter() - t0
    with sigterm_as_interrupt():
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
        except KeyboardInterrupt:
            start = time.perf_counter()
            log.close()
            close_s = time.perf_counter() - start
    files = {p.name: p.stat().st_size for p in sorted(folder.iterdir())}
    return {
        "steps": steps,
        "logging_s": round(logging_s, 2),
        "close_s": round(close_s, 3),
        "files": files,
        "folder": str(folder),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0, help="wall time before SIGTERM")
    parser.add_argument("--kill-after", type=float, default=60.0, help="SIGKILL after (s)")
    parser.add_argument("--rows", type=int, help="measure DebugLog.close alone after STEPS")
    args = parser.parse_args()
    if args.rows:
        print(json.dumps(close_after(args.rows), indent=1))
        return
    folder = Path(tempfile.mkdtemp(prefix="vcosim-close-"))
    sim_port, controller_port = free_port(), free_port()
    vcosim = [sys.executable, "-m", "vcosim", "--quiet"]
    controller = subprocess.Popen(
        [
            *vcosim,
            "controller",
            "cruise",
            "--listen",
            f"127.0.0.1:{controller_port}",
            "--sim",
            f"127.0.0.1:{sim_port}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    sim = subprocess.Popen(
        [
            *vcosim,
            "sim",
            "--pacing",
            "lockstep",
            "--listen",
            f"127.0.0.1:{sim_port}",
            "--controller",
            f"127.0.0.1:{controller_port}",
            "--debug-log",
            str(folder / "logs"),
            "--json-out",
            str(folder / "summary.json"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        time.sleep(args.seconds)
        sent = time.perf_counter()
        sim.send_signal(signal.SIGTERM)
        try:
            code = sim.wait(args.kill_after)
        except subprocess.TimeoutExpired:
            sim.kill()
            code = sim.wait()
        exit_seconds = time.perf_counter() - sent
    finally:
        controller.terminate()
        controller.wait()
    summary = folder / "summary.json"
    steps = json.loads(summary.read_text())["steps"] if summary.exists() else None
    logs = folder / "logs"
    files = {p.name: p.stat().st_size for p in sorted(logs.iterdir())} if logs.exists() else {}
    print(
        json.dumps(
            {
                "steps": steps,
                "sigterm_to_exit_s": round(exit_seconds, 3),
                "exit_code": code,
                "files": files,
                "folder": str(folder),
                "output_tail": (sim.stdout.read() if sim.stdout else "")[-600:],
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
