"""``vcosim bench all``: every bench's same-run ratios beside the accepted ones, and the guard.

(Past 400 lines: the guard's table of benches, its baseline file, the comparison and its
Markdown page are one contract with benchmarks/baseline.json and docs/performance.md, kept where
one reader checks all of it.)

Absolute rates change from machine to machine and minute to minute; a ratio of two figures
timed in the same run, in turns, hardly does (``vcosim.bench.rates``). Each bench reports
its ratios under stable keys (``ratios()``, documented in its ``RATIOS``), every one reading
"how fast, as a share of its baseline in the same run". ``benchmarks/baseline.json`` holds
the accepted value of each, and the targets the issues set. The guard fails a run in which
any ratio falls below half its accepted value: a 2x slowdown of anything measured cannot slip
in unnoticed, while the noise of a loaded machine (well inside 2x for same-run ratios taken
in turns) does not trip it. A bench with a ratio below half is measured again (``RETRIES``)
before it counts: a real slowdown persists, a burst of load elsewhere does not. A ratio of
ping-pongs between processes measured while other processes took the cores is reported but
not judged (its bench's ``unjudged()``, see ``vcosim.bench.rates.Quiet``): it measured the
scheduler.
"""

from __future__ import annotations

import contextlib
import datetime
import importlib
import json
import subprocess
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from vcosim.bench.rates import RatioDoc
from vcosim.errors import ConfigError

BENCHES = {
    "physics": "vcosim.bench.physics:measure_physics_bench",
    "coupling": "vcosim.bench.coupling:measure_coupling_bench",
    "contracts": "vcosim.bench.contracts:measure_contracts_bench",
    "sweep": "vcosim.bench.sweep:measure_sweep_bench",
    "bus": "vcosim.bench.bus:measure_bus_bench",
    "world": "vcosim.bench.world:measure_world_bench",
    "fmi": "vcosim.bench.fmi:measure_fmu_cost",
    "sumo": "vcosim.bench.sumo:measure_sumo_ratio",
}
"""Every bench, in the order ``vcosim bench all`` runs them: its module and measure function.

Each module has ``RATIOS`` (key: ``RatioDoc``) and ``QUICK`` (the options of ``--quick``);
each measure function takes ``progress`` and returns a report with ``ratios()`` (and, where
load elsewhere can void a ratio, ``unjudged()``)."""

GUARD = 0.5
"""A ratio below this share of its accepted value is a regression."""
RETRIES = 2
"""Times a bench with a regressed ratio is measured again before the regression counts."""
ROOT = Path(__file__).resolve().parents[3]
DEFAULT_BASELINE = ROOT / "benchmarks" / "baseline.json"
MARKERS = ("<!-- bench-table", "<!-- /bench-table -->")
"""The block of a Markdown file that ``--markdown`` replaces (everything else stays)."""


class Bench(Protocol):
    """What every bench's measure function returns."""

    def ratios(self) -> dict[str, float]:
        """The same-run ratios by their stable keys (the module's ``RATIOS``)."""
        ...

    def unjudged(self) -> dict[str, str]:
        """The ratios its run cannot vouch for, and why (``BenchReport``: none)."""
        ...

    def to_dict(self) -> dict[str, Any]:
        """Every figure, as the bench's ``--json`` prints it."""
        ...


Runner = Callable[[str, bool], Bench]
"""Measures a bench by name, quick or not (``run_bench``; tests give a fake)."""


def _module(name: str) -> Any:
    return importlib.import_module(BENCHES[name].partition(":")[0])


def quick_options(name: str) -> dict[str, Any]:
    """The options ``--quick`` gives the bench ``name``."""
    return dict(_module(name).QUICK)


def run_bench(name: str, quick: bool, progress: bool = False, **options: Any) -> Bench:
    """Measure the bench ``name``: its defaults, or ``--quick``'s, then ``options`` on top."""
    module_name, _, function = BENCHES[name].partition(":")
    measure = getattr(importlib.import_module(module_name), function)
    given = {**(quick_options(name) if quick else {}), **options}
    bench: Bench = measure(progress=progress, **given)
    return bench


def ratio_docs() -> dict[str, RatioDoc]:
    """Every ratio of every bench, as ``bench.key``, in the order the benches run."""
    return {f"{name}.{key}": doc for name in BENCHES for key, doc in _module(name).RATIOS.items()}


def not_guarded() -> dict[str, str]:
    """The ratios reported beside their baseline that never count as a regression, and why."""
    return {
        key: "reported, not guarded (docs/performance.md)"
        for key, doc in ratio_docs().items()
        if not doc.guarded
    }


# -- the accepted ratios ----------------------------------------------------------------------
@dataclass
class Baseline:
    """``benchmarks/baseline.json``: accepted ratios, their targets, and where they came from."""

    ratios: dict[str, float]
    targets: dict[str, dict[str, float]] = field(default_factory=dict)  # key: {source: value}
    measured: dict[str, Any] = field(default_factory=dict)  # command, date, commit, machine

    @classmethod
    def load(cls, path: Path) -> Baseline:
        """Read ``path``; a missing or malformed file is a configuration error (exit 2)."""
        try:
            doc = json.loads(path.read_text())
            entries = doc["ratios"]
            return cls(
                ratios={
                    key: float(entry["baseline"])
                    for key, entry in entries.items()
                    if entry.get("baseline") is not None  # a target set before any value
                },
                targets={
                    key: {str(k): float(v) for k, v in entry["targets"].items()}
                    for key, entry in entries.items()
                    if entry.get("targets")
                },
                measured=dict(doc.get("measured", {})),
            )
        except FileNotFoundError:
            raise ConfigError(
                [
                    f"{path} does not exist; give --baseline FILE, or write one with "
                    "--update-baseline"
                ],
                "baseline",
            ) from None
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ConfigError([f"{path}: {exc!r}"], "baseline") from None

    def updated(
        self, measured: dict[str, float], provenance: dict[str, Any], unjudged: Iterable[str] = ()
    ) -> Baseline:
        """The measured ratios as the accepted ones; targets kept for the keys still measured.

        An ``unjudged`` ratio (measured while other processes took the cores) keeps its old
        value, or stays without one: a value the scheduler made would void the guard.
        """
        voided = set(unjudged)
        ratios = {
            key: float(f"{value:.3g}") if key not in voided else self.ratios.get(key)
            for key, value in measured.items()
        }
        return Baseline(
            ratios={key: value for key, value in ratios.items() if value is not None},
            targets={key: self.targets[key] for key in measured if self.targets.get(key)},
            measured=provenance,
        )

    def save(self, path: Path) -> None:
        """Write ``path``: per ratio its accepted value and the targets set for it."""
        entries: dict[str, dict[str, Any]] = {}
        for key in dict.fromkeys([*self.ratios, *self.targets]):
            entry = entries[key] = {}
            if key in self.ratios:
                entry["baseline"] = self.ratios[key]
            if self.targets.get(key):
                entry["targets"] = self.targets[key]
        doc = {
            "about": "Accepted same-run ratios of `vcosim bench all` (docs/performance.md). "
            "A ratio below half its baseline fails the guard. Re-measure deliberately, on a "
            "quiet machine: vcosim bench all --quick --update-baseline",
            "measured": self.measured,
            "ratios": entries,
        }
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")


# -- the verdict ------------------------------------------------------------------------------
@dataclass
class Row:
    """One ratio: measured and accepted value, and the targets set for it."""

    key: str
    value: float | None  # None: no bench measured it
    baseline: float | None  # None: the baseline has no value for it
    targets: dict[str, float]
    unjudged: str | None = None  # why the measurement cannot be judged (load elsewhere)

    @property
    def fails_below(self) -> float | None:
        """The guard's floor: half the accepted value."""
        return None if self.baseline is None else GUARD * self.baseline

    @property
    def share(self) -> float | None:
        """The measured value as a share of the accepted one."""
        if self.value is None or not self.baseline:
            return None
        return self.value / self.baseline

    @property
    def regressed(self) -> bool:
        """True when the measured value, judged, is below the guard's floor."""
        floor = self.fails_below
        judged = self.unjudged is None and self.value is not None
        return judged and floor is not None and self.value < floor  # type: ignore[operator]

    def meets(self) -> dict[str, bool]:
        """Each target, met or not (none when not measured)."""
        if self.value is None:
            return {}
        return {source: self.value >= target for source, target in self.targets.items()}

    def to_dict(self) -> dict[str, Any]:
        """The row as ``vcosim bench all --json`` prints it."""
        return {
            "value": self.value,
            "baseline": self.baseline,
            "share_of_baseline": self.share,
            "fails_below": self.fails_below,
            "regressed": self.regressed,
            "unjudged": self.unjudged,
            "targets": self.targets,
            "meets_targets": self.meets(),
        }


@dataclass
class Verdict:
    """Every ratio against the baseline: the regressions, and what could not be judged."""

    rows: list[Row]

    @property
    def regressions(self) -> list[str]:
        """Ratios below half their accepted value."""
        return [row.key for row in self.rows if row.regressed]

    @property
    def no_baseline(self) -> list[str]:
        """Ratios measured that the baseline does not hold: not judged."""
        return [row.key for row in self.rows if row.baseline is None]

    @property
    def unjudged(self) -> dict[str, str]:
        """Ratios measured while other processes took the cores: reported, not judged."""
        return {row.key: row.unjudged for row in self.rows if row.unjudged is not None}

    @property
    def not_measured(self) -> list[str]:
        """Ratios the baseline holds that no bench measured: not judged."""
        return [row.key for row in self.rows if row.value is None]

    @property
    def passed(self) -> bool:
        """The guard's answer: no ratio below half its accepted value."""
        return not self.regressions


def judge(
    measured: dict[str, float], baseline: Baseline, unjudged: dict[str, str] | None = None
) -> Verdict:
    """Each measured ratio beside its accepted value; the baseline's unmeasured ones last.

    ``unjudged``: ratios (with the reason) that are reported but cannot regress.
    """
    keys = [*measured, *(key for key in baseline.ratios if key not in measured)]
    voided = unjudged or {}
    return Verdict(
        [
            Row(
                key,
                measured.get(key),
                baseline.ratios.get(key),
                baseline.targets.get(key, {}),
                voided.get(key),
            )
            for key in keys
        ]
    )


# -- running them all -------------------------------------------------------------------------
@dataclass
class Attempt:
    """One bench measured once: its report as JSON, its ratios, its wall time."""

    report: dict[str, Any]
    ratios: dict[str, float]  # as ``bench.key``
    unjudged: dict[str, str]  # as ``bench.key``: why
    seconds: float


@dataclass
class SuiteRun:
    """``vcosim bench all``: each bench's kept attempt and how many it took."""

    quick: bool
    attempts: dict[str, list[Attempt]]  # by bench, in the order measured
    kept: dict[str, Attempt]  # by bench: the attempt that stands best against the baseline
    wall_time: float

    @property
    def ratios(self) -> dict[str, float]:
        """Every ratio of the kept attempts, in the order the benches ran."""
        return {
            key: value for attempt in self.kept.values() for key, value in attempt.ratios.items()
        }

    @property
    def unjudged(self) -> dict[str, str]:
        """The kept attempts' ratios that their runs cannot vouch for, and why."""
        return {key: why for attempt in self.kept.values() for key, why in attempt.unjudged.items()}


def _standing(attempt: Attempt, baseline: Baseline | None, skip: Iterable[str] = ()) -> float:
    """The worst share of its accepted value among an attempt's judged ratios (inf: none).

    ``skip``: ratios that are not judged whatever their run (``not_guarded``).
    """
    skipped = {*attempt.unjudged, *skip}
    shares = [
        value / baseline.ratios[key]
        for key, value in attempt.ratios.items()
        if baseline is not None and baseline.ratios.get(key) and key not in skipped
    ]
    return min(shares, default=float("inf"))


def measure_all(
    quick: bool,
    baseline: Baseline | None,
    on_start: Callable[[str, int, int], None] = lambda name, index, attempt: None,
    runner: Runner | None = None,
    benches: tuple[str, ...] = tuple(BENCHES),
) -> SuiteRun:
    """Measure every bench; one with a ratio below half its baseline again, ``RETRIES`` times.

    Of a bench's attempts the one whose worst ratio stands best against the baseline is
    kept (with no baseline, the first). ``on_start(name, index, attempt)`` is called before
    each measurement (index: of the bench among ``benches``; attempt: 1, 2, ...). ``runner``
    measures a bench (default: ``run_bench``).
    """
    measure, skip = runner or run_bench, set(not_guarded())
    start = time.perf_counter()
    attempts: dict[str, list[Attempt]] = {}
    for index, name in enumerate(benches):
        tries = attempts[name] = []
        while len(tries) <= RETRIES:
            on_start(name, index, len(tries) + 1)
            begun = time.perf_counter()
            bench = measure(name, quick)
            tries.append(
                Attempt(
                    bench.to_dict(),
                    {f"{name}.{key}": value for key, value in bench.ratios().items()},
                    {f"{name}.{key}": why for key, why in bench.unjudged().items()},
                    time.perf_counter() - begun,
                )
            )
            if _standing(tries[-1], baseline, skip) >= GUARD:
                break
    kept = {
        name: max(tries, key=lambda attempt: _standing(attempt, baseline, skip))
        for name, tries in attempts.items()
    }
    return SuiteRun(quick, attempts, kept, time.perf_counter() - start)


def check(run: SuiteRun, baseline: Baseline) -> Verdict:
    """The guard's verdict on a run.

    What its benches could not vouch for, and the ratios that are not guarded, are reported
    beside their baseline, not judged.
    """
    return judge(run.ratios, baseline, {**run.unjudged, **not_guarded()})


def provenance(quick: bool) -> dict[str, Any]:
    """Where a baseline came from: the command, the date, the commit, the machine."""
    from vcosim.bench.physics import machine_info

    commit = None
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        done = subprocess.run(
            ["git", "describe", "--always", "--dirty"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=10,
        )
        if done.returncode == 0:
            commit = done.stdout.strip() or None
    machine = machine_info()
    return {
        "command": "vcosim bench all" + (" --quick" if quick else ""),
        "date": datetime.date.today().isoformat(),
        "commit": commit,
        **{key: machine[key] for key in ("cpu", "cpu_count", "python", "numba")},
    }


def report(run: SuiteRun, verdict: Verdict, baseline_path: Path) -> dict[str, Any]:
    """What ``vcosim bench all --json`` prints."""
    return {
        "quick": run.quick,
        "wall_time_s": round(run.wall_time, 1),
        "baseline": str(baseline_path),
        "passed": verdict.passed,
        "regressions": verdict.regressions,
        "unjudged": verdict.unjudged,
        "no_baseline": verdict.no_baseline,
        "not_measured": verdict.not_measured,
        "ratios": {row.key: row.to_dict() for row in verdict.rows},
        "attempts": {name: len(tries) for name, tries in run.attempts.items()},
        "bench_seconds": {
            name: round(sum(a.seconds for a in tries), 1) for name, tries in run.attempts.items()
        },
        "benches": {name: attempt.report for name, attempt in run.kept.items()},
    }


# -- docs/performance.md ----------------------------------------------------------------------
def _number(value: float | None) -> str:
    return "—" if value is None else f"{value:.3g}"


def targets_text(targets: dict[str, float]) -> str:
    """``≥ 0.65 (issue 24), ≥ 0.85 (issue 25)``, or a dash."""
    return ", ".join(f"≥ {v:g} ({source})" for source, v in targets.items()) or "—"


def _made(info: dict[str, Any]) -> str:
    """``vcosim bench all --quick`` on 2025-01-31, commit `abc1234`, AMD EPYC (2 cores)."""
    return (
        f"`{info.get('command', '?')}` on {info.get('date', '?')}, commit "
        f"`{info.get('commit', '?')}`, {info.get('cpu', '?')} ({info.get('cpu_count', '?')} cores)"
    )


def markdown_table(verdict: Verdict, baseline: Baseline, this_run: dict[str, Any]) -> str:
    """The generated block of docs/performance.md: the table, then how each ratio is measured.

    ``this_run`` is the run's ``provenance``.
    """
    docs = ratio_docs()
    lines = [
        f"{MARKERS[0]}: generated by `{this_run.get('command', '?')} --markdown FILE`; "
        "edit the text around it, not inside -->",
        "",
        "| ratio | baseline | this run | fails below | target | what it means |",
        "|---|---:|---:|---:|---|---|",
    ]
    for row in verdict.rows:
        doc = docs.get(row.key)
        busy = " (not judged)" if row.unjudged and (doc is None or doc.guarded) else ""
        floor = _number(row.fails_below) if doc is None or doc.guarded else "not guarded"
        lines.append(
            f"| `{row.key}` | {_number(row.baseline)} | {_number(row.value)}{busy} | {floor} "
            f"| {targets_text(row.targets)} "
            f"| {doc.means if doc else 'not a ratio any bench reports'} |"
        )
    lines += [
        "",
        f"Baseline: {_made(baseline.measured)}. This run: {_made(this_run)}.",
        "",
        "How each is measured:",
        "",
        *(f"- `{key}`: {doc.measured}." for key, doc in docs.items()),
        "",
        MARKERS[1],
    ]
    return "\n".join(lines)


def write_markdown(path: Path, block: str) -> None:
    """Replace the generated block of ``path`` with ``block`` (the file must have one)."""
    text = path.read_text() if path.exists() else ""
    begin, end = text.find(MARKERS[0]), text.find(MARKERS[1])
    if begin < 0 or end < begin:
        raise ConfigError(
            [f"{path} has no block from {MARKERS[0]} ... --> to {MARKERS[1]} to replace"],
            "--markdown",
        )
    path.write_text(text[:begin] + block + text[end + len(MARKERS[1]) :])
