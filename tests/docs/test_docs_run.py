"""Every command and Python snippet in the README, docs/ and the examples' READMEs runs as written.

Each document is read as a user would follow it: its blocks in order, in one fresh folder with a
copy of ``examples/``, every command a real process (simulator, controller, router and modules
together where the docs start them together, over UDP on loopback). Where a documented command
cannot run here as it stands (another machine, a device, a browser, a long run), an annotation
right before the block says what runs instead; see ``doc_blocks`` for the directives.

Documents run side by side (one more than there are cores), each on a private loopback,
when the system allows network namespaces; one after another on this machine's loopback
otherwise.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import typer.main
from doc_blocks import AnnotationError, doc_files, fenced_blocks, parse
from doc_runs import ROOT, Network, Reader, installs, makes_environment

from vcosim.app import app
from vcosim.app.cli import DEPRECATED

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DOCS = doc_files(ROOT)
Readings = dict[Path, "Future[list[tuple[str, float]]]"]


def doc_id(doc: Path) -> str:
    """``README``, ``docs-bus``, ``examples-contracts-README``: names ``-k`` can select."""
    return str(doc.relative_to(ROOT).with_suffix("")).replace("/", "-")


def commands(doc: Path) -> int:
    """How many commands a document runs: a measure of how long it takes."""
    return sum(len(parse(block).commands) for block in fenced_blocks(doc))


@pytest.fixture(scope="session")
def readings(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Readings]:
    """The selected documents, started at once: each test waits for its own."""
    selected = [
        item.callspec.params["doc"]
        for item in request.session.items
        if item.originalname == test_every_block_runs_as_written.__name__
    ]
    selected.sort(key=commands, reverse=True)  # the longest first
    networks = {doc: Network.private() for doc in selected}
    private = all(networks.values())
    readers = [
        Reader(doc, tmp_path_factory.mktemp(doc.stem), networks[doc] or Network())
        for doc in selected
    ]
    # a document mostly waits (real-time runs, timeouts), so one more than the cores
    side_by_side = (os.cpu_count() or 1) + 1 if private else 1
    with ThreadPoolExecutor(side_by_side) as pool:
        yield {reader.doc: pool.submit(reader.read) for reader in readers}
        for reader in readers:
            reader.abort()
    for network in networks.values():
        if network is not None:
            network.close()


@pytest.mark.parametrize("doc", DOCS, ids=doc_id)
def test_every_block_runs_as_written(doc: Path, readings: Readings) -> None:
    readings[doc].result()  # a DocFailure says which command did what


def test_annotations_are_understood_and_stand_right_before_a_block() -> None:
    problems = []
    for doc in DOCS:
        blocks = fenced_blocks(doc)
        for block in blocks:
            try:
                parse(block)
            except AnnotationError as error:
                problems.append(str(error))
        if doc.read_text().count("<!-- docs-test") != sum(b.annotated for b in blocks):
            problems.append(f"{doc.name}: a docs-test comment that no code block follows")
    assert not problems


def test_the_readme_controller_example_ends_soon_after_the_simulator() -> None:
    """The acceptance of issue 14: started 6 s after the simulator, ends within 5 s of it."""
    block = next(parse(b) for b in fenced_blocks(ROOT / "README.md") if "--debug-log" in b.text)
    sim, controller = block.commands
    assert sim.words[:2] == ["vcosim", "sim"] and sim.words == sim.text.split()
    assert controller.words == ["python", "keep_speed.py"] and controller.delay == 6
    assert controller.ends_within == (5, "vcosim sim")


def test_the_readme_example_file_is_named_unlike_any_test_file() -> None:
    names = [parse(b).save_as for b in fenced_blocks(ROOT / "README.md")]
    saved = [name for name in names if name]
    tests = [p for p in (ROOT / "tests").rglob("*.py") if p.parent.name != "docs"]
    written = " ".join(p.read_text() for p in tests)
    assert saved
    for name in saved:
        assert Path(name).stem not in written


def inline_code(doc: Path) -> Iterator[tuple[int, str]]:
    """The `code` spans in the prose of ``doc`` (outside code blocks and comments), by line."""
    text = doc.read_text()
    blank = lambda m: "\n" * m.group().count("\n")  # noqa: E731 - keeps the line numbers
    # code blocks, comments, and a section on the options as they were (docs/cli.md)
    skipped = r"```.*?```|<!--.*?-->|^## Old spellings$.*?(?=^## )"
    prose = re.sub(skipped, blank, text, flags=re.S | re.M)
    for match in re.finditer(r"`([^`\n]+)`", prose):
        yield prose.count("\n", 0, match.start()) + 1, match.group(1)


def option_names(command: Any) -> set[str]:
    return {o for p in command.params for o in (*p.opts, *p.secondary_opts)} | {"--help"}


def every_command(group: Any) -> Iterator[Any]:
    for command in group.commands.values():
        yield from every_command(command) if hasattr(command, "commands") else [command]


def test_options_in_the_prose_exist_under_their_current_names() -> None:
    """`vcosim … --option` and a lone `--option` in running text name an option as it is now."""
    from vcosim.world.sumo_spec import FILE_OPTIONS, NEVER

    root = typer.main.get_command(app)
    anywhere = set().union(*(option_names(c) for c in every_command(root)), option_names(root))
    sumos = set(FILE_OPTIONS) | set(NEVER)  # SUMO's own, which docs/traffic.md lists
    problems = []
    for doc in DOCS:
        for line, span in inline_code(doc):
            words = re.sub(r"[\[\]|]", " ", span).split()
            command: Any = root
            path = []
            named = words[:1] == ["vcosim"]
            while (
                named
                and words[1:]
                and hasattr(command, "commands")
                and words[1] in command.commands
            ):
                path.append(words[1])
                command = command.commands[words.pop(1)]
            options = [w.split("=")[0] for w in words if re.fullmatch(r"--[a-z-]+(=.*)?", w)]
            known = option_names(command) if path else anywhere | sumos
            for option in options:
                if option not in known or (path and (path[0], option) in DEPRECATED):
                    problems.append(f"{doc.name}:{line}: `{span}`: {option}")
    assert not problems


def test_every_extra_the_docs_name_exists() -> None:
    """`pip install -e ".[viewer]"`, extra `logging`, (extra "ray"): all in pyproject.toml."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    spelled = r"\.\[([\w,-]+)\]|extras? [`\"]([\w-]+)[`\"]"
    named = {
        (doc.name, name)
        for doc in DOCS
        for group in re.findall(spelled, doc.read_text())
        for name in ",".join(group).split(",")
        if name
    }
    assert len(named) > 5
    assert not [f"{doc}: {name}" for doc, name in named if name not in extras]


def missing_outcomes(doc: Path) -> list[str]:
    """The commands of ``doc`` that run but whose outcome nothing checks."""
    missing = []
    for block in map(parse, fenced_blocks(doc)):
        running = [
            c
            for c in block.commands
            if c.help is None
            and c.run_by is None
            and not installs(c.words)
            and not makes_environment(c.words)
        ]
        checked = [c for c in running if c.expect or c.files or c.get]
        parties = [c for c in running if c.background or c.extra]  # checked through the others
        missing += [
            f"{block.where}: `{c.text}`"
            for c in running
            if c not in checked and (c not in parties or not checked)
        ]
    return missing


def test_every_documented_example_checks_its_outcome() -> None:
    """Not only its exit code: what each command printed (expect) or wrote (file, get).

    A block's background parties (a router, a server) are checked through the commands they
    serve.
    """
    assert [problem for doc in DOCS for problem in missing_outcomes(doc)] == []
