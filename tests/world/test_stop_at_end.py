"""An IDM driver with ``stop_at_end`` stops where its path ends (the route driver's end)."""

from __future__ import annotations

import pytest

from vcosim.world import World, WorldFile

END = 120.0  # m: where the path ends


def driven(stop_at_end: bool) -> World:
    """One IDM car from standing at x = 0 along a straight path to ``END``, for 40 s."""
    spec = WorldFile.from_dict(
        {
            "paths": {"road": {"points": [[-10, 0], [END, 0]]}},
            "vehicles": [
                {
                    "name": "car",
                    "start": {"x": 0, "y": 0, "speed": 0},
                    "driver": {
                        "kind": "idm", "path": "road", "speed": 12, "stop_at_end": stop_at_end,
                    },
                }
            ],
        },
        "test",
    )  # fmt: skip
    world = World(spec)
    while world.time < 40.0:
        world.run(200)
    return world


def test_the_car_stops_short_of_its_paths_end_as_behind_a_standing_car() -> None:
    world = driven(stop_at_end=True)
    car = world.vehicles["car"]
    front = car.signal("posX") + world.poses()["half_length"][0]  # roughly its bumper
    assert car.signal("speed") == pytest.approx(0.0, abs=0.05)
    assert END - 6.0 < front < END  # the IDM's 2 m standstill gap, give or take its box
    assert world.drivers.stops == [0]


def test_without_it_the_car_drives_on_past_the_end() -> None:
    car = driven(stop_at_end=False).vehicles["car"]
    assert car.signal("posX") > END + 50.0
