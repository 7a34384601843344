"""The fenced code blocks of the docs, with the `docs-test` annotations that say how to run them.

A shell block's commands are its lines that start with ``vcosim``, ``python`` or ``pip`` (the
rest is output or prose); ``#`` starts a comment, ``&&`` chains, a trailing ``&`` sends a
command to the background, as in a shell. A ```python block is one program.

An annotation is an HTML comment right before the block (invisible on the rendered page, in
plain sight for whoever edits it). Each line is one of::

    DIRECTIVE; DIRECTIVE                 for every command of the block (or the python program)
    PREFIX: DIRECTIVE; DIRECTIVE         for the block's command that is PREFIX, or else its one
                                         command that starts with PREFIX
    + COMMAND: DIRECTIVE; ...            an extra command, started before the block's own
    save-as FILE | join | edit FILE: TOML    what to do with the block itself

or on one line, ``<!-- docs-test: DIRECTIVE; ... -->``; `` # `` starts a comment (the reason
for a change, for whoever reads it). The directives:

=========================== ==============================================================
``set --opt VALUE --flag``  give these options (replacing the value the docs wrote)
``replace OLD => NEW``      run with OLD replaced (another machine's address, a long time)
``background``              start it and go on, as in another terminal (also ``&``)
``ready TEXT``              wait until its output shows TEXT before going on
``interrupt``               Ctrl-C it: once ready (foreground) or when the block is done
``delay SECONDS``           start it this long after the previous command started
``exit CODES``              the exit codes it may end with, e.g. ``0|1`` (default 0; 130 after
                            ``interrupt``)
``expect TEXT``             its output shows TEXT; ``{LO..HI}`` in TEXT is any number from
                            LO to HI (``groundspeed (m/s): ends {19.5..20.5}``), and runs of
                            spaces match any (a summary's row: ``applied │ {390..400}``)
``file GLOB``               a non-empty file matching GLOB exists once it ended
``get URL``                 once ready, an HTTP GET of URL answers 200
``ends-within S of PREFIX`` it ends at most S seconds after the command PREFIX ended
``with COMMAND``            start COMMAND in the background just before it (the other
                            terminal the docs mention); once it ended, COMMAND must end by
                            itself, exit 0
``timeout SECONDS``         the longest it may take (default 60)
``help REASON``             run only ``COMMAND --help`` (it must list the documented options);
                            REASON says why the command itself is not run
``run-by FILE``             not run here: FILE holds the command verbatim and runs it
=========================== ==============================================================
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

PROGRAMS = ("vcosim", "python", "pip")
SHELL_LANGUAGES = ("", "sh", "bash", "shell", "console")
BLOCK_DIRECTIVES = ("save-as", "join", "edit")
COMMAND_DIRECTIVES = (
    "set",
    "replace",
    "background",
    "ready",
    "interrupt",
    "delay",
    "exit",
    "expect",
    "file",
    "get",
    "ends-within",
    "with",
    "timeout",
    "help",
    "run-by",
)

FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```[ \t]*$", re.M | re.S)
COMMENT = re.compile(r"(^|\s)#(\s.*)?$")
ANNOTATION = re.compile(r"<!--\s*docs-test(?::|\s)((?:(?!-->).)*)-->\s*\Z", re.S)


class AnnotationError(ValueError):
    """An annotation the runner cannot follow: named with its file and line."""


@dataclass
class Command:
    """One process a block starts, as documented and as it will run."""

    text: str  # as in the docs (without its comment)
    line: int
    words: list[str]  # what runs, after the annotation's changes
    background: bool = False
    ready: str | None = None
    interrupt: bool = False
    delay: float = 0.0
    exits: tuple[int, ...] | None = None
    expect: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    get: list[str] = field(default_factory=list)
    ends_within: tuple[float, str] | None = None
    timeout: float = 60.0
    help: str | None = None
    run_by: str | None = None
    companions: list[str] = field(default_factory=list)  # started just before it
    extra: bool = False  # added by the annotation, not in the docs

    @property
    def allowed_exits(self) -> tuple[int, ...]:
        if self.exits is not None:
            return self.exits
        return (130,) if self.interrupt else (0,)


@dataclass
class Block:
    """A fenced block: where it is, its text, and what the annotation says to do with it."""

    doc: Path
    line: int  # of the opening fence
    language: str
    text: str
    annotation: list[str]  # its lines, without comments
    annotated: bool = False  # a docs-test comment stands right before it
    commands: list[Command] = field(default_factory=list)
    save_as: str | None = None
    join: bool = False
    edits: list[tuple[str, str]] = field(default_factory=list)  # (file, TOML)

    @property
    def where(self) -> str:
        return f"{self.doc.name}:{self.line}"


def fenced_blocks(doc: Path) -> list[Block]:
    """Every fenced block of ``doc`` with the annotation written right before it."""
    text = doc.read_text()
    blocks = []
    for match in FENCE.finditer(text):
        before = ANNOTATION.search(text, 0, match.start())
        annotation = before.group(1).strip().splitlines() if before else []
        blocks.append(
            Block(
                doc=doc,
                line=text.count("\n", 0, match.start()) + 1,
                language=match.group(1).lower(),
                text=match.group(2),
                annotation=[a for a in (COMMENT.sub("", a).strip() for a in annotation) if a],
                annotated=before is not None,
            )
        )
    return blocks


def shell_commands(block: Block) -> list[Command]:
    """The commands of a shell block, in order, without comments."""
    commands = []
    lines = block.text.splitlines()
    for offset, raw in enumerate(lines):
        if not raw.startswith(PROGRAMS):
            continue
        follow = offset
        while raw.endswith("\\") and follow + 1 < len(lines):  # a continued line
            follow += 1
            raw = raw[:-1] + lines[follow]
        words = shlex.split(raw, comments=True)
        background = words[-1] == "&"
        if background:
            words = words[:-1]
        start = 0
        for i, word in enumerate([*words, "&&"]):
            if word == "&&":
                part = words[start:i]
                commands.append(
                    Command(
                        text=shlex.join(part),
                        line=block.line + 1 + offset,
                        words=part,
                        background=background,
                    )
                )
                start = i + 1
    return commands


def parse(block: Block) -> Block:
    """The block with its commands, the annotation applied; AnnotationError if it is wrong."""

    def fail(message: str) -> AnnotationError:
        return AnnotationError(f"{block.where}: {message}")

    block = replace(block, commands=[], edits=[])
    if block.language == "python":
        block.commands = [Command(text="python", line=block.line + 1, words=["python"])]
    elif block.language in SHELL_LANGUAGES:
        block.commands = shell_commands(block)
    extras: list[Command] = []
    for line in block.annotation:
        name = line.split(maxsplit=1)[0]
        if name in BLOCK_DIRECTIVES:
            block_directive(block, line)
        elif line.startswith("+ "):
            text, _, directives = line[2:].partition(": ")
            extra = Command(text=text, line=block.line, words=shlex.split(text), extra=True)
            apply(extra, directives, fail)
            extras.append(extra)
        elif name in COMMAND_DIRECTIVES:
            if not block.commands:
                raise fail(f"'{line}', but the block has no command")
            for directive in filter(str.strip, line.split(";")):
                if directive.split()[0] != "replace":
                    for command in block.commands:
                        apply(command, directive, fail)
                elif block.language == "python":
                    block.text = replaced(block.text, directive, fail)
                else:  # in every command that has it
                    old = directive.split(maxsplit=1)[1].partition(" => ")[0]
                    having = [c for c in block.commands if old in shlex.join(c.words)]
                    for command in having or block.commands:
                        apply(command, directive, fail)
        else:
            prefix, colon, directives = line.partition(": ")
            matches = [c for c in block.commands if c.text == prefix] or [
                c for c in block.commands if c.text.startswith(prefix)
            ]
            if not colon or len(matches) != 1:
                found = f"{len(matches)} commands start with it" if colon else "no directive"
                raise fail(f"'{line}': {found} (commands: {[c.text for c in block.commands]})")
            apply(matches[0], directives, fail)
    if block.save_as is not None:  # the block is a file for what comes after
        block.commands = []
    block.commands = extras + block.commands
    for command in block.commands:
        if command.ends_within is not None:
            others = [c for c in block.commands if c is not command]
            if not any(c.text.startswith(command.ends_within[1]) for c in others):
                raise fail(f"'{command.text}' ends within ... of a command the block lacks")
    return block


def companion(text: str, of: Command) -> Command:
    """A command ``with`` starts just before ``of``: in the background, ending by itself."""
    return Command(text=text, line=of.line, words=shlex.split(text), background=True, extra=True)


def block_directive(block: Block, line: str) -> None:
    """``save-as FILE``, ``join`` or ``edit FILE: TOML``."""
    name, _, rest = line.partition(" ")
    if name == "save-as":
        block.save_as = rest.strip()
    elif name == "join":
        block.join = True
    else:
        file, _, toml = rest.partition(": ")
        block.edits.append((file.strip(), toml))


Fail = Callable[[str], AnnotationError]


def replaced(text: str, directive: str, fail: Fail) -> str:
    """``text`` after ``replace OLD => NEW``; an error if OLD is not in it."""
    old, arrow, new = directive.strip().removeprefix("replace").strip().partition(" => ")
    if not arrow or old not in text:
        raise fail(f"'{directive.strip()}': nothing to replace")
    return text.replace(old, new)


def apply(command: Command, directives: str, fail: Fail) -> None:
    """Change ``command`` as the directives (separated by ``;``) say."""
    for directive in filter(None, (d.strip() for d in directives.split(";"))):
        name, _, rest = directive.partition(" ")
        rest = rest.strip()
        if name == "set":
            command.words = with_options(command.words, shlex.split(rest))
        elif name == "replace":
            command.words = shlex.split(replaced(shlex.join(command.words), directive, fail))
        elif name == "background":
            command.background = True
        elif name == "ready":
            command.ready = rest
        elif name == "interrupt":
            command.interrupt = True
        elif name == "delay":
            command.delay = float(rest)
        elif name == "exit":
            command.exits = tuple(int(code) for code in rest.split("|"))
        elif name == "expect":
            command.expect.append(rest)
        elif name == "file":
            command.files.append(rest)
        elif name == "get":
            command.get.append(rest)
        elif name == "ends-within":
            seconds, _, other = rest.partition(" of ")
            command.ends_within = (float(seconds), other)
        elif name == "with":
            command.companions.append(rest)
        elif name == "timeout":
            command.timeout = float(rest)
        elif name == "help":
            if not rest:
                raise fail(f"'{command.text}': help needs the reason the command is not run")
            command.help = rest
        elif name == "run-by":
            command.run_by = rest
        else:
            known = ", ".join(COMMAND_DIRECTIVES)
            raise fail(f"unknown directive '{directive}' (known: {known})")


def with_options(words: list[str], options: list[str]) -> list[str]:
    """``words`` with each ``--option [VALUES]`` of ``options`` in place of the same option.

    An option already there has as many values replaced as ``options`` gives it.
    """
    groups: list[list[str]] = []
    for word in options:
        if word.startswith("--"):
            groups.append([word])
        else:
            groups[-1].append(word)
    out = list(words)
    for option, *values in groups:
        if option in out:
            at = out.index(option)
            out[at : at + 1 + len(values)] = [option, *values]
        else:
            out += [option, *values]
    return out


def doc_files(root: Path) -> list[Path]:
    """The markdown files whose blocks must run: the README, docs/, the examples' READMEs."""
    return [
        root / "README.md",
        *sorted((root / "docs").glob("*.md")),
        *sorted((root / "examples").glob("**/README.md")),
    ]
