"""Running a search: batches asked of the method, run on a sweep backend, every run logged.

Each run is the sweep's run (``vcosim.sweep.runner``: the same function, in process, on the
same backends), so it is deterministic and re-runs bit for bit. Every finished run is appended
to ``runs.jsonl`` in the output folder as it arrives, so Ctrl-C (or SIGTERM) loses only the
runs in progress; ``resume=True`` continues from that log: the batches are asked again (the
method gives the same runs for the same seed and scores, ``vcosim.search.methods``), the
logged runs are taken from the log and only the missing ones run. The command ``vcosim
search`` (console, exit code) is ``vcosim.app.search``.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vcosim.errors import ConfigError
from vcosim.search.basins import Minimum, local_minima
from vcosim.search.config import Search
from vcosim.search.methods import Method
from vcosim.search.objective import Objective
from vcosim.sweep.backends import Backend, LocalBackend
from vcosim.sweep.config import Scalar
from vcosim.sweep.runner import RunResult

LOG = "runs.jsonl"
LOG_VERSION = 1


@dataclass
class SearchRun:
    """One finished run of a search: its parameters, metrics and objective."""

    index: int
    batch: int
    params: dict[str, Scalar]
    status: str
    error: str
    metrics: dict[str, float]
    value: float | None
    score: float | None
    falsifying: bool

    def to_json(self) -> str:
        """One line of ``runs.jsonl`` (floats written exactly: they read back bit for bit)."""
        return json.dumps(self.__dict__, allow_nan=True)

    @classmethod
    def from_json(cls, line: str) -> SearchRun:
        """A run from its line of ``runs.jsonl``."""
        return cls(**json.loads(line))


def objective_of(search: Search) -> Objective:
    """The search's objective with its threshold, cap and sampling."""
    s = search.section
    return Objective(search.metric, search.requirement, search.threshold, s.cap, s.signals_every)


@dataclass
class SearchOutcome:
    """The runs of a search (in run order) and how it ended."""

    search: Search
    runs: list[SearchRun]
    interrupted: bool = False
    wall_time: float = 0.0
    backend: str = ""
    ran: int = 0
    """Runs this call ran (the rest came from the log of a resumed search)."""
    stopped: str = "budget"
    files: list[Path] = field(default_factory=list)

    @property
    def falsifying(self) -> list[SearchRun]:
        """The falsifying runs, the most critical (lowest score) first."""
        found = [r for r in self.runs if r.falsifying]
        return sorted(found, key=lambda r: (r.score if r.score is not None else math.inf, r.index))

    @property
    def first_falsifying(self) -> int | None:
        """How many runs it took to find the first falsifying one (None: none found)."""
        return next((r.index + 1 for r in self.runs if r.falsifying), None)

    @property
    def best(self) -> SearchRun | None:
        """The run with the lowest score."""
        scored = [r for r in self.runs if r.score is not None]
        return min(scored, key=lambda r: (r.score, r.index)) if scored else None

    @property
    def minima(self) -> list[Minimum]:
        """The local minima of the objective, the best first: each basin's best run."""
        return local_minima(self.runs, self.search.ranges)

    @property
    def failed(self) -> list[SearchRun]:
        """Runs that raised."""
        return [r for r in self.runs if r.status != "ok"]


RESUMABLE = ("budget", "max_time", "stop")
"""Keys of ``[search]`` a resumed search may change (a bigger budget continues it)."""


def _header(search: Search) -> dict[str, Any]:
    section = search.section.model_dump(exclude=set(RESUMABLE))
    return {"vcosim.search": LOG_VERSION, "name": search.name, "text": search.text,
            "search": section}  # fmt: skip


def read_log(path: Path, search: Search) -> dict[int, SearchRun]:
    """The runs of a search's log; refused if the log is of another search file."""
    lines = path.read_text(encoding="utf-8").splitlines()
    if not lines:
        return {}
    try:
        header = json.loads(lines[0])
        runs = [SearchRun.from_json(line) for line in lines[1:] if line.strip()]
    except (ValueError, TypeError) as exc:
        raise ConfigError([f"{path}: not a search log ({exc})"], "--resume") from None
    if not isinstance(header, dict) or header.get("vcosim.search") != LOG_VERSION:
        raise ConfigError([f"{path}: not a search log of this vcosim"], "--resume")
    if (header.get("text"), header.get("search")) != (search.text, _header(search)["search"]):
        raise ConfigError(
            [
                f"{path}: the search file or the options changed since this search began (only "
                f"{', '.join(RESUMABLE)} may): resume with those it began with, or start afresh "
                "in another --out folder"
            ],
            "--resume",
        )
    return {run.index: run for run in runs}


def run_search(
    search: Search,
    backend: Backend | None = None,
    *,
    out_dir: str | Path,
    resume: bool = False,
    on_result: Callable[[SearchRun], None] | None = None,
) -> SearchOutcome:
    """Search until the budget (or the first falsifying batch, or ``max_time``) is spent.

    Ctrl-C ends the search early: the outcome says ``interrupted`` and holds the finished
    runs, which are in the log already. ``resume`` continues the search logged in
    ``out_dir``; without it an existing log is refused, never overwritten.
    """
    out = Path(out_dir)
    log_path = out / LOG
    logged: dict[int, SearchRun] = {}
    if resume and log_path.exists():
        logged = read_log(log_path, search)
    elif log_path.exists() and log_path.stat().st_size > 0:
        raise ConfigError(
            [f"{out} holds a search already: --resume to continue it, or give another --out"],
            "search",
        )
    out.mkdir(parents=True, exist_ok=True)
    if not logged:
        log_path.write_text(json.dumps(_header(search)) + "\n", encoding="utf-8")

    objective = objective_of(search)
    section = search.section
    method = Method(search)
    owned = backend is None
    backend = backend if backend is not None else LocalBackend()
    runs: list[SearchRun] = []
    interrupted, stopped, ran = False, "budget", 0
    start = time.perf_counter()
    try:
        with log_path.open("a", encoding="utf-8") as log:
            index, batch = 0, 0
            while index < section.budget:
                if section.stop == "first" and any(r.falsifying for r in runs):
                    stopped = "first falsifying run"
                    break
                if section.max_time is not None and time.perf_counter() - start > section.max_time:
                    stopped = "max_time"
                    break
                n = min(section.batch, section.budget - index)
                asked = method.ask(index, n, batch)
                done: dict[int, SearchRun] = {}
                tasks: list[tuple[int, dict[str, Scalar]]] = []
                for i, params in enumerate(asked, start=index):
                    if i in logged:
                        if logged[i].params != params:
                            raise ConfigError(
                                [f"{log_path}: run {i} was {logged[i].params}, now {params}"],
                                "--resume",
                            )
                        done[i] = logged[i]
                    else:
                        tasks.append((i, params))
                stream = backend.map(search.sweep.scenario, tasks, objective.signals())
                try:
                    for result in stream:
                        record = _record(result, batch, objective)
                        done[record.index] = record
                        log.write(record.to_json() + "\n")
                        log.flush()
                        ran += 1
                        if on_result is not None:
                            on_result(record)
                finally:
                    stream.close()  # interrupted: cancels what is queued or running
                ordered = [done[i] for i in range(index, index + n)]
                runs.extend(ordered)
                method.tell([r.score for r in ordered])
                index, batch = index + n, batch + 1
    except KeyboardInterrupt:
        interrupted, stopped = True, "interrupted"
        runs = sorted({r.index: r for r in [*runs, *_finished_in(log_path)]}.values(),
                      key=lambda r: r.index)  # fmt: skip
    finally:
        if owned:
            backend.close()
    return SearchOutcome(
        search, runs, interrupted, time.perf_counter() - start, backend.describe(), ran, stopped
    )


def _finished_in(log_path: Path) -> list[SearchRun]:
    """Every run the log holds (after an interrupt: those of the unfinished batch too)."""
    lines = log_path.read_text(encoding="utf-8").splitlines()[1:]
    return [SearchRun.from_json(line) for line in lines if line.strip()]


def _record(result: RunResult, batch: int, objective: Objective) -> SearchRun:
    """A finished run as the search keeps it (the signals are not kept)."""
    try:
        value = objective.value(result)
    except (KeyError, IndexError) as exc:  # a run that ended before recording a sample
        value, result.status, result.error = None, "failed", f"no objective: {exc}"
    return SearchRun(
        index=result.index,
        batch=batch,
        params=dict(result.params),
        status=result.status,
        error=result.error,
        metrics={k: v for k, v in result.metrics.deterministic().items()},
        value=value,
        score=None if value is None else objective.score(value),
        falsifying=objective.falsifies(value),
    )
