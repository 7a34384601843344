"""docs/cli.md lists exactly the options every command's --help has."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import typer.main

from vcosim.app import app

DOC = Path(__file__).parents[2] / "docs" / "cli.md"


def commands(group: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, Any]]:
    for name, command in group.commands.items():
        if hasattr(command, "commands"):
            yield from commands(command, (*path, name))
        else:
            yield " ".join((*path, name)), command


def spelled(param: Any) -> str:
    if param.param_type_name == "argument":
        return param.name.upper()
    long = "/".join(o for o in param.opts if o.startswith("--"))
    return "/".join([long, *param.secondary_opts])


def documented() -> dict[str, list[str]]:
    text = DOC.read_text()
    block = text[text.index("<!-- options") : text.index("<!-- /options -->")]
    rows = re.findall(r"^\| `([a-z -]+)` \| (.+) \|$", block, flags=re.M)
    return {name: re.findall(r"`([^`]+)`", options) for name, options in rows}


def test_every_command_and_option_is_in_docs_cli_md() -> None:
    in_help = {
        name: [spelled(p) for p in cmd.params]
        for name, cmd in commands(typer.main.get_command(app))
    }
    assert documented() == in_help
