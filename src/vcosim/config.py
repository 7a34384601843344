"""Small helpers every configuration file of vcosim shares: read, merge, report problems."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, ValidationError

from vcosim.errors import ConfigError


def read_config_text(path: str | Path) -> str:
    """The text of a configuration file; an unreadable one is a ConfigError naming it."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError([f"cannot read: {exc.strerror or exc}"], str(path)) from None


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
    """Base of vcosim's option models: every bad value is one ConfigError listing them all.

    Subclasses name themselves in the error with ``_source``. Unknown names are refused, so a
    misspelt keyword argument does not pass silently.
    """

    model_config = ConfigDict(extra="forbid", validate_assignment=True)
    _source: ClassVar[str] = "options"

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise ConfigError(validation_problems(exc), type(self)._source) from None
