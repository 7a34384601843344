"""The contract client, in three parts: its ports, its session with the server, the block.

- ``ports``: what the step function reads and writes (``Ports``, ``ConnectionStatus``).
- ``session``: the protocol state machine (handshake, data, pings, reconnection), over the
  contracts' ``streams``.
- ``block``: ``ContractClient``, its clock and run loop; ``report``: its ``ClientReport``;
  ``recording``: its ports on file (``PortLog``).
"""

from vcosim.contracts.client.block import BlockClock, ContractClient, as_config
from vcosim.contracts.client.ports import (
    DIRECTIVE_PORT,
    STATUS_PORT,
    ConnectionStatus,
    InputPorts,
    Ports,
    Refusal,
    StepFunction,
)
from vcosim.contracts.client.recording import PortLog, port_columns
from vcosim.contracts.client.report import ClientReport, RoundTrips
from vcosim.contracts.client.session import ClientSession
from vcosim.contracts.options import ClientOptions

__all__ = [
    "DIRECTIVE_PORT",
    "STATUS_PORT",
    "BlockClock",
    "ClientOptions",
    "ClientReport",
    "ClientSession",
    "ConnectionStatus",
    "ContractClient",
    "InputPorts",
    "PortLog",
    "Ports",
    "Refusal",
    "RoundTrips",
    "StepFunction",
    "as_config",
    "port_columns",
]
