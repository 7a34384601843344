"""The sweep's Parquet files: one row per run, and the kept signals in long format.

``results.parquet``: ``run``, ``status`` (``ok`` or ``failed``), ``error``, one column per
varied parameter (its dotted path), then the metrics (``vcosim.sweep.metrics.RESULT_COLUMNS``).
The sweep file and the run's circumstances are in the schema's metadata (key
``vcosim.sweep``, JSON). ``signals.parquet``: ``run``, ``time`` and one column per signal.
pyarrow is the optional extra ``sweep``: every function here says so plainly when it is missing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from vcosim.errors import ConfigError
from vcosim.extras import install_command
from vcosim.sweep.metrics import METRICS, RESULT_COLUMNS
from vcosim.sweep.outcome import SweepOutcome

METADATA_KEY = b"vcosim.sweep"


def require_pyarrow() -> None:
    """Raise a clear error now if pyarrow (extra ``sweep``) is missing."""
    pyarrow()


def pyarrow() -> Any:
    """The modules ``pyarrow`` and ``pyarrow.parquet``; a ConfigError if not installed."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ConfigError([f"results need pyarrow: {install_command('sweep')}"], "sweep") from None
    return pa, pq


def _parameter_column(values: list[Any]) -> tuple[str, list[Any]]:
    """An Arrow type for a parameter's values: bool, int64, float64 or string."""
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present):
        return "bool", values
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return "int64", values
    if present and all(isinstance(v, int | float) and not isinstance(v, bool) for v in present):
        return "float64", [None if v is None else float(v) for v in values]
    return "string", [None if v is None else str(v) for v in values]


def results_table(outcome: SweepOutcome) -> Any:
    """The results as a ``pyarrow.Table``: one row per finished run, in run order."""
    pa, _ = pyarrow()
    results = outcome.results
    types = {
        "bool": pa.bool_(),
        "int64": pa.int64(),
        "float64": pa.float64(),
        "string": pa.string(),
    }
    columns: dict[str, Any] = {
        "run": pa.array([r.index for r in results], pa.int64()),
        "status": pa.array([r.status for r in results], pa.string()),
        "error": pa.array([r.error for r in results], pa.string()),
    }
    for name in outcome.sweep.parameters:
        kind, values = _parameter_column([r.params.get(name) for r in results])
        columns[name] = pa.array(values, types[kind])
    for name in RESULT_COLUMNS:
        columns[name] = pa.array([r.metrics.column(name) for r in results], pa.float64())
    table = pa.table(columns)
    meta = {
        "name": outcome.sweep.name,
        "source": outcome.sweep.source,
        "sweep_file": outcome.sweep.text,
        "runs": outcome.total,
        "finished": len(results),
        "failed": len(outcome.failed),
        "interrupted": outcome.interrupted,
        "backend": outcome.backend,
        "wall_time": outcome.wall_time,
        "parameters": outcome.sweep.parameters,
        "metrics": [m.name for m in METRICS],
    }
    return table.replace_schema_metadata({METADATA_KEY: json.dumps(meta).encode()})


def signals_table(outcome: SweepOutcome) -> Any | None:
    """Every kept signal of every finished run, long format (None if none were kept)."""
    pa, _ = pyarrow()
    kept = [(r.index, r.signals) for r in outcome.results if r.signals]
    if not kept:
        return None
    names = [n for n in kept[0][1] if n != "time"]
    run = np.concatenate([np.full(len(signals["time"]), index) for index, signals in kept])
    columns = {"run": pa.array(run, pa.int64())}
    for name in ("time", *names):
        columns[name] = pa.array(
            np.concatenate([signals[name] for _, signals in kept]), pa.float64()
        )
    return pa.table(columns)


def read_results(path: str | Path) -> Any:
    """A results file back as a ``pyarrow.Table``."""
    _, pq = pyarrow()
    return pq.read_table(path)
