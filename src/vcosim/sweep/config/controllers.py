"""The controller a sweep names: its factory, and the keyword parameters that factory takes.

Parameters are checked against the factory's own signature (or dataclass fields), so a
misspelt ``controller.kpp`` is caught before anything runs, with the closest valid name.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from typing import Any

from vcosim.errors import UnknownNameError


def controller_factory(name: str) -> Callable[..., Any] | None:
    """What makes the controller: an example's class, a ``module:attr`` factory, or None."""
    from vcosim.entrypoints import load_object, load_user_code

    if name == "none":
        return None
    if ":" in name:
        return load_user_code(name, option="controller")
    from vcosim.controllers import EXAMPLES

    if name not in EXAMPLES:
        raise UnknownNameError("controller", name, (*EXAMPLES, "none", "module:attr"))
    return load_object(EXAMPLES[name])


def factory_parameters(factory: Callable[..., Any]) -> list[str] | None:
    """Keyword parameters a factory accepts (None: any)."""
    if dataclasses.is_dataclass(factory):
        return [
            f.name for f in dataclasses.fields(factory) if f.init and not f.name.startswith("_")
        ]
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):
        return None
    names = []
    for p in signature.parameters.values():
        if p.kind is p.VAR_KEYWORD:
            return None
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            names.append(p.name)
    return names


def parameter_default(factory: Callable[..., Any], name: str) -> Any:
    """The default of a factory's keyword parameter (None if it has none)."""
    if dataclasses.is_dataclass(factory):
        for f in dataclasses.fields(factory):
            if f.name == name and f.default is not dataclasses.MISSING:
                return f.default
        return None
    try:
        p = inspect.signature(factory).parameters.get(name)
    except (TypeError, ValueError):
        return None
    return None if p is None or p.default is p.empty else p.default
