"""Reports of a coupled run: one self-contained HTML file, or Markdown with PNGs beside it.

``write_report(run, out)`` writes ``out``: HTML (any suffix but ``.md``) with the figures
embedded as base64 PNGs, so the one file can be mailed or archived; or, for ``.md``, a
Markdown file plus ``<stem>_views.png`` and ``<stem>_metrics.png`` next to it. Files are
written atomically (to a temporary file in the same folder, then renamed): an error leaves
no half-written report behind, and the figures are drawn before anything is written.

``summary_rows(metrics)`` gives the metrics as (label, value) text rows; ``vcosim analyze``
prints the same rows.
"""

from __future__ import annotations

import base64
import html
import os
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from vcosim.analysis.metrics import Distribution, Metrics
from vcosim.analysis.plots import metrics_figure, png_bytes, views_figure

if TYPE_CHECKING:
    from vcosim.analysis import Run

MAX_LISTED = 20  # timeouts, gaps, lost ids… listed in a report; the rest are counted
NO_EVENTS = "– (no events log: BeamNG's or an older vcosim run)"

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1250px; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.6em; }
table { border-collapse: collapse; margin: 0.6em 0; }
td, th { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
.verdict { font-size: 1.1em; padding: 0.6em 0.9em; background: #eef5ff;
           border-left: 4px solid #3b78e7; }
.pass { color: #17803d; font-weight: bold; } .fail { color: #c0262d; font-weight: bold; }
img { max-width: 100%; }
.small { color: #666; font-size: 0.9em; }
"""


def _fmt(value: float | None, digits: int = 3, unit: str = "") -> str:
    if value is None:
        return "–"
    return f"{value:.{digits}f}{unit}"


def _dist(d: Distribution, digits: int, unit: str) -> str:
    if d.count == 0:
        return "– (no replies)"
    return (
        f"min {_fmt(d.min, digits)}, median {_fmt(d.median, digits)}, "
        f"p90 {_fmt(d.p90, digits)}, p99 {_fmt(d.p99, digits)}, "
        f"max {_fmt(d.max, digits)}{unit} ({d.count} replies)"
    )


def _listed(items: Sequence[object], show) -> str:
    if not items:
        return "none"
    text = "; ".join(show(item) for item in items[:MAX_LISTED])
    more = f"; … {len(items) - MAX_LISTED} more" if len(items) > MAX_LISTED else ""
    return f"{len(items)}: {text}{more}"


def _counts(counts: dict[int, int]) -> str:
    return ", ".join(f"{k}: {v}" for k, v in counts.items()) or "–"


def _signed(value: int) -> str:
    return f"{value:+d}" if value else "0"


def _id_pattern(m: Metrics) -> str:
    if m.id_pattern is None or m.id_offset is None:
        return "– (no reply after a send)"
    offsets = ", ".join(f"{_signed(k)}: {v}" for k, v in m.id_offsets.items())
    return f"{m.id_pattern} (offset {_signed(m.id_offset)}); offsets {offsets}"


def _not_applied(m: Metrics) -> str:
    if not m.events_logged:
        return NO_EVENTS
    return (
        f"stale {m.dropped_stale}, duplicate {m.dropped_duplicate} dropped "
        f"({m.dropped_in_blocking} of them in blocking receives); start-up "
        f"{m.startup_unapplied} (id ≤ 0 before any was applied; {m.startup_leading} "
        "before the first applied reply)"
    )


def _logged_timeouts(m: Metrics) -> str:
    if not m.events_logged:
        return NO_EVENTS
    return (
        f"{m.timeouts_logged}; {m.timeouts_after_dropped} after stale or duplicate "
        f"replies ({m.timeouts_after_stale} after a stale one)"
    )


def _startup(m: Metrics) -> str:
    parts = [
        "no reply"
        if m.startup_time is None
        else f"first reply {m.startup_time:.3f} s after the first step"
    ]
    if m.startup_resends:
        parts.append(f"a message sent again {m.startup_resends} × while waiting")
    if m.startup_waits:
        waited = sum(t.length for t in m.startup_waits)
        n = len(m.startup_waits)
        parts.append(f"{n} wait{'s' if n > 1 else ''} over 1 s ({waited:.3f} s), no timeout")
    return "; ".join(parts)


def summary_rows(m: Metrics) -> list[tuple[str, str]]:
    """The metrics as (label, value) rows of text."""
    rows = [
        (
            "physics steps / sent / applied",
            f"{m.steps} / {m.sends}"
            + (f" ({m.startup_resends} sent again)" if m.startup_resends else "")
            + f" / {m.applied}",
        ),
        ("wall time of the run", f"{m.duration:.3f} s"),
        ("start-up (waiting for the controller)", _startup(m)),
        (
            "observed skips",
            f"{m.skips if m.skips is not None else '–'} (mode); skips: send "
            f"intervals {_counts(m.skips_counts)}",
        ),
        (
            "observed window",
            f"{m.window if m.window is not None else '–'}"
            + (
                f" (per segment: {', '.join(map(str, m.window_per_segment[:10]))}"
                f"{', …' if len(m.window_per_segment) > 10 else ''})"
                if m.segments > 1
                else ""
            ),
        ),
        (
            "resets (timeouts that reset the coupling)",
            f"{m.resets} ({m.segments} segment{'s' if m.segments != 1 else ''})",
        ),
        ("reply ids (reply id − last id sent)", _id_pattern(m)),
        ("reply latency, steps", _dist(m.latency_steps, 0, "")),
        ("reply latency, steps histogram", "steps: replies " + _counts(m.latency_steps_counts)),
        ("reply latency, ms", _dist(m.latency_ms, 3, " ms")),
        ("replies in blocking receives", f"{m.replies_in_blocking} of {m.applied}"),
        (
            "time blocking",
            f"{m.blocked_time:.4f} s ({m.blocking_share * 100:.1f} % of the run, "
            f"{m.waiting_share * 100:.1f} % while connected; longest "
            f"{m.longest_block * 1e3:.3f} ms)",
        ),
        (
            "timeouts (> 1 s between steps, after the first reply)",
            _listed(m.timeouts, lambda t: f"at {t.start:.3f} s for {t.length:.3f} s"),
        ),
        (
            "gaps without replies",
            _listed(
                m.gaps,
                lambda g: (
                    f"at {g.start:.3f} s (step {g.start_step}) for {g.steps} steps "
                    f"= {g.length * 1e3:.1f} ms simulated, {g.wall_length * 1e3:.1f} "
                    "ms wall"
                ),
            ),
        ),
        ("lost ids", _listed(m.lost, lambda e: f"{e.id} (sent at {e.time:.4f} s)")),
        ("superseded ids (no reply, a later id answered)", str(m.superseded)),
        ("duplicate ids", _listed(m.duplicates, lambda e: f"{e.id} (at {e.time:.4f} s)")),
        ("stale ids", _listed(m.stale, lambda e: f"{e.id} (at {e.time:.4f} s)")),
        ("replies to ids never sent", str(m.unmatched)),
        ("replies not applied (events log)", _not_applied(m)),
        ("timeouts recorded by the simulator (events log)", _logged_timeouts(m)),
        (
            "real-time factor",
            f"{_fmt(m.rtf)} overall, {_fmt(m.rtf_connected)} while connected (timeouts left out)",
        ),
        (
            "real-time factor per 0.5 s",
            ", ".join(f"{v:.2f}" for v in m.rtf_values[:40])
            + (", …" if len(m.rtf_values) > 40 else ""),
        ),
        (
            "controller step (skips + 1)·dt",
            _fmt(m.controller_step and m.controller_step * 1e3, 3, " ms"),
        ),
        (
            "reply latency, the simulator's part (send to looking for the reply)",
            _dist(m.simulator_ms, 3, " ms"),
        ),
        (
            "fastest reply (the controller computes in at most this)",
            _fmt(m.fastest_reply and m.fastest_reply * 1e3, 3, " ms"),
        ),
        ("suggested --ext-time", _suggestion(m)),
    ]
    return rows


def _suggestion(m: Metrics) -> str:
    if m.suggested_ext_time is not None:
        return (
            f"{m.suggested_ext_time * 1e3:.1f} ms (p90 latency, next 0.5 ms): the simulator "
            f"waited {m.waiting_share * 100:.0f} % of the time and no reply came in under "
            f"{_fmt(m.fastest_reply and m.fastest_reply * 1e3, 3, ' ms')}"
        )
    if m.fastest_reply is None:
        return "– (no reply)"
    return "none: the controller is not shown slower than its step"


def html_table(
    rows: Iterable[Sequence[str]], header: Sequence[str] | None = None, raw: bool = False
) -> str:
    """An HTML table of text cells (escaped unless ``raw``)."""
    esc = (lambda s: s) if raw else html.escape
    head = "<tr>" + "".join(f"<th>{esc(h)}</th>" for h in header) + "</tr>" if header else ""
    body = "".join(
        "<tr>" + "".join(f"<td>{esc(str(c))}</td>" for c in row) + "</tr>" for row in rows
    )
    return f"<table>{head}{body}</table>"


def img_tag(png: bytes, alt: str) -> str:
    """An <img> with the PNG embedded as base64."""
    data = base64.b64encode(png).decode("ascii")
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'


def html_page(title: str, body: str) -> str:
    """A complete, self-contained HTML page."""
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head>"
        f"<body><h1>{html.escape(title)}</h1>\n{body}\n</body></html>\n"
    )


def atomic_write(files: dict[Path, bytes]) -> None:
    """Write every file to a temporary file beside it, then rename them all into place."""
    temporary: list[tuple[str, Path]] = []
    try:
        for path, data in files.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
            temporary.append((tmp, path))
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.chmod(tmp, 0o666 & ~_umask())  # mkstemp's 0600 would hide the report
        for tmp, path in temporary:
            os.replace(tmp, path)
    finally:
        for tmp, _ in temporary:
            if os.path.exists(tmp):
                os.unlink(tmp)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def run_figures(run: Run, title: str | None = None) -> tuple[bytes, bytes]:
    """The three views and the metrics figure of a run, as PNG bytes."""
    views = views_figure(
        run.metrics, run.timeline, title or f"Simulink interface message timing: {run.folder.name}"
    )
    return png_bytes(views), png_bytes(metrics_figure(run.metrics, run.timeline))


def run_html(run: Run, title: str | None = None) -> str:
    """The report of one run as a self-contained HTML page."""
    m = run.metrics
    views, figures = run_figures(run)
    body = (
        f'<p class="small">Run folder: {html.escape(str(run.folder.resolve()))}; physics step '
        f"{m.dt * 1e3:g} ms. Definitions: docs/tight-coupling.md, “Analysing a run”.</p>"
        f'<p class="verdict">{html.escape(m.verdict)}</p>'
        "<h2>Message timing</h2>"
        '<p class="small">Physics steps: green ticks; sent messages: red stars (above); applied'
        " replies: blue stars (below), labelled with their ids in the zooms.</p>"
        f"{img_tag(views, 'message timing')}"
        f"<h2>Metrics</h2>{html_table(summary_rows(m))}"
        f"{img_tag(figures, 'metrics')}"
    )
    return html_page(title or f"vcosim analysis: {run.folder.name}", body)


def run_markdown(run: Run, views_name: str, metrics_name: str) -> str:
    """The report of one run as Markdown referring to two PNG files."""
    m = run.metrics
    lines = [
        f"# vcosim analysis: {run.folder.name}",
        "",
        f"**Verdict:** {m.verdict}",
        "",
        f"![message timing]({views_name})",
        "",
        "| metric | value |",
        "| --- | --- |",
    ]
    lines += [f"| {k} | {v.replace('|', '/')} |" for k, v in summary_rows(m)]
    lines += ["", f"![metrics]({metrics_name})", ""]
    return "\n".join(lines)


def write_report(run: Run, out: str | Path) -> list[Path]:
    """Write the report of ``run`` to ``out`` (HTML, or Markdown + PNGs for ``.md``).

    Returns the files written.
    """
    out = Path(out)
    if out.suffix.lower() == ".md":
        views_path = out.with_name(f"{out.stem}_views.png")
        metrics_path = out.with_name(f"{out.stem}_metrics.png")
        views, figures = run_figures(run)
        files = {
            views_path: views,
            metrics_path: figures,
            out: run_markdown(run, views_path.name, metrics_path.name).encode("utf-8"),
        }
    else:
        files = {out: run_html(run).encode("utf-8")}
    atomic_write(files)
    return list(files)
