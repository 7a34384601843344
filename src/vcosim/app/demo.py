"""``vcosim demo``: the run folder, the spinner, the progress bar and the summary table.

The runs themselves are ``vcosim.scenarios.demo``'s; this is how the command shows them.
"""

from __future__ import annotations

import threading
from datetime import datetime
from pathlib import Path

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from vcosim.app.console import HEARTBEAT, Heartbeat, announce_compiling, kernels_cached
from vcosim.scenarios import manoeuvres
from vcosim.scenarios.demo import (
    EXT_TIME,
    SETTLE_BAND,
    CoupledDemo,
    CoupledSummary,
    ManoeuvreDemo,
    ManoeuvreSummary,
)


def run_folder(out: Path) -> Path:
    """A new ``out/<YYYYmmdd-HHMMSS>`` folder (suffixed if that second is taken)."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    folder, n = out / stamp, 1
    while folder.exists():
        n += 1
        folder = out / f"{stamp}-{n}"
    folder.mkdir(parents=True)
    return folder


class ProgressBar:
    """The demo's progress bar on simulated seconds, fed by a run's progress reports."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self._plain = not console.is_terminal  # a pipe: a line now and then, not a live bar
        self._latest: manoeuvres.Progress | None = None
        self._shown: manoeuvres.Progress | None = None
        self._stop = threading.Event()
        self._lines = threading.Thread(target=self._print_lines, name="progress", daemon=True)
        self.bar = Progress(
            TextColumn("[bold]{task.description:<18}"),
            BarColumn(),
            TextColumn("{task.completed:5.1f} / {task.total:4.1f} s simulated"),
            TextColumn("{task.fields[rtf]:>6.1f}x real time"),
            TimeElapsedColumn(),
            console=console,
        )
        self._task: TaskID | None = None

    def __enter__(self) -> ProgressBar:
        if self._plain:
            self._lines.start()
        else:
            self.bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._plain:
            self._stop.set()
            self._lines.join()
            if self._latest is not None and self._latest is not self._shown:
                self._print(self._latest)  # the last report, however soon after the one before
        else:
            self.bar.stop()

    def _print_lines(self) -> None:
        """On a pipe: the latest report every ``HEARTBEAT`` s, from a thread (a wait included)."""
        while not self._stop.wait(HEARTBEAT):
            if self._latest is not None:
                self._print(self._latest)

    def _print(self, p: manoeuvres.Progress) -> None:
        self._shown = p
        self.console.print(
            f"{p.label}: {p.done:5.1f} / {p.total:4.1f} s simulated, {p.rtf:.1f}x real time",
            highlight=False,
        )

    def __call__(self, p: manoeuvres.Progress) -> None:
        """Show one progress report (the task appears with the first)."""
        if self._plain:
            if self._latest is None:
                self._print(p)  # the first at once
            self._latest = p
            return
        if self._task is None:
            self._task = self.bar.add_task(p.label, total=p.total, rtf=p.rtf)
        self.bar.update(self._task, description=p.label, completed=p.done, total=p.total, rtf=p.rtf)


def coupled_lines(demo: CoupledDemo, s: CoupledSummary) -> list[tuple[str, str]]:
    """The coupled run's summary table."""
    report, coupling = demo.report, s.coupling
    assert report is not None  # written summaries come from finished runs
    late = coupling["sent"] - coupling["applied"] == coupling["window"]
    lines = [
        (
            "simulated / wall time",
            f"{report.sim_time:.1f} s in {report.wall_time:.2f} s: "
            f"{report.realtime_factor:.1f}x real time "
            f"({demo.total_wall_time:.1f} s with setup and plot)",
        ),
        (
            "coupling",
            f"UDP on loopback, lock-step, a message every {EXT_TIME * 1e3:g} ms "
            f"(send_skips {coupling['send_skips']}, window {coupling['window']})",
        ),
        (
            "messages sent / applied",
            f"{coupling['sent']} / {coupling['applied']}"
            + (" (the last reply lands after the end)" if late else ""),
        ),
        (
            "timeouts / stale / malformed",
            f"{coupling['timeouts']} / {coupling['stale']} / {coupling['malformed']}",
        ),
        (
            "send → applied reply",
            f"median {s.reply_latency_ms.median} ms, p99 {s.reply_latency_ms.p99} ms",
        ),
    ]
    for step in s.target_profile:
        settle = step.settling_time_s
        lines.append(
            (
                f"target {step.target_m_s:g} m/s from {step.from_s:g} s",
                "not settled"
                if settle is None
                else f"settled (±{SETTLE_BAND:g} m/s) after {settle:.1f} s; "
                f"{step.speed_at_until_m_s:.2f} m/s at {step.until_s:g} s",
            )
        )
    lines.append(("final speed / target", f"{s.final_speed_m_s:.2f} / {s.final_target_m_s:g} m/s"))
    if s.interrupted:
        lines.append(("[yellow]ended by", "[yellow]interrupt (Ctrl-C / SIGTERM)"))
    if s.controller_report is None:
        lines.append(("[yellow]controller", "[yellow]sent no report"))
    return lines


def manoeuvre_lines(demo: ManoeuvreDemo, s: ManoeuvreSummary) -> list[tuple[str, str]]:
    """The manoeuvre's summary table."""
    zero_to_100 = s.zero_to_100_kmh_s
    lines = [
        ("simulated time", f"{s.simulated_time_s:.1f} s"),
        (
            "wall time",
            f"{s.wall_time_s:.2f} s ({s.real_time_factor}x real "
            f"time); {demo.total_wall_time:.1f} s with setup and plot",
        ),
        ("max speed", f"{s.max_speed_kmh:.1f} km/h"),
        ("0-100 km/h", "not reached" if zero_to_100 is None else f"{zero_to_100:.2f} s"),
        ("distance", f"{s.distance_m:.0f} m"),
        ("final heading", f"{s.final_yaw_deg:.0f}°"),
    ]
    if not s.engine_started:
        lines.append(("[red]engine", "[red]did not start"))
    if s.phases_cut_short:
        lines.append(("[yellow]phases cut short", ", ".join(s.phases_cut_short)))
    return lines


def run_demo(
    out: Path,
    vehicle: str = "nightrider",
    *,
    manoeuvre: bool = False,
    console: Console | None = None,
) -> Path:
    """``vcosim demo``: the coupled run, or with ``manoeuvre`` the scripted one.

    Args:
        out: Parent folder; a timestamped run folder is created inside it.
        vehicle: Preset name or parameter TOML file.
        manoeuvre: The vehicle alone through the scripted manoeuvre instead.
        console: Where to print progress and the summary (default: a new rich console).

    Returns:
        The run folder.

    Raises:
        typer.Exit: 130 when interrupted, after saying what the run folder keeps.
    """
    console = console or Console()
    first = not kernels_cached()  # the first run: another process compiles some kernels
    demo = ManoeuvreDemo(vehicle) if manoeuvre else CoupledDemo(vehicle, compile_ahead=first)
    with demo:
        announce_compiling(console)
        with Heartbeat(console, demo.preparing):
            demo.prepare()  # a bad preset or TOML fails here, before any folder exists
        folder = run_folder(Path(out))
        try:
            with ProgressBar(console) as bar:
                demo.run(folder, bar)
            with Heartbeat(console, "Writing the signals, the plot and the summary…"):
                if isinstance(demo, CoupledDemo):
                    coupled = demo.write()
                    lines = coupled_lines(demo, coupled)
                else:
                    lines = manoeuvre_lines(demo, demo.write())
        except KeyboardInterrupt:  # before its files were all written: say what there is
            console.print(f"interrupted: {kept(folder)}", soft_wrap=True)
            raise typer.Exit(130) from None
    table = Table(title=demo.title, show_header=False)
    for key, value in lines:
        table.add_row(key, value)
    console.print(table)
    console.print("Run folder:", str(folder), soft_wrap=True)
    if isinstance(demo, CoupledDemo) and coupled.interrupted:
        console.print(
            f"interrupted after {coupled.simulated_time_s:.1f} of {demo.duration:g} s "
            f"simulated: {kept(folder)}",
            soft_wrap=True,
        )
        raise typer.Exit(130)
    return folder


def kept(folder: Path) -> str:
    """What an interrupted run leaves: its files, or nothing (and then no empty folder)."""
    names = sorted(p.name for p in folder.iterdir())
    if not names:
        folder.rmdir()
        return "nothing was recorded"
    return f"kept in {folder}: {', '.join(names)}"
