"""The server's objects and properties, several clients, bad datagrams; over UDP on loopback."""

from __future__ import annotations

import math
import socket

import numpy as np
import pytest
from contract_helpers import Background, document, fields, served, wait_until

from vcosim.contracts import ConnectionStatus, ContractClient
from vcosim.contracts.objects import Catalogue
from vcosim.vehicle import Vehicle
from vcosim.vehicle import layout as L


def run_until_connected(sim, client, duration: float = 0.3):
    """Serve while the client runs ``duration`` local seconds; return the client's report."""
    server_run = Background(lambda: sim.run(None))
    report = client.run(duration)
    sim.stop()
    server_run.result()
    return report


def test_fields_the_server_cannot_serve_read_invalid_value_and_are_reported_as_refused():
    """Objects are the server's to know: the client's file cannot be checked for them."""
    sim, server = served("realtime", frame_rate=500, wait_for_clients=1)
    seen, first = [], []

    def step(ports):
        if not first:
            first.append(ports.as_dict())  # before any data: initial values
        if ports.status is ConnectionStatus.connected:
            seen.append(ports.as_dict())
        return {"throttle": 0.0, "Vehicle_B.brake": 1.0}

    client = ContractClient(
        document(
            server.address[1],
            timeDilation=1.0,
            outputs=[
                {
                    "updatePeriodMs": 5,
                    "ports": [
                        [{"propertyName": "rpm"}],
                        [
                            {
                                "remoteObject": "Vehicle_B",
                                "propertyName": "rpm",
                                "invalidValue": -8.0,
                                "initialValue": 99.0,
                            }
                        ],
                        [{"propertyName": "DISTANCE", "params": "Stop", "invalidValue": -9.0}],
                    ],
                }
            ],
            inputs=[
                {
                    "ports": [
                        *fields("throttle"),
                        [{"remoteObject": "Vehicle_B", "propertyName": "brake"}],
                    ]
                }
            ],
        ),
        step,
        step=0.001,
    )
    report = run_until_connected(sim, client)
    assert [str(r) for r in client.refused] == [
        "Vehicle_B.brake (port Vehicle_B.brake): unknown object 'Vehicle_B'; did you mean "
        "'Vehicle_A'? (objects: Vehicle_A, World, Origin)",
        "Vehicle_B.rpm (port Vehicle_B.rpm): unknown object 'Vehicle_B'; did you mean "
        "'Vehicle_A'? (objects: Vehicle_A, World, Origin)",
        "Vehicle_A.DISTANCE(Stop) (port DISTANCE(Stop)): DISTANCE params: unknown object "
        '\'Stop\' (objects: Vehicle_A, World, Origin), or give a point "X,Y" or "X,Y,Z"',
    ]
    assert report.refused == [str(r) for r in client.refused]
    assert first == [
        {"connection_status": 2.0, "rpm": 0.0, "Vehicle_B.rpm": 99.0, "DISTANCE(Stop)": 0.0}
    ]
    assert server.stats.refused_fields == 3
    assert seen and all(s["Vehicle_B.rpm"] == -8.0 and s["DISTANCE(Stop)"] == -9.0 for s in seen)
    assert seen[-1]["rpm"] > 500  # the accepted field is served alongside
    assert sim.vehicle.inputs["brake"] == 0.0  # the refused input went nowhere


def test_the_server_says_why_it_refuses_what_a_client_did_not_check():
    """A client that is not vcosim's may send any name: each refusal has its reason."""
    catalogue = Catalogue(Vehicle())
    assert catalogue.reader("Vehicle_A", "rmp", None, 1) == (
        "unknown property 'rmp' of Vehicle_A; did you mean 'rpm'?"
    )
    assert catalogue.reader("Vehicle_A", "position", None, 1) == (
        "'position' of Vehicle_A has 3 value(s); the field asks for 1"
    )
    assert catalogue.writer("Vehicle_A", "groundspeed", None, 1).startswith(
        "'groundspeed' of Vehicle_A is read-only (writable: throttle, brake,"
    )
    assert catalogue.reader("World", "tme", None, 1) == (
        "unknown property 'tme' of World; did you mean 'time'?"
    )


def test_distance_between_objects_and_points():
    sim, server = served(
        "realtime",
        dilation=8.0,
        frame_rate=500,
        wait_for_clients=1,
        points={"Stop": (30.0, 4.0), "Hill": (-5.0, 2.0, 3.0)},
    )
    rows = []

    def step(ports):
        if ports.status is ConnectionStatus.connected and ports["serial_number"] > 0:
            rows.append(ports.as_dict())
        return {"throttle": 0.6, "steering": 0.3}

    distances = [
        ("Vehicle_A", "DISTANCE", "Origin"),
        ("Vehicle_A", "DISTANCE", "Stop"),
        ("Vehicle_A", "VSAP_DISTANCE", "10,-5"),
        ("Vehicle_A", "DISTANCE_3D", "Hill"),
        ("World", "DISTANCE", "Vehicle_A"),
        ("Stop", "distance", "vehicle_a"),
        ("Stop", "DISTANCE", "Hill"),
    ]
    client = ContractClient(
        document(
            server.address[1],
            timeDilation=8.0,
            outputs=[
                {
                    "updatePeriodMs": 10,
                    "ports": [
                        [{"propertyName": "position", "arraySize": 3}],
                        *(
                            [{"remoteObject": o, "propertyName": p, "params": q}]
                            for o, p, q in distances
                        ),
                        [{"propertyName": "serial_number", "propertyType": "meta"}],
                    ],
                }
            ],
            inputs=[{"ports": fields("throttle", "steering")}],
        ),
        step,
        step=0.005,
    )
    run_until_connected(sim, client, 6.0)
    assert client.refused == []
    x, y, z = rows[-1]["position"]
    assert math.hypot(x, y) > 5.0  # it drove somewhere, turning
    for row in rows:
        x, y, z = row["position"]
        expected = [
            math.hypot(x, y),
            math.hypot(x - 30, y - 4),
            math.hypot(x - 10, y + 5),
            math.sqrt((x + 5) ** 2 + (y - 2) ** 2 + (z - 3) ** 2),
            math.hypot(x, y),
            math.hypot(x - 30, y - 4),
            math.hypot(35, 2),
        ]
        got = [row[name] for name in list(row)[2:9]]
        assert got == pytest.approx(expected, abs=1e-9)


def test_two_clients_at_different_update_periods():
    sim, server = served("realtime", dilation=2.0, frame_rate=1000, wait_for_clients=2)
    seen: dict[float, list[tuple[float, float]]] = {0.005: [], 0.02: []}

    def recorder(period):
        def step(ports):
            if ports.status is ConnectionStatus.connected and ports["serial_number"] > 0:
                seen[period].append((ports["serial_number"], ports["time"]))

        return step

    clients = [
        ContractClient(
            document(
                server.address[1],
                timeDilation=1.0,
                outputs=[
                    {
                        "updatePeriod": period,
                        "ports": fields("groundspeed")
                        + fields("serial_number", "time", propertyType="meta"),
                    }
                ],
            ),
            recorder(period),
            step=0.001,
        )
        for period in seen
    ]
    runs = [Background(lambda c=c: c.run(None)) for c in clients]
    report = sim.run(0.5)
    for client in clients:
        assert wait_until(lambda c=client: c.status is ConnectionStatus.connecting)  # BYE
        client.stop()
    reports = [r.result() for r in runs]
    for (period, pairs), client_report in zip(seen.items(), reports, strict=True):
        assert len(pairs) > 10
        serial, stamp = np.array(pairs).T
        assert stamp == pytest.approx(serial * period)  # one update per period, on the grid
        assert client_report.received == {0: round(0.5 / period)}
        assert client_report.gaps == 0
    assert report.faces["contracts"].sent == 100 + 25


def test_inputs_are_clamped_rounded_and_nan_leaves_them():
    sim, server = served("realtime", frame_rate=500, wait_for_clients=1)
    client = ContractClient(
        document(
            server.address[1],
            timeDilation=1.0,
            inputs=[
                {
                    "updatePeriodMs": 5,
                    "ports": [
                        [{"propertyName": "throttle"}],
                        [{"propertyName": "gear"}],
                        [{"propertyName": "steering"}],
                        [{"propertyName": "highbeam"}],
                        [{"propertyName": "braking_torque", "arraySize": 4}],
                    ],
                }
            ],
        ),
        lambda ports: {
            "throttle": 1.7,
            "gear": 2.4,
            "steering": math.nan,
            "highbeam": 0.8,
            "braking_torque": [10, 20, 30, -40],
        },
        step=0.001,
    )
    steering_before = sim.vehicle.inputs["steering"]
    run_until_connected(sim, client, 0.1)
    held = sim.vehicle.inputs
    assert (held["throttle"], held["gear"], held["highbeam"]) == (1.0, 2.0, 1.0)
    assert held["steering"] == steering_before
    assert held["braking_torque"] == (10.0, 20.0, 30.0, 0.0)
    clamped = server.report().clamped
    assert set(clamped) == {"throttle", "braking_torque"}
    assert clamped["throttle"] == clamped["braking_torque"] > 0


def test_malformed_datagrams_are_counted_never_fatal():
    sim, server = served("realtime", frame_rate=500, wait_for_clients=1)
    client = ContractClient(
        document(
            server.address[1],
            timeDilation=1.0,
            outputs=[{"updatePeriodMs": 5, "ports": fields("rpm")}],
        ),
        None,
        step=0.001,
    )
    server_run = Background(lambda: sim.run(None))
    client_run = Background(lambda: client.run(None))
    assert wait_until(lambda: client.status is ConnectionStatus.connected)
    garbage = [
        b"",
        b"VC\x01",
        b"hello, world",
        b"VC\x01\x63" + bytes(4),
        b"VC\x01\x01" + bytes(4) + b"{not json",
        b"VC\x01\x03" + bytes(30),
    ]  # well-formed DATA, but of no session
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as stranger:
        for datagram in garbage:
            stranger.sendto(datagram, server.address)
    assert wait_until(lambda: server.report().unknown_session == 1)
    assert server.report().malformed == {
        "short": 2,
        "bad_magic": 1,
        "unknown_kind": 1,
        "bad_json": 1,
    }
    server.endpoint.send(b"junk", client.address)  # and to the client, from the server's port
    server.endpoint.send(b"XX\x01\x03" + bytes(20), client.address)
    assert wait_until(lambda: client.endpoint.malformed == {"short": 1, "bad_magic": 1})
    assert client.status is ConnectionStatus.connected
    client.stop()
    client_run.result()
    sim.stop()
    server_run.result()
    assert sim.time > 0


def test_catalogue_matches_names_case_insensitively_and_lists_objects():
    catalogue = Catalogue(Vehicle(), "Ego", {"Stop": (1.0, 2.0)})
    assert catalogue.objects == ["Ego", "World", "Origin", "Stop"]
    reader = catalogue.reader("ego", "GROUNDSPEED", None, 1)
    assert reader.signals == (L.SIGNAL_INDEX["groundspeed"],)
    assert catalogue.reader("Stop", "position", None, 3).function() == (1.0, 2.0, 0.0)
    assert catalogue.reader("Ego", "DISTANCE", None, 1).startswith("DISTANCE needs params")
    assert catalogue.writer("World", "throttle", None, 1) == "World has no writable properties"
