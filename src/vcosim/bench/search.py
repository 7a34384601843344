"""``vcosim bench search``: a search's runs per second against a plain sweep's, on one pool.

The scenario is ``vcosim bench sweep``'s (10 s of cruise, in-process lock-step); the search
varies the controller's gain within the range the sweep's runs take, with TPE and its default
batch. Both run on the same local pool, started and warmed up before any clock starts, in turns
(each keeps its best turn, as ``vcosim bench sweep`` does), so the ratio compares like with
like on a loaded machine. What the search adds per run: asking and telling the method, one
batch's barrier (a batch waits for its slowest run), writing its log line. The issue asks for
at least 80 % of the sweep's rate; it is reported, not guarded.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vcosim.bench.rates import BenchReport
from vcosim.bench.sweep import DURATION, _timed, bench_scenario
from vcosim.search.config import Range, Search, SearchSection
from vcosim.search.driver import run_search
from vcosim.sweep.backends import LocalBackend
from vcosim.sweep.config import OutputSection, Sweep
from vcosim.sweep.metrics import METRICS

TURNS = 3
QUICK = {"runs": 8, "duration": 1.0, "turns": 1}


@dataclass
class SearchBench(BenchReport):
    """Runs per second of the same pool: a sweep's batch and a search's budget."""

    scenario: str
    workers: int
    runs: int
    batch: int
    sweep_runs_per_s: float
    search_runs_per_s: float
    load_before: float
    load_after: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly, as ``vcosim bench search --json`` prints it."""
        return {
            "scenario": self.scenario,
            "workers": self.workers,
            "runs": self.runs,
            "batch": self.batch,
            "sweep_runs_per_s_per_worker": self.sweep_runs_per_s / self.workers,
            "search_runs_per_s_per_worker": self.search_runs_per_s / self.workers,
            "search_vs_sweep": self.search_runs_per_s / self.sweep_runs_per_s,
            "load_average_1min": {"before": self.load_before, "after": self.load_after},
        }


def bench_search(runs: int, duration: float) -> Search:
    """A TPE search over the bench scenario's gain, ``runs`` runs in the default batches."""
    scenario = bench_scenario(duration)
    sweep = Sweep(name="bench-search", scenario=scenario, runs=[{}], parameters=[],
                  output=OutputSection())  # fmt: skip
    section = SearchSection(objective="overshoot", threshold=1e9, budget=runs,
                            parameters={"controller.kp": {"low": 0.2, "high": 0.3}})  # fmt: skip
    metric = next(m for m in METRICS if m.name == "overshoot")
    return Search(sweep, section, {"controller.kp": Range(0.2, 0.3)}, metric, None, 1e9)


def measure_search_bench(
    runs: int = 40,
    workers: int = 2,
    progress: bool = True,
    duration: float = DURATION,
    turns: int = TURNS,
) -> SearchBench:
    """Measure: the sweep's batch and the search's budget on one warmed pool, in turns."""

    def say(text: str) -> None:
        if progress:
            print(text, file=sys.stderr, flush=True)

    load_before = os.getloadavg()[0]
    search = bench_search(runs, duration)
    scenario = search.sweep.scenario
    best_sweep = best_search = 0.0
    with LocalBackend(workers) as pool, tempfile.TemporaryDirectory() as tmp:
        pool.start(scenario)
        list(pool.map(scenario, [(i, {}) for i in range(workers)]))  # start and warm up
        for turn in range(turns):
            say(f"turn {turn + 1} of {turns}: {runs} runs as a sweep, then as a search ...")
            best_sweep = max(best_sweep, _timed(pool, scenario, runs).runs_per_s)
            start = time.perf_counter()
            outcome = run_search(search, pool, out_dir=Path(tmp) / f"turn-{turn}")
            wall = time.perf_counter() - start
            if outcome.failed:
                raise RuntimeError(f"bench runs failed: {outcome.failed[0].error}")
            best_search = max(best_search, len(outcome.runs) / wall)
    return SearchBench(
        scenario=f"cruise to 20 m/s from rest, {duration:g} s simulated, in-process "
        "lock-step, T_ext 5 ms; the search: TPE over the gain",
        workers=workers,
        runs=runs,
        batch=search.section.batch,
        sweep_runs_per_s=best_sweep,
        search_runs_per_s=best_search,
        load_before=load_before,
        load_after=os.getloadavg()[0],
    )
