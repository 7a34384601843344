"""SIGTERM or Ctrl-C at random moments of ``vcosim sim --debug-log``: what is left each time.

Not a test (it takes minutes): the issue's acceptance check, run on demand:

    python tests/logs/random_interrupts.py --runs 20 --latest 8

Each run couples a real-time ``vcosim sim --debug-log`` to ``vcosim controller cruise``,
interrupts it after a random delay (start-up included), and checks that it exited 130 and
left either logs ``vcosim analyze`` reads or a line saying nothing was recorded. Prints one
JSON object per run, then a summary line; exits 1 if any run left neither.
"""

from __future__ import annotations

import argparse
import json
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

NOTHING = "nothing was recorded"  # the line of an interrupt before any file was opened


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def one_run(delay: float, signum: int) -> dict[str, object]:
    from vcosim.analysis import read_logs

    folder = Path(tempfile.mkdtemp(prefix="vcosim-interrupt-")) / "logs"
    sim_port, controller_port = free_port(), free_port()
    vcosim = [sys.executable, "-m", "vcosim"]
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
            "--listen",
            f"127.0.0.1:{sim_port}",
            "--controller",
            f"127.0.0.1:{controller_port}",
            "--debug-log",
            str(folder),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    time.sleep(delay)
    sim.send_signal(signum)
    sent = time.perf_counter()
    try:
        out, _ = sim.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        sim.kill()
        out, _ = sim.communicate()
    exit_s = time.perf_counter() - sent
    controller.terminate()
    controller.wait()
    try:
        steps: int | str = len(read_logs(folder).steps)
    except Exception as exc:  # noqa: BLE001 (reported, not raised)
        steps = f"unreadable: {exc}"
    said_nothing = NOTHING in out
    ok = sim.returncode == 130 and (isinstance(steps, int) or said_nothing)
    return {
        "delay_s": round(delay, 2),
        "signal": signal.Signals(signum).name,
        "exit_code": sim.returncode,
        "exit_s": round(exit_s, 2),
        "steps": steps,
        "said_nothing_recorded": said_nothing,
        "ok": ok,
        "last_line": "" if ok else (out.strip().splitlines() or [""])[-1],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--latest", type=float, default=8.0, help="longest delay (s)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    results = []
    for _ in range(args.runs):
        signum = rng.choice([signal.SIGTERM, signal.SIGINT])
        results.append(one_run(rng.uniform(0.0, args.latest), signum))
        print(json.dumps(results[-1]), flush=True)
    good = sum(bool(r["ok"]) for r in results)
    print(f"{good}/{len(results)} runs left readable logs or said nothing was recorded")
    sys.exit(0 if good == len(results) else 1)


if __name__ == "__main__":
    main()
