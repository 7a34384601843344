"""Where SUMO's programs are: the eclipse-sumo wheel's (a leaf module of ``vcosim.traffic``)."""

from __future__ import annotations

import os


def sumo_tool(name: str) -> str:
    """The path of SUMO's program ``name`` (``sumo``, ``netconvert``) in the eclipse-sumo wheel."""
    import sumo

    return os.path.join(sumo.SUMO_HOME, "bin", name)
