"""A search's two pictures: the objective against runs, and the falsifying region.

Drawn with matplotlib's ``Figure`` (no pyplot, no display): headless and thread-safe.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from vcosim.search.basins import failure_share
from vcosim.search.driver import SearchOutcome

BOUNDARY_GRID = 120  # points a side of the grid the boundary estimate is drawn over


def _scores(outcome: SearchOutcome) -> tuple[np.ndarray, np.ndarray]:
    """Run numbers (1-based) and objective values (NaN for failed runs, inf clipped later)."""
    runs = np.array([r.index + 1 for r in outcome.runs], dtype=float)
    values = np.array([math.nan if r.value is None else r.value for r in outcome.runs])
    return runs, values


def plot_progress(outcome: SearchOutcome, path: Path) -> Path:
    """Each run's objective, the best so far, and the threshold; shows how fast it converged."""
    search = outcome.search
    runs, values = _scores(outcome)
    scores = np.array([math.inf if r.score is None else r.score for r in outcome.runs], dtype=float)
    best_index = np.minimum.accumulate(np.where(np.isnan(scores), np.inf, scores))
    sign = 1.0 if search.metric is None or search.metric.worst == "min" else -1.0
    shown = np.clip(values, -search.section.cap, search.section.cap)
    fig = Figure(figsize=(8, 4.5))
    ax = fig.add_subplot()
    falsifying = np.array([r.falsifying for r in outcome.runs])
    ax.scatter(runs[~falsifying], shown[~falsifying], s=12, color="tab:blue", label="run")
    ax.scatter(runs[falsifying], shown[falsifying], s=18, color="tab:red", label="falsifying")
    ax.step(runs, sign * best_index, where="post", color="black", lw=1.2, label="best so far")
    ax.axhline(search.threshold, color="tab:red", ls="--", lw=1, label="threshold")
    name = search.metric.name if search.metric is not None else "robustness"
    ax.set_xlabel("run")
    ax.set_ylabel(name)
    ax.set_title(f"{search.name}: {search.section.method}, seed {search.section.seed}")
    finite = shown[np.isfinite(shown)]
    if (
        finite.size
        and np.ptp(finite) > 0
        and finite.min() > 0
        and finite.max() / finite.min() > 100
    ):
        ax.set_yscale("log")
    ax.legend(loc="best", fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    return path


def plot_region(outcome: SearchOutcome, path: Path) -> Path:
    """Two parameters, every run coloured by its objective, the falsifying ones circled red.

    The local minima's best runs are starred and numbered; the failure region's boundary is
    estimated by the falsifying share of the nearest runs in the plane of the two (its 0.5
    line, dashed): over more parameters it is the boundary's shadow, where the circles end.
    """
    search = outcome.search
    x_name, y_name = search.section.plot or list(search.ranges)[:2]
    ok = [r for r in outcome.runs if r.value is not None]
    fig = Figure(figsize=(6.5, 5))
    ax = fig.add_subplot()
    if ok:
        x = np.array([float(r.params[x_name]) for r in ok])
        y = np.array([float(r.params[y_name]) for r in ok])
        v = np.clip(np.array([r.value for r in ok], dtype=float), -search.section.cap,
                    search.section.cap)  # fmt: skip
        points = ax.scatter(x, y, c=v, s=16, cmap="viridis")
        fig.colorbar(points, ax=ax, label=search.metric.name if search.metric else "robustness")
        bad = np.array([r.falsifying for r in ok])
        ax.scatter(x[bad], y[bad], s=60, facecolors="none", edgecolors="red", label="falsifying")
        if bad.any() and not bad.all():
            _boundary(ax, outcome, x_name, y_name)
        minima = outcome.minima
        if minima:
            mx = [float(m.run.params[x_name]) for m in minima]
            my = [float(m.run.params[y_name]) for m in minima]
            ax.scatter(mx, my, s=160, marker="*", color="orange", edgecolors="black",
                       label="local minimum (best run)")  # fmt: skip
            for m, px, py in zip(minima, mx, my, strict=True):
                ax.annotate(f"run {m.run.index}", (px, py), textcoords="offset points",
                            xytext=(6, 6), fontsize="small")  # fmt: skip
        ax.legend(loc="best", fontsize="small")
    for r_name, set_lim in ((x_name, ax.set_xlim), (y_name, ax.set_ylim)):
        r = search.ranges[r_name]
        set_lim(r.low, r.high)
    ax.set_xlabel(x_name)
    ax.set_ylabel(y_name)
    ax.set_title(f"{search.name}: {len(ok)} runs")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    return path


def _boundary(ax: Axes, outcome: SearchOutcome, x_name: str, y_name: str) -> None:
    """The 0.5 line of the falsifying share of the nearest runs over two parameters."""
    search = outcome.search
    plane = {name: search.ranges[name] for name in (x_name, y_name)}
    side = np.linspace(0.0, 1.0, BOUNDARY_GRID)
    gx, gy = np.meshgrid(side, side)
    share = failure_share(outcome.runs, plane, np.column_stack([gx.ravel(), gy.ravel()]))
    axes = []
    for name, g in ((x_name, gx), (y_name, gy)):
        r = plane[name]
        axes.append(np.exp(np.log(r.low) + g * math.log(r.high / r.low)) if r.log
                    else r.low + g * (r.high - r.low))  # fmt: skip
    ax.contour(axes[0], axes[1], share.reshape(gx.shape), levels=[0.5], colors="red",
               linestyles="dashed", linewidths=1.2)  # fmt: skip
    ax.plot([], [], color="red", ls="--", lw=1.2, label="boundary estimate (nearest runs)")
