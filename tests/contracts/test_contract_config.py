from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from vcosim.contracts.config import load_config, parse_config
from vcosim.contracts.layout import BlockLayout
from vcosim.errors import ConfigError

EXAMPLES = Path(__file__).parents[2] / "examples" / "contracts"


def test_defaults_are_the_specs():
    config = parse_config(
        {
            "version": 2,
            "outputs": [{"ports": [[{"remoteObject": "Vehicle_A", "propertyName": "rpm"}]]}],
        }
    )
    assert (config.remoteIP, config.remotePort, config.timeDilation) == ("127.0.0.1", 4367, 1.0)
    group = config.outputs[0]
    assert group.groupType == "contract" and not group.time_sync
    assert group.overdue_timeout is None and group.period == 0.01
    field = group.ports[0][0]
    assert (field.initialValue, field.invalidValue, field.dataType, field.dataSize) == (
        0.0,
        0.0,
        "float",
        64,
    )
    assert field.width == 1 and not field.is_meta(group.groupType)


def test_periods_and_timeouts_in_seconds_or_milliseconds():
    config = parse_config(
        {
            "version": 2.0,
            "remoteObject": "V",
            "inputs": [
                {
                    "updatePeriodMs": 8.333333,
                    "overdueDataTimeoutMs": 250,
                    "ports": [[{"propertyName": "throttle"}]],
                },
                {
                    "updatePeriod": 0.05,
                    "blockTimeThreshold": 0.5,  # the deprecated spelling
                    "ports": [[{"propertyName": "brake"}]],
                },
            ],
        }
    )
    first, second = config.inputs
    assert first.period == pytest.approx(0.008333333) and first.overdue_timeout == 0.25
    assert second.period == 0.05 and second.overdue_timeout == 0.5


def test_an_invalid_file_lists_every_problem_with_its_json_path(tmp_path):
    bad = {
        "version": 3,
        "remotePort": "4367",
        "timeDilaton": 1.0,
        "inputs": [
            {
                "updatePeriod": -0.01,
                "timeSyncMode": "absolute",
                "ports": [
                    [
                        {
                            "remoteObject": "Vehicle_A",
                            "propertyName": "throttle",
                            "dataType": "double",
                        }
                    ],
                    [{"propertyName": "time", "propertyType": "meta"}],
                ],
            }
        ],
        "outputs": [
            {
                "updatePeriod": 0.01,
                "updatePeriodMs": 10,
                "timeSyncMode": "absolute",
                "ports": [[{"propertyName": "rpm", "dataSize": 32}]],
            },
            {"groupType": "commData", "ports": [[{"propertyName": "latency"}]]},
        ],
    }
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert caught.value.source == str(path)
    assert caught.value.problems == [
        '$: only one contract may have timeSyncMode "absolute"; 2 do: $.inputs[0], $.outputs[0]',
        "$.inputs[0].ports[0][0].dataType: Input should be 'float'",
        "$.inputs[0].ports[1][0].propertyType: meta fields describe received data; they are "
        "outputs only",
        "$.inputs[0].updatePeriod: Input should be greater than or equal to 0.0005",
        "$.outputs[0]: give updatePeriod or updatePeriodMs, not both",
        "$.outputs[0].ports[0][0]: no remoteObject (give it here or at the top level)",
        "$.outputs[0].ports[0][0].dataSize: Input should be 64",
        '$.outputs[1].ports[0][0].propertyName: a commData meta field is "ping_results", not '
        '"latency"',
        "$.remotePort: Input should be a valid integer",
        "$.timeDilaton: unknown key; did you mean 'timeDilation'?",
        "$.version: must be 2 (this is the version-2 format), not 3",
    ]
    assert str(caught.value).startswith(f"{path} is invalid (11 problem(s)):\n  - $: only")


def test_not_json_says_where(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{"version": 2,\n "inputs": [}')
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert caught.value.problems == ["line 2, column 13: not valid JSON: Expecting value"]


def test_overdue_timeouts_on_both_sides_warn_of_a_dead_lock(caplog):
    with caplog.at_level(logging.WARNING, logger="vcosim.contracts"):
        parse_config(
            {
                "version": 2,
                "remoteObject": "Vehicle_A",
                "inputs": [{"overdueDataTimeout": 0.1, "ports": [[{"propertyName": "throttle"}]]}],
                "outputs": [{"overdueDataTimeoutMs": 100, "ports": [[{"propertyName": "rpm"}]]}],
            }
        )
    assert "dead-lock" in caplog.text


def test_ports_are_named_after_their_fields():
    config = parse_config(
        {
            "version": 2,
            "remoteObject": "Vehicle_A",
            "outputs": [
                {
                    "ports": [
                        [{"propertyName": "groundspeed"}],
                        [{"propertyName": "posX"}, {"propertyName": "posY"}],
                        [{"propertyName": "DISTANCE", "params": "Origin"}],
                        [{"remoteObject": "World", "propertyName": "time"}],
                        [{"propertyName": "time", "propertyType": "meta"}],
                        [{"propertyName": "groundspeed"}],
                    ]
                },
                {"groupType": "commData", "ports": [[{"propertyName": "ping_results"}]]},
            ],
        }
    )
    layout = BlockLayout.of(config)
    assert [(p.name, p.start, p.width) for p in layout.outputs] == [
        ("groundspeed", 0, 1),
        ("posX,posY", 1, 2),
        ("DISTANCE(Origin)", 3, 1),
        ("World.time", 4, 1),
        ("time", 5, 1),
        ("groundspeed#2", 6, 1),
        ("ping_results", 7, 3),
    ]
    contract = layout.contracts[0]
    assert contract.wire_width == 6  # the meta field is not on the wire
    assert [f.wire for f in contract.fields] == [0, 1, 2, 3, 4, None, 5]


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.json")), ids=lambda p: p.name)
def test_every_example_file_is_valid(path):
    config = load_config(path)
    assert config.inputs or config.outputs


def test_a_property_no_server_has_is_refused_before_the_client_connects():
    """A typo is an error, not a port of zeros (issue 30): every one listed, with the closest."""
    from vcosim.contracts import ContractClient

    with pytest.raises(ConfigError) as caught:
        ContractClient(
            {
                "version": 2,
                "remoteObject": "Vehicle_A",
                "outputs": [
                    {
                        "ports": [
                            [{"propertyName": "groundsped"}],
                            [{"propertyName": "position"}],
                            [{"remoteObject": "World", "propertyName": "tme"}],
                            [{"propertyName": "rpm", "params": "Origin"}],
                            [{"remoteObject": "lead", "propertyName": "GROUNDSPEED"}],  # served
                        ]
                    }
                ],
                "inputs": [
                    {"ports": [[{"propertyName": "throtle"}], [{"propertyName": "gear"}]]},
                    {"ports": [[{"propertyName": "yaw"}], [{"propertyName": "DISTANCE"}]]},
                ],
            }
        )
    assert caught.value.problems == [
        "$.inputs[0].ports[0][0].propertyName: unknown writable property 'throtle' of "
        "Vehicle_A; did you mean 'throttle'?",
        "$.inputs[1].ports[0][0].propertyName: 'yaw' of Vehicle_A is read-only (writable: "
        "throttle, brake, clutch, parkingbrake, steering, gear, ignition, highbeam, lowbeam, "
        "signal_L, signal_R, drive_mode, propulsion_torque, braking_torque, automatic, "
        "propulsion_torque_FL, propulsion_torque_FR, propulsion_torque_RL, propulsion_torque_RR, "
        "braking_torque_FL, braking_torque_FR, braking_torque_RL, braking_torque_RR)",
        "$.inputs[1].ports[1][0].propertyName: DISTANCE of Vehicle_A is a function: it is "
        "read, not written",
        "$.outputs[0].ports[0][0].propertyName: unknown property 'groundsped' of Vehicle_A; "
        "did you mean 'groundspeed'?",
        "$.outputs[0].ports[1][0].arraySize: 'position' has 3 value(s); the field asks for 1",
        "$.outputs[0].ports[2][0].propertyName: unknown property 'tme' of World; did you mean "
        "'time'?",
        "$.outputs[0].ports[3][0].params: 'rpm' of Vehicle_A is not a function; it takes no params",
    ]


@pytest.mark.parametrize("obj", ["Vehicle_A", "world", "Origin"])
def test_the_clients_check_accepts_exactly_what_a_server_serves(obj):
    """Every name either side knows, misspelt and re-cased ones, each width, both ways."""
    from vcosim.contracts.objects import (
        FUNCTIONS,
        VEHICLE_READABLE,
        WORLD_READABLE,
        WRITERS,
        Catalogue,
        field_problem,
    )
    from vcosim.vehicle import Vehicle

    catalogue = Catalogue(Vehicle())
    names = [*VEHICLE_READABLE, *WORLD_READABLE, *WRITERS, *FUNCTIONS, "rmp", "Groundspeed"]
    for name in names:
        params = "Origin" if name in FUNCTIONS else None
        for size in (1, 3, 4):
            for written, serve in ((False, catalogue.reader), (True, catalogue.writer)):
                served = not isinstance(serve(obj, name, params, size), str)
                checked = field_problem(obj, name, params, size, written=written) is None
                assert checked == served, (obj, name, size, written)


def test_vcosim_connect_refuses_a_misspelt_property_in_one_line_exit_2(tmp_path):
    from typer.testing import CliRunner

    from vcosim.app import app

    config = json.loads((EXAMPLES / "cruise.json").read_text())
    config["outputs"][0]["ports"][0][0]["propertyName"] = "groundsped"
    path = tmp_path / "cruise.json"
    path.write_text(json.dumps(config))
    result = CliRunner().invoke(app, ["connect", str(path), "--duration", "1"])
    assert result.exit_code == 2
    assert result.output == (
        f"error: {path}: $.outputs[0].ports[0][0].propertyName: unknown property 'groundsped' "
        "of Vehicle_A; did you mean 'groundspeed'?\n"
    )


def test_a_client_lists_the_problems_of_its_file_and_its_options_at_once():
    from vcosim.contracts import ContractClient

    with pytest.raises(ConfigError) as caught:
        ContractClient(
            {"version": 3, "outputs": [{"ports": []}]}, None, step=0, link_timeout=-1, spn=1
        )
    assert caught.value.problems == [
        "$.outputs[0].ports: List should have at least 1 item after validation, not 0",
        "$.version: must be 2 (this is the version-2 format), not 3",
        "options.step: Input should be greater than 0",
        "options.link_timeout: Input should be greater than 0",
        "options.spn: unknown key",
    ]


def test_server_options_name_every_bad_value_before_binding():
    from pydantic import ValidationError

    from vcosim.contracts import ContractServer

    with pytest.raises(ValidationError) as caught:
        ContractServer(port=70000, sync_timeout=0, wait_for_clients=-1, points={"P": (1.0,)})
    named = {e["loc"][0] for e in caught.value.errors()}
    assert named == {"port", "points", "sync_timeout", "wait_for_clients"}
