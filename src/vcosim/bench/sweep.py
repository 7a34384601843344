"""``vcosim bench sweep``: runs per second of a 10 s cruise scenario, and scaling over workers.

The scenario: the default vehicle from rest, the ``cruise`` controller to 20 m/s coupled in
process in lock-step (T_ext 5 ms), 10 simulated seconds; the runs differ in the controller's
gain. Measured in one run on this machine: one run in this process (its wall time and
real-time factor), the batch of runs in this process and with the local backend on one
worker, in turns, then the same batch on 2, ... workers. Each pool is started and warmed up
(one run per worker) before its clock starts, so the figure is the steady rate of a long
sweep, not the start-up. ``mean_run_wall_time`` is the wall time of the simulated part of a
run inside its worker, and the 1-minute load average before and after is reported: other
processes on the machine slow both down.

The same-run ratio is one worker's rate over this process's: what the pool costs. The scaling
from 1 to 2 workers is reported but not a guarded ratio: bounded by the cores, it lies between
1 and 2 on two of them, so half of it would flag only a pool slower than one process, and
beside two busy loops it falls to about 1.1 by itself.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass
from typing import Any

from vcosim.bench.rates import BenchReport, RatioDoc
from vcosim.reports import Report
from vcosim.sweep.backends import Backend, LocalBackend, SerialBackend, available_cpus
from vcosim.sweep.config import Scenario, parse

DURATION = 10.0
TURNS = 3  # batches in this process and on one worker each, in alternation
QUICK = {"runs": 6}
"""``--quick``: the same figures in ~5 s, for ``vcosim bench all --quick`` and its guard test."""

RATIOS = {
    "one_worker_vs_in_process": RatioDoc(
        "a sweep worker's runs/s as a share of the same runs in this process: what the pool "
        "costs (its scaling over cores is reported, not guarded)",
        "a batch of 10 s cruise scenarios (in-process lock-step coupling) on a warmed-up "
        "local pool of one worker, against the same batch with the serial backend here, "
        "in turns",
    ),
}
"""The same-run ratios this bench reports (``ratios()``), by their stable keys."""


@dataclass
class WorkerRate(Report):
    """The steady rate of a batch of runs on a pool of local workers."""

    runs: int
    wall_time: float
    runs_per_s: float
    simulated_s_per_s: float
    mean_run_wall_time: float


@dataclass
class SweepBench(BenchReport):
    """``vcosim bench sweep``: one run's speed, the rate on 1, 2, ... workers, the scaling."""

    scenario: str
    cpus: int
    single_run_wall_time: float
    single_run_realtime_factor: float
    in_process_runs_per_s: float
    workers: dict[int, WorkerRate]
    load_before: float
    load_after: float

    @property
    def scaling(self) -> float:
        """Runs/s on the most workers over runs/s on one."""
        most = max(self.workers)
        return self.workers[most].runs_per_s / self.workers[1].runs_per_s

    def ratios(self) -> dict[str, float]:
        """The same-run ratios of ``RATIOS``: higher is faster."""
        return {"one_worker_vs_in_process": self.workers[1].runs_per_s / self.in_process_runs_per_s}

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly, in the layout ``vcosim bench sweep --json`` prints."""
        most = max(self.workers)
        return {
            "scenario": self.scenario,
            "cpus": self.cpus,
            "single_run": {
                "wall_time": self.single_run_wall_time,
                "realtime_factor": self.single_run_realtime_factor,
            },
            "in_process_runs_per_s": self.in_process_runs_per_s,
            "workers": {str(n): rate.to_dict() for n, rate in self.workers.items()},
            f"scaling_1_to_{most}": self.scaling,
            "parallel_efficiency": self.scaling / most,
            "load_average_1min": {"before": self.load_before, "after": self.load_after},
            "ratios": self.ratios(),
        }


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


def _timed(backend: Backend, scenario: Scenario, runs: int) -> WorkerRate:
    """A batch of ``runs`` on ``backend`` (started and warmed up), timed."""
    duration = scenario.scenario.duration
    start = time.perf_counter()
    results = list(backend.map(scenario, _tasks(runs)))
    wall = time.perf_counter() - start
    failed = [r.error for r in results if r.failed]
    if failed:
        raise RuntimeError(f"bench runs failed: {failed[0]}")
    return WorkerRate(
        runs=runs,
        wall_time=wall,
        runs_per_s=runs / wall,
        simulated_s_per_s=runs * duration / wall,
        mean_run_wall_time=sum(r.metrics.wall_time for r in results) / len(results),
    )


def measure_sweep_bench(
    runs: int = 40, max_workers: int = 2, progress: bool = True, duration: float = DURATION
) -> SweepBench:
    """Measure (``duration``: shorter runs, for a smoke test).

    The batch in this process and on one worker take ``TURNS`` turns each in alternation,
    each keeping its best (``vcosim.bench.rates``); more workers one batch each.
    """

    def say(text: str) -> None:
        if progress:
            print(text, file=sys.stderr, flush=True)

    load_before = os.getloadavg()[0]
    scenario = bench_scenario(duration)
    serial = SerialBackend()
    say("one run in this process ...")
    single = next(iter(serial.map(scenario, [(0, {})])))  # (warmed up first)
    in_process = 0.0
    rates: dict[int, WorkerRate] = {}
    for workers in range(1, max_workers + 1):
        with LocalBackend(workers) as pool:
            pool.start(scenario)
            list(pool.map(scenario, _tasks(workers)))  # start and warm every worker
            if workers > 1:
                say(f"{runs} runs on {workers} workers ...")
                rates[workers] = _timed(pool, scenario, runs)
                continue
            say(f"{runs} runs in this process and on 1 worker, {TURNS} turns each ...")
            for _ in range(TURNS):
                in_process = max(in_process, _timed(serial, scenario, runs).runs_per_s)
                turn = _timed(pool, scenario, runs)
                if 1 not in rates or turn.runs_per_s > rates[1].runs_per_s:
                    rates[1] = turn
    return SweepBench(
        scenario=f"cruise to 20 m/s from rest, {duration:g} s simulated, in-process "
        "lock-step, T_ext 5 ms",
        cpus=available_cpus(),
        single_run_wall_time=single.metrics.wall_time,
        single_run_realtime_factor=single.metrics.sim_speed,
        in_process_runs_per_s=in_process,
        workers=rates,
        load_before=load_before,
        load_after=os.getloadavg()[0],
    )
