"""``vcosim signals`` and ``vcosim plot``: what each signal is called and means, and a run's.

``signals`` lists every signal of the vehicle with its unit, range and meaning, and the name
each face gives it (``vcosim.analysis.signals``); ``plot`` draws any recorded run's signals
with their units (``vcosim.analysis.recordings``, ``vcosim.analysis.signal_plots``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from vcosim.app.console import results

if TYPE_CHECKING:
    from rich.table import Table

    from vcosim.analysis.signals import SignalNames


def signals(
    name: Annotated[
        list[str] | None,
        typer.Argument(
            help="Only these signals, by any of their names (vcosim's, the interface CSV's, "
            "the FMUs'), or part of one.",
            show_default="every signal",
        ),
    ] = None,
    json_only: Annotated[
        bool, typer.Option("--json", help="Print only the JSON list of the signals.")
    ] = False,
) -> None:
    """List the vehicle's signals: unit, range, meaning, and their names in each face.

    The fixed layout's slot (BeamNG's 111/64 messages), the interface CSV's rows (group and
    name, BeamNG >= 0.32), the FMUs' variables (vcosim fmu vehicle; the coupling FMU has the
    same names for what it carries) and the contract property (vcosim connect).
    """
    from vcosim.analysis.signals import WAYS, resolve, signal_names

    rows = signal_names()
    if name:
        chosen = {id(row) for n in name for row in resolve(n, rows)}
        rows = [row for row in rows if id(row) in chosen]
    if json_only:
        typer.echo(json.dumps([row.to_dict() for row in rows], indent=1))
        return
    wide = results.width >= WIDE_TABLE
    for way, title in WAYS.items():
        part = [row for row in rows if row.way == way]
        if part:
            results.print(signal_table(title, part) if wide else signal_listing(title, part))
    results.print(
        "slot: in BeamNG's fixed layout (111 values to the controller, 64 back; 0 is the id). "
        "Contracts (vcosim connect) name each signal as vcosim does. Units as FMI writes them "
        "(1/min: revolutions per minute), but - for a ratio, flag or count (FMI's 1), as "
        "the plots' axes show it.",
        highlight=False,
        soft_wrap=True,
    )


WIDE_TABLE = 150  # columns a terminal needs for the table; narrower, two lines a signal


def signal_table(title: str, rows: list[SignalNames]) -> Table:
    """One row a signal, a column a face."""
    from rich.table import Table

    from vcosim.analysis.signals import unit_text

    table = Table(title=title, title_justify="left")
    for column in ("signal", "unit", "range", "slot", "interface CSV", "FMU"):
        table.add_column(column, no_wrap=True, justify="right" if column == "slot" else "left")
    table.add_column("meaning", overflow="fold", ratio=1)
    for row in rows:
        s = row.signal
        slot = row.fixed.rpartition(" ")[2]
        unit = unit_text(s.unit)
        table.add_row(s.name, unit, s.range, slot, "\n".join(row.csv), row.fmu, escape(s.meaning))
    return table


def signal_listing(title: str, rows: list[SignalNames]) -> str:
    """Two lines a signal: what it is, then its names, for a narrow terminal or a pipe."""
    from vcosim.analysis.signals import unit_text

    lines = [f"[bold]{escape(title)}[/]"]
    for row in rows:
        s = row.signal
        unit = f"{unit_text(s.unit)}, {s.range}" if s.range else unit_text(s.unit)
        names = [row.fixed, *(f"CSV {c}" for c in row.csv), f"FMU {row.fmu}" if row.fmu else ""]
        lines.append(f"[bold]{escape(s.name)}[/] ({escape(unit)}): {escape(s.meaning)}")
        lines.append("    " + escape("; ".join(n for n in names if n) or "(only its vcosim name)"))
    return "\n".join(lines)


def plot(
    run: Annotated[
        Path,
        typer.Argument(
            help="A recorded run: vcosim sim --record's .csv or .mcap, a world's run.csv "
            "(its run.NAME.csv files), a bus log (vcosim log's .mcap or .csv), vcosim connect "
            "--record's .csv, or a demo's run folder.",
            show_default=False,
        ),
    ],
    signal: Annotated[
        list[str] | None,
        typer.Argument(
            help="Signals to draw, one axes each: a name (in every vehicle or source that has "
            "it) or SOURCE.name (lead.speed, FMVM.speed).",
            show_default="speed, pedals, steering, rpm, gear",
        ),
    ] = None,
    png: Annotated[
        Path | None,
        typer.Option(help="Where the figure goes.", show_default="beside RUN, as .png"),
    ] = None,
    html: Annotated[
        bool,
        typer.Option(
            "--html", help="Also write a page of the figure and a table of each line (.html)."
        ),
    ] = False,
    list_signals: Annotated[
        bool, typer.Option("--list", help="List the run's signals with their units; draw nothing.")
    ] = False,
) -> None:
    """Draw a recorded run's signals against time, with their units, to a PNG (and HTML).

    Prints what it drew: each line's first and last value and its extremes.
    """
    from vcosim.analysis.recordings import read_run
    from vcosim.analysis.report import atomic_write
    from vcosim.analysis.signal_plots import Summary, figure_png, page_html
    from vcosim.analysis.signals import unit_text

    recording = read_run(run)
    if list_signals:
        for source in recording.sources:
            for column in source.columns:
                unit = unit_text(source.units.get(column, ""))
                results.print(
                    escape(f"{source.label(column)} ({unit})"), highlight=False, soft_wrap=True
                )
        return
    groups = recording.select(signal or recording.default_signals())
    if not groups:
        raise typer.BadParameter(f"{run} holds no signal to draw", param_hint="'SIGNAL'")
    png = png if png is not None else recording.path.with_suffix(".png")
    traces = [trace for group in groups for trace in group]
    start = min((float(t.time[0]) for t in traces if t.time.size), default=0.0)
    end = max((float(t.time[-1]) for t in traces if t.time.size), default=0.0)
    about = (
        f"{run}: {recording.kind}, {len(recording.sources)} source(s), "
        f"{recording.time_axis.removesuffix(' (s)')} {start:.2f} to {end:.2f} s"
    )
    title = f"{recording.path.name}: {', '.join(g[0].signal for g in groups)}"
    figure = figure_png(recording, groups, title)
    summaries = [Summary.of(trace) for trace in traces]
    files = {png: figure}
    if html:
        page = page_html(title, figure, summaries, about)
        files[png.with_suffix(".html")] = page.encode()
    atomic_write(files)
    results.print(escape(f"plot: {about}"), highlight=False, soft_wrap=True)
    for summary in summaries:
        results.print(escape(f"  {summary}"), highlight=False, soft_wrap=True)
    results.print(
        escape(f"wrote {' and '.join(str(p) for p in files)}"), highlight=False, soft_wrap=True
    )
