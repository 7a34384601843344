"""Figures of a coupled run: the seed's three views and the metrics, with matplotlib (Agg).

The three views are seed 001's MATLAB plots: physics steps as green ticks at y = 0, sent
messages as red stars at y = 1 and applied replies as blue stars at y = −1, labelled with
their ids in the zooms:

- **whole run** (top, full width);
- **zoom on a blocking receive**: the blocking receive that waited longest (the first of
  equals); without one, the first timeout (a send followed by a 2 s wait); without one, the
  first send. From the step before the previous send to two steps after;
- **zoom on the running connection**: about 20 steps (at least two send periods) in the
  middle of the stretch from the first to the last applied reply.

The metrics figure: observed skips, reply latency in steps and in ms (median, p90, p99 and
the controller's step marked), and the real-time factor over time.

Figures are built with ``matplotlib.figure.Figure`` on an Agg canvas (no pyplot, no display).
"""

from __future__ import annotations

import io
from dataclasses import dataclass

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from vcosim.analysis.metrics import TIMEOUT_GAP, Metrics, Timeline

STEP_COLOUR = "tab:green"
SEND_COLOUR = "red"
RECEIVE_COLOUR = "blue"
MAX_LABELS = 80  # ids are written next to the stars only when a view holds fewer events
RUNNING_STEPS = 20


@dataclass(frozen=True)
class Zoom:
    """A view on a range of physics steps."""

    first: int  # step index
    last: int
    title: str


def blocking_zoom(m: Metrics, tl: Timeline) -> Zoom:
    """The blocking receive that waited longest, else the first timeout, else the first send."""
    n = tl.step_time.size
    period = (m.skips if m.skips is not None else 0) + 1
    if tl.blocking.any():
        j = int(np.argmax(np.where(tl.blocking, tl.blocked_time, -1.0)))
        step = int(tl.receive_step[j])
        title = (
            f"Zoom on blocking receive (id {tl.receive_id[j]}, waited "
            f"{tl.blocked_time[j] * 1e3:.2f} ms)"
        )
    elif m.timeouts:
        step = int(np.searchsorted(tl.step_time, m.timeouts[0].start, side="right") - 1)
        title = f"Zoom on blocking receive (timed out after {m.timeouts[0].length:.2f} s)"
        return Zoom(max(step - period - 1, 0), min(step + 2, n - 1), title)
    elif tl.send_step.size:
        step = int(tl.send_step[0])
        return Zoom(
            max(step - 1, 0),
            min(step + period + 2, n - 1),
            "No blocking receive: zoom on the first send",
        )
    else:
        return Zoom(0, min(RUNNING_STEPS, n - 1), "No message sent: the first steps")
    first = max(step - period - 1, 0)
    long_gaps = np.flatnonzero(np.diff(tl.step_time[first : step + 1]) > TIMEOUT_GAP)
    if long_gaps.size:  # do not stretch the view over a timeout before the receive
        first += int(long_gaps[-1]) + 1
    return Zoom(first, min(step + 2, n - 1), title)


def running_zoom(m: Metrics, tl: Timeline) -> Zoom:
    """About 20 steps (at least two send periods) in the middle of the running connection."""
    n = tl.step_time.size
    period = (m.skips if m.skips is not None else 0) + 1
    width = max(RUNNING_STEPS, 2 * period + 2)
    if tl.receive_step.size:
        a, b = int(max(tl.receive_step[0], 0)), int(tl.receive_step[-1])
    else:
        a, b = 0, n - 1
    middle = (a + b) // 2
    sends = tl.send_step[(tl.send_step >= middle - period) & (tl.send_step <= middle)]
    start = int(sends[-1]) - 1 if sends.size else middle - width // 2  # begin just before a send
    start = min(max(start, 0), max(n - 1 - width, 0))
    title = "Zoom on working connection" if tl.receive_step.size else "Zoom on the middle"
    return Zoom(start, min(start + width, n - 1), title)


def _limits(tl: Timeline, zoom: Zoom) -> tuple[float, float]:
    """Half-way to the steps either side, so a zoom shows exactly its steps.

    (A pad of half the median interval would take in a neighbour closer than that, as in
    lock-step runs, where the steps between sends follow each other quickly.)
    """
    t = tl.step_time
    if t.size == 0:
        return 0.0, 1.0
    lo, hi = t[zoom.first], t[zoom.last]
    typical = 0.5 * float(np.median(np.diff(t))) if t.size > 1 else 2.5e-4
    before = 0.5 * (lo - t[zoom.first - 1]) if zoom.first > 0 else typical
    after = 0.5 * (t[zoom.last + 1] - hi) if zoom.last + 1 < t.size else typical
    return lo - min(before, typical), hi + min(after, typical)


def _draw(
    ax, tl: Timeline, lo: float | None = None, hi: float | None = None, *, labels: bool, title: str
) -> None:
    """Steps, sends and replies between ``lo`` and ``hi`` (the whole run if None)."""

    def inside(times: np.ndarray) -> np.ndarray:
        if lo is None or hi is None:
            return np.ones(times.shape, dtype=bool)
        return (times >= lo) & (times <= hi)

    steps = tl.step_time[inside(tl.step_time)]
    s_in, r_in = inside(tl.send_time), inside(tl.receive_time)
    sends, send_ids = tl.send_time[s_in], tl.send_id[s_in]
    recvs, recv_ids = tl.receive_time[r_in], tl.receive_id[r_in]
    height = 0.5 if lo is None else 1.7
    ax.vlines(
        steps,
        -height,
        height,
        colors=STEP_COLOUR,
        linewidth=1.0 if lo is None else 2.0,
        label="Physics steps",
    )
    ax.plot(sends, np.ones(sends.size), "*", color=SEND_COLOUR, label="Sent", markersize=7)
    ax.plot(recvs, -np.ones(recvs.size), "*", color=RECEIVE_COLOUR, label="Received", markersize=7)
    if labels and sends.size + recvs.size <= MAX_LABELS:
        rotation = 90 if max(sends.size, recvs.size) > 12 else 0  # crowded: upright labels
        for t, i in zip(sends, send_ids, strict=True):
            ax.text(
                t,
                1.15,
                str(int(i)),
                color=SEND_COLOUR,
                ha="center",
                va="bottom",
                fontsize=8,
                rotation=rotation,
            )
        for t, i in zip(recvs, recv_ids, strict=True):
            ax.text(
                t,
                -1.15,
                str(int(i)),
                color=RECEIVE_COLOUR,
                ha="center",
                va="top",
                fontsize=8,
                rotation=rotation,
            )
    if lo is not None and hi is not None:
        ax.set_xlim(lo, hi)
    ax.set_ylim(-2, 2)
    ax.set_yticks([-1, 0, 1], ["received", "steps", "sent"])
    ax.grid(True, alpha=0.4)
    ax.set_title(title, fontsize=10)
    ax.set_xlabel("Time [s]")
    ax.legend(loc="upper right", fontsize=7)


def views_figure(
    m: Metrics, tl: Timeline, title: str = "Simulink interface message timing"
) -> Figure:
    """The seed's three views: whole run (top), blocking receive and running connection."""
    fig = Figure(figsize=(12, 7.5), layout="constrained")
    FigureCanvasAgg(fig)
    grid = fig.add_gridspec(2, 2)
    _draw(fig.add_subplot(grid[0, :]), tl, labels=False, title=title)
    for column, zoom in enumerate((blocking_zoom(m, tl), running_zoom(m, tl))):
        lo, hi = _limits(tl, zoom)
        _draw(fig.add_subplot(grid[1, column]), tl, lo, hi, labels=True, title=zoom.title)
    return fig


def metrics_figure(m: Metrics, tl: Timeline) -> Figure:
    """Observed skips, reply latency (steps and ms) and the real-time factor over time."""
    fig = Figure(figsize=(12, 6.5), layout="constrained")
    FigureCanvasAgg(fig)
    (a, b), (c, d) = fig.subplots(2, 2)

    if m.skips_counts:
        a.bar(list(m.skips_counts), list(m.skips_counts.values()), color="tab:red", width=0.8)
    a.set_title(f"Observed skips between sends (mode {m.skips})", fontsize=10)
    a.set_xlabel("skips")
    a.set_ylabel("send intervals (log)")
    a.set_yscale("log")

    if m.latency_steps_counts:
        b.bar(
            list(m.latency_steps_counts),
            list(m.latency_steps_counts.values()),
            color="tab:blue",
            width=0.8,
        )
    median = m.latency_steps.median
    b.set_title(
        f"Reply latency in steps (median {median:g})"
        if median is not None
        else "Reply latency in steps (no replies)",
        fontsize=10,
    )
    b.set_xlabel("receive step − send step")
    b.set_ylabel("replies")
    for ax in (a, b):
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlim(*_integer_limits(ax))

    latency_ms = tl.latency[np.isfinite(tl.latency)] * 1e3
    if latency_ms.size:
        c.hist(latency_ms, bins=min(60, max(10, latency_ms.size // 5)), color="tab:blue", alpha=0.8)
        for value, name, style in (
            (m.latency_ms.median, "median", "-"),
            (m.latency_ms.p90, "p90", "--"),
            (m.latency_ms.p99, "p99", ":"),
        ):
            c.axvline(value, color="black", linestyle=style, label=f"{name} {value:.3f} ms")
        if m.controller_step is not None:
            c.axvline(
                m.controller_step * 1e3,
                color="tab:red",
                label=f"(skips+1)·dt {m.controller_step * 1e3:g} ms",
            )
        c.legend(fontsize=7)
    c.set_title("Reply latency in ms", fontsize=10)
    c.set_xlabel("receive time − send time [ms]")
    c.set_ylabel("replies")

    if m.rtf_times:
        # each window ends where the next starts, the last at the last step
        edges = np.append(m.rtf_times, tl.step_time[-1])
        values = np.asarray(m.rtf_values)
        d.step(
            edges,
            np.append(values, values[-1]),
            where="post",
            color="tab:green",
            label="per window",
        )
        d.axhline(1.0, color="black", linewidth=0.8)
        if m.rtf is not None:
            d.axhline(
                m.rtf,
                color="tab:green",
                linestyle="--",
                linewidth=0.8,
                label=f"overall {m.rtf:.2f}",
            )
        d.legend(fontsize=7)
    rtf = f"{m.rtf:.2f}" if m.rtf is not None else "–"
    connected = f", {m.rtf_connected:.2f} while connected" if m.rtf_connected is not None else ""
    d.set_title(f"Real-time factor over time (overall {rtf}{connected})", fontsize=10)
    d.set_xlabel("Time [s]")
    d.set_ylabel("simulated s / wall s")
    d.set_ylim(0, max(1.1, 1.1 * max(m.rtf_values, default=0.0)))
    d.grid(True, alpha=0.4)
    return fig


def _integer_limits(ax) -> tuple[float, float]:
    """At least ±2 around the bars, so a lone bar does not fill the axes."""
    lo, hi = ax.get_xlim()
    centre = (lo + hi) / 2
    half = max((hi - lo) / 2, 2.5)
    return centre - half, centre + half


def png_bytes(fig: Figure, dpi: int = 100) -> bytes:
    """A figure as PNG bytes."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    return buffer.getvalue()
