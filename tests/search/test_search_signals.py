"""A real Ctrl-C (SIGINT) and SIGTERM to `vcosim search` on local worker processes: exit 130,
every finished run in the log, and `--resume` finishes the search."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

from helpers.forks import vcosim_command

SEARCH = """
[scenario]
name = "signalled"
duration = 2.0
initial_speed = 7.0

[controller]
name = "cruise"
speed = 8.0

[metrics]
steady_window = 0.2

[search]
objective = "overshoot"
threshold = 0.3
budget = 100000
batch = 4

[search.parameters]
"controller.kp" = { low = 0.05, high = 2.0 }
"controller.ki" = { low = 0.0, high = 1.0 }
"""


def runs_in(log: Path) -> list[dict[str, object]]:
    if not log.exists():
        return []
    lines = log.read_text().splitlines()[1:]
    return [json.loads(line) for line in lines if line.endswith("}")]


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_keeps_every_finished_run_and_resume_finishes(
    signum: signal.Signals, tmp_path: Path
) -> None:
    path = tmp_path / "search.toml"
    path.write_text(SEARCH)
    out = tmp_path / "out"
    args = ["search", str(path), "--workers", "2", "--out", str(out)]
    process = subprocess.Popen(
        vcosim_command(*args), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        deadline = time.monotonic() + 300  # a run or five, however loaded the machine
        while len(runs_in(out / "runs.jsonl")) < 5 and process.poll() is None:
            assert time.monotonic() < deadline, "no run finished"
            time.sleep(0.05)
        process.send_signal(signum)
        output, _ = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, output
    assert "interrupted after" in output and "--resume continues" in " ".join(output.split())
    kept = runs_in(out / "runs.jsonl")
    indices = [int(str(r["index"])) for r in kept]
    assert len(kept) >= 5 and len(set(indices)) == len(indices)
    # every batch before the one in progress finished (the last may have finished in any order)
    assert set(range(4 * (max(indices) // 4))) <= set(indices)
    assert (out / "summary.json").exists()  # written from the finished runs

    budget = 4 * (max(indices) // 4) + 8
    resumed = subprocess.run(
        vcosim_command(*args, "--resume", "--budget", str(budget)),
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    after = runs_in(out / "runs.jsonl")
    assert after[: len(kept)] == kept  # the finished runs stay as they were
    assert sorted(r["index"] for r in after) == list(range(budget))
