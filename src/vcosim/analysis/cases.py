"""The five timing cases of seed 001, run end to end and checked (``vcosim cases``).

Each case runs ``vcosim sim --duration 1.5 --pacing realtime --frame-rate 2000 --ext-time
T_ext --ping-time 0.00001`` in its own process (its own GIL) with debug logs, coupled to a
``ControllerBlock`` in this process whose step function busy-waits the case's computation
time and answers all-NaN controls (the seed's test model). The block listens on an
ephemeral port bound before the simulator starts and answers each message to its sender
(``sim_port=0``), so no port is fixed in advance. It blocks rather than busy-polls
(``spin=0``): on a two-core machine a spinning controller takes the core the simulator needs.

The logs are analysed (``vcosim.analysis``) and each case is checked against the spec's
table (docs/tight-coupling.md), with the thresholds of ``tests/tight/test_timing.py``:

| case | T_ext | computation | skips | replies land (median, steps after the send) | RTF |
| --- | --- | --- | --- | --- | --- |
| 1 | 0.5 ms | 0 | 0 | 1: each step blocks until the reply | > 0.85 |
| 2 | 5 ms | 0 | 9 | 1: the step right after the send | > 0.85 |
| 3 | 5 ms | 1 ms | 9 | 2–5: a few steps later, in a non-blocking step | > 0.85 |
| 4 | 5 ms | 4.7 ms | 9 | 10: the next send step's blocking receive | > 0.85 |
| 5 | 0.5 ms | 1 ms | 0 | 1: every step blocks | ≤ 0.7 |

``run_cases(out_dir)`` writes ``out_dir/caseN/`` (the logs) and ``out_dir/cases.html`` (the
table, one figure and an interpretation line per case) and returns the results.
"""

from __future__ import annotations

import contextlib
import html
import os
import platform
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rich import box
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table as RichTable

from vcosim.analysis import Run, load_run
from vcosim.analysis.metrics import Metrics
from vcosim.analysis.plots import png_bytes, views_figure
from vcosim.analysis.report import atomic_write, html_page, html_table, img_tag
from vcosim.errors import ConfigError, VcosimError

DURATION = 1.5  # simulated seconds per case
PING_TIME = 0.00001
SIM_TIMEOUT = 60.0  # s of wall time for one simulator process
BUSY = 0.2  # CPUs used by other processes above which a failed case says the machine was busy


@dataclass(frozen=True)
class Case:
    """One case of seed 001: the simulator's T_ext, the controller's computation time."""

    number: int
    ext_time: float  # s
    compute: float  # s
    skips: int  # the send skips T_ext gives
    landing: tuple[float, float]  # accepted median landing offset, steps after the send
    rtf_min: float | None  # the real-time factor must exceed this…
    rtf_max: float | None  # …or stay at or below this
    expected: str  # what the logs must show (the spec's table)


CASES: tuple[Case, ...] = (
    Case(
        1,
        0.0005,
        0.0,
        0,
        (1, 1),
        0.85,
        None,
        "a send every physics step; each step blocks until the reply; real time",
    ),
    Case(
        2,
        0.005,
        0.0,
        9,
        (1, 1),
        0.85,
        None,
        "9 non-blocking steps between sends; the reply lands in the step right after the "
        "send; real time",
    ),
    Case(
        3,
        0.005,
        0.001,
        9,
        (2, 5),
        0.85,
        None,
        "the reply lands a few steps after the send, in a non-blocking step; real time",
    ),
    Case(
        4,
        0.005,
        0.0047,
        9,
        (10, 10),
        0.85,
        None,
        "the reply lands in the next send step's blocking receive; still real time",
    ),
    Case(
        5,
        0.0005,
        0.001,
        0,
        (1, 1),
        None,
        0.7,
        "every step blocks; the simulation runs slower than real time",
    ),
)


@dataclass
class Check:
    """One expectation of a case and what was observed."""

    name: str
    expected: str
    observed: str
    passed: bool


@dataclass
class CaseResult:
    """A case's run, its checks and its interpretation."""

    case: Case
    folder: Path
    run: Run | None = None
    checks: list[Check] = field(default_factory=list)
    error: str | None = None
    wall_time: float = 0.0
    other_load: float | None = None  # CPUs used by other processes during the run (Linux)

    @property
    def passed(self) -> bool:
        """All checks passed (and the run worked)."""
        return self.error is None and bool(self.checks) and all(c.passed for c in self.checks)

    @property
    def metrics(self) -> Metrics | None:
        """The run's metrics, if it was analysed."""
        return self.run.metrics if self.run is not None else None

    def interpretation(self) -> str:
        """One line: what the seed expects, what happened, whether they agree."""
        head = f"Case {self.case.number} — seed: {self.case.expected}."
        if self.error is not None:
            return f"{head} The run failed: {self.error}"
        m = self.metrics
        assert m is not None
        failed = [c for c in self.checks if not c.passed]
        tail = (
            "As in the seed."
            if not failed
            else "Not as in the seed: "
            + "; ".join(f"{c.name} {c.observed} (expected {c.expected})" for c in failed)
            + "."
        )
        if failed and self.other_load is not None and self.other_load > BUSY:
            tail += (
                f" Other processes used {self.other_load:.2f} CPU during the run: the "
                "machine was busy, run again when it is idle."
            )
        return f"{head} Here: {m.verdict}. {tail}"


def evaluate(case: Case, m: Metrics) -> list[Check]:
    """Observed skips, median landing offset and real-time factor against the case."""
    checks = [
        Check(
            "observed skips",
            str(case.skips),
            "–" if m.skips is None else str(m.skips),
            m.skips == case.skips,
        )
    ]
    lo, hi = case.landing
    median = m.latency_steps.median
    expected = f"{lo:g}" if lo == hi else f"{lo:g}–{hi:g}"
    checks.append(
        Check(
            "median landing (steps after the send)",
            expected,
            "no replies" if median is None else f"{median:g}",
            median is not None and lo <= median <= hi,
        )
    )
    rtf = m.rtf
    if case.rtf_min is not None:
        checks.append(
            Check(
                "real-time factor",
                f"> {case.rtf_min:g}",
                _rtf(rtf),
                rtf is not None and rtf > case.rtf_min,
            )
        )
    if case.rtf_max is not None:
        checks.append(
            Check(
                "real-time factor",
                f"≤ {case.rtf_max:g}",
                _rtf(rtf),
                rtf is not None and rtf <= case.rtf_max,
            )
        )
    return checks


def _rtf(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def busy_step(compute: float) -> Callable[[object], None]:
    """A step function that busy-waits ``compute`` seconds and answers all NaN."""

    def step(message: object) -> None:
        end = time.perf_counter() + compute
        while time.perf_counter() < end:
            pass

    return step


def cpu_split() -> tuple[set[int] | None, set[int] | None]:
    """CPUs for the simulator and for the controller: disjoint halves of those available.

    On Linux a loopback datagram wakes its receiver on the sender's CPU; a controller that
    then computes for milliseconds would hold the simulator off its CPU (3.5 ms per send seen
    on a two-core machine). Separate CPUs keep the two apart. None where affinity is not
    available or there is a single CPU.
    """
    if not hasattr(os, "sched_getaffinity"):
        return None, None
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        return None, None
    half = len(cpus) // 2
    return set(cpus[:half]), set(cpus[half:])


def _cpu_seconds() -> tuple[float, float] | None:
    """(CPU seconds all processes used, CPU seconds this process and its children used)."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    except OSError:
        return None
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(v) for v in fields[:8])
    ticks = os.sysconf("SC_CLK_TCK")
    mine = os.times()
    return (
        (user + nice + system + irq + softirq + steal) / ticks,
        mine.user + mine.system + mine.children_user + mine.children_system,
    )


def _other_load(
    before: tuple[float, float] | None, after: tuple[float, float] | None, wall: float
) -> float | None:
    """CPUs used on average by processes other than this one and its children."""
    if before is None or after is None or wall <= 0:
        return None
    others = (after[0] - before[0]) - (after[1] - before[1])
    return max(others / wall, 0.0)


class LoadMeter:
    """The CPUs other processes used on average while it was open (a context manager).

    Real-time cases need an otherwise idle machine; this tells a failed case on a busy
    machine from a failed mechanism. ``cpus`` is None where /proc/stat cannot be read.
    """

    cpus: float | None = None

    def __enter__(self) -> LoadMeter:
        self._before, self._start = _cpu_seconds(), time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.cpus = _other_load(self._before, _cpu_seconds(), time.perf_counter() - self._start)


def set_affinity(pid: int, cpus: set[int] | None) -> None:
    """Pin a process (or, with 0, the calling thread) to ``cpus``; None or refused: as is."""
    if cpus:
        with contextlib.suppress(OSError):  # gone, or refused: run unpinned
            os.sched_setaffinity(pid, cpus)


def simulator_command(
    case: Case, controller_port: int, folder: Path, duration: float = DURATION
) -> list[str]:
    """The ``vcosim sim`` command line of a case."""
    return [
        sys.executable,
        "-m",
        "vcosim",
        "sim",
        "--duration",
        f"{duration:g}",
        "--pacing",
        "realtime",
        "--frame-rate",
        "2000",
        "--ext-time",
        f"{case.ext_time:g}",
        "--ping-time",
        f"{PING_TIME:g}",
        "--listen-port",
        "0",
        "--controller-port",
        str(controller_port),
        "--debug-log",
        str(folder),
    ]


def run_case(case: Case, folder: Path, duration: float = DURATION) -> CaseResult:
    """Run one case (simulator process + controller block here), analyse and check it."""
    from vcosim.tight import ControllerBlock

    result = CaseResult(case, folder)
    start = time.perf_counter()
    cpu_before = _cpu_seconds()
    block = ControllerBlock(
        busy_step(case.compute), listen_port=0, sim_port=0, step=case.ext_time, spin=0.0
    )
    sim_cpus, controller_cpus = cpu_split()

    def controller() -> None:
        set_affinity(0, controller_cpus)  # this thread only
        block.run()

    thread = threading.Thread(target=controller, name=f"case {case.number} controller", daemon=True)
    thread.start()
    proc = subprocess.Popen(
        simulator_command(case, block.address[1], folder, duration),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    set_affinity(proc.pid, sim_cpus)  # before its first step: Python takes ~1 s to start
    try:
        _, stderr = proc.communicate(timeout=SIM_TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        result.error = f"the simulator did not finish within {SIM_TIMEOUT:g} s"
        return result
    finally:
        block.stop()
        thread.join(timeout=5)
        result.wall_time = time.perf_counter() - start
        result.other_load = _other_load(cpu_before, _cpu_seconds(), result.wall_time)
    if proc.returncode != 0:
        lines = [line for line in stderr.strip().splitlines() if line.strip()]
        result.error = f"vcosim sim exited with {proc.returncode}: " + " / ".join(lines[-3:])
        return result
    try:
        result.run = load_run(folder)
    except VcosimError as exc:
        result.error = str(exc)
        return result
    result.checks = evaluate(case, result.run.metrics)
    return result


COLUMNS = ("case", "T_ext", "compute", "skips", "lands", "blocking", "RTF", "others", "result")
CAPTION = (
    "T_ext, compute: ms; skips: configured / observed (mode); lands: median steps "
    "from a send to its reply; blocking: share of replies taken by a blocking receive; "
    "others: CPUs used by other processes during the case"
)


def results_table(results: Sequence[CaseResult]) -> RichTable:
    """The cases as a rich table."""
    table = RichTable(title="Seed 001: the five timing cases", caption=CAPTION, box=box.SIMPLE_HEAD)
    for name in COLUMNS:
        table.add_column(name, justify="right", min_width=len(name))
    for row, passed in _rows(results, units=False):
        number, ext, compute, skips, seen, *rest = row
        table.add_row(
            number,
            ext,
            compute,
            f"{skips} / {seen}",
            *rest,
            "[green]PASS[/]" if passed else "[red]FAIL[/]",
        )
    return table


def _rows(results: Sequence[CaseResult], units: bool = True) -> list[tuple[list[str], bool]]:
    """Per case: configured and observed skips, landing, RTF, other processes' CPU."""
    rows = []
    for r in results:
        c, m = r.case, r.metrics
        load = "–" if r.other_load is None else f"{r.other_load:.2f}"
        ms = " ms" if units else ""
        conf = [
            str(c.number),
            f"{c.ext_time * 1e3:g}{ms}",
            f"{c.compute * 1e3:g}{ms}",
            str(c.skips),
        ]
        if m is None:
            rows.append(([*conf, "–", "–", "–", "–", load], False))
            continue
        median = m.latency_steps.median
        share = m.replies_in_blocking / m.applied if m.applied else 0.0
        rows.append(
            (
                [
                    *conf,
                    "–" if m.skips is None else str(m.skips),
                    "no replies" if median is None else f"{median:g}",
                    f"{share * 100:.0f} %",
                    _rtf(m.rtf),
                    load,
                ],
                r.passed,
            )
        )
    return rows


def cases_html(results: Sequence[CaseResult], wall_time: float) -> str:
    """The report of the cases: the table, then per case its interpretation and figure."""
    header = [
        "case",
        "T_ext",
        "computation",
        "skips configured",
        "skips observed",
        "replies land (median steps after the send)",
        "replies in blocking receives",
        "real-time factor",
        "other processes' CPU use",
        "result",
    ]
    rows = [
        [
            *(html.escape(cell) for cell in row),
            '<span class="pass">PASS</span>' if passed else '<span class="fail">FAIL</span>',
        ]
        for row, passed in _rows(results)
    ]
    passed = sum(r.passed for r in results)
    body = [
        f'<p class="small">{passed} of {len(results)} cases passed in {wall_time:.1f} s on '
        f"{html.escape(platform.node())} ({html.escape(platform.platform())}, Python "
        f"{platform.python_version()}). Each case: vcosim sim for {DURATION:g} s simulated, "
        "real-time pacing at 2000 frames/s, T_ping 0.01 ms, against a controller block that "
        "busy-waits its computation time. Thresholds as in tests/tight/test_timing.py.</p>",
        html_table(rows, header, raw=True),
        "<ul>" + "".join(f"<li>{html.escape(r.interpretation())}</li>" for r in results) + "</ul>",
    ]
    for r in results:
        c = r.case
        status = '<span class="pass">PASS</span>' if r.passed else '<span class="fail">FAIL</span>'
        body.append(
            f"<h2>Case {c.number}: T_ext {c.ext_time * 1e3:g} ms, computation "
            f"{c.compute * 1e3:g} ms — {status}</h2>"
        )
        body.append(f"<p>{html.escape(r.interpretation())}</p>")
        if r.checks:
            body.append(
                html_table(
                    [
                        [ch.name, ch.expected, ch.observed, "PASS" if ch.passed else "FAIL"]
                        for ch in r.checks
                    ],
                    ["check", "expected", "observed", "result"],
                )
            )
        if r.run is not None:
            fig = views_figure(
                r.run.metrics,
                r.run.timeline,
                f"Case {c.number}: T_ext {c.ext_time * 1e3:g} ms, computation "
                f"{c.compute * 1e3:g} ms",
            )
            body.append(img_tag(png_bytes(fig), f"case {c.number}"))
    return html_page("vcosim cases: the five timing cases of seed 001", "\n".join(body))


def run_cases(
    out_dir: str | Path,
    cases: Sequence[Case] = CASES,
    *,
    duration: float = DURATION,
    console: Console | None = None,
    progress: bool = True,
) -> list[CaseResult]:
    """Run the cases one after the other, write ``out_dir/cases.html``, return the results."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    console = console or Console(stderr=True)
    results: list[CaseResult] = []
    start = time.perf_counter()
    columns = (
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console, transient=True, disable=not progress) as bar:
        task = bar.add_task("cases", total=len(cases))
        for case in cases:
            bar.update(
                task,
                description=f"case {case.number}: T_ext {case.ext_time * 1e3:g} "
                f"ms, computation {case.compute * 1e3:g} ms",
            )
            result = run_case(case, out / f"case{case.number}", duration)
            results.append(result)
            bar.advance(task)
            mark = "[green]PASS[/]" if result.passed else "[red]FAIL[/]"
            console.log(f"case {case.number}: {mark} ({result.wall_time:.1f} s)")
    atomic_write(
        {out / "cases.html": cases_html(results, time.perf_counter() - start).encode("utf-8")}
    )
    return results


def cases_command(out: Path, numbers: Sequence[int] | None = None) -> bool:
    """``vcosim cases``: run the (selected) cases, print the table; True if all passed."""
    known = {case.number: case for case in CASES}
    unknown = [n for n in numbers or () if n not in known]
    if unknown:
        raise ConfigError([f"case {n}: no such case (1-5)" for n in unknown], source="--case")
    selected = [known[n] for n in sorted(set(numbers))] if numbers else list(CASES)
    start = time.perf_counter()
    results = run_cases(out, selected)
    console = Console()
    console.print(results_table(results))
    for result in results:
        console.print(f"• {result.interpretation()}")
    passed = sum(r.passed for r in results)
    console.print(
        f"{passed} of {len(results)} passed in {time.perf_counter() - start:.1f} s; "
        f"report: {Path(out) / 'cases.html'}"
    )
    return passed == len(results)
