"""The five timing cases of BeamNG's tight coupling: what each must show, and the report.

Each case couples the simulator (``vcosim sim``, real time at 2000 frames/s) to a controller
whose step function busy-waits a computation time; ``vcosim.scenarios.cases`` runs them. Here
each run's logs are judged against the table of docs/tight-coupling.md, with the thresholds
of ``tests/tight/test_timing.py``:

| case | T_ext | computation | skips | replies land (median, steps after the send) | RTF |
| --- | --- | --- | --- | --- | --- |
| 1 | 0.5 ms | 0 | 0 | 1: each step blocks until the reply | > 0.85 |
| 2 | 5 ms | 0 | 9 | 1: the step right after the send | > 0.85 |
| 3 | 5 ms | 1 ms | 9 | 2–5: a few steps later, in a non-blocking step | > 0.85 |
| 4 | 5 ms | 4.7 ms | 9 | 10: the next send step's blocking receive | > 0.85 |
| 5 | 0.5 ms | 1 ms | 0 | 1: every step blocks | ≤ 0.7 |

Real-time cases need an otherwise idle machine: the CPUs other processes used during a run
are measured (``LoadMeter``), so that a failure on a busy machine says so. ``cases_html``
writes the report: the table, then per case its interpretation, checks and figure.
"""

from __future__ import annotations

import contextlib
import html
import os
import platform
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from vcosim.analysis import Run
from vcosim.analysis.metrics import Metrics
from vcosim.analysis.plots import png_bytes, views_figure
from vcosim.analysis.report import html_page, html_table, img_tag
from vcosim.reports import Report

DURATION = 1.5  # simulated seconds per case
BUSY = 0.2  # CPUs used by other processes above which a failed case says the machine was busy


@dataclass(frozen=True)
class Case:
    """One timing case: the simulator's T_ext, the controller's computation time."""

    number: int
    ext_time: float  # s
    compute: float  # s
    skips: int  # the send skips T_ext gives
    landing: tuple[float, float]  # accepted median landing offset, steps after the send
    rtf_min: float | None  # the real-time factor must exceed this…
    rtf_max: float | None  # …or stay at or below this
    expected: str  # what the logs must show (the table of docs/tight-coupling.md)


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
class CaseResult(Report):
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
        """One line: what BeamNG's coupling promises, what happened, whether they agree."""
        head = f"Case {self.case.number} — expected: {self.case.expected}."
        if self.error is not None:
            return f"{head} The run failed: {self.error}"
        m = self.metrics
        assert m is not None
        failed = [c for c in self.checks if not c.passed]
        tail = (
            "As expected."
            if not failed
            else "Not as expected: "
            + "; ".join(f"{c.name} {c.observed} (expected {c.expected})" for c in failed)
            + "."
        )
        if failed and self.other_load is not None and self.other_load > BUSY:
            tail += (
                f" Other processes used {self.other_load:.2f} CPU during the run: the "
                "machine was busy, run again when it is idle."
            )
        return f"{head} Here: {m.verdict}. {tail}"

    def to_dict(self) -> dict[str, Any]:
        """The case, its outcome and checks, JSON-friendly (the run itself stays in its logs)."""
        return {
            "case": self.case.number,
            "ext_time_s": self.case.ext_time,
            "compute_s": self.case.compute,
            "passed": self.passed,
            "error": self.error,
            "checks": [asdict(c) for c in self.checks],
            "interpretation": self.interpretation(),
            "wall_time_s": self.wall_time,
            "other_load_cpus": self.other_load,
            "folder": str(self.folder),
        }


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


COLUMNS = ("case", "T_ext", "compute", "skips", "lands", "blocking", "RTF", "others", "result")
CAPTION = (
    "T_ext, compute: ms; skips: configured / observed (mode); lands: median steps "
    "from a send to its reply; blocking: share of replies taken by a blocking receive; "
    "others: CPUs used by other processes during the case"
)


def table_rows(results: Sequence[CaseResult], units: bool = True) -> list[tuple[list[str], bool]]:
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


def cases_html(results: Sequence[CaseResult], wall_time: float, duration: float = DURATION) -> str:
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
        for row, passed in table_rows(results)
    ]
    passed = sum(r.passed for r in results)
    body = [
        f'<p class="small">{passed} of {len(results)} cases passed in {wall_time:.1f} s on '
        f"{html.escape(platform.node())} ({html.escape(platform.platform())}, Python "
        f"{platform.python_version()}). Each case: vcosim sim for {duration:g} s simulated, "
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
    return html_page("vcosim cases: the five timing cases of BeamNG's coupling", "\n".join(body))
