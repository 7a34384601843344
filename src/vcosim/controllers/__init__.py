"""Example controllers (seed 000) and the registry that names them."""

from __future__ import annotations

from typing import Any

from vcosim.entrypoints import instantiate, load_object
from vcosim.errors import UnknownNameError

EXAMPLES = {
    "acc": "vcosim.controllers.acc:Acc",
    "cruise": "vcosim.controllers.cruise:Cruise",
    "cruise-torque": "vcosim.controllers.cruise_torque:CruiseTorque",
    "heading": "vcosim.controllers.heading:Heading",
}


def example(name: str, **params: Any) -> Any:
    """A new example controller by name, e.g. ``example("cruise", speed=15)``.

    A parameter the example does not take is an ``UnknownNameError`` naming the valid ones.
    """
    if name not in EXAMPLES:
        raise UnknownNameError("controller", name, tuple(EXAMPLES))
    return instantiate(load_object(EXAMPLES[name]), params)
