"""``vcosim bench sweep``: runs per second of a 10 s cruise scenario, and scaling over workers.

The scenario: the default vehicle from rest, the ``cruise`` controller to 20 m/s coupled in
process in lock-step (T_ext 5 ms), 10 simulated seconds; the runs differ in the controller's
gain. Measured in one run on this machine: one run in this process (its wall time and
real-time factor), then the same batch of runs with the local backend on 1, 2, ... workers.
Each pool is started and warmed up (one run per worker) before its clock starts, so the figure
is the steady rate of a long sweep, not the start-up. ``mean_run_wall_time`` is the wall time
of the simulated part of a run inside its worker, and the 1-minute load average before and
after is reported: other processes on the machine slow both down.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

from vcosim.sweep.backends import LocalBackend, SerialBackend, available_cpus
from vcosim.sweep.config import Scenario, parse

DURATION = 10.0


def bench_scenario(duration: float = DURATION) -> Scenario:
    """The benchmark's scenario."""
    sweep = parse(
        {
            "scenario": {"name": "bench-cruise", "duration": duration},
            "controller": {"name": "cruise", "speed": 20.0},
            "coupling": {"ext_time": 0.005},
        },
        "bench",
    )
    return sweep.scenario


def _tasks(runs: int) -> list[tuple[int, dict[str, Any]]]:
    return [(i, {"controller.kp": 0.2 + 0.1 * i / max(runs - 1, 1)}) for i in range(runs)]


def _rate(workers: int, scenario: Scenario, runs: int) -> dict[str, float]:
    duration = scenario.scenario.duration
    with LocalBackend(workers) as backend:
        backend.start(scenario)
        list(backend.map(scenario, _tasks(workers)))  # start and warm every worker
        start = time.perf_counter()
        results = list(backend.map(scenario, _tasks(runs)))
        wall = time.perf_counter() - start
    failed = [r.error for r in results if r.failed]
    if failed:
        raise RuntimeError(f"bench runs failed: {failed[0]}")
    mean_run = sum(r.metrics["wall_time"] for r in results) / len(results)
    return {
        "runs": runs,
        "wall_time": wall,
        "runs_per_s": runs / wall,
        "simulated_s_per_s": runs * duration / wall,
        "mean_run_wall_time": mean_run,
    }


def run_sweep_bench(
    runs: int = 40, max_workers: int = 2, progress: bool = True, duration: float = DURATION
) -> dict[str, Any]:
    """Measure; returns a JSON-friendly dict (``duration``: shorter runs, for a smoke test)."""

    def say(text: str) -> None:
        if progress:
            print(text, file=sys.stderr, flush=True)

    load_before = os.getloadavg()[0]
    scenario = bench_scenario(duration)
    say("one run in this process ...")
    single = next(iter(SerialBackend().map(scenario, [(0, {})])))  # (warmed up first)
    per_workers: dict[str, dict[str, float]] = {}
    for workers in range(1, max_workers + 1):
        say(f"{runs} runs on {workers} worker(s) ...")
        per_workers[str(workers)] = _rate(workers, scenario, runs)
    first = per_workers["1"]["runs_per_s"]
    last = per_workers[str(max_workers)]["runs_per_s"]
    return {
        "scenario": f"cruise to 20 m/s from rest, {duration:g} s simulated, in-process "
        "lock-step, T_ext 5 ms",
        "cpus": available_cpus(),
        "single_run": {
            "wall_time": single.metrics["wall_time"],
            "realtime_factor": single.metrics["sim_speed"],
        },
        "workers": per_workers,
        f"scaling_1_to_{max_workers}": last / first,
        "parallel_efficiency": last / first / max_workers,
        "load_average_1min": {"before": load_before, "after": os.getloadavg()[0]},
    }
