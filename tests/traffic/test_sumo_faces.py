"""SUMO's cars and traffic lights in the faces that read ``World.others``: contracts, Foxglove.

(The bus and the viewer's state: tests/bus/test_bus_world_sumo.py.) One run of the junction
world (examples/worlds/sumo-junction.toml) for 4 s serves every test: by then east.0 drives
towards the ego and the junction's light shows red to some links and green to others.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("libsumo")

from vcosim.contracts.objects import Catalogue, field_problem  # noqa: E402
from vcosim.sim.pacing import Pacer  # noqa: E402
from vcosim.sim.simulation import Simulation  # noqa: E402
from vcosim.traffic.sumo import SIGNAL_STATES, SumoTraffic, sumo_world  # noqa: E402
from vcosim.world.others import GREEN, RED  # noqa: E402

JUNCTION = Path(__file__).parents[2] / "examples" / "worlds" / "sumo-junction.toml"


@pytest.fixture(scope="module")
def sim() -> Iterator[Simulation]:
    world = sumo_world(JUNCTION)
    traffic = world.objects
    assert isinstance(traffic, SumoTraffic)
    try:
        world.run(8000)  # 4 s
        yield Simulation(world, Pacer("fast"))
    finally:
        traffic.close()


def test_every_head_of_the_junction_light_is_at_a_stop_line_with_sumo_state(sim) -> None:
    others = sim.world.others()
    assert [h.name for h in others.signals] == [f"C.{i}" for i in range(12)]
    state = sim.world.objects.lights["C"]
    assert others.states.tolist() == [SIGNAL_STATES[c] for c in state]
    assert {RED, GREEN} <= set(others.states.tolist())
    west = [h for h in others.signals if h.lane == "WC_0"]  # the ego's lane
    p, row = sim.world.poses(), sim.world.row("ego")
    distance, _ = sim.world.objects.next_signal("ego")  # SUMO's, from the ego's front bumper
    line = p["cx"][row] + p["half_length"][row] + distance
    assert west and all((h.x, h.y) == pytest.approx((line, -1.6), abs=0.05) for h in west)
    assert sorted(h.z for h in west) == [3.0, 3.5, 4.0]  # stacked: right, straight, left


def test_contracts_serve_a_sumo_car_and_a_traffic_light_head(sim) -> None:
    world = sim.world
    catalogue = Catalogue(world.vehicle, world=world)
    assert "C.6" in catalogue.objects
    distance = catalogue.reader("ego", "DISTANCE", "east.0", 1)
    assert not isinstance(distance, str) and distance.function is not None
    x, y, _ = world.object_position("east.0")
    ego = world.poses()
    expected = math.hypot(x - ego["x"][0], y - ego["y"][0])
    assert distance.function() == pytest.approx((expected,), abs=0.05)  # CoG vs box's point
    head = world.others().signals[6]
    state = catalogue.reader("C.6", "state", None, 1)
    assert not isinstance(state, str) and state.function is not None
    assert state.function() == (world.others().states[6],)
    position = catalogue.reader("c.6", "position", None, 3)  # case-insensitive, as any name
    assert not isinstance(position, str) and position.function() == (head.x, head.y, 0.0)
    assert field_problem("C.6", "state", None, 1, written=False) is None  # a client's check
    unknown = catalogue.reader("ego", "DISTANCE", "east.999", 1)
    assert isinstance(unknown, str) and "unknown object 'east.999'" in unknown


def test_foxglove_scene_draws_sumo_cars_and_lit_heads(sim) -> None:
    pytest.importorskip("foxglove")
    from vcosim.groundtruth.foxglove import SIGNAL_COLOURS, SceneEncoder
    from vcosim.groundtruth.objects import Objects

    encoder = SceneEncoder(sim)
    scene = decoded(encoder.scene(Objects.of(sim, encoder.shapes)))
    entities = {e.id: e for e in scene.entities}
    others = sim.world.others()
    cars = others.cars()
    assert len(cars) >= 2 and len(entities["traffic"].cubes) == len(cars)
    slot = dict((name, s) for s, name in cars)["east.0"]
    cube = entities["traffic"].cubes[[s for s, _ in cars].index(slot)]
    assert (cube.pose.position.x, cube.pose.position.y) == pytest.approx(
        (others.poses["cx"][slot], others.poses["cy"][slot])
    )
    assert cube.size.x == pytest.approx(5.0)  # SUMO's default car
    balls = entities["signals"].spheres
    assert len(balls) == len(others.signals)
    for ball, state in zip(balls, others.states.tolist(), strict=True):
        assert (ball.color.r, ball.color.g, ball.color.b) == pytest.approx(SIGNAL_COLOURS[state])


def decoded(message: Any) -> Any:
    """A ``foxglove.messages`` message as its protobuf, by the schema it carries."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    schema = message.get_schema()
    pool = descriptor_pool.DescriptorPool()
    for file in descriptor_pb2.FileDescriptorSet.FromString(schema.data).file:
        pool.Add(file)
    kind = message_factory.GetMessageClass(pool.FindMessageTypeByName(schema.name))
    return kind.FromString(message.encode())


def test_osi_ground_truth_holds_every_head_in_its_colour(sim) -> None:
    pytest.importorskip("osi3")
    from osi3.osi_groundtruth_pb2 import GroundTruth
    from osi3.osi_trafficlight_pb2 import TrafficLight

    from vcosim.groundtruth.osi import TRAFFIC_LIGHT_IDS, world_objects

    truth = GroundTruth()
    world_objects(truth, sim)
    others = sim.world.others()
    lights = list(truth.traffic_light)
    assert [light.source_reference[0].identifier[0] for light in lights] == [
        h.name for h in others.signals
    ]
    colours = {RED: TrafficLight.Classification.COLOR_RED}
    colours[GREEN] = TrafficLight.Classification.COLOR_GREEN
    for light, head, state in zip(lights, others.signals, others.states, strict=True):
        assert light.id.value >= TRAFFIC_LIGHT_IDS
        assert (light.base.position.x, light.base.position.y) == (head.x, head.y)
        if state in colours:
            assert light.classification.color == colours[state]
            assert light.classification.mode == TrafficLight.Classification.MODE_CONSTANT
    ids = [o.id.value for o in truth.moving_object] + [light.id.value for light in lights]
    assert len(set(ids)) == len(ids) and {RED, GREEN} <= set(others.states.tolist())
