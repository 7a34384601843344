"""Running a whole sweep: every run on a backend, the results written as they stand at the end.

A run that raises is recorded as failed and the sweep goes on. Ctrl-C (or SIGTERM) stops the
sweep: the runs still queued are cancelled, those in progress abandoned, and the finished ones
are written as usual, the outcome marked "interrupted". If the backend itself fails (a Ray
cluster lost), the finished runs are written the same way before the error is raised. The
command ``vcosim sweep`` (console, exit code) is ``vcosim.app.sweep``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from vcosim.sweep.backends import Backend, LocalBackend
from vcosim.sweep.config import Sweep
from vcosim.sweep.faces import SignalSpec
from vcosim.sweep.outcome import SweepOutcome
from vcosim.sweep.report import write_outputs
from vcosim.sweep.runner import RunResult
from vcosim.sweep.tables import require_pyarrow


def default_out_dir(sweep: Sweep) -> Path:
    """``[output] dir`` of the sweep file, else ``sweeps/<name>`` in the current folder."""
    return Path(sweep.output.dir) if sweep.output.dir else Path("sweeps") / sweep.name


def run_sweep(
    sweep: Sweep,
    backend: Backend | None = None,
    *,
    out_dir: str | Path | None = None,
    signals: bool | None = None,
    write: bool = True,
    on_result: Callable[[RunResult], None] | None = None,
) -> SweepOutcome:
    """Run every run of ``sweep`` and (``write``) save the results in ``out_dir``.

    ``signals`` overrides ``[output] signals``. ``on_result`` sees each result as it arrives
    (in completion order): a progress bar, say. Ctrl-C ends the sweep early; the outcome says
    ``interrupted`` and holds the finished runs.
    """
    if write:
        require_pyarrow()  # before hours of runs, not after
    owned = backend is None
    backend = backend if backend is not None else LocalBackend()
    keep = sweep.output.signals if signals is None else signals
    spec = (
        SignalSpec(tuple(sweep.output.signal_names), sweep.output.signals_every) if keep else None
    )
    results: list[RunResult] = []
    interrupted = False
    error: Exception | None = None
    start = time.perf_counter()
    stream = None
    try:
        stream = backend.map(sweep.scenario, list(enumerate(sweep.runs)), spec)
        for result in stream:
            results.append(result)
            if on_result is not None:
                on_result(result)
    except KeyboardInterrupt:
        interrupted = True
    except Exception as exc:  # the backend itself failed: keep what finished, then raise
        interrupted, error = True, exc
    finally:
        if stream is not None:
            stream.close()  # cancels what is still queued or running
        if owned:
            backend.close()
    outcome = SweepOutcome(
        sweep,
        sorted(results, key=lambda r: r.index),
        interrupted,
        time.perf_counter() - start,
        backend.describe(),
    )
    if write and (results or error is None):
        outcome.files = write_outputs(
            outcome, out_dir if out_dir is not None else default_out_dir(sweep)
        )
    if error is not None:
        raise error
    return outcome
