"""esmini's own asserted positions, and how far vcosim's runs of the same files are from them.

(Past 400 lines: the extraction of esmini's asserted positions from both kinds of its tests, and
the comparison with vcosim's runs, read and write one set of samples.)

esmini's tests assert where its entities are at given times: ``test/smoke_test.py`` matches
lines of the CSV its ``dat2csv`` writes from a recording (columns ``time, id, name, x, y, z,
h, p, r, speed, wheel_angle, wheel_rot``), and
``EnvironmentSimulator/Unittest/ScenarioEngine_test.cpp`` steps a ``ScenarioEngine`` by a
``dt`` and asserts ``pos_.GetX()``, ``GetY()``, ``GetH()`` and ``GetSpeed()`` of its
objects. Those files are read here as data (Python's ``ast`` for the first, patterns for
the second): no code of esmini runs or is copied. A sample whose time or scenario cannot be
told for sure (a scenario built in the test, a loop over a list, a code example driving the
entities) is left out, and counted as such.

``check`` runs every scenario vcosim accepts, fast, as ``vcosim scenario survey --run``
does (an external ego on the ACC at its start speed), reads every entity's pose at the
asserted times and reports per sample the distance from esmini's position and whether it
is within 1 m plus one esmini step's travel (speed times its step).
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from vcosim.errors import ConfigError, VcosimError
from vcosim.reports import Report
from vcosim.sim.face import Face

if TYPE_CHECKING:
    from vcosim.sim.simulation import Simulation

SMOKE_TEST = "test/smoke_test.py"
UNIT_TEST = "EnvironmentSimulator/Unittest/ScenarioEngine_test.cpp"
UNIT_TEST_DIR = "EnvironmentSimulator/Unittest"
"""The folder the unit tests run in: their scenario paths are relative to it."""
REALTIME_STEP = 0.01
"""The step assumed when a run gives no ``--fixed_timestep`` (esmini then runs in real
time, its step the frame's; none of the smoke tests does so)."""
TOLERANCE = 1.0
"""Metres within which a sample agrees, beside one esmini step's travel."""
ARGS_THAT_MATTER = ("--fixed_timestep", "--disable_controllers", "--seed")

ACCEPTED, REFUSED, CRASHED, MISSING = "accepted", "refused", "crashed", "missing"


@dataclass(frozen=True)
class Sample:
    """One asserted state of one entity: where esmini's test says it is at ``time``."""

    file: str  # the scenario, relative to the esmini folder
    test: str  # where the assertion is: "smoke_test.py:test_ltap_od"
    line: int
    timestep: float  # esmini's step in that run (s)
    args: str  # the esmini arguments that matter, as the test gives them
    time: float
    entity: str  # the name (smoke tests) or "#N", the N-th object (unit tests)
    x: float | None
    y: float | None
    heading: float | None = None
    speed: float | None = None


@dataclass
class Extraction(Report):
    """The samples, and the assertions found but left out, with why."""

    samples: list[Sample] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


# -- smoke_test.py ------------------------------------------------------------------------


def smoke_samples(text: str, name: str = "smoke_test.py") -> Extraction:
    """Every CSV line asserted present in ``text`` (esmini's ``smoke_test.py``), as samples.

    A ``run_scenario`` call gives the scenario and arguments of the assertions after it in
    the same test; ``re.search(PATTERN, csv)`` inside ``assertTrue``, where ``csv`` came from
    ``generate_csv``, gives a sample. Assertions under an ``if`` keep the condition in
    ``test`` (``... [platform == "win32"]``).
    """
    tree = ast.parse(text)
    constants = {
        target.id: node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
        for target in node.targets
        if isinstance(target, ast.Name) and isinstance(node.value.value, str)
    }
    out = Extraction()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
            state = _SmokeTest(f"{name}:{node.name}", constants, text, out)
            state.block(node.body, ())
    return out


class _SmokeTest:
    """One test function's statements in order: its runs and the CSV lines it asserts."""

    def __init__(self, test: str, constants: dict[str, str], text: str, out: Extraction) -> None:
        self.test, self.constants, self.text, self.out = test, constants, text, out
        self.run: tuple[str, str, float] | None = None  # file, args that matter, step
        self.why = "no run_scenario before it"
        self.csv_names: set[str] = set()

    def block(self, body: list[ast.stmt], guards: tuple[str, ...]) -> None:
        for stmt in body:
            if isinstance(stmt, ast.If):
                test = ast.get_source_segment(self.text, stmt.test) or "?"
                self.block(stmt.body, (*guards, test))
                self.block(stmt.orelse, (*guards, f"not ({test})"))
            elif isinstance(stmt, (ast.For, ast.While, ast.With, ast.Try)):
                self.run, self.why = None, "after a loop or block that may run esmini"
                for child in ast.walk(stmt):
                    if isinstance(child, ast.Call) and _called(child) == "assertTrue":
                        self.assertion(child, guards, in_loop=True)
            else:
                self.statement(stmt, guards)

    def statement(self, stmt: ast.stmt, guards: tuple[str, ...]) -> None:
        for node in ast.walk(stmt):
            if not isinstance(node, ast.Call):
                continue
            called = _called(node)
            if called == "run_scenario":
                self.start(node)
            elif called == "generate_csv" and isinstance(stmt, ast.Assign):
                self.csv_names |= {t.id for t in stmt.targets if isinstance(t, ast.Name)}
            elif called == "assertTrue":
                self.assertion(node, guards)

    def start(self, call: ast.Call) -> None:
        """A ``run_scenario(file, args, ...)``: the scenario and the arguments that matter."""
        keywords = {k.arg: k.value for k in call.keywords if k.arg}
        positional = ["osc_filename", "esmini_arguments", "xosc_str", "application"]
        given = dict(zip(positional, call.args, strict=False)) | keywords
        self.run, self.why = None, "the scenario is not a file named in the test"
        if "application" in given:
            self.why = "a code example drives the scenario"
            return
        args = self.string(given.get("esmini_arguments"))
        if args is None:
            self.why = "the esmini arguments are not constants"
            return
        file = self.path(given.get("osc_filename"))
        if file is None:
            found = re.search(r"--osc\s+(\S+)", args)
            file = _normal(found.group(1)) if found else None
        if file is None:
            return
        self.run = (file, _args_that_matter(args), _timestep(args))

    def path(self, node: ast.expr | None) -> str | None:
        """``os.path.join(ESMINI_PATH, 'resources/xosc/x.xosc')`` → ``resources/xosc/x.xosc``."""
        if isinstance(node, ast.Call) and _called(node) == "join" and len(node.args) == 2:
            tail = node.args[1]
            if isinstance(tail, ast.Constant) and isinstance(tail.value, str):
                return _normal(tail.value)
        return None

    def string(self, node: ast.expr | None) -> str | None:
        """A string made of constants and module constants joined by ``+``; None otherwise."""
        if node is None:
            return ""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name):
            return self.constants.get(node.id)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = self.string(node.left), self.string(node.right)
            return None if left is None or right is None else left + right
        return None

    def assertion(self, call: ast.Call, guards: tuple[str, ...], in_loop: bool = False) -> None:
        """``assertTrue(re.search(PATTERN, csv))``: a sample, or a line left out and why."""
        search = call.args[0] if call.args else None
        if not (isinstance(search, ast.Call) and _called(search) == "search"):
            return
        if len(search.args) < 2:
            return
        pattern, haystack = search.args[0], search.args[1]
        if not isinstance(haystack, ast.Name):
            return
        if haystack.id not in self.csv_names and not (in_loop and haystack.id == "csv"):
            return  # the log, not the CSV
        if not (isinstance(pattern, ast.Constant) and isinstance(pattern.value, str)):
            return
        where = f"{self.test}, line {call.lineno}"
        if in_loop or self.run is None:
            self.out.skipped.append(f"{where}: {'in a loop' if in_loop else self.why}")
            return
        row = csv_row(pattern.value)
        if row is None:
            self.out.skipped.append(f"{where}: not a CSV line with a time, a name, x and y")
            return
        file, args, step = self.run
        test = self.test + "".join(f" [{g}]" for g in guards)
        time, entity, x, y, heading, speed = row
        self.out.samples.append(
            Sample(file, test, call.lineno, step, args, time, entity, x, y, heading, speed)
        )


def csv_row(pattern: str) -> tuple[float, str, float, float, float | None, float | None] | None:
    r"""(time, name, x, y, heading, speed) of a pattern matching one line of dat2csv's CSV.

    ``'\n6.500, 0, Ego, 28.542, -7.876, 0.000, 1.779, ...'``; a number cut short by ``.*``
    (``10.20.*``) is taken as written; None when the pattern is not such a line.
    """
    text = pattern.lstrip("^")
    text = text[2:] if text.startswith("\\n") else text
    text = text[:-2] if text.endswith("\\n") else text
    fields = [f.strip() for f in text.split(",")]
    if len(fields) < 5:
        return None
    numbers: list[float | None] = []
    for k, value in enumerate(fields):
        if k == 2:
            numbers.append(None)
            continue
        value = value.removesuffix(".*")
        try:
            numbers.append(float(value))
        except ValueError:
            if k < 5:
                return None
            numbers.append(None)
    name = re.sub(r"\\(.)", r"\1", fields[2])
    if not re.fullmatch(r"[\w+\-. ]+", name):
        return None
    time, x, y = numbers[0], numbers[3], numbers[4]
    assert time is not None and x is not None and y is not None
    heading = numbers[6] if len(numbers) > 6 else None
    speed = numbers[9] if len(numbers) > 9 else None
    return time, name, x, y, heading, speed


def _called(call: ast.Call) -> str:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def _normal(path: str) -> str:
    """A path relative to the esmini folder (the tests run in ``test/``)."""
    parts = [p for p in path.replace("\\", "/").split("/") if p not in ("", ".")]
    while parts and parts[0] == "..":
        parts.pop(0)
    return "/".join(parts)


def _args_that_matter(args: str) -> str:
    words = args.split()
    kept = []
    for k, word in enumerate(words):
        if word in ARGS_THAT_MATTER:
            value = words[k + 1] if k + 1 < len(words) and word != "--disable_controllers" else ""
            kept.append(f"{word} {value}".strip())
    return " ".join(kept)


def _timestep(args: str) -> float:
    """The last ``--fixed_timestep`` (esmini takes them in turn: the last one wins)."""
    steps = re.findall(r"--fixed_timestep\s+([0-9.eE+-]+)", args)
    return float(steps[-1]) if steps else REALTIME_STEP


# -- ScenarioEngine_test.cpp --------------------------------------------------------------

_TEST = re.compile(r"^TEST\(\s*(\w+)\s*,\s*(\w+)\s*\)", re.MULTILINE)
_NUMBER = r"[-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?"
_EVENTS = re.compile(
    r"(?P<engine>new\s+ScenarioEngine\(\s*\"(?P<path>[^\"]+)\")"
    rf"|(?P<dt>\bdt\s*=\s*(?P<dtv>{_NUMBER})\s*;)"
    r"|(?P<loop>\b(?:for|while)\s*\()"
    r"|(?P<step>\bscenario_step\(\s*\w+\s*,\s*(?P<by>[^)]*)\))"
    r"|(?P<alias>\b(?P<an>\w+)\s*=\s*(?:static_cast<\w+\s*\*>\(\s*)?\w+(?:->entities_\.|->|\.)"
    r"(?:object_\[(?P<ai>\d+)\]|GetObjectByName\(\s*\"(?P<aname>[^\"]+)\"\s*\))\s*\)?\s*;)"
    r"|(?P<near>\b(?:ASSERT|EXPECT)_NEAR\(\s*(?P<who>[\w>\-.\[\]]+?)->"
    rf"(?P<what>pos_\.GetX\(\)|pos_\.GetY\(\)|pos_\.GetH\(\)|GetSpeed\(\))\s*,\s*(?P<v>{_NUMBER})\s*,)"
    r"|(?P<other>->step\(|\bSE_Step|->Frame\(|\bSE_Init|AssignController\(|->Send\(|[.>]Set\w+\("
    r"|MoveAlong\w*\()"
)
_WHILE = re.compile(
    r"^while\s*\(\s*\w+->getSimulationTime\(\)\s*<\s*(?P<limit>[^&|]+?)\s*"
    r"(?:&&\s*\w+->GetQuitFlag\(\)\s*!=\s*true\s*)?\)$"
)
_FOR = re.compile(r"^for\s*\(\s*int\s+i\s*=\s*0\s*;\s*i\s*<\s*(?P<n>[^;]+?)\s*;\s*i\+\+\s*\)$")


def unit_samples(text: str, name: str = "ScenarioEngine_test.cpp") -> Extraction:
    """The positions ``text`` (esmini's ``ScenarioEngine_test.cpp``) asserts after stepping.

    Only a test whose time is known for sure gives samples: a ``ScenarioEngine`` on a file,
    stepped by ``scenario_step(se, dt)`` once, or in a loop that does nothing else and runs
    a counted number of times or while ``getSimulationTime()`` is below a constant (its time
    accumulated as esmini adds it). Any other stepping ends the samples of that engine.
    """
    out = Extraction()
    heads = list(_TEST.finditer(text))
    for k, head in enumerate(heads):
        end = heads[k + 1].start() if k + 1 < len(heads) else len(text)
        _unit_test(f"{name}:{head.group(1)}.{head.group(2)}", text, head.end(), end, out)
    return out


def _unit_test(test: str, text: str, start: int, end: int, out: Extraction) -> None:
    dt: float | None = None
    file: str | None = None
    time = 0.0
    known = False
    aliases: dict[str, str] = {}
    pending: dict[tuple[str, str], dict[str, float]] = {}  # (entity, time) → values
    lines: dict[tuple[str, str], int] = {}

    def flush() -> None:
        for (entity, at), values in pending.items():
            if file is None or ("x" not in values and "y" not in values):
                continue
            out.samples.append(
                Sample(
                    file, test, lines[(entity, at)], dt or 0.0, f"dt {dt}", float(at),
                    entity, values.get("x"), values.get("y"), values.get("h"),
                    values.get("speed"),
                )
            )  # fmt: skip
        pending.clear()

    pos = start
    while True:
        found = _EVENTS.search(text, pos, end)
        if found is None:
            break
        pos = found.end()
        line = text.count("\n", 0, found.start()) + 1
        if found.group("engine"):
            flush()
            file = _normal_unit(found.group("path"))
            time, known, aliases = 0.0, dt is not None, {}
        elif found.group("dt"):
            dt = float(found.group("dtv"))
            known = known or (file is not None and time == 0.0)
        elif found.group("loop"):
            header_end = _matching(text, found.end() - 1, "(", ")")
            body_start = text.find("{", header_end, end)
            if header_end < 0 or body_start < 0 or text[header_end + 1 : body_start].strip():
                known = known and "scenario_step" not in text[found.start() : header_end]
                continue
            body_end = _matching(text, body_start, "{", "}")
            header = " ".join(text[found.start() : header_end + 1].split())
            body = "".join(text[body_start + 1 : body_end].split())
            pos = body_end + 1
            if "step" not in body and "Step" not in body:
                continue  # a loop that does not move time (its assertions are not read)
            steps = None
            if known and dt is not None and re.fullmatch(r"scenario_step\(\w+,dt\);", body):
                steps = _loop_steps(header, dt, time)
            if steps is None:
                if known and pending:
                    flush()
                known = False
            else:
                for _ in range(steps):
                    time += dt  # type: ignore[operator]
        elif found.group("step"):
            by = found.group("by").strip()
            value = dt if by == "dt" else _constant(by, dt)
            if value is None:
                known = False
            else:
                time += value
        elif found.group("alias"):
            index = found.group("ai")
            aliases[found.group("an")] = f"#{index}" if index else found.group("aname")
        elif found.group("near"):
            who = found.group("who")
            entity = _entity(who, aliases)
            where = f"{test}, line {line}"
            if entity is None:
                out.skipped.append(f"{where}: object {who} not told by its index")
                continue
            if not known or file is None:
                out.skipped.append(f"{where}: the time is not known for sure")
                continue
            key = (entity, f"{time:.6f}")
            what = {"pos_.GetX()": "x", "pos_.GetY()": "y", "pos_.GetH()": "h"}
            pending.setdefault(key, {})[what.get(found.group("what"), "speed")] = float(
                found.group("v")
            )
            lines.setdefault(key, line)
        elif found.group("other"):
            known = False
    flush()


def _normal_unit(path: str) -> str:
    """A unit test's path (relative to ``EnvironmentSimulator/Unittest``) from esmini's top."""
    parts: list[str] = UNIT_TEST_DIR.split("/")
    for part in path.replace("\\", "/").split("/"):
        if part == "..":
            if parts:
                parts.pop()
        elif part not in ("", "."):
            parts.append(part)
    return "/".join(parts)


def _matching(text: str, start: int, opening: str, closing: str) -> int:
    """The index of the bracket closing the one at ``start``; -1 if there is none."""
    depth = 0
    for k in range(start, len(text)):
        if text[k] == opening:
            depth += 1
        elif text[k] == closing:
            depth -= 1
            if depth == 0:
                return k
    return -1


def _loop_steps(header: str, dt: float, time: float) -> int | None:
    """How many times a loop of ``scenario_step(se, dt)`` runs; None when not for sure."""
    found = _FOR.match(header)
    if found:
        n = found.group("n").replace(" ", "")
        cast = re.fullmatch(r"static_cast<int>\((.+)\)", n)
        value = _constant(cast.group(1) if cast else n, dt)
        return None if value is None else int(value)
    found = _WHILE.match(header)
    if found:
        limit = _constant(found.group("limit"), dt)
        if limit is None:
            return None
        steps = 0
        while time < limit and steps < 10**6:
            time += dt
            steps += 1
        return steps
    return None


def _constant(expression: str, dt: float | None) -> float | None:
    """The value of ``2.0 + dt - SMALL_NUMBER`` and the like; None if not only those."""
    names = {"SMALL_NUMBER": 1e-6, "dt": dt}
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError:
        return None

    def value(node: ast.expr) -> float | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return float(node.value)
        if isinstance(node, ast.Name):
            return names.get(node.id)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            inner = value(node.operand)
            return None if inner is None else -inner
        if isinstance(node, ast.BinOp):
            a, b = value(node.left), value(node.right)
            if a is None or b is None:
                return None
            if isinstance(node.op, ast.Add):
                return a + b
            if isinstance(node.op, ast.Sub):
                return a - b
            if isinstance(node.op, ast.Mult):
                return a * b
            if isinstance(node.op, ast.Div) and b != 0.0:
                return a / b
        return None

    return value(tree.body)


def _entity(who: str, aliases: dict[str, str]) -> str | None:
    """``se->entities_.object_[1]`` → ``#1``; an alias → what it names; None otherwise."""
    found = re.fullmatch(r"\w+(?:->entities_\.|->|\.)object_\[(\d+)\]", who)
    if found:
        return f"#{found.group(1)}"
    return aliases.get(who)


def extract(esmini: Path) -> Extraction:
    """The samples of both test files under the esmini folder ``esmini`` (those present)."""
    out = Extraction()
    for relative, reader in ((SMOKE_TEST, smoke_samples), (UNIT_TEST, unit_samples)):
        path = Path(esmini) / relative
        if path.is_file():
            part = reader(path.read_text(encoding="utf-8", errors="replace"), path.name)
            out.samples += part.samples
            out.skipped += part.skipped
    return out


# -- running them in vcosim ---------------------------------------------------------------


@dataclass
class SampleResult(Report):
    """One sample: esmini's position, vcosim's, the distance and the tolerance."""

    test: str
    line: int
    time: float
    entity: str
    esmini_x: float | None
    esmini_y: float | None
    x: float | None = None
    y: float | None = None
    speed: float | None = None
    error: float | None = None  # m; None: vcosim has no such entity then
    tolerance: float = TOLERANCE
    within: bool = False
    note: str = ""


@dataclass
class FileCheck(Report):
    """One scenario (one esmini step): read or refused, and its samples."""

    file: str
    timestep: float
    args: str
    outcome: str
    reason: str = ""
    samples: list[SampleResult] = field(default_factory=list)
    ended_at: float | None = None

    @property
    def compared(self) -> int:
        """How many samples have a vcosim position to compare."""
        return sum(s.error is not None for s in self.samples)

    @property
    def within(self) -> int:
        """How many samples agree."""
        return sum(s.within for s in self.samples)

    @property
    def worst(self) -> float | None:
        """The largest distance (m); None when no sample has one."""
        errors = [s.error for s in self.samples if s.error is not None]
        return max(errors) if errors else None


@dataclass
class CheckReport(Report):
    """Every scenario the tests assert positions of, and what was left out."""

    files: list[FileCheck]
    skipped: list[str] = field(default_factory=list)

    def totals(self) -> tuple[int, int, int, float | None]:
        """Of the accepted files: samples, those compared, those within, the worst distance."""
        accepted = [f for f in self.files if f.outcome == ACCEPTED]
        samples = sum(len(f.samples) for f in accepted)
        compared = sum(s.error is not None for f in accepted for s in f.samples)
        worsts = [w for f in accepted if (w := f.worst) is not None]
        within = sum(f.within for f in accepted)
        return samples, compared, within, max(worsts) if worsts else None


def check(esmini: Path, progress: Callable[[FileCheck], None] | None = None) -> CheckReport:
    """Run every scenario esmini's tests assert positions of, and compare the positions."""
    esmini = Path(esmini)
    found = extract(esmini)
    runs: dict[tuple[str, float, str], list[Sample]] = {}
    for sample in found.samples:
        runs.setdefault((sample.file, sample.timestep, sample.args), []).append(sample)
    files = []
    for (file, step, args), samples in runs.items():
        result = check_file(esmini, file, step, args, samples)
        files.append(result)
        if progress is not None:
            progress(result)
    return CheckReport(files, found.skipped)


def check_file(
    esmini: Path, file: str, timestep: float, args: str, samples: list[Sample]
) -> FileCheck:
    """Run one scenario fast and compare the poses at the samples' times with esmini's."""
    result = FileCheck(file, timestep, args, ACCEPTED)
    path = esmini / file
    if not path.is_file():
        result.outcome, result.reason = MISSING, "no such file"
        return result
    try:
        result.samples, result.ended_at = _run(path, samples)
    except ConfigError as exc:
        result.outcome, result.reason = REFUSED, exc.problems[0] if exc.problems else str(exc)
    except VcosimError as exc:
        result.outcome, result.reason = REFUSED, str(exc)
    except Exception as exc:  # a reader or run that lets one out: a defect, reported
        result.outcome, result.reason = CRASHED, f"{type(exc).__name__}: {exc}"
    return result


def _run(path: Path, samples: list[Sample]) -> tuple[list[SampleResult], float]:
    """Run ``path`` as the survey does, a probe reading the poses at the samples' times."""
    from vcosim.controllers.acc import Acc
    from vcosim.openscenario.reader import read_scenario
    from vcosim.openscenario.storyboard import scenario_run
    from vcosim.scenarios import PacingSpec, RunSpec, build_simulation
    from vcosim.scenarios.build import attach_face
    from vcosim.tight.inprocess import couple_in_process

    face, world = scenario_run(path)
    scenario = read_scenario(path)
    order = esmini_order(path, list(scenario.entities))
    sim = build_simulation(RunSpec(world=world, pacing=PacingSpec(mode="fast")))
    probe = _Probe(samples, order, sim.dt)
    sim.attach("esmini-probe", probe)  # before the storyboard: it reads what esmini logs
    attach_face(sim, face)
    if scenario.external:
        speed = scenario.init[scenario.external[0]].speed
        couple_in_process(sim, Acc(speed=speed if math.isfinite(speed) else 0.0))
    last = max((s.time for s in samples), default=0.0)
    report = sim.run(last + 2 * sim.dt)
    probe.before_step(sim)  # a run its stop trigger ended at t = 0 has time 0 still to read
    return probe.results(), float(report.sim_time)


def esmini_order(path: Path, entities: list[str]) -> list[str] | None:
    """The entities in esmini's object order (its ``object_[N]``); None when not known.

    esmini adds an entity to its objects when it reads the entity's ``Private`` in Init, in
    the order of those; a trailer follows its tractor. With an entity Init does not name (a
    trailer, one added later) the order is not known for sure.
    """
    import xml.etree.ElementTree as ET

    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError):
        return None
    order: list[str] = []
    for private in root.iterfind("./Storyboard/Init/Actions/Private"):
        name = private.get("entityRef", "")
        if name not in order:
            order.append(name)
    return order if sorted(order) == sorted(entities) else None


class _Probe(Face):
    """A face reading every entity's pose at the steps nearest the samples' times.

    It reads before the storyboard acts at that time, as esmini logs: esmini's row at t
    shows the state that an action triggered at t has not yet changed (in
    star_position_types.xosc the row at 0.100 has each car where it stood before the
    teleport of SimulationTime 0.1); time 0 after Init, as esmini's first row.
    """

    kind = "probe"

    def __init__(self, samples: list[Sample], order: list[str] | None, dt: float) -> None:
        self.order = order
        self.due: dict[int, list[Sample]] = {}
        self.found: dict[Sample, SampleResult] = {}
        self.samples = samples
        for sample in samples:
            if sample.time < 0.0:
                continue
            self.due.setdefault(round(sample.time / dt), []).append(sample)

    def before_step(self, sim: Simulation) -> None:
        """Time 0 once every face has started: esmini logs its first row after Init."""
        assert sim.world is not None
        if sim.world.step_index == 0:
            self.read(sim)

    def after_step(self, sim: Simulation) -> None:
        if self.due:
            self.read(sim)

    def read(self, sim: Simulation) -> None:
        world = sim.world
        assert world is not None
        due = self.due.pop(world.step_index, None)
        if not due:
            return
        poses = world.poses()
        others = world.others()
        for sample in due:
            self.found[sample] = self.compare(sample, world.names, poses, others)

    def compare(self, sample: Sample, names: list[str], poses, others) -> SampleResult:
        result = SampleResult(
            sample.test, sample.line, sample.time, sample.entity, sample.x, sample.y
        )
        name = sample.entity
        if name.startswith("#"):
            index = int(name[1:])
            if self.order is None:
                result.note = "esmini's object order not known (an entity Init does not name)"
                return result
            if index >= len(self.order):
                result.note = "no entity of that index"
                return result
            name = self.order[index]
            result.entity = f"{name} ({sample.entity})"
        if name in names:
            row = names.index(name)
            x, y = float(poses["x"][row]), float(poses["y"][row])
            speed = float(poses["speed"][row])
        elif name in others.names:
            slot = others.names.index(name)
            x, y = float(others.poses["x"][slot]), float(others.poses["y"][slot])
            speed = float(others.poses["speed"][slot])
        else:
            ghost = "_ghost" in name  # esmini's own entity, not the file's
            result.note = "esmini's ghost" if ghost else "no such entity in vcosim's world then"
            return result
        result.x, result.y, result.speed = x, y, speed
        dx = 0.0 if sample.x is None else x - sample.x
        dy = 0.0 if sample.y is None else y - sample.y
        result.error = math.hypot(dx, dy)
        travel = abs(sample.speed if sample.speed is not None else speed) * sample.timestep
        result.tolerance = TOLERANCE + travel
        result.within = result.error <= result.tolerance
        return result

    def results(self) -> list[SampleResult]:
        out = []
        for sample in self.samples:
            found = self.found.get(sample)
            if found is None:
                found = SampleResult(
                    sample.test, sample.line, sample.time, sample.entity, sample.x, sample.y
                )
                found.note = (
                    "before the start" if sample.time < 0.0 else "the run ended before then"
                )
            out.append(found)
        return out
