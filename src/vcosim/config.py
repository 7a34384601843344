"""Small helpers every configuration file of vcosim shares: read, merge, report problems."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from vcosim.errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def read_config_text(path: str | Path, source: str | None = None) -> str:
    """The text of a configuration file; an unreadable one is a ConfigError naming it."""
    where = str(path) if source is None else source
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError([f"cannot read: {exc.strerror or exc}"], where) from None
    except UnicodeDecodeError as exc:
        bad = exc.object[exc.start]
        raise ConfigError([f"not UTF-8 text: byte {exc.start} is {bad:#04x}"], where) from None


def parse_toml(text: str, source: str) -> dict[str, Any]:
    """TOML text as a dict; text that is not TOML (or nests beyond the parser) is a ConfigError."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError([f"not valid TOML: {exc}"], source) from None
    except RecursionError:
        raise ConfigError(["not valid TOML: nested too deep"], source) from None


def read_toml(path: str | Path, source: str | None = None) -> dict[str, Any]:
    """A TOML configuration file as a dict; every way it can be unreadable is a ConfigError."""
    where = str(path) if source is None else source
    return parse_toml(read_config_text(path, where), where)


def deep_merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` with ``over`` laid on top, nested tables merged key by key."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def validation_problems(exc: ValidationError, prefix: str = "") -> list[str]:
    """One line per pydantic error, with its dotted key path (unknown keys said plainly)."""
    out = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"])
        loc = f"{prefix}{loc}" if loc else (prefix.rstrip(".") or "(top level)")
        if err["type"] == "extra_forbidden":
            out.append(f"{loc}: unknown key")
        else:
            out.append(f"{loc}: {err['msg'].removeprefix('Value error, ')}")
    return out


class Options(BaseModel):
    """Base of vcosim's option models: unknown names refused, assignments validated.

    A bad value raises pydantic's ``ValidationError``, which lists every problem with its
    location (the command line turns it into one line per problem and exit code 2). Nested
    in a bigger model (a sweep file's section), the problems keep their full key paths.
    """

    model_config = ConfigDict(extra="forbid", validate_assignment=True)
