"""Issue 31: a long lock-step coupling keeps its memory (both ends, per-message statistics).

The suite's case couples for 20,000 messages with blocking receives (no core spent spinning),
enough to tell statistics kept per message (the controller's heap grew 1.8 MB after the
warm-up before issue 31; the bound is 0.375 MB) from bounded ones. Issue 31's million
messages: ``VCOSIM_MEMORY_MESSAGES=1000000 pytest -n 0 tests/tight/test_memory.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

TOTAL = int(os.environ.get("VCOSIM_MEMORY_MESSAGES", "20000"))
WARMUP = min(8000, TOTAL // 3)
HELPERS = Path(__file__).parent.parent
HEAP_BOUND = 384 * 1024  # bytes of Python heap the run may grow after its warm-up
RSS_BOUND = 4 * 1024 * 1024  # and of resident memory


def test_both_ends_keep_their_memory_over_a_long_lockstep_run() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HELPERS), *sys.path])}
    role = [sys.executable, "-m", "helpers.memory_run"]
    with subprocess.Popen(
        [*role, "controller", str(WARMUP), str(TOTAL)], stdout=subprocess.PIPE, text=True, env=env
    ) as controller:
        assert controller.stdout is not None
        port = controller.stdout.readline().strip()
        simulator: subprocess.CompletedProcess[str] | None = None
        try:
            simulator = subprocess.run(
                [*role, "sim", port, str(WARMUP), str(TOTAL)],
                capture_output=True,
                text=True,
                env=env,
                timeout=1200,
            )
        finally:
            if simulator is None or simulator.returncode:
                controller.kill()  # a controller that was never coupled would wait forever
        assert simulator.returncode == 0, simulator.stderr
        block = json.loads(controller.stdout.readline())  # at its TOTAL-th message
        block.update(json.loads(controller.stdout.readline()))  # its end: what it answered
        controller.wait(timeout=60)
    sim = json.loads(simulator.stdout.splitlines()[-1])
    assert block["answered"] >= TOTAL and sim["applied"] >= TOTAL
    for end in (block, sim):
        assert end["heap"] < HEAP_BOUND, end
        assert end["rss"] < RSS_BOUND, end
