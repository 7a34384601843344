"""The controller side of the tight coupling as an FMI co-simulation FMU: its variables.

Any FMI master becomes the controller of a running ``vcosim sim`` (or of BeamNG.tech: the
wire is the same), as BeamNG's own FMUs make it one. The FMU itself is native
(:mod:`vcosim.fmi.native.coupling`, ``c/coupling.c``): it does what vcosim's controller
block does (the ids, the blocking receive, the timeout reset, the memory option) in the
master's thread.

One ``doStep`` is one exchange. It answers the message taken in the previous step with the
inputs the master has set since (computed from that message's outputs: direct feed-through,
or the previous step's answer with ``memory``), then waits (at most ``timeout``) for the next
message and shows it on the outputs. Leaving initialization binds the socket and waits for
the first message, so the outputs at the start time are the simulator's.
"""

from __future__ import annotations

from vcosim.fmi.metadata import OUTPUTS, Output, Variable, input_variable
from vcosim.tight.protocol import CONTROLLER_INPUTS
from vcosim.vehicle import layout as L

DESCRIPTION = "vcosim tight coupling, controller side: drives vcosim sim or BeamNG.tech over UDP"
INTERFACE_FILE = "vcosim_interface.csv"

# The reply's controls, in the order of ``Controls``: the fixed layout's slots 1-13 as the
# vehicle FMU declares those inputs (names, kinds, units and ranges from the catalogue).
_GEAR = "requested gear, in the reserved slot 4 (read only by vcosim sim --gear-slot)"
INPUTS: tuple[Variable, ...] = tuple(
    Variable(v.name, v.kind, v.unit, v.min, v.max, _GEAR if v.name == "gear" else v.description)
    for v in (input_variable(name) for _, name in CONTROLLER_INPUTS)
)
BANKS: tuple[Output, ...] = OUTPUTS[: L.N_BANKS]
"""Slots 1..60 of the simulator's message, named as the vehicle FMU's outputs."""

STATUS: tuple[Variable, ...] = (
    Variable("connected", "boolean", description="the last step took a message"),
    Variable("message_id", "integer", description="id of the message on the outputs"),
    Variable("received", "integer", description="messages taken by doStep"),
    Variable("timeouts", "integer", description="steps that waited the timeout in vain"),
    Variable("stale", "integer", description="messages dropped as stale or duplicated"),
)
PARAMETERS: tuple[Variable, ...] = (
    Variable("listen_host", "string", description="address the FMU binds"),
    Variable("listen_port", "integer", min=0, max=65535, description="port the FMU binds"),
    Variable("sim_host", "string", description="the simulator's address"),
    Variable("sim_port", "integer", min=0, max=65535, description="the simulator's port"),
    Variable("memory", "boolean", description="answer with the previous step's inputs"),
    Variable("timeout", unit="s", min=0.0, description="wait this long for a message at most"),
)
