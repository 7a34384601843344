"""A sweep's results: one Parquet row per run, the signals, and a summary report with plots.

Files in the output folder:

- ``results.parquet``: one row per finished run, in run order: ``run``, ``status`` (``ok`` or
  ``failed``), ``error``, one column per varied parameter (its dotted path), then the metrics
  (``vcosim.sweep.runner.RESULT_COLUMNS``). The sweep file and the run's circumstances are in
  the schema's metadata (key ``vcosim.sweep``, JSON).
- ``signals.parquet`` (if asked for): ``run``, ``time`` and one column per kept signal.
- ``report.html`` with ``plots/<metric>.png``: each metric against each parameter, the worst
  runs highlighted and named; tables of the worst runs and of the failures.
- ``failures.log``: the traceback of every failed run.
- ``summary.json``: counts, timing, backend, worst case of each metric.

Every file is written to a temporary name and renamed, so an interrupted write leaves the
previous file or none, never a torn one.
"""

from __future__ import annotations

import html
import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from vcosim.errors import ConfigError
from vcosim.sweep.config import Sweep
from vcosim.sweep.runner import METRICS, RESULT_COLUMNS, Metric, RunResult

METADATA_KEY = b"vcosim.sweep"
PLOTS_PER_ROW = 4


@dataclass
class SweepOutcome:
    """What a sweep produced: the finished runs in run order and the circumstances."""

    sweep: Sweep
    results: list[RunResult]
    interrupted: bool = False
    wall_time: float = 0.0
    backend: str = ""
    files: list[Path] = field(default_factory=list)

    @property
    def failed(self) -> list[RunResult]:
        """The runs that raised."""
        return [r for r in self.results if r.failed]

    @property
    def total(self) -> int:
        """Runs the sweep has (finished or not)."""
        return len(self.sweep.runs)


def require_pyarrow() -> None:
    """Raise a clear error now if pyarrow (extra ``sweep``) is missing."""
    _pyarrow()


def _pyarrow() -> Any:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ConfigError(["results need pyarrow: pip install 'vcosim[sweep]'"], "sweep") from None
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
    pa, _ = _pyarrow()
    results = outcome.results
    columns: dict[str, Any] = {
        "run": pa.array([r.index for r in results], pa.int64()),
        "status": pa.array([r.status for r in results], pa.string()),
        "error": pa.array([r.error for r in results], pa.string()),
    }
    for name in outcome.sweep.parameters:
        kind, values = _parameter_column([r.params.get(name) for r in results])
        types = {
            "bool": pa.bool_(),
            "int64": pa.int64(),
            "float64": pa.float64(),
            "string": pa.string(),
        }
        columns[name] = pa.array(values, types[kind])
    for name in RESULT_COLUMNS:
        columns[name] = pa.array(
            [float(r.metrics.get(name, math.nan)) for r in results], pa.float64()
        )
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
    pa, _ = _pyarrow()
    kept = [r for r in outcome.results if r.signals]
    if not kept:
        return None
    names = [n for n in kept[0].signals if n != "time"]  # type: ignore[union-attr]
    run = np.concatenate(
        [
            np.full(len(r.signals["time"]), r.index)  # type: ignore[index]
            for r in kept
        ]
    )
    columns = {"run": pa.array(run, pa.int64())}
    for name in ("time", *names):
        columns[name] = pa.array(
            np.concatenate([r.signals[name] for r in kept]),  # type: ignore[index]
            pa.float64(),
        )
    return pa.table(columns)


def read_results(path: str | Path) -> Any:
    """A results file back as a ``pyarrow.Table``."""
    _, pq = _pyarrow()
    return pq.read_table(path)


def _replace(path: Path, write: Any) -> Path:
    """Write through ``write(tmp_path)`` and rename into place."""
    tmp = path.with_name(f".{path.name}.tmp")
    write(tmp)
    os.replace(tmp, path)
    return path


# -- worst cases -------------------------------------------------------------------------------


def ranking(values: np.ndarray, metric: Metric) -> np.ndarray:
    """Indices of the finite-or-infinite (not NaN) values, worst first."""
    valid = np.flatnonzero(~np.isnan(values))
    v = values[valid]
    if metric.worst == "min":
        key = v
    elif metric.worst == "abs":
        key = -np.abs(v)
    else:
        key = -v
    return valid[np.argsort(key, kind="stable")]


def worst_cases(outcome: SweepOutcome, count: int) -> dict[str, list[RunResult]]:
    """The ``count`` worst runs of each metric that has values."""
    ok = [r for r in outcome.results if not r.failed]
    out = {}
    for metric in METRICS:
        values = np.array([r.metrics.get(metric.name, math.nan) for r in ok], dtype=float)
        order = ranking(values, metric)
        if order.size:
            out[metric.name] = [ok[i] for i in order[:count]]
    return out


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        if math.isnan(value):
            return "—"
        if math.isinf(value):
            return "never" if value > 0 else "-inf"
        return f"{value:.4g}"
    return str(value)


def _params_text(params: dict[str, Any]) -> str:
    return ", ".join(f"{k} = {_fmt(v)}" for k, v in params.items())


# -- plots -------------------------------------------------------------------------------------


def _axis_values(values: list[Any]) -> tuple[np.ndarray, list[str] | None]:
    """Numbers to plot a parameter at; strings become categories (with their labels)."""
    if all(isinstance(v, int | float) for v in values):
        return np.asarray(values, dtype=float), None
    labels = sorted({str(v) for v in values})
    return np.array([labels.index(str(v)) for v in values], dtype=float), labels


def plot_metric(outcome: SweepOutcome, metric: Metric, path: Path, worst: int) -> Path | None:
    """One metric against each varied parameter (or the run number); worst runs in red."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ok = [r for r in outcome.results if not r.failed]
    values = np.array([r.metrics.get(metric.name, math.nan) for r in ok], dtype=float)
    if not np.any(~np.isnan(values)):
        return None
    params = outcome.sweep.parameters or ["run"]
    ncols = min(len(params), PLOTS_PER_ROW)
    nrows = math.ceil(len(params) / ncols)
    fig, grid = plt.subplots(
        nrows, ncols, figsize=(4.2 * ncols, 3.6 * nrows), squeeze=False, sharey=True
    )
    axes = grid.ravel()
    for ax in axes[len(params) :]:
        ax.set_visible(False)
    finite = values[np.isfinite(values)]
    top = float(finite.max()) if finite.size else 1.0
    bottom = float(finite.min()) if finite.size else 0.0
    log_y = metric.name == "min_realtime_factor" and _wide(finite)  # ratios: log when wide
    if log_y:  # positions beyond the data for inf and for failed runs, in log space
        above, below, under = top * 2.0, bottom / 2.0, bottom / 3.0
    else:
        span = (top - bottom) or max(abs(top), 1.0)
        above, below, under = top + 0.08 * span, bottom - 0.08 * span, bottom - 0.12 * span
    shown = np.where(np.isinf(values), np.where(values > 0, above, below), values)
    worst_idx = ranking(values, metric)[:worst]
    failed = outcome.failed
    for ax, name in zip(axes, params, strict=False):
        if name == "run":
            x, labels = np.array([r.index for r in ok], dtype=float), None
            fx = np.array([r.index for r in failed], dtype=float)
        else:
            x, labels = _axis_values(
                [r.params.get(name) for r in ok] + [r.params.get(name) for r in failed]
            )
            x, fx = x[: len(ok)], x[len(ok) :]
        log_x = labels is None and _wide(np.concatenate([x, fx]))
        jitter = np.zeros_like(x) if log_x else _jitter(x)
        ax.scatter(x + jitter, shown, s=14, color="tab:blue", alpha=0.6, linewidths=0, label="runs")
        never = np.isinf(values)
        if never.any():
            ax.scatter(
                x[never] + jitter[never],
                shown[never],
                s=30,
                marker="^",
                color="tab:orange",
                label="inf (never settled)",
            )
        if worst_idx.size:
            ax.scatter(
                x[worst_idx] + jitter[worst_idx],
                shown[worst_idx],
                s=40,
                facecolors="none",
                edgecolors="red",
                linewidths=1.5,
                label=f"{len(worst_idx)} worst",
            )
            for i in worst_idx:
                ax.annotate(
                    str(ok[i].index),
                    (x[i] + jitter[i], shown[i]),
                    fontsize=7,
                    color="red",
                    xytext=(3, 3),
                    textcoords="offset points",
                )
        if fx.size:
            ax.scatter(fx, np.full(fx.size, under), marker="x", color="black", s=24, label="failed")
        if metric.name == "min_realtime_factor":
            ax.axhline(1.0, color="gray", linestyle="--", linewidth=1, label="real time")
        if log_x:
            ax.set_xscale("log")
        if log_y:
            ax.set_yscale("log")
        if labels is not None:
            ax.set_xticks(range(len(labels)), labels, rotation=30, fontsize=8)
        ax.set_xlabel(name)
        ax.grid(True, alpha=0.3)
    unit = "" if metric.unit in ("-", "signal") else f" ({metric.unit})"
    for row in grid:
        row[0].set_ylabel(metric.name + unit)
    axes[len(params) - 1].legend(fontsize=7, loc="best")
    fig.suptitle(f"{outcome.sweep.name}: {metric.name} (worst: {metric.worst})", fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    _replace(path, lambda tmp: fig.savefig(tmp, dpi=90, format="png"))
    plt.close(fig)
    return path


def _wide(values: np.ndarray) -> bool:
    """True for positive values spanning two decades or more: plotted on a log scale."""
    finite = values[np.isfinite(values)]
    return (
        bool(finite.size)
        and float(finite.min()) > 0
        and float(finite.max()) / float(finite.min()) >= 100.0
    )


def _jitter(x: np.ndarray) -> np.ndarray:
    """A small deterministic horizontal spread for runs sharing a parameter value."""
    distinct = np.unique(x[np.isfinite(x)])
    step = 1.0 if distinct.size < 2 else float(np.min(np.diff(distinct)))
    offsets = np.zeros_like(x)
    for value in distinct:
        same = np.flatnonzero(x == value)
        if same.size > 1:
            offsets[same] = np.linspace(-0.15, 0.15, same.size) * step
    return offsets


# -- the HTML report ---------------------------------------------------------------------------


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(_fmt(c))}</td>" for c in row) + "</tr>" for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def summary_rows(outcome: SweepOutcome) -> list[tuple[str, str]]:
    """Label and value of the sweep's headline figures."""
    done = len(outcome.results)
    rate = done / outcome.wall_time if outcome.wall_time > 0 else math.nan
    rows = [
        ("sweep file", outcome.sweep.source),
        (
            "runs",
            f"{done} of {outcome.total} finished"
            + (" (interrupted)" if outcome.interrupted else ""),
        ),
        ("failed", str(len(outcome.failed))),
        ("backend", outcome.backend),
        ("wall time", f"{outcome.wall_time:.1f} s ({rate:.2f} runs/s)"),
        ("parameters", ", ".join(outcome.sweep.parameters) or "none"),
    ]
    return rows


def write_html(outcome: SweepOutcome, path: Path, plots: dict[str, Path], worst: int) -> Path:
    """The summary report: headline, per metric its plot and worst runs, the failures."""
    params = outcome.sweep.parameters
    parts = [
        f"<h1>Sweep {html.escape(outcome.sweep.name)}</h1>",
        _table(("", ""), summary_rows(outcome)),
    ]
    if outcome.interrupted:
        parts.append("<p><b>Interrupted:</b> only the finished runs are in this report.</p>")
    parts.append(
        "<p>Metric definitions: <code>docs/sweeps.md</code>. The worst runs of each "
        "metric are circled in red and labelled with their run number.</p>"
    )
    for name, runs in worst_cases(outcome, worst).items():
        metric = next(m for m in METRICS if m.name == name)
        parts.append(
            f"<h2>{html.escape(name)}</h2><p>{html.escape(metric.description)} "
            f"(unit: {html.escape(metric.unit)}; worst = {metric.worst}).</p>"
        )
        if name in plots:
            rel = plots[name].relative_to(path.parent).as_posix()
            parts.append(f'<img src="{html.escape(rel)}" alt="{html.escape(name)}">')
        rows = [(r.index, r.metrics[name], *(r.params.get(p) for p in params)) for r in runs]
        parts.append(_table(("run", name, *params), rows))
    failed = outcome.failed
    parts.append(f"<h2>Failed runs ({len(failed)})</h2>")
    if failed:
        parts.append(
            _table(
                ("run", *params, "error"),
                [(r.index, *(r.params.get(p) for p in params), r.error) for r in failed],
            )
        )
        parts.append("<p>Tracebacks: <code>failures.log</code>.</p>")
    style = (
        "body{font-family:sans-serif;max-width:1200px;margin:2em auto}"
        "table{border-collapse:collapse;margin:0.5em 0}"
        "td,th{border:1px solid #ccc;padding:2px 8px;text-align:left;font-size:90%}"
        "img{max-width:100%}"
    )
    page = (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>Sweep "
        f"{html.escape(outcome.sweep.name)}</title><style>{style}</style></head><body>"
        + "\n".join(parts)
        + "</body></html>"
    )
    return _replace(path, lambda tmp: tmp.write_text(page, encoding="utf-8"))


def summary(outcome: SweepOutcome, worst: int) -> dict[str, Any]:
    """A JSON-friendly summary: counts, timing, the worst run of each metric."""

    def clean(value: Any) -> Any:
        if isinstance(value, float) and not math.isfinite(value):
            return None if math.isnan(value) else ("inf" if value > 0 else "-inf")
        return value

    return {
        "name": outcome.sweep.name,
        "source": outcome.sweep.source,
        "runs": outcome.total,
        "finished": len(outcome.results),
        "failed": len(outcome.failed),
        "interrupted": outcome.interrupted,
        "backend": outcome.backend,
        "wall_time": outcome.wall_time,
        "worst": {
            name: [
                {"run": r.index, "value": clean(r.metrics[name]), "params": r.params} for r in runs
            ]
            for name, runs in worst_cases(outcome, worst).items()
        },
        "failures": [
            {"run": r.index, "params": r.params, "error": r.error} for r in outcome.failed
        ],
    }


def write_outputs(outcome: SweepOutcome, out_dir: str | Path) -> list[Path]:
    """Every output file of a sweep (see the module docstring); returns their paths."""
    _, pq = _pyarrow()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    worst = outcome.sweep.output.worst
    table = results_table(outcome)
    files = [_replace(out / "results.parquet", lambda tmp: pq.write_table(table, tmp))]
    signals = signals_table(outcome)
    if signals is not None:
        files.append(_replace(out / "signals.parquet", lambda tmp: pq.write_table(signals, tmp)))
    failures = "\n".join(
        f"run {r.index} ({_params_text(r.params)}): {r.error}\n{r.traceback}"
        for r in outcome.failed
    )
    files.append(
        _replace(out / "failures.log", lambda tmp: tmp.write_text(failures, encoding="utf-8"))
    )
    files.append(
        _replace(
            out / "summary.json",
            lambda tmp: tmp.write_text(
                json.dumps(summary(outcome, worst), indent=2, default=str), encoding="utf-8"
            ),
        )
    )
    if outcome.sweep.text:
        files.append(
            _replace(
                out / "sweep.toml", lambda tmp: tmp.write_text(outcome.sweep.text, encoding="utf-8")
            )
        )
    plots = {}
    for metric in METRICS:
        path = plot_metric(outcome, metric, out / "plots" / f"{metric.name}.png", worst)
        if path is not None:
            plots[metric.name] = path
            files.append(path)
    files.append(write_html(outcome, out / "report.html", plots, worst))
    return files
