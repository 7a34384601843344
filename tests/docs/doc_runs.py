"""Run a document's blocks as a reader would: in order, in one folder, as real processes.

Each command is a process of its own in a new session (so Ctrl-C reaches it and its children, as
in a terminal), forked from a Python that imported vcosim once per document (``helpers.forks``;
``VCOSIM_TESTS_FRESH=1`` starts each from scratch); its output is read line by line, so the
runner waits for a line instead of sleeping. Documented ports are used as written, on a loopback
of the document's own where the system allows (a private network namespace): nothing else on the
machine can hold them, and documents can run side by side.
"""

from __future__ import annotations

import contextlib
import glob
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import tomli_w
from doc_blocks import Block, Command, companion, fenced_blocks, parse

from helpers.forks import FRESH, WIDE, ForkServer
from vcosim.config import deep_merge

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).parents[2]


class DocFailure(AssertionError):
    """A documented command that did not do what the docs say."""

    def __init__(self, message: str, process: Process | None = None) -> None:
        super().__init__(message)
        self.process = process


def program(name: str) -> str:
    """The executable for a documented program: this interpreter and its ``vcosim``."""
    if name == "python":
        return sys.executable
    beside = Path(sys.executable).with_name(name)
    found = str(beside) if beside.exists() else shutil.which(name)
    if found is None:
        raise DocFailure(f"'{name}' is not installed beside {sys.executable}")
    return found


class Network:
    """Where a document's processes talk: a private loopback, or this machine's."""

    def __init__(self, holder: subprocess.Popen[str] | None = None) -> None:
        self.holder = holder
        self.prefix: list[str] = []
        if holder is not None:  # processes join the holder's user and network namespaces
            self.prefix = ["nsenter", f"--target={holder.pid}", "--user", "--net"]
            self.prefix += ["--preserve-credentials", "--"]

    @classmethod
    def private(cls) -> Network | None:
        """A network namespace with only a loopback, up; None where the system forbids it."""
        if shutil.which("unshare") is None or shutil.which("nsenter") is None:
            return None
        script = "ip link set lo up && echo up && exec sleep infinity"
        holder = subprocess.Popen(
            ["unshare", "--map-root-user", "--net", "sh", "-c", script],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert holder.stdout is not None
        if holder.stdout.readline().strip() == "up":
            return cls(holder)
        holder.kill()
        holder.wait()
        return None

    def get(self, url: str) -> str | None:
        """GET ``url`` from inside the network: None if it answered 200, else what went wrong."""
        fetch = "import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1]).status)"
        done = subprocess.run(
            [*self.prefix, sys.executable, "-c", fetch, url],
            capture_output=True,
            text=True,
            timeout=30,
        )
        return None if done.stdout.strip() == "200" else done.stdout + done.stderr

    def close(self) -> None:
        if self.holder is not None:
            self.holder.kill()
            self.holder.wait()


class Process:
    """A started command: its output as it comes, and when it ended."""

    def __init__(
        self,
        command: Command,
        words: list[str],
        cwd: Path,
        network: Network,
        forkserver: ForkServer | None = None,
    ) -> None:
        self.command = command
        self.words = words
        self.lines: list[str] = []
        self.ended_at: float | None = None
        self._changed = threading.Condition()
        # (a runtime folder of the document's own: `vcosim bus` keeps its table there)
        env = dict(os.environ, COLUMNS=WIDE, PYTHONUNBUFFERED="1", XDG_RUNTIME_DIR=str(cwd))
        self.started_at = time.monotonic()
        started = [*network.prefix, program(words[0]), *words[1:]]
        if forkserver is not None:  # a Ctrl-C to the process group reaches what it started
            started = forkserver.command(words, group=True)
        self.popen = subprocess.Popen(
            started,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.popen.stdout is not None
        for line in self.popen.stdout:
            with self._changed:
                self.lines.append(line.rstrip("\n"))
                self._changed.notify_all()
        self.popen.wait()
        with self._changed:
            self.ended_at = time.monotonic()
            self._changed.notify_all()

    @property
    def output(self) -> str:
        with self._changed:
            return "\n".join(self.lines)

    def wait_for(self, text: str, timeout: float) -> None:
        """Return once ``text`` is in the output; fail if the process ends or time runs out."""
        deadline = self.started_at + timeout
        with self._changed:
            while not any(text in line for line in self.lines):
                if self.ended_at is not None:
                    raise self.failure(f"ended (exit {self.popen.returncode}) before '{text}'")
                if not self._changed.wait(deadline - time.monotonic()):
                    raise self.failure(f"no '{text}' within {timeout:g} s")

    def wait(self) -> int:
        """The exit code, once it ended; fail if it outlives its timeout."""
        deadline = self.started_at + self.command.timeout
        with self._changed:
            while self.ended_at is None:
                if not self._changed.wait(deadline - time.monotonic()):
                    raise self.failure(f"still running after {self.command.timeout:g} s")
        return self.popen.returncode

    def interrupt(self) -> None:
        """Ctrl-C, as a terminal sends it: to the whole process group."""
        if self.ended_at is None:
            with contextlib.suppress(ProcessLookupError):  # it may end just now
                os.killpg(self.popen.pid, signal.SIGINT)

    def kill(self) -> None:
        """End it and whatever it started (its process group), if anything is left.

        Returns once its output is closed: a forked command ends shortly after its client,
        and must no longer hold its ports when the next block starts.
        """
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.popen.pid, signal.SIGKILL)
        self.popen.wait()
        with self._changed:
            self._changed.wait_for(lambda: self.ended_at is not None, timeout=10.0)

    def tail(self, lines: int) -> str:
        with self._changed:
            return "\n".join(self.lines[-lines:])

    def failure(self, what: str) -> DocFailure:
        c = self.command
        ran = shlex.join(self.words)
        message = f"line {c.line}: `{c.text}` (ran `{ran}`) {what}\n{self.tail(40)}"
        return DocFailure(message, self)


class Reader:
    """A reader going through one document in its own folder, block after block."""

    def __init__(self, doc: Path, folder: Path, network: Network) -> None:
        self.doc = doc
        self.folder = folder
        self.network = network
        self.running: list[Process] = []  # this block's, to stop whatever happens
        self.aborted = False
        self.program = ""  # the python blocks so far, for a block that joins them
        self.forkserver: ForkServer | None = None
        shutil.copytree(ROOT / "examples", folder / "examples")

    def run(self, block: Block) -> float:
        """Run one block; return its wall time. DocFailure says what differs from the docs."""
        begin = time.monotonic()
        block = parse(block)
        for file, toml in block.edits:
            path = self.folder / file
            edited = deep_merge(tomllib.loads(path.read_text()), tomllib.loads(toml))
            path.write_text(tomli_w.dumps(edited))
        if block.save_as is not None:
            (self.folder / block.save_as).write_text(block.text)
        if block.language == "python":
            self.program = (self.program if block.join else "") + block.text
        processes: list[Process] = []
        try:
            for command in block.commands:
                partners = [self.start(block, companion(c, command)) for c in command.companions]
                process = self.start(block, command, processes)
                for partner in partners:
                    if partner is not None and not command.background:
                        partner.wait()  # the other terminal ends too before the next command
                processes += [p for p in (*partners, process) if p is not None]
            for process in processes:
                if process.command.background and process.command.interrupt:
                    process.interrupt()
            for process in processes:
                check(process, self.folder, processes)
        except DocFailure as failure:  # with what the block's other processes said
            others = [p for p in self.running if p is not failure.process]
            said = "".join(f"\n--- `{p.command.text}`:\n{p.tail(15)}" for p in others)
            raise DocFailure(f"{block.where}: {failure}{said}") from None
        finally:
            for process in self.running:
                process.kill()
            self.running.clear()
        return time.monotonic() - begin

    def read(self) -> list[tuple[str, float]]:
        """Run every block of the document in order; each block's place and wall time."""
        times = []
        if not FRESH:  # a fork server inside the document's network, for its commands
            self.forkserver = ForkServer(self.folder, self.network.prefix)
        try:
            for block in fenced_blocks(self.doc):
                if self.aborted:
                    raise DocFailure(f"{block.where}: not run, the test session ended first")
                times.append((block.where, self.run(block)))
        finally:
            if self.forkserver is not None:
                self.forkserver.close()
        return times

    def abort(self) -> None:
        """Stop at once: what runs now, and the blocks still to come (the session ends)."""
        self.aborted = True
        for process in list(self.running):
            process.kill()

    def start(
        self, block: Block, command: Command, running: list[Process] | None = None
    ) -> Process | None:
        """Start ``command`` (and finish it unless it runs in the background)."""
        if command.run_by is not None:
            held = (ROOT / command.run_by).read_text()
            source = block.text.splitlines()[command.line - block.line - 1].split(" #")[0]
            if source.strip() not in held:
                raise DocFailure(f"{block.where}: {command.run_by} does not run `{source}`")
            return None
        if installs(command.words):
            check_pip(command)
            return None
        if makes_environment(command.words):
            return None
        words = list(command.words)
        if block.language == "python" and not command.extra:
            snippet = self.folder / f"{self.doc.stem}_{block.line}.py"
            snippet.write_text(self.program)
            words.append(snippet.name)
        if command.help is not None:
            words = [*words[: first_option(words)], "--help"]
        if words[0] not in ("vcosim", "python"):
            raise DocFailure(f"{block.where}: `{command.text}` is not run; say how (run-by)")
        if running and command.delay:
            time.sleep(max(0.0, running[-1].started_at + command.delay - time.monotonic()))
        process = Process(command, words, self.folder, self.network, self.forkserver)
        self.running.append(process)
        if command.ready is not None:
            process.wait_for(command.ready, command.timeout)
        for url in command.get:
            problem = self.network.get(url)
            if problem is not None:
                raise process.failure(f"GET {url} failed: {problem}")
        if command.background:
            return process
        if command.interrupt:
            process.interrupt()
        process.wait()
        return process


def installs(words: list[str]) -> bool:
    """A ``pip install`` line (or uv's): not run, the tests have it installed."""
    return words[0] == "pip" or words[:2] == ["uv", "pip"]


def makes_environment(words: list[str]) -> bool:
    """Making or activating a virtual environment: not run, the tests run in one already.

    ``tests/docs/test_readme_setup.py`` runs the README's set-up whole, in a fresh copy.
    """
    return words[1:3] == ["-m", "venv"] or words[0] in (".", "source")


def first_option(words: list[str]) -> int:
    """Where a command's options start (``vcosim bench coupling --json`` → 3)."""
    return next((i for i, w in enumerate(words) if w.startswith("-")), len(words))


def check(process: Process, folder: Path, processes: list[Process]) -> None:
    """What the docs promise of a command that ran: exit code, output, files, when it ended."""
    command = process.command
    code = process.wait()
    output = process.output
    if code not in command.allowed_exits:
        raise process.failure(f"exit {code}, expected {command.allowed_exits}")
    for problem in ("Traceback (most recent call last)", "is deprecated"):
        if problem in output:
            raise process.failure(f"printed '{problem}'")
    if command.help is not None:
        for option in (w for w in command.words if w.startswith("--")):
            if option not in output:
                raise process.failure(f"has no option {option}")
    for text in command.expect:
        problem = unshown(text, output)
        if problem is not None:
            raise process.failure(problem)
    for pattern in command.files:
        if not any(Path(f).stat().st_size for f in glob.glob(str(folder / pattern))):
            raise process.failure(f"left no file {pattern}")
    if command.ends_within is not None:
        seconds, prefix = command.ends_within
        other = next(p for p in processes if p is not process and p.command.text.startswith(prefix))
        other.wait()
        assert process.ended_at is not None and other.ended_at is not None
        late = process.ended_at - other.ended_at
        if late > seconds:
            raise process.failure(f"ended {late:.1f} s after `{prefix}` (at most {seconds:g})")


RANGE = re.compile(r"\{(-?[\d.]+(?:e-?\d+)?)\.\.(-?[\d.]+(?:e-?\d+)?)\}")
SPACES = re.compile(r"[ \t]+")
NUMBER = r"(-?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?)"


def unshown(text: str, output: str) -> str | None:
    """Why ``output`` does not show ``text``, or None if it does.

    ``{LO..HI}`` in ``text`` stands for any number from LO to HI: ``ends {19.5..20.5}``. A run
    of spaces matches any run of spaces, so a row of a summary table reads ``applied │ 998``.
    """
    text, output = SPACES.sub(" ", text), SPACES.sub(" ", output)
    ranges = [(float(lo), float(hi)) for lo, hi in RANGE.findall(text)]
    if not ranges:
        return None if text in output else f"did not print '{text}'"
    literal = RANGE.split(text)[::3]  # the text around the ranges
    pattern = re.compile(NUMBER.join(re.escape(part) for part in literal))
    seen = []
    for match in pattern.finditer(output):
        numbers = [float(n) for n in match.groups()]
        if all(lo <= n <= hi for n, (lo, hi) in zip(numbers, ranges, strict=True)):
            return None
        seen.append(match.group(0))
    if not seen:
        return f"did not print '{text}'"
    return f"printed {seen[-1]!r}, not '{text}'"


def check_pip(command: Command) -> None:
    """A ``pip install`` line is not run (the tests have it installed), its extras must exist."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    for word in command.words:
        if "[" in word:
            for extra in word[word.index("[") + 1 : word.rindex("]")].split(","):
                if extra.strip() not in extras:
                    known = ", ".join(extras)
                    raise DocFailure(f"`{command.text}`: no extra '{extra}' (known: {known})")
