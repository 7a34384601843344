"""The report's plots: each metric against each varied parameter, the worst runs circled.

Figures are built with ``matplotlib.figure.Figure`` directly (no pyplot), so making plots in
a worker or a thread touches no global state and needs no display.
"""

from __future__ import annotations

import math

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from vcosim.sweep.metrics import Metric
from vcosim.sweep.outcome import SweepOutcome, ranking

PLOTS_PER_ROW = 4


def _axis_values(values: list[object]) -> tuple[np.ndarray, list[str] | None]:
    """Numbers to plot a parameter at; strings become categories (with their labels)."""
    if all(isinstance(v, int | float) for v in values):
        return np.asarray(values, dtype=float), None
    labels = sorted({str(v) for v in values})
    return np.array([labels.index(str(v)) for v in values], dtype=float), labels


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


def _positions(values: np.ndarray, log_y: bool) -> tuple[np.ndarray, float]:
    """Where to draw each value (inf above the data, -inf below), and the failed runs' row."""
    finite = values[np.isfinite(values)]
    top = float(finite.max()) if finite.size else 1.0
    bottom = float(finite.min()) if finite.size else 0.0
    if log_y:  # positions beyond the data, in log space
        above, below, under = top * 2.0, bottom / 2.0, bottom / 3.0
    else:
        span = (top - bottom) or max(abs(top), 1.0)
        above, below, under = top + 0.08 * span, bottom - 0.08 * span, bottom - 0.12 * span
    return np.where(np.isinf(values), np.where(values > 0, above, below), values), under


def plot_metric(outcome: SweepOutcome, metric: Metric, worst: int) -> Figure | None:
    """One metric against each varied parameter (or the run number); None without values."""
    values = outcome.values(metric.name)
    if not np.any(~np.isnan(values)):
        return None
    params = outcome.sweep.parameters or ["run"]
    ncols = min(len(params), PLOTS_PER_ROW)
    nrows = math.ceil(len(params) / ncols)
    fig = Figure(figsize=(4.2 * ncols, 3.6 * nrows))
    grid = fig.subplots(nrows, ncols, squeeze=False, sharey=True)
    axes = list(grid.ravel())
    for ax in axes[len(params) :]:
        ax.set_visible(False)
    realtime = metric.name == "min_realtime_factor"
    log_y = realtime and _wide(values)  # ratios: log when wide
    shown, under = _positions(values, log_y)
    worst_idx = ranking(values, metric)[:worst]
    for ax, name in zip(axes, params, strict=False):
        _panel(ax, outcome, name, values, shown, under, worst_idx)
        if realtime:
            ax.axhline(1.0, color="gray", linestyle="--", linewidth=1, label="real time")
        if log_y:
            ax.set_yscale("log")
    unit = "" if metric.unit in ("-", "signal") else f" ({metric.unit})"
    for row in grid:
        row[0].set_ylabel(metric.name + unit)
    axes[len(params) - 1].legend(fontsize=7, loc="best")
    fig.suptitle(f"{outcome.sweep.name}: {metric.name} (worst: {metric.worst})", fontsize=10)
    fig.tight_layout()
    return fig


def _panel(
    ax: Axes,
    outcome: SweepOutcome,
    name: str,
    values: np.ndarray,
    shown: np.ndarray,
    under: float,
    worst_idx: np.ndarray,
) -> None:
    """The metric against one parameter: runs, never-settled, the worst, the failed."""
    ok, failed = outcome.ok, outcome.failed
    if name == "run":
        x, labels = np.array([r.index for r in ok], dtype=float), None
        fx = np.array([r.index for r in failed], dtype=float)
    else:
        x, labels = _axis_values([r.params.get(name) for r in ok + failed])
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
    if log_x:
        ax.set_xscale("log")
    if labels is not None:
        ax.set_xticks(range(len(labels)), labels, rotation=30, fontsize=8)
    ax.set_xlabel(name)
    ax.grid(True, alpha=0.3)
