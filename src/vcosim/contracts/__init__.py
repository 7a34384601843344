"""Contract coupling, VS Connect-style: a JSON-configured client, a server face on the simulation.

``ContractClient`` is the Python counterpart of CarSim's VS Connect S-function (configured by
the same version-2 JSON file); ``ContractServer`` serves the simulator's objects to it
(``vcosim sim --contracts``). See docs/contracts.md.
"""

from vcosim.contracts.client import (
    ClientReport,
    ConnectionStatus,
    ContractClient,
    Ports,
    Refusal,
)
from vcosim.contracts.config import ContractConfig, load_config, parse_config
from vcosim.contracts.options import ClientOptions, ServerOptions
from vcosim.contracts.server import ContractServer, ServerReport

__all__ = [
    "ClientOptions",
    "ClientReport",
    "ConnectionStatus",
    "ContractClient",
    "ContractConfig",
    "ContractServer",
    "Ports",
    "Refusal",
    "ServerOptions",
    "ServerReport",
    "load_config",
    "parse_config",
]
