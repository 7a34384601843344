"""Traffic from elsewhere in a world: SUMO's vehicles in lock-step (docs/traffic.md).

``vcosim.world.sumo_spec`` (the ``[sumo]`` section) needs nothing but pydantic;
``vcosim.traffic.sumo`` needs the ``sumo`` extra (``pip install -e ".[sumo]"``).
"""
