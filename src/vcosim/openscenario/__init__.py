"""OpenSCENARIO XML scenarios: a documented subset read, run as a world and a storyboard.

:func:`read_xosc` reads a ``.xosc`` file (1.0 to 1.2) into a :class:`Scenario`;
:func:`scenario_world` makes the world its entities drive in; :class:`Storyboard` is the face
that plays the storyboard on that world's vehicles. See ``docs/scenarios.md``.
"""

from vcosim.openscenario.model import Scenario
from vcosim.openscenario.reader import read_xosc

__all__ = ["Scenario", "read_xosc"]
