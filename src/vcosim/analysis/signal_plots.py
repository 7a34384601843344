"""A recorded run's signals as a figure (PNG) and a page (HTML): what ``vcosim plot`` writes.

One axes per signal asked for, stacked on a shared time axis, each labelled with the signal's
name and unit; a signal several sources have (every vehicle's ``speed``) is one line per
source, with a legend. Integer-valued signals (gear, flags, counts) are drawn as steps. The
figure is drawn on an Agg canvas (no pyplot, no display); the page embeds it beside a table of
what each line did, so the one file can be mailed.
"""

from __future__ import annotations

import html
import io
from dataclasses import dataclass

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from vcosim.analysis.recordings import Recording, Trace
from vcosim.analysis.signals import unit_text


@dataclass(frozen=True)
class Summary:
    """What one line did: its first and last value, its extremes, how many samples."""

    label: str
    unit: str
    samples: int
    start: float
    end: float
    low: float
    high: float

    @classmethod
    def of(cls, trace: Trace) -> Summary:
        """The summary of a trace's finite values (NaN throughout if it has none)."""
        finite = trace.values[np.isfinite(trace.values)]
        if finite.size == 0:
            nan = float("nan")
            return cls(trace.label, trace.unit, 0, nan, nan, nan, nan)
        return cls(
            trace.label,
            trace.unit,
            int(finite.size),
            float(finite[0]),
            float(finite[-1]),
            float(finite.min()),
            float(finite.max()),
        )

    def __str__(self) -> str:
        head = f"{self.label} ({unit_text(self.unit)})"
        if not self.samples:
            return f"{head}: no samples"
        scale = max(abs(self.low), abs(self.high))

        def show(value: float) -> str:  # rounding noise (1e-17 m/s at rest) shows as 0
            return "0" if abs(value) <= 1e-9 * scale else f"{value:.4g}"

        return (
            f"{head}: starts {show(self.start)}, ends {show(self.end)}, min {show(self.low)}, "
            f"max {show(self.high)}"
        )


def axis_label(traces: list[Trace]) -> str:
    """``groundspeed (m/s)``: the signal and its unit(s)."""
    units = ", ".join(dict.fromkeys(unit_text(t.unit) for t in traces))
    return f"{traces[0].signal} ({units})"


def figure_png(recording: Recording, groups: list[list[Trace]], title: str) -> bytes:
    """The figure of ``groups`` (one axes each) as PNG bytes."""
    fig = Figure(figsize=(11.0, 1.2 + 2.1 * len(groups)), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(len(groups), 1, sharex=True, squeeze=False)[:, 0]
    for ax, traces in zip(axes, groups, strict=True):
        for trace in traces:
            finite = trace.values[np.isfinite(trace.values)]
            stepped = finite.size > 0 and bool(np.all(finite == np.round(finite)))
            ax.plot(
                trace.time,
                trace.values,
                label=trace.label,
                linewidth=1.2,
                drawstyle="steps-post" if stepped else "default",
            )
        ax.set_ylabel(axis_label(traces))
        ax.grid(alpha=0.3)
        if len(traces) > 1:
            ax.legend(loc="best", fontsize="small")
    axes[-1].set_xlabel(recording.time_axis)
    fig.suptitle(title)
    out = io.BytesIO()
    fig.savefig(out, format="png", dpi=100)
    return out.getvalue()


def page_html(title: str, png: bytes, summaries: list[Summary], about: str) -> str:
    """A self-contained page: the figure, then a table of what each line did."""
    from vcosim.analysis.report import html_page, html_table, img_tag

    rows = [
        (
            s.label,
            unit_text(s.unit),
            str(s.samples),
            *(f"{v:.6g}" for v in (s.start, s.end, s.low, s.high)),
        )
        for s in summaries
    ]
    header = ("signal", "unit", "samples", "first", "last", "min", "max")
    body = f"<p>{html.escape(about)}</p>\n{img_tag(png, title)}\n{html_table(rows, header)}"
    return html_page(title, body)
