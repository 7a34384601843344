"""Contracts on a world: every vehicle an object by its name, distances between any two."""

from __future__ import annotations

import math

import pytest
from contract_helpers import Background, document

from vcosim.contracts import ConnectionStatus, ContractClient, ContractServer
from vcosim.contracts.objects import Catalogue
from vcosim.sim import Pacer, Simulation
from vcosim.vehicle import layout as L
from vcosim.world import World


def test_distance_between_two_vehicles_of_a_world_matches_their_positions() -> None:
    world = World("examples/worlds/follow.toml")  # lead 40 m ahead of ego, both rolling
    sim = Simulation(world, Pacer("lockstep"))  # paced by the client: load cannot starve it
    server = sim.attach("contracts", ContractServer(port=0, wait_for_clients=1))
    rows = []

    def step(ports):
        if ports.status is ConnectionStatus.connected and ports["serial_number"] > 0:
            rows.append(ports.as_dict())
        return {"throttle": 0.25}

    client = ContractClient(
        document(
            server.address[1],
            remoteObject="ego",
            outputs=[
                {
                    "updatePeriodMs": 10,
                    "timeSyncMode": "absolute",  # the client waits for each update
                    "ports": [
                        [{"propertyName": "position", "arraySize": 3}],
                        [{"remoteObject": "lead", "propertyName": "position", "arraySize": 3}],
                        [{"propertyName": "DISTANCE", "params": "lead"}],
                        [{"remoteObject": "lead", "propertyName": "DISTANCE_3D", "params": "ego"}],
                        [{"remoteObject": "lead", "propertyName": "groundspeed"}],
                        [{"propertyName": "serial_number", "propertyType": "meta"}],
                    ],
                }
            ],
            inputs=[{"ports": [[{"propertyName": "throttle"}]]}],
        ),
        step,
        step=0.005,
    )
    served = Background(lambda: sim.run(None))
    client.run(8.0)
    sim.stop()
    served.result()

    assert client.refused == []
    assert len(rows) > 50
    for row in rows:
        (x0, y0, z0), (x1, y1, z1) = row["position"], row["lead.position"]
        assert row["DISTANCE(lead)"] == pytest.approx(math.hypot(x1 - x0, y1 - y0), abs=1e-9)
        assert row["lead.DISTANCE_3D(ego)"] == pytest.approx(
            math.dist((x0, y0, z0), (x1, y1, z1)), abs=1e-9
        )
    assert rows[0]["DISTANCE(lead)"] == pytest.approx(40.0, abs=0.5)
    assert rows[0]["lead.groundspeed"] == pytest.approx(15.0, abs=0.1)
    assert rows[-1]["lead.groundspeed"] < 13.0  # its profile brakes from 6 s on
    ego, lead = world.row("ego"), world.row("lead")
    assert world.inputs[ego, L.U_THROTTLE] == 0.25  # the client's throttle went to ego alone
    assert world.inputs[lead, L.U_THROTTLE] != 0.25


def test_a_world_catalogue_names_every_vehicle_and_writes_each_its_own_row() -> None:
    world = World("examples/worlds/platoon.toml")
    catalogue = Catalogue(world.vehicle, world=world)
    assert catalogue.objects[: len(world)] == world.names
    assert "Vehicle_A" not in catalogue.objects
    third = world.row(world.names[2])
    writer = catalogue.writer(world.names[2], "steering", None, 1)
    assert not isinstance(writer, str)
    assert writer.targets == (third * L.N_INPUTS + L.U_STEERING,)
    catalogue.inputs[writer.targets[0]] = 0.5
    assert world.vehicles[world.names[2]].input_array[L.U_STEERING] == 0.5
    reader = catalogue.reader(world.names[1], "posX", None, 1)
    assert not isinstance(reader, str)
    assert catalogue.outputs[reader.signals[0]] == world.vehicles[world.names[1]].signal("posX")
    with pytest.raises(ValueError, match="a vehicle has that name"):
        Catalogue(world.vehicle, points={world.names[0]: (1.0, 2.0)}, world=world)
