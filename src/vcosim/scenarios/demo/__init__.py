"""The demo: the cruise controller coupled to the simulator over UDP, or a scripted manoeuvre.

``CoupledDemo`` (``coupled``) is ``vcosim demo``; ``ManoeuvreDemo`` (``manoeuvre``) is
``vcosim demo --manoeuvre``. Both take the same steps, so one piece of console glue
(``vcosim.app.demo``) shows either: enter (the clock starts; a controller process starts),
``prepare()`` (the vehicle compiled, the controller listening: a bad preset fails here, before
any folder exists), ``run(folder, on_progress)``, ``write()`` (signals, plot and
``summary.json``; returns the typed summary), exit. The coupled demo also starts a second
process (``ahead``) on the other core: on the first run it compiles kernels the simulator
would compile after the vehicle's, and it draws the plot while the simulator writes the rest.
"""

from vcosim.scenarios.demo.coupled import (
    DURATION,
    EXT_TIME,
    SETTLE_BAND,
    CoupledDemo,
    CoupledSummary,
    Latency,
    ProfileCruise,
    SpeedProfile,
    TargetStep,
)
from vcosim.scenarios.demo.manoeuvre import (
    MANOEUVRE,
    ManoeuvreDemo,
    ManoeuvreSummary,
    PhaseStart,
    summarize,
)

__all__ = [
    "DURATION",
    "EXT_TIME",
    "MANOEUVRE",
    "SETTLE_BAND",
    "CoupledDemo",
    "CoupledSummary",
    "Latency",
    "ManoeuvreDemo",
    "ManoeuvreSummary",
    "PhaseStart",
    "ProfileCruise",
    "SpeedProfile",
    "TargetStep",
    "summarize",
]
