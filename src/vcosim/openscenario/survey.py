"""How much of the field's OpenSCENARIO vcosim reads: every ``.xosc`` under some folders.

Each scenario file is read as ``vcosim sim --scenario`` reads it (the file, its catalogues,
its road, the world its entities start in): accepted, refused (every problem, one line each),
or crashed (an exception no reader should let out: always a defect of vcosim). With ``run``,
each accepted file also runs, fast, to its stop trigger (or, where no stop trigger can fire,
to the end of its stories), for at most its own horizon (the time its stop trigger fires by
the clock alone) or, where that cannot be known, the limit given. An external ego is driven
by the route driver (``vcosim.openscenario.ego_route.route_driven``: the IDM along the file's
route, else through the places its storyboard waits for it at; the run may then also take
twice its route's time), or, with ``ego_driver="external"`` (and where the ego is on no
lane), by the ACC at its start speed (30 km/h where it starts standing) along its lane,
coupled in process as a controller would be; a distribution runs its first variation. The
reasons are ranked by the files they block, and by the files each alone blocks (what
supporting it would gain).

Catalogue files (``<Catalog>``) are not scenarios and are not counted; a
``ParameterValueDistribution`` file counts as read when its variations and the scenario it
varies are; its runs outside the scenario's ``ValueConstraint``s are refused each by name (in
the file's ``problems``) and the others kept (``vcosim sweep`` refuses such a distribution,
listing them).
"""

from __future__ import annotations

import math
import os
import re
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from vcosim.errors import ConfigError, VcosimError
from vcosim.openscenario import model as m
from vcosim.reports import Report

ACCEPTED, REFUSED, CRASHED = "accepted", "refused", "crashed"
ENDED, STILL_RUNNING, FAILED = "ended", "still running", "failed"
STANDING_EGO_SPEED = 30 / 3.6
"""m/s the ACC drives an external ego at that starts standing (CARLA's heroes do): files
written for a driver or an agent wait for the ego to move."""
RUN_LIMIT = 120.0
"""Simulated seconds a survey run may take before it counts as not ending."""
HORIZON_MARGIN = 1.0
"""s a run goes on past its stop trigger's own time (the trigger's look comes after it)."""
LONGEST_HORIZON = 3600.0
"""s: a stop trigger's own time is taken as a file's limit up to this."""
ROUTE_SLACK = 2.0
"""A route-driven ego's run may take this many times its route's time at its speed (it
waits behind cars and at the storyboard's stops on the way)."""
EGO_DRIVERS = ("route", "external")
"""Who drives a file's external ego in a run: the built-in route driver, or the ACC coupled
as an external controller along its start lane."""


@dataclass
class FileSurvey(Report):
    """One file: what reading it gave, and (with runs) what running it gave."""

    path: str
    corpus: str
    outcome: str
    problems: list[str] = field(default_factory=list)
    run: str = ""
    ended_by: str = ""
    simulated: float = 0.0
    wall: float = 0.0


@dataclass
class SurveyReport(Report):
    """Every file, the counts by corpus, and the reasons ranked."""

    files: list[FileSurvey]

    def corpora(self) -> dict[str, Counter[str]]:
        """Per corpus: files, and how many were accepted, refused, crashed, ran to an end."""
        table: dict[str, Counter[str]] = {}
        for f in self.files:
            counts = table.setdefault(f.corpus, Counter())
            counts["files"] += 1
            counts[f.outcome] += 1
            if f.run:
                counts[f.run] += 1
        return table

    def reasons(self) -> list[tuple[str, int, int]]:
        """Each reason, the files it is found in, and the files it alone refuses."""
        found: Counter[str] = Counter()
        alone: Counter[str] = Counter()
        for f in self.files:
            keys = {reason_of(p) for p in f.problems} if f.outcome == REFUSED else set()
            found.update(keys)
            if len(keys) == 1:
                alone.update(keys)
        return sorted(
            ((k, n, alone[k]) for k, n in found.items()), key=lambda r: (-r[1], -r[2], r[0])
        )


def reason_of(problem: str) -> str:
    """A problem without its line, file and the names that differ between files."""
    text = re.sub(r"^line \d+( of [^:]+)?: ", "", problem)
    text = re.sub(r"'[^']*'", "…", text)
    return re.sub(r"-?\d+(\.\d+)?", "N", text)


def corpus_names(folders: list[Path]) -> list[str]:
    """Each folder's name from where the folders part (``esmini/resources/xosc``)."""
    absolute = [f.resolve() for f in folders]
    if len(absolute) == 1:
        return [absolute[0].name]
    common = Path(os.path.commonpath(absolute))
    return [str(f.relative_to(common)) or f.name for f in absolute]


def scenario_files(folder: Path) -> list[Path]:
    """The ``.xosc`` files under ``folder`` that hold a scenario or a distribution."""
    found = []
    for path in sorted(folder.rglob("*.xosc")):
        try:
            head = path.read_bytes()[:4096]
        except OSError:
            continue
        if b"<Catalog " in head or b"<Catalog>" in head:
            continue
        found.append(path)
    return found


def survey(
    folders: Iterable[Path],
    run: bool = False,
    limit: float = RUN_LIMIT,
    workers: int = 1,
    progress: Callable[[FileSurvey], None] | None = None,
    ego_driver: str = "route",
) -> SurveyReport:
    """Read (and with ``run``, run) every scenario file under ``folders``.

    ``ego_driver`` (one of ``EGO_DRIVERS``) drives each run's external ego.
    """
    folders = [Path(f) for f in folders]
    names = corpus_names(folders)
    jobs = [
        (path, name, run, limit, ego_driver)
        for folder, name in zip(folders, names, strict=True)
        for path in scenario_files(folder)
    ]
    files: list[FileSurvey] = []
    if workers <= 1:
        results: Iterable[FileSurvey] = (_one(*job) for job in jobs)
        for result in results:
            files.append(result)
            if progress is not None:
                progress(result)
    else:
        with ProcessPoolExecutor(workers) as pool:
            for result in pool.map(_one_job, jobs):
                files.append(result)
                if progress is not None:
                    progress(result)
    return SurveyReport(files)


def _one_job(job: tuple[Path, str, bool, float, str]) -> FileSurvey:
    return _one(*job)


def _one(path: Path, corpus: str, run: bool, limit: float, ego_driver: str = "route") -> FileSurvey:
    """Read one file; run it if it was accepted and ``run`` is asked for."""
    from vcosim.openscenario.distribution import read_distribution
    from vcosim.openscenario.storyboard import scenario_run

    result = FileSurvey(str(path), corpus, ACCEPTED)
    started = time.perf_counter()
    try:
        if b"ParameterValueDistribution" in path.read_bytes():
            # runs outside the scenario's constraints are refused one by one, the rest read
            scenario, variations = read_distribution(path, dropped=result.problems)
            first: dict[str, object] | None = dict(variations[0]) if variations else None
            if run:  # its first variation, run
                result.run, result.ended_by, result.simulated = _run(
                    scenario, limit, first, ego_driver
                )
            else:
                scenario_run(scenario, first)
        elif run:
            result.run, result.ended_by, result.simulated = _run(path, limit, ego_driver=ego_driver)
        else:
            scenario_run(path)
    except ConfigError as exc:
        result.outcome, result.problems = REFUSED, list(exc.problems)
    except VcosimError as exc:
        if result.outcome == ACCEPTED and run:
            result.run, result.ended_by = FAILED, str(exc)
        else:
            result.outcome, result.problems = REFUSED, [str(exc)]
    except Exception as exc:  # the survey's point: a reader that lets one out is a defect
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        where = f"{Path(frame.filename).name}:{frame.lineno}"
        result.outcome = CRASHED
        result.problems = [f"{type(exc).__name__} at {where}: {exc}"]
        result.run = ""
    result.wall = time.perf_counter() - started
    return result


def horizon(trigger: m.Trigger | None) -> float | None:
    """When a stop trigger fires for sure by the clock alone (None: it cannot be known).

    A group of SimulationTime conditions only (``greaterThan``/``greaterOrEqual``, an edge
    that a rising clock passes) fires at its latest time plus its delay; the trigger at its
    earliest such group. A file's own horizon is the survey's limit for it: a scenario that
    says it lasts 173 s is not cut at the survey's duration.
    """
    if trigger is None:
        return None
    times = []
    for group in trigger.groups:
        ends = [
            c.test.value + c.delay
            for c in group
            if isinstance(c.test, m.SimulationTime)
            and c.test.rule in ("greaterThan", "greaterOrEqual")
            and c.edge in ("none", "rising", "risingOrFalling")
        ]
        if group and len(ends) == len(group) and math.isfinite(max(ends)):
            times.append(max(ends))  # (a scenario_runner criterion reads as never: inf)
    return min(times) if times else None


def _limit(scenario: m.Scenario, limit: float) -> float:
    """The file's own horizon (plus a margin) where it is later than ``limit``.

    Its stop trigger's time by the clock; else, where every act of every story has a stop
    trigger by the clock (a scenario_runner file, whose stop trigger holds criteria only,
    ends with its stories), the latest of those: at most ``LONGEST_HORIZON``.
    """
    known = horizon(scenario.stop)
    if known is None:
        acts = [horizon(act.stop) for story in scenario.stories for act in story.acts]
        timed = [t for t in acts if t is not None]
        known = max(timed) if timed and len(timed) == len(acts) else None
    if known is None or known + HORIZON_MARGIN > LONGEST_HORIZON:
        return limit
    return max(limit, known + HORIZON_MARGIN)


def _run(
    path: Path,
    limit: float,
    parameters: dict[str, object] | None = None,
    ego_driver: str = "route",
) -> tuple[str, str, float]:
    """Run a scenario fast to its stop trigger (or ``limit``), its external ego driven.

    By the route driver (``ego_driver`` "route"; where the ego is on no lane, by the ACC), or
    by the ACC coupled in process at its start speed along its lane ("external").
    """
    from vcosim.controllers.acc import Acc
    from vcosim.openscenario.ego_route import route_driven
    from vcosim.openscenario.reader import read_scenario
    from vcosim.openscenario.storyboard import StoryboardReport, scenario_run
    from vcosim.scenarios import PacingSpec, RunSpec, build_simulation
    from vcosim.tight.inprocess import couple_in_process

    face, world = scenario_run(path, parameters)  # refusals before anything runs
    scenario = read_scenario(path, parameters)
    until = _limit(scenario, limit)
    coupled = bool(scenario.external)
    if scenario.external and ego_driver == "route":
        try:
            world, seconds = route_driven(world, scenario)
        except ConfigError:  # an ego on no lane: the ACC drives it straight on
            pass
        else:
            coupled = False
            until = max(until, min(ROUTE_SLACK * seconds + HORIZON_MARGIN, LONGEST_HORIZON))
    sim = build_simulation(RunSpec(world=world, pacing=PacingSpec(mode="fast"), faces=[face]))
    if coupled:
        speed = scenario.init[scenario.external[0]].speed
        cruise = speed if math.isfinite(speed) and speed > 0 else STANDING_EGO_SPEED
        couple_in_process(sim, Acc(speed=cruise))
    report = sim.run(until)
    board = report.faces["storyboard"]
    assert isinstance(board, StoryboardReport)
    ended = not board.ended_by.startswith("the run's duration")
    return (ENDED if ended else STILL_RUNNING), board.ended_by, float(report.sim_time)
