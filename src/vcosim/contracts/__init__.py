"""Contract coupling, VS Connect-style: a JSON-configured client, a server face on the simulation.

``ContractClient`` is the Python counterpart of CarSim's VS Connect S-function (configured by
the same version-2 JSON file); ``ContractServer`` serves the simulator's objects to it
(``vcosim sim --contracts``). See docs/contracts.md.

The names below are imported on first use: a run description that only names the contract
options (every ``vcosim sim``) does not load the client, the server and their kernels.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

_HOMES = {
    "ClientOptions": "options",
    "ClientReport": "client",
    "ConnectionStatus": "client",
    "ContractClient": "client",
    "ContractConfig": "config",
    "ContractServer": "server",
    "Ports": "client",
    "Refusal": "client",
    "ServerOptions": "options",
    "ServerReport": "server",
    "load_config": "config",
    "parse_config": "config",
}

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


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)
