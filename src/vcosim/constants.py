"""The numbers every face agrees on, defined once: the physics step, ports, timeouts.

A leaf module (it imports nothing of vcosim), so the vehicle, every face and the command line
take their defaults from here.
"""

from __future__ import annotations

PHYSICS_DT = 0.0005  # s: the vehicle steps at 2000 Hz
LOOPBACK = "127.0.0.1"  # every endpoint binds here unless told otherwise

SIMULATOR_PORT = 64891  # tight coupling: the simulator listens here (BeamNG's)
CONTROLLER_PORT = 64890  # tight coupling: the controller listens here (BeamNG's)
BLOCKING_TIMEOUT = 2.0  # s: a blocking receive gives up after this long (BeamNG's)
CONTRACTS_PORT = 4367  # contract server (VS Connect's)
BUS_PORT = 64900  # NightRider bus router, handshake
VIEWER_PORT = 8765  # the web viewer's page
OSI_PORT = 48198  # ASAM OSI over UDP (sim --osi udp://HOST): where a receiver listens
FOXGLOVE_PORT = 8765  # Foxglove's usual websocket port (sim --foxglove)
