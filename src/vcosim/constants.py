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
PEER_STATUS_EVERY = 3.0  # s: a status line this often while a peer of a run is silent
CONTRACTS_PORT = 4367  # contract server (VS Connect's)
BUS_PORT = 64900  # NightRider bus router, handshake
VIEWER_PORT = 8765  # the web viewer's page
OSI_PORT = 48198  # ASAM OSI over UDP (sim --osi udp://HOST): where a receiver listens
FOXGLOVE_PORT = 8765  # Foxglove's usual websocket port (sim --foxglove)

EXT_TIME = 0.005  # s: T_ext, the controller's sample time and budget (BeamNG's default)
PING_TIME = 0.00001  # s: T_ping, the UDP round trip BeamNG's coupling assumes
VEHICLE_NAME = "Vehicle_A"  # the vehicle's object name for contracts (VS Connect's)
FRAME_RATE = 60.0  # frames per wall second in realtime pacing
RECORD_RATE = 100.0  # rows per simulated second of a signal recording
BUS_SYMBOLS = "§§+¶"  # NightRider bus: start, separator, common-part end, end (the seed's)
BUS_MAX_LENGTH = 256  # bytes in one bus message at most, symbols included (the seed's)
