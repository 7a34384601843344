"""SUMO's vehicles in process are kept from its step events, not read from its list.

``SumoTraffic`` leaves ``getIDList`` (a list and a string per car every step) to SUMO's
departures, arrivals and teleports: they must say the same every step, teleports included.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("libsumo")

from vcosim.traffic.network import LANE_WIDTH, grid_scenario  # noqa: E402
from vcosim.traffic.sumo import attach_sumo  # noqa: E402
from vcosim.world import World, WorldFile  # noqa: E402
from vcosim.world.sumo_spec import SumoSpec  # noqa: E402


def standing_ego() -> World:
    """A world of one car standing on the grid's middle row (SUMO's traffic goes round it)."""
    y = 120.0 - LANE_WIDTH / 2
    ego = {"name": "ego", "start": {"x": 30.0, "y": y, "speed": 0.0},
           "driver": {"kind": "profile", "path": "row", "speeds": [[0, 0]]}}  # fmt: skip
    paths = {"row": {"points": [[0.0, y], [240.0, y]]}}
    return World(WorldFile.from_dict({"paths": paths, "vehicles": [ego]}))


def test_the_vehicles_kept_from_events_are_sumos_own_list_at_every_step(tmp_path: Path) -> None:
    # a jammed grid: 200 cars on 3 x 3 crossings 120 m apart, stuck cars teleported after 2 s
    config = grid_scenario(tmp_path, 3, 200, 120.0)
    world = standing_ego()
    spec = SumoSpec(config=str(config), step_length=0.1, options=["--time-to-teleport", "2"])
    traffic = attach_sumo(world, spec)
    api = traffic.api
    teleports = arrivals = compared = 0
    try:
        for _ in range(600):  # 60 s
            world.run(traffic.period_steps)
            events = api.simulation.getSubscriptionResults()
            teleports += len(events.get(api.constants.VAR_TELEPORT_STARTING_VEHICLES_IDS, ()))
            arrivals += len(events.get(api.constants.VAR_ARRIVED_VEHICLES_IDS, ()))
            listed = set(api.vehicle.getIDList()) - {"ego"}
            assert set(traffic.ids) == listed
            compared += len(listed)
    finally:
        traffic.close()
    assert teleports > 10 and arrivals > 10 and compared > 3000


def test_a_vehicle_sumo_no_longer_knows_makes_the_reading_take_sumos_list(tmp_path: Path) -> None:
    config = grid_scenario(tmp_path, 3, 100, 120.0)
    world = standing_ego()
    traffic = attach_sumo(world, SumoSpec(config=str(config), step_length=0.1))
    api = traffic.api
    try:
        world.run(5 * traffic.period_steps)
        traffic._on_net["gone"] = None  # an event missed: SUMO has no such vehicle
        traffic._on_net_ids = list(traffic._on_net)
        world.run(traffic.period_steps)
        assert "gone" not in traffic.ids
        assert set(traffic.ids) == set(api.vehicle.getIDList()) - {"ego"} and traffic.ids
    finally:
        traffic.close()
