"""The demo's figures, each a 2x2 PNG drawn without a screen.

A coupled run: speed against target, pedals, rpm and gear, the coupling's timing. A
manoeuvre: speed and gear, rpm, pedals, trajectory.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Literal

import numpy as np
import numpy.typing as npt

from vcosim.arrays import FloatArray
from vcosim.scenarios.manoeuvres import Run
from vcosim.scenarios.metrics import KMH, CouplingTiming, column

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

Location = Literal["upper right", "upper left", "lower left", "lower right", "best"]
AxesGrid = npt.NDArray[np.object_]
"""A figure's grid of ``Axes`` as ``subplots`` gives it."""


def pyplot() -> ModuleType:
    """Pyplot, on the headless Agg backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def figure(title: str) -> tuple[Figure, AxesGrid]:
    """A 2x2 figure with a title; returns the figure and the 2x2 axes."""
    fig, axes = pyplot().subplots(2, 2, figsize=(13, 8.5), constrained_layout=True)
    fig.suptitle(title)
    return fig, axes


def save(fig: Figure, axes: AxesGrid, path: Path) -> None:
    """Grid the main axes (not their twins), save, close."""
    for ax in np.ravel(axes):
        ax.grid(alpha=0.3)
    fig.savefig(path, dpi=110)
    pyplot().close(fig)


def legend(ax: Axes, *others: Axes, loc: Location = "upper right") -> None:
    """One legend for the lines of ``ax`` and its twin axes."""
    lines = [ln for a in (ax, *others) for ln in a.get_lines() if not _hidden(ln.get_label())]
    ax.legend(lines, [str(ln.get_label()) for ln in lines], loc=loc)


def _hidden(label: object) -> bool:
    """Matplotlib's rule: a line whose label starts with an underscore is left out."""
    return str(label).startswith("_")


def plot_gear(ax: Axes, rows: FloatArray) -> Axes:
    """Gear as steps on a twin axis of ``ax``; returns the twin."""
    twin = ax.twinx()
    twin.step(
        column(rows, "time"), column(rows, "gear"), where="post", color="tab:orange", label="gear"
    )
    twin.set(ylabel="gear", ylim=(-1.5, 6.5), yticks=range(-1, 6))
    return twin


def plot_pedals(ax: Axes, rows: FloatArray, names: Iterable[str], title: str) -> None:
    """Pedals (0-1) over time; ``<pedal>_input`` (what was asked) dashed in the pedal's colour."""
    t = column(rows, "time")
    colors = {"throttle": "tab:green", "brake": "tab:red", "clutch": "tab:purple"}
    for name in names:
        pedal, asked = name.removesuffix("_input"), name.endswith("_input")
        ax.plot(
            t,
            column(rows, name),
            color=colors[pedal],
            ls="--" if asked else "-",
            lw=1.0 if asked else 1.5,
            alpha=0.7 if asked else 1.0,
            label=f"{pedal} asked" if asked else pedal,
        )
    ax.set(title=title, xlabel="time (s)", ylabel="pedal (0-1)", ylim=(-0.05, 1.1))
    ax.legend(loc="upper right")


def plot_rpm(ax: Axes, rows: FloatArray, title: str) -> None:
    """Engine speed over time."""
    ax.plot(column(rows, "time"), column(rows, "rpm"), color="tab:red", label="engine speed")
    ax.set(title=title, xlabel="time (s)", ylabel="engine speed (rpm)")


def plot_coupled(
    path: Path,
    rows: FloatArray,
    target: FloatArray,
    timing: CouplingTiming,
    rtf: float,
    title: str,
) -> None:
    """Speed against ``target`` (per row), pedals, rpm and gear, the coupling's timing."""
    fig, axes = figure(title)
    (ax_speed, ax_pedals), (ax_rpm, ax_timing) = axes
    t = column(rows, "time")

    ax_speed.plot(t, column(rows, "groundspeed"), color="tab:blue", label="speed")
    ax_speed.plot(t, target, color="black", ls="--", lw=1.2, label="target")
    ax_speed.set(
        title="Speed against the controller's target", xlabel="time (s)", ylabel="speed (m/s)"
    )
    ax_speed.set_ylim(bottom=0, top=1.15 * float(target.max()))
    ax_speed.legend(loc="lower right")

    plot_pedals(
        ax_pedals,
        rows,
        ("throttle_input", "brake_input", "throttle", "brake"),
        "Throttle and brake as applied (dashed: as the controller asked)",
    )

    plot_rpm(ax_rpm, rows, "Engine speed and gear (automatic)")
    ax_rpm.set_ylim(bottom=0)
    legend(ax_rpm, plot_gear(ax_rpm, rows), loc="lower right")

    latency = timing.latency * 1e3
    ax_timing.semilogy(
        timing.message_time,
        latency,
        ".",
        ms=2.5,
        color="tab:blue",
        label="one message: sent → its reply applied",
    )
    if latency.size:
        for q, style in ((50, "-"), (99, "--")):
            value = float(np.percentile(latency, q))
            ax_timing.axhline(
                value,
                color="navy",
                lw=1,
                ls=style,
                label=f"{'median' if q == 50 else 'p99'} {value:.3f} ms",
            )
        ax_timing.set_ylim(0.5 * latency.min(), 3.0 * latency.max())
    ax_timing.set(
        title=f"Coupling timing (wall clock): {rtf:.1f}x real time",
        xlabel="simulated time (s)",
        ylabel="send → applied reply (ms, log scale)",
        xlim=ax_speed.get_xlim(),
    )
    ax_timing.legend(loc="upper left")
    save(fig, axes, path)


def plot_manoeuvre(path: Path, run: Run, title: str) -> None:
    """Speed and gear, rpm, pedals, trajectory; phases as dotted lines."""
    fig, axes = figure(title)
    (ax_speed, ax_rpm), (ax_pedals, ax_path) = axes
    rows = run.rows
    t = column(rows, "time")

    ax_speed.plot(t, column(rows, "groundspeed") / KMH, color="tab:blue", label="speed")
    ax_speed.set(title="Speed and gear", xlabel="time (s)", ylabel="speed (km/h)")
    ax_speed.set_ylim(bottom=0)
    legend(ax_speed, plot_gear(ax_speed, rows))

    plot_rpm(ax_rpm, rows, "Engine speed (dotted lines: phases)")
    ax_rpm.set_ylim(0, 1.3 * max(column(rows, "rpm").max(), 1000.0))  # room for phase names
    plot_pedals(
        ax_pedals, rows, ("throttle", "brake", "clutch"), "Pedals as applied (clutch 1 = pressed)"
    )
    for ax in (ax_speed, ax_rpm, ax_pedals):
        for i, (name, start) in enumerate(run.phase_starts):
            ax.axvline(start, color="grey", lw=0.6, ls=":")
            if ax is ax_rpm:  # staggered over four rows so that short phases do not collide
                ax.text(
                    start,
                    0.99 - 0.055 * (i % 4),
                    f" {name}",
                    fontsize=7,
                    va="top",
                    color="dimgrey",
                    transform=ax.get_xaxis_transform(),
                )

    x, y = column(rows, "posX"), column(rows, "posY")
    ax_path.plot(x, y, color="tab:blue")
    ax_path.plot(x[0], y[0], "o", color="tab:green", label="start")
    ax_path.plot(x[-1], y[-1], "s", color="tab:red", label="end")
    ax_path.set(title="Trajectory (equal scale)", xlabel="x (m)", ylabel="y (m)", aspect="equal")
    ax_path.set_ylim(min(y.min(), 0) - 20, max(y.max(), 0) + 20)
    ax_path.legend(loc="upper left")
    save(fig, axes, path)
