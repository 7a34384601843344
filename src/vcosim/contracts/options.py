"""The options of the two contract parties: the client block and the server face.

Pydantic models (``vcosim.config.Options``), so the command line, files and the Python API
validate alike: every bad value is reported at once, with its name, before anything binds a
socket. The VS Connect file itself is ``vcosim.contracts.config.ContractConfig``; the client
reports the problems of its file and its options together, in one ``ConfigError``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated

from pydantic import ConfigDict, Field

from vcosim.config import Host, Options
from vcosim.constants import BLOCKING_TIMEOUT, CONTRACTS_PORT, LOOPBACK, VEHICLE_NAME
from vcosim.contracts.limits import Coordinate

Port = Annotated[int, Field(ge=0, le=65535)]
Seconds = Annotated[float, Field(gt=0, allow_inf_nan=False)]
NonNegative = Annotated[float, Field(ge=0, allow_inf_nan=False)]
SpinTime = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
Point = Annotated[tuple[Coordinate, ...], Field(min_length=2, max_length=3)]  # (X, Y[, Z]) m
LOCKSTEP_SPIN = 0.05  # s of busy-polling before sleeping, where a peer answers at once


class ClientOptions(Options):
    """How the client block steps and keeps its link (the file says what it exchanges).

    Attributes:
        step: The block's fixed step (s) of local simulation time.
        directive: The initial connection directive (non-zero connects; 0 stays unconnected).
        link_timeout: Seconds without any message from the server before the link counts as
            lost (the block then reconnects).
        retry_period: Seconds between HELLOs while connecting.
        bye_timeout: Seconds a goodbye waits for the server's BYE_ACK.
        local_host: Where to bind (None: loopback for a loopback server, any interface
            otherwise).
        local_port: Where to bind (0: an ephemeral port).
        spin: Busy-poll this long (s) before sleeping while a contract holds the block: a
            server in lock-step answers within microseconds, sooner than a sleeping process
            wakes up (as the tight coupling's controller block does).
        end_with_server: End the run when the server says goodbye (its simulation ended)
            instead of connecting again (VS Connect's behaviour, the default here).
    """

    model_config = ConfigDict(title="contract client options")

    step: Seconds = 0.001
    directive: float = 1.0
    link_timeout: Seconds = BLOCKING_TIMEOUT
    retry_period: Seconds = 0.2
    bye_timeout: NonNegative = 0.5
    local_host: Host | None = None
    local_port: Port = 0
    spin: SpinTime = 0.002
    end_with_server: bool = False


class ServerOptions(Options):
    """Where the contract server listens, what it serves and how long it waits.

    Attributes:
        host: Address to bind; loopback unless opened on purpose.
        port: UDP port (4367, VS Connect's default; 0 picks a free one).
        vehicle_name: The vehicle's object name.
        points: Extra fixed named points, name -> (X, Y) or (X, Y, Z), for ``DISTANCE``.
        allowed_hosts: Client addresses accepted; None: the loopback address and ``host``.
        sync_timeout: Seconds a hold waits without data from the awaited contract before it
            releases that contract and lets the simulation step on.
        session_timeout: Seconds of silence after which a client's session ends.
        wait_for_clients: Hold the run at its start until this many clients have connected
            (in lock-step pacing the run then advances only as their contracts allow).
        wait_timeout: Give up waiting for them after this many seconds (None: wait on).
        goodbye: Say BYE to every client on close (False: vanish silently, as a crash would).
        spin: Busy-poll this long (s) before sleeping in a hold; None: ``LOCKSTEP_SPIN`` in
            lock-step pacing, 0 otherwise.
        max_clients: Sessions served at once; more clients are refused (ERROR ``busy``).
        max_rate: Bytes per second the server may send to all its clients together, by their
            contracts' widths and periods; a client that would exceed it is refused (``busy``).
        max_sends: Data messages per second the server may send to all clients together.
    """

    model_config = ConfigDict(title="contract server options")

    host: Host = LOOPBACK
    port: Port = CONTRACTS_PORT
    vehicle_name: Annotated[str, Field(min_length=1)] = VEHICLE_NAME
    points: Mapping[str, Point] | None = None
    allowed_hosts: tuple[str, ...] | None = None
    sync_timeout: Seconds = BLOCKING_TIMEOUT
    session_timeout: Seconds = 5.0
    wait_for_clients: Annotated[int, Field(ge=0)] = 0
    wait_timeout: Seconds | None = None
    goodbye: bool = True
    spin: SpinTime | None = None
    max_clients: Annotated[int, Field(ge=1, le=1024)] = 16
    max_rate: Annotated[float, Field(gt=0, allow_inf_nan=False)] = 32e6
    max_sends: Annotated[float, Field(gt=0, allow_inf_nan=False)] = 40_000
