"""A sweep's output folder: results, signals, the HTML report with its plots, the summary.

Files in the output folder:

- ``results.parquet`` and ``signals.parquet`` (``vcosim.sweep.tables``);
- ``report.html`` with ``plots/<metric>.png``: each metric against each parameter, the worst
  runs highlighted and named; tables of the worst runs and of the failures;
- ``failures.log``: the traceback of every failed run;
- ``summary.json``: counts, timing, backend, worst runs of each metric (``SweepSummary``);
- ``sweep.toml``: a copy of the sweep file.

Every file is written to a temporary name and renamed, so an interrupted write leaves the
previous file or none, never a torn one.
"""

from __future__ import annotations

import html
import json
import math
import os
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure

from vcosim.sweep.metrics import METRICS
from vcosim.sweep.outcome import SweepOutcome, SweepSummary, worst_cases
from vcosim.sweep.plots import plot_metric
from vcosim.sweep.tables import pyarrow, results_table, signals_table

STYLE = (
    "body{font-family:sans-serif;max-width:1200px;margin:2em auto}"
    "table{border-collapse:collapse;margin:0.5em 0}"
    "td,th{border:1px solid #ccc;padding:2px 8px;text-align:left;font-size:90%}"
    "img{max-width:100%}"
)


def replace_file(path: Path, write: Callable[[Path], object]) -> Path:
    """Write through ``write(tmp_path)`` and rename into place."""
    tmp = path.with_name(f".{path.name}.tmp")
    write(tmp)
    os.replace(tmp, path)
    return path


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
    interrupted = " (interrupted)" if outcome.interrupted else ""
    return [
        ("sweep file", outcome.sweep.source),
        ("runs", f"{done} of {outcome.total} finished{interrupted}"),
        ("failed", str(len(outcome.failed))),
        ("backend", outcome.backend),
        ("wall time", f"{outcome.wall_time:.1f} s ({rate:.2f} runs/s)"),
        ("parameters", ", ".join(outcome.sweep.parameters) or "none"),
    ]


def write_html(outcome: SweepOutcome, path: Path, plots: dict[str, Path], worst: int) -> Path:
    """The summary report: headline, per metric its plot and worst runs, the failures."""
    params = outcome.sweep.parameters
    name = html.escape(outcome.sweep.name)
    parts = [f"<h1>Sweep {name}</h1>", _table(("", ""), summary_rows(outcome))]
    if outcome.interrupted:
        parts.append("<p><b>Interrupted:</b> only the finished runs are in this report.</p>")
    parts.append(
        "<p>Metric definitions: <code>docs/sweeps.md</code>. The worst runs of each "
        "metric are circled in red and labelled with their run number.</p>"
    )
    for metric_name, runs in worst_cases(outcome, worst).items():
        metric = next(m for m in METRICS if m.name == metric_name)
        parts.append(
            f"<h2>{html.escape(metric_name)}</h2><p>{html.escape(metric.description)} "
            f"(unit: {html.escape(metric.unit)}; worst = {metric.worst}).</p>"
        )
        if metric_name in plots:
            rel = plots[metric_name].relative_to(path.parent).as_posix()
            parts.append(f'<img src="{html.escape(rel)}" alt="{html.escape(metric_name)}">')
        rows = [
            (r.index, r.metrics.column(metric_name), *(r.params.get(p) for p in params))
            for r in runs
        ]
        parts.append(_table(("run", metric_name, *params), rows))
    failed = outcome.failed
    parts.append(f"<h2>Failed runs ({len(failed)})</h2>")
    if failed:
        rows = [(r.index, *(r.params.get(p) for p in params), r.error) for r in failed]
        parts.append(_table(("run", *params, "error"), rows))
        parts.append("<p>Tracebacks: <code>failures.log</code>.</p>")
    page = (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>Sweep {name}</title>"
        f"<style>{STYLE}</style></head><body>" + "\n".join(parts) + "</body></html>"
    )
    return replace_file(path, lambda tmp: tmp.write_text(page, encoding="utf-8"))


def _save_png(figure: Figure, path: Path) -> None:
    figure.savefig(path, dpi=90, format="png")


def _write_text(path: Path, text: str) -> Path:
    return replace_file(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def write_outputs(outcome: SweepOutcome, out_dir: str | Path) -> list[Path]:
    """Every output file of a sweep (see the module docstring); returns their paths."""
    _, pq = pyarrow()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    worst = outcome.sweep.output.worst
    table = results_table(outcome)
    files = [replace_file(out / "results.parquet", lambda tmp: pq.write_table(table, tmp))]
    signals = signals_table(outcome)
    if signals is not None:
        files.append(
            replace_file(out / "signals.parquet", lambda tmp: pq.write_table(signals, tmp))
        )
    failures = "\n".join(
        f"run {r.index} ({_params_text(r.params)}): {r.error}\n{r.traceback}"
        for r in outcome.failed
    )
    files.append(_write_text(out / "failures.log", failures))
    summary = SweepSummary.of(outcome, worst).to_dict()
    files.append(_write_text(out / "summary.json", json.dumps(summary, indent=2, default=str)))
    if outcome.sweep.text:
        files.append(_write_text(out / "sweep.toml", outcome.sweep.text))
    plots = {}
    for metric in METRICS:
        figure = plot_metric(outcome, metric, worst)
        if figure is not None:
            path = out / "plots" / f"{metric.name}.png"
            path.parent.mkdir(parents=True, exist_ok=True)
            plots[metric.name] = replace_file(path, partial(_save_png, figure))
            files.append(path)
    files.append(write_html(outcome, out / "report.html", plots, worst))
    return files
