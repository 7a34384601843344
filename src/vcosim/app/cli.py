"""The ``vcosim`` command: the root app, its global options, and how it ends.

Each command family lives in a module of its own (``simulator``, ``controller``, ``connect``,
``bus``, ``drive``, ``modules``, ``runs``, ``bench``) and is registered here. ``main`` turns
whatever ends a command into the exit codes of docs/cli.md: 0 done, 1 the run failed, 2 a
usage or configuration error (nothing started), 130 interrupted.
"""

from __future__ import annotations

import errno
import inspect
import logging
import os
import sys
from collections.abc import Sequence
from enum import Enum
from importlib.metadata import version as package_version
from typing import Annotated, Any

import typer
from rich.markup import escape
from typer.core import TyperGroup

from vcosim.app import (
    bench,
    bus,
    connect,
    controller,
    drive,
    fmu,
    modules,
    runs,
    scenario,
    signals,
    simulator,
    vehicle,
    world,
)
from vcosim.app.console import console, settings
from vcosim.app.sim_options import SimCommand


class VcosimGroup(TyperGroup):
    """The root group: old spellings rewritten before parsing; errors mapped to exit codes.

    Both happen here rather than in ``main`` so that ``typer.testing.CliRunner`` sees the same
    command line users do.
    """

    def main(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        """Parse and run ``args`` (default: the process's) after rewriting old spellings.

        A usage error is one line naming the problem and where help is, exit code 2. A reader
        that stops reading (``vcosim --help | head``) ends the command quietly, exit code 0.
        """
        argv = modernise(list(sys.argv[1:] if args is None else args))
        tidy_help(self)
        into_nothing = _stdout_is_devnull()
        try:
            result = super().main(argv, prog_name, complete_var, standalone_mode=False, **extra)
            code = result if isinstance(result, int) else 0
        except typer.TyperException as exc:  # the help printed by a group, or a usage error
            code = 0 if _help_was_shown(exc) else _usage_error(exc, argv)
        except (typer.Abort, KeyboardInterrupt):
            code = 130
        except BrokenPipeError:
            code = _reader_gone()
        except SystemExit as exc:  # rich ends a print into a closed pipe so, stdout to null
            if exc.code != 1 or into_nothing or not _stdout_is_devnull():
                raise
            code = 0
        if not standalone_mode:
            return code
        sys.exit(code)

    def invoke(self, ctx: Any) -> Any:
        """Run the command; an error it raises becomes one line and an exit code."""
        try:
            return super().invoke(ctx)
        except (typer.Exit, typer.Abort, typer.TyperException, BrokenPipeError):
            raise
        except Exception as exc:
            if settings.debug:
                raise
            code, message = _explain(exc)
            console.print(f"[red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
            raise typer.Exit(code) from None
        except KeyboardInterrupt:  # commands that record end their runs themselves on one
            console.print("interrupted: nothing was recorded")
            raise typer.Exit(130) from None


app = typer.Typer(
    cls=VcosimGroup,
    name="vcosim",
    help="Vehicle co-simulation: a 2000 Hz vehicle that external controllers couple to over "
    "UDP, as to BeamNG.tech.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


class LogLevel(str, Enum):
    """How much the commands log."""

    debug = "debug"
    info = "info"
    warning = "warning"
    error = "error"


def _show_version(value: bool) -> None:
    if value:
        typer.echo(f"vcosim {package_version('vcosim')}")
        raise typer.Exit()


@app.callback()
def root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_show_version, is_eager=True, help="Print the version and end."
        ),
    ] = False,
    log_level: Annotated[LogLevel, typer.Option(help="How much to log.")] = LogLevel.info,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="Only warnings, errors and the summary.")
    ] = False,
    debug: Annotated[
        bool,
        typer.Option(
            "--debug", help="Log everything, with source locations; tracebacks on errors."
        ),
    ] = False,
) -> None:
    """Vehicle co-simulation: a 2000 Hz vehicle that external controllers couple to."""
    settings.debug = debug
    settings.quiet = quiet
    settings.level = (
        logging.DEBUG
        if debug
        else logging.WARNING
        if quiet
        else getattr(logging, log_level.value.upper())
    )


app.command()(runs.demo)
app.command(cls=SimCommand)(simulator.sim)
app.command()(controller.controller)
app.command()(connect.connect)
app.command()(runs.analyze)
app.command()(signals.plot)
app.command()(signals.signals)
app.command()(runs.cases)
app.command()(runs.sweep)
app.command()(runs.search)
app.command()(bus.bus)
app.command()(bus.log)
app.command()(bus.replay)
app.command()(drive.drive)
app.command()(modules.sound)
app.command("input")(modules.input_module)
app.command()(modules.view)
app.add_typer(bench.bench_app, name="bench")
app.add_typer(fmu.fmu_app, name="fmu")
app.add_typer(vehicle.vehicle_app, name="vehicle")
app.add_typer(world.world_app, name="world")
app.add_typer(scenario.scenario_app, name="scenario")

# Old spellings, still understood until REMOVED_IN: each is rewritten to its new form with a
# one-line warning that says when it goes.
# (command, old option) -> (new option, the part it gives: "host", "port" or None for all)
REMOVED_IN = "0.2.0"
"""The release that drops every old spelling below (they came before 0.1.0 was numbered)."""
DEPRECATED: dict[tuple[str, str], tuple[str, str | None]] = {
    **{
        ("sim", f"--{who}-{part}"): (f"--{new}", part)
        for who, new in (
            ("controller", "controller"),
            ("listen", "listen"),
            ("contracts", "contracts-listen"),
        )
        for part in ("host", "port")
    },
    **{
        ("controller", f"--{who}-{part}"): (f"--{who}", part)
        for who in ("sim", "listen")
        for part in ("host", "port")
    },
    ("controller", "--step"): ("--ext-time", None),
    ("connect", "--link-timeout"): ("--timeout", None),
    ("analyze", "--out"): ("--report", None),
    ("replay", "--speed"): ("--pace", None),
    ("bus", "--host"): ("--listen", "host"),
    ("bus", "--port"): ("--listen", "port"),
    **{
        (command, f"--{part}"): ("--bus", part)
        for command in ("log", "replay", "drive", "sound", "input")
        for part in ("host", "port")
    },
    **{(command, "--duration"): ("--wall-time", None) for command in ("log", "sound", "input")},
    ("drive", "--duration"): ("--wall-time", None),
    ("view", "--bus-host"): ("--bus", "host"),
    ("view", "--bus-port"): ("--bus", "port"),
    ("view", "--http-host"): ("--listen", "host"),
    ("view", "--port"): ("--listen", "port"),
}
_GLOBAL_WITH_VALUE = {"--log-level"}


def modernise(argv: list[str]) -> list[str]:
    """``argv`` with deprecated options rewritten (a warning for each); HOST and PORT merged."""
    i = 0
    while i < len(argv) and argv[i].startswith("-"):  # global options before the command
        i += 2 if argv[i] in _GLOBAL_WITH_VALUE else 1
    if i >= len(argv):
        return argv
    command, out = argv[i], argv[: i + 1]
    parts: dict[str, dict[str, str]] = {}
    rest = argv[i + 1 :]
    j = 0
    while j < len(rest):
        word = rest[j]
        name, eq, inline = word.partition("=")
        new = DEPRECATED.get((command, name))
        if new is None or word == "--":
            out.append(word)
            j += 1
            continue
        value = inline if eq else (rest[j + 1] if j + 1 < len(rest) else "")
        j += 1 if eq else 2
        option, part = new
        console.print(
            f"[yellow]warning: {name} is deprecated and goes in vcosim {REMOVED_IN}; use {option}",
            highlight=False,
        )
        if part is None:
            out += [option, value]
        else:
            parts.setdefault(option, {})[part] = value
    for option, given in parts.items():
        out += [option, f"{given.get('host', '')}:{given.get('port', '')}".rstrip(":")]
    return out


def _usage_error(exc: typer.TyperException, argv: list[str]) -> int:
    """Say what was wrong with the command line in one line; its exit code (2)."""
    ctx = getattr(exc, "ctx", None)
    command = ctx.command_path if ctx is not None else "vcosim"
    message = flag_value_hint(ctx, argv) or exc.format_message()
    console.print(
        f"[red]error:[/] {escape(message)} (see {command} --help)", highlight=False, soft_wrap=True
    )
    return int(getattr(exc, "exit_code", 2))


def _help_was_shown(exc: Exception) -> bool:
    """True for the error a group raises after printing its help (``vcosim`` alone).

    Typer keeps its click private (``typer._click``), so the class is known by its name.
    """
    return type(exc).__name__ == "NoArgsIsHelpError"


def _explain(exc: Exception) -> tuple[int, str]:
    """The exit code and the one line for an error that ended a command."""
    from pydantic import ValidationError

    from vcosim.config import validation_problems
    from vcosim.errors import ConfigError, MissingExtra, UnknownNameError, VcosimError

    if isinstance(exc, ValidationError):  # options given through the command line
        exc = ConfigError(validation_problems(exc), exc.title)
    if isinstance(exc, ConfigError) and len(exc.problems) == 1:
        problem = exc.problems[0]  # often names its option already
        return 2, problem if problem.startswith(exc.source) else f"{exc.source}: {problem}"
    if isinstance(exc, (ConfigError, UnknownNameError, MissingExtra)):
        return 2, str(exc)
    if isinstance(exc, VcosimError):  # the run started and failed
        return 1, str(exc)
    if isinstance(exc, OSError):
        return (2 if exc.errno in _USAGE_ERRNOS else 1), _os_error(exc)
    return 1, f"{type(exc).__name__}: {exc} (run with --debug for the traceback)"


def main() -> None:
    """Entry point of ``vcosim``."""
    app()


# -- help that reads well ---------------------------------------------------------------------
def tidy_help(command: Any) -> None:
    """Help that reads well, for ``command`` and every command under it.

    A flag shows no value type (typer would show ``<bool>``, and ``--quick true`` is then an
    error); each paragraph of a docstring is one line for the terminal to wrap at its width.
    """
    command.help = reflow(command.help)
    help_option = command.get_help_option(command.context_class(command))
    for param in [*command.params, help_option]:
        if getattr(param, "is_flag", False) and param.metavar is None:
            param.metavar = ""
    for sub in getattr(command, "commands", {}).values():
        tidy_help(sub)


def reflow(text: str | None) -> str | None:
    """``text`` with each paragraph on one line; lists and click's no-rewrap blocks kept.

    Docstrings break lines at the source's width; shown as they are, they wrap raggedly in a
    terminal of another width.
    """
    if not text:
        return text
    paragraphs = inspect.cleandoc(text).split("\n\n")
    return "\n\n".join(p if _verbatim(p) else " ".join(p.split()) for p in paragraphs)


def _verbatim(paragraph: str) -> bool:
    lines = paragraph.splitlines()
    return (
        paragraph.startswith("\b")
        or "\f" in paragraph
        or any(line.lstrip().startswith(("- ", "* ")) for line in lines)
    )


BOOLEAN_WORDS = {"true", "false", "yes", "no", "on", "off", "1", "0"}


def flag_value_hint(ctx: Any, argv: list[str]) -> str | None:
    """For ``--quick true``: the flag takes no value, and how to write it instead."""
    if ctx is None:
        return None
    flags = {
        name: param
        for param in ctx.command.params
        if getattr(param, "is_flag", False)
        for name in (*param.opts, *param.secondary_opts)
    }
    for word, value in zip(argv, argv[1:], strict=False):
        param = flags.get(word)
        if param is None or value.lower() not in BOOLEAN_WORDS:
            continue
        on = param.opts[0]
        if param.secondary_opts:
            return f"{word} takes no value: write {on} or {param.secondary_opts[0]}"
        return f"{word} takes no value: write {on} to turn it on, leave it out to keep it off"
    return None


# -- a reader that went away ------------------------------------------------------------------
def _stdout_is_devnull() -> bool:
    try:
        return os.path.samestat(os.fstat(1), os.stat(os.devnull))
    except OSError:
        return False


def _reader_gone() -> int:
    """Standard output's reader went away: the rest goes nowhere, and nothing failed."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # the interpreter's last flush then succeeds
        os.close(devnull)
    except (OSError, ValueError):  # a stdout with no file descriptor (a test's capture)
        pass
    return 0


_USAGE_ERRNOS = {errno.EADDRINUSE, errno.EADDRNOTAVAIL, errno.EACCES, errno.ENOENT}


def _os_error(exc: OSError) -> str:
    """An OSError in the user's words (a bind error names its address)."""
    address = getattr(exc, "address", None)
    where = f"{address[0]}:{address[1]}" if address else "the address"
    if exc.errno == errno.EADDRINUSE:
        return (
            f"{where} is already in use: another program (another vcosim, or BeamNG) "
            "listens there; stop it or choose another port"
        )
    if exc.errno == errno.EADDRNOTAVAIL:
        return f"cannot bind {where}: it is not an address of this machine"
    if address:
        return str(exc)
    return f"{exc.strerror or exc}{f': {exc.filename}' if exc.filename else ''}"
