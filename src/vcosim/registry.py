"""Names that stand for "module:attribute" entry points, imported only when used."""

from __future__ import annotations

import importlib
from typing import Any

from vcosim.errors import UnknownNameError


def load_object(spec: str) -> Any:
    """Import ``"package.module:attribute"``; a bad name lists what the module offers."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise UnknownNameError("entry point (expected module:attribute)", spec,
                               ["module:attribute"])
    module = importlib.import_module(module_name)
    try:
        return getattr(module, attribute)
    except AttributeError:
        names = [n for n in dir(module) if not n.startswith("_")]
        raise UnknownNameError(f"attribute of {module_name}", attribute, names) from None
