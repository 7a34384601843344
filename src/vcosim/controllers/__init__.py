"""Example controllers (seed 000) and the registry that names them."""

from __future__ import annotations

import importlib
from typing import Any

from vcosim.errors import UnknownNameError

EXAMPLES = {
    "cruise": "vcosim.controllers.cruise:Cruise",
    "cruise-torque": "vcosim.controllers.cruise_torque:CruiseTorque",
    "heading": "vcosim.controllers.heading:Heading",
}


def load_object(spec: str) -> Any:
    """Import ``"package.module:attribute"``."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise UnknownNameError("function (expected module:function)", spec, ["module:function"])
    module = importlib.import_module(module_name)
    try:
        return getattr(module, attribute)
    except AttributeError:
        names = [n for n in dir(module) if not n.startswith("_")]
        raise UnknownNameError(f"attribute of {module_name}", attribute, names) from None


def example(name: str, **params: Any) -> Any:
    """A new example controller by name, e.g. ``example("cruise", speed=15)``."""
    if name not in EXAMPLES:
        raise UnknownNameError("controller", name, tuple(EXAMPLES))
    return load_object(EXAMPLES[name])(**params)
