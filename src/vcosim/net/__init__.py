"""The datagram link every face stands on: one UDP socket with its allowlist and counters.

The tight coupling (``vcosim.tight.transport``), the contract interface
(``vcosim.contracts.transport``) and the bus (``vcosim.bus.client``, ``vcosim.bus.router``)
keep only their encoding and their state machines; binding, allowlists, counters, reports
once per peer and waiting live here. This package imports nothing of vcosim but the leaf
modules ``constants``, ``errors`` and ``address``.
"""

from vcosim.net.link import MAX_DATAGRAM, BindError, DatagramLink, Link
from vcosim.net.peers import (
    Address,
    Allowlist,
    Reports,
    Tally,
    parse_allow,
    peer_address,
    resolve,
)

__all__ = [
    "MAX_DATAGRAM",
    "Address",
    "Allowlist",
    "BindError",
    "DatagramLink",
    "Link",
    "Reports",
    "Tally",
    "parse_allow",
    "peer_address",
    "resolve",
]
