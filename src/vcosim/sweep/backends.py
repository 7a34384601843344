"""Where a sweep's runs execute: in this process, in local worker processes, or on Ray.

Every backend takes the runs as (index, parameters) and yields one ``RunResult`` per run as
runs finish (in any order; the caller sorts by index). Runs go out in chunks, with a bounded
number of chunks in flight, so progress is smooth and an interrupt leaves little to cancel.
A run that raises comes back as a failed result; a worker process that dies takes its runs
down with it: they run again one at a time, and the one that kills its worker again is
recorded as failed.

- ``SerialBackend``: this process, one run after another (``--workers 0``; debugging).
- ``LocalBackend``: a pool of worker processes (forkserver, else spawn) on every core by
  default. Each worker loads the compiled kernels once, with a short warm-up run, so the first
  real run's timing is not distorted.
- ``RayBackend``: Ray tasks; joins the cluster at ``address`` (or ``RAY_ADDRESS``, or one
  started with ``ray start`` on this machine), else starts Ray locally. Ray is an optional extra.
"""

from __future__ import annotations

import contextlib
import math
import multiprocessing as mp
import os
import signal
from abc import ABC, abstractmethod
from collections.abc import Generator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from vcosim.errors import ConfigError
from vcosim.extras import install_command
from vcosim.sweep.config import BackendSection, Scalar, Scenario
from vcosim.sweep.runner import RunResult, SignalSpec, safe_run, warm_up

Task = tuple[int, dict[str, Scalar]]
IN_FLIGHT_PER_WORKER = 2  # chunks queued per worker: enough to keep it busy, little to cancel


def available_cpus() -> int:
    """Cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def chunks(tasks: Sequence[Task], workers: int, size: int | None = None) -> list[list[Task]]:
    """Split runs into chunks: about eight per worker, at most 16 runs each."""
    if size is None:
        size = max(1, min(16, math.ceil(len(tasks) / (8 * max(workers, 1)))))
    return [list(tasks[i : i + size]) for i in range(0, len(tasks), size)]


def run_chunk(scenario: Scenario, chunk: list[Task], signals: SignalSpec | None) -> list[RunResult]:
    """Run a chunk of runs (in a worker); every run gives a result, failed or not."""
    warm_up(scenario)
    return [safe_run(index, scenario, params, signals) for index, params in chunk]


def failed(task: Task, error: str) -> RunResult:
    """The result of a run that did not finish for a reason outside the run itself."""
    return RunResult(task[0], dict(task[1]), "failed", error=error)


B = TypeVar("B", bound="Backend")


class Backend(ABC):
    """Runs a sweep's runs somewhere; a context manager whose ``close`` is safe twice."""

    name = "backend"
    workers = 1

    @abstractmethod
    def map(
        self, scenario: Scenario, tasks: Sequence[Task], signals: SignalSpec | None = None
    ) -> Generator[RunResult, None, None]:
        """Yield a result for every task as it finishes; closing the iterator cancels the rest."""

    def describe(self) -> str:
        """A short description for the summary."""
        return f"{self.name} ({self.workers} worker{'s' if self.workers != 1 else ''})"

    def close(self) -> None:  # noqa: B027 - nothing to release unless a backend says so
        """Release workers (safe twice)."""

    def __enter__(self: B) -> B:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class SerialBackend(Backend):
    """Every run in this process, one after another."""

    name = "serial"

    def map(
        self, scenario: Scenario, tasks: Sequence[Task], signals: SignalSpec | None = None
    ) -> Generator[RunResult, None, None]:
        """Run each task in turn."""
        warm_up(scenario)
        for index, params in tasks:
            yield safe_run(index, scenario, params, signals)


def _init_worker(scenario: Scenario) -> None:
    """A new worker: leave Ctrl-C to the parent (it cancels), load the kernels."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    warm_up(scenario)


class LocalBackend(Backend):
    """A pool of worker processes on this machine (all cores by default)."""

    name = "local"

    def __init__(
        self,
        workers: int | None = None,
        *,
        chunk_size: int | None = None,
        start_method: str | None = None,
    ) -> None:
        if workers is not None and workers < 1:
            raise ConfigError([f"workers: at least 1 (got {workers})"], "local backend")
        self.workers = workers or available_cpus()
        self.chunk_size = chunk_size
        methods = mp.get_all_start_methods()
        self.start_method = start_method or ("forkserver" if "forkserver" in methods else "spawn")
        self._pool: ProcessPoolExecutor | None = None

    def start(self, scenario: Scenario) -> None:
        """Start the workers now (else the first ``map`` does), each warmed up on ``scenario``."""
        if self._pool is None:
            self._pool = ProcessPoolExecutor(
                self.workers,
                mp_context=mp.get_context(self.start_method),
                initializer=_init_worker,
                initargs=(scenario,),
            )

    def map(
        self, scenario: Scenario, tasks: Sequence[Task], signals: SignalSpec | None = None
    ) -> Generator[RunResult, None, None]:
        """Run the tasks on the pool, yielding results as chunks finish.

        If a worker process dies, every run that was in flight is a suspect: the suspects run
        again one at a time, so the one that kills its worker again is recorded as failed and
        the others finish.
        """
        self.start(scenario)
        queue: list[list[Task]] = list(reversed(chunks(tasks, self.workers, self.chunk_size)))
        suspects: list[Task] = []
        pending: dict[Future[list[RunResult]], list[Task]] = {}
        limit = IN_FLIGHT_PER_WORKER * self.workers
        finished = False
        try:
            while queue or pending or suspects:
                if suspects:
                    task = suspects.pop()
                    pending[self._submit(scenario, [task], signals)] = [task]
                    try:
                        results = next(iter(pending)).result()
                    except BrokenProcessPool as exc:
                        results = [failed(task, f"worker process died: {exc}")]
                        self._abort()
                        self.start(scenario)
                    pending.clear()
                    yield from results
                    continue
                while queue and len(pending) < limit:
                    chunk = queue.pop()
                    try:
                        pending[self._submit(scenario, chunk, signals)] = chunk
                    except BrokenProcessPool:  # broke since the last wait: the futures tell
                        queue.append(chunk)
                        if not pending:
                            self._abort()
                            self.start(scenario)
                        break
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                lost: list[Task] = []
                for future in done:
                    chunk = pending.pop(future)
                    try:
                        results = future.result()
                    except BrokenProcessPool:
                        lost.extend(chunk)
                        continue
                    yield from results
                if lost:
                    for chunk in pending.values():
                        lost.extend(chunk)
                    pending.clear()
                    suspects = list(reversed(lost))
                    self._abort()
                    self.start(scenario)
            finished = True
        finally:
            if not finished:
                self._abort()  # interrupted: cancel what is queued, stop what runs

    def _submit(
        self, scenario: Scenario, chunk: list[Task], signals: SignalSpec | None
    ) -> Future[list[RunResult]]:
        self.start(scenario)
        return self._pool.submit(run_chunk, scenario, chunk, signals)  # type: ignore[union-attr]

    def _abort(self) -> None:
        """Stop the workers at once (their current runs are lost)."""
        pool, self._pool = self._pool, None
        if pool is None:
            return
        processes = list(getattr(pool, "_processes", {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            if process.is_alive():
                process.terminate()
        for process in processes:
            process.join(timeout=5)

    def close(self) -> None:
        """Stop the workers (safe twice)."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)


_remote_chunk: Any = None


class RayBackend(Backend):
    """Ray tasks, on a cluster or on a Ray started here."""

    name = "ray"

    def __init__(
        self,
        address: str | None = None,
        *,
        chunk_size: int | None = None,
        init_options: dict[str, Any] | None = None,
    ) -> None:
        self.address = address
        self.chunk_size = chunk_size
        self.init_options = dict(init_options or {})
        self.started = False
        self.workers = 0

    def start(self) -> None:
        """Join or start Ray (once); a Ray already initialised in this process is used as is."""
        try:
            import ray
        except ImportError:
            raise ConfigError([f"--ray needs Ray: {install_command('ray')}"], "sweep") from None
        if not ray.is_initialized():
            options = {"include_dashboard": False, "logging_level": "WARNING", **self.init_options}
            if self.address:
                options["address"] = self.address
            elif not os.environ.get("RAY_ADDRESS"):
                # A local Ray of its own: token authentication, as Ray (>= 2.52) chooses by
                # default anyway, but said, so Ray does not warn about it in every sweep.
                os.environ.setdefault("RAY_AUTH_MODE", "token")
            ray.init(**options)
            self.started = True
        self.workers = max(int(ray.cluster_resources().get("CPU", 1)), 1)

    def describe(self) -> str:
        """Ray and its CPUs."""
        where = self.address or os.environ.get("RAY_ADDRESS") or "local"
        return f"ray at {where} ({self.workers} CPU{'' if self.workers == 1 else 's'})"

    def map(
        self, scenario: Scenario, tasks: Sequence[Task], signals: SignalSpec | None = None
    ) -> Generator[RunResult, None, None]:
        """Submit chunks as Ray tasks, yielding results as they finish."""
        global _remote_chunk
        self.start()
        import ray

        if _remote_chunk is None:
            _remote_chunk = ray.remote(num_cpus=1)(run_chunk)
        scenario_ref = ray.put(scenario)
        queue = list(reversed(chunks(tasks, self.workers, self.chunk_size)))
        pending: dict[Any, list[Task]] = {}
        limit = IN_FLIGHT_PER_WORKER * self.workers
        try:
            while queue or pending:
                while queue and len(pending) < limit:
                    chunk = queue.pop()
                    pending[_remote_chunk.remote(scenario_ref, chunk, signals)] = chunk
                ready, _ = ray.wait(list(pending), num_returns=1)
                for ref in ready:
                    chunk = pending.pop(ref)
                    try:
                        results = ray.get(ref)
                    except ray.exceptions.RayError as exc:
                        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
                        for task in chunk:
                            yield failed(task, f"ray task failed: {type(exc).__name__}: {reason}")
                        continue
                    yield from results
        finally:
            for ref in pending:
                with contextlib.suppress(Exception):  # already finished or gone
                    ray.cancel(ref, force=True)

    def close(self) -> None:
        """Shut Ray down if this backend started it (safe twice)."""
        if self.started:
            import ray

            ray.shutdown()
            self.started = False


def make_backend(options: BackendSection) -> Backend:
    """The backend ``[backend]`` (or the command line) asks for: Ray, serial or local."""
    if options.uses_ray:
        return RayBackend(options.ray_address)
    if options.workers == 0:
        return SerialBackend()
    return LocalBackend(options.workers)
