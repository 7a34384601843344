"""ASAM OSI out of `vcosim sim`: traces read back with osi3 give the recording's poses; UDP
carries a SensorView per frame at the configured rate of simulated time."""

from __future__ import annotations

import json
import socket
import struct
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

pytest.importorskip("osi3")
from mcap.reader import make_reader  # noqa: E402
from osi3.osi_sensorview_pb2 import SensorView  # noqa: E402
from osi3trace.osi_trace import OSITrace  # noqa: E402

from vcosim.app import app  # noqa: E402
from vcosim.groundtruth.objects import Shape, rotation_matrices  # noqa: E402
from vcosim.groundtruth.osi import parse_udp_url  # noqa: E402
from vcosim.groundtruth.osi_io import read_trace, summarize_trace  # noqa: E402
from vcosim.vehicle import Vehicle  # noqa: E402

ROOT = Path(__file__).parents[2]
TWO_CARS = ROOT / "examples" / "worlds" / "two-cars.toml"
DURATION, RATE = 0.5, 100.0
FRAMES = round(DURATION * RATE) + 1


def sim(*args: str) -> str:
    result = CliRunner().invoke(app, ["sim", "--no-coupling", "--pacing", "fast", *args])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture(scope="module")
def world_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """Two cars for 0.5 s: recorded to MCAP, OSI to an MCAP trace and over UDP (50 Hz)."""
    folder = tmp_path_factory.mktemp("osi-world")
    receiver = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    receiver.bind(("127.0.0.1", 0))
    port = receiver.getsockname()[1]
    output = sim(
        "--world", str(TWO_CARS), "--duration", str(DURATION),
        "--record", str(folder / "run.mcap"),
        "--osi-trace", str(folder / "trace.mcap"),
        "--osi", f"udp://127.0.0.1:{port}", "--osi-rate", "50",
    )  # fmt: skip
    receiver.settimeout(0.0)  # the run is over: everything it sent is queued
    datagrams = []
    while True:
        try:
            datagrams.append(receiver.recv(65536))
        except BlockingIOError:
            break
    receiver.close()
    return {"folder": folder, "output": output, "datagrams": datagrams}


def recorded_signals(path: Path) -> dict[int, dict[str, float]]:
    """A vehicle's recorded rows by their time in ns."""
    with path.open("rb") as stream:
        return {
            message.log_time: json.loads(message.data)
            for _, _, message in make_reader(stream).iter_messages(topics=["/vehicle/signals"])
        }


def test_an_osi_mcap_trace_read_with_osi3_has_the_recordings_poses(world_run) -> None:
    folder = world_run["folder"]
    recorded = {name: recorded_signals(folder / f"run.{name}.mcap") for name in ("ego", "side")}
    shape = Shape.of(Vehicle())  # both cars are the default preset
    frames = list(OSITrace(str(folder / "trace.mcap"), type_name="GroundTruth"))
    assert len(frames) == round(DURATION * 50) + 1
    for truth in frames:
        stamp = truth.timestamp.seconds * 1_000_000_000 + truth.timestamp.nanos
        assert truth.host_vehicle_id.value == 1
        names = []
        for moving in truth.moving_object:
            name = moving.source_reference[0].identifier[0]
            names.append(name)
            row = recorded[name][stamp]
            base = moving.base
            attitude = np.array([[base.orientation.roll, base.orientation.pitch,
                                  base.orientation.yaw]])  # fmt: skip
            np.testing.assert_allclose(
                attitude[0], [row["roll"], row["pitch"], row["yaw"]], rtol=0, atol=1e-6
            )
            centre = np.array([base.position.x, base.position.y, base.position.z])
            cog = centre - rotation_matrices(attitude)[0] @ np.array(shape.centre_offset)
            np.testing.assert_allclose(cog, [row["posX"], row["posY"], row["posZ"]], atol=1e-6)
            velocity = [base.velocity.x, base.velocity.y, base.velocity.z]
            np.testing.assert_allclose(velocity, [row["velX"], row["velY"], row["velZ"]], atol=1e-6)
            assert base.dimension.length == pytest.approx(shape.length)
            assert moving.vehicle_classification.type == moving.vehicle_classification.TYPE_CAR
        assert names == ["ego", "side"]


def test_the_mcap_trace_carries_the_osi_metadata_schemas_and_channels(world_run) -> None:
    with (world_run["folder"] / "trace.mcap").open("rb") as stream:
        reader = make_reader(stream)
        summary = reader.get_summary()
        metadata = {record.name: record.metadata for record in reader.iter_metadata()}
    osi = metadata["net.asam.osi.trace"]
    assert {"version", "min_osi_version", "max_osi_version", "min_protobuf_version",
            "max_protobuf_version"} <= set(osi)  # fmt: skip
    schemas = {s.name: s for s in summary.schemas.values()}
    assert set(schemas) == {"osi3.GroundTruth", "osi3.SensorView"}
    assert {s.encoding for s in schemas.values()} == {"protobuf"}
    for channel in summary.channels.values():
        assert channel.message_encoding == "protobuf"
        assert channel.metadata["net.asam.osi.trace.channel.osi_version"] == osi["version"]
        assert "net.asam.osi.trace.channel.protobuf_version" in channel.metadata
    assert summary.chunk_indexes, "the OSI trace format asks for an indexed file"


def test_udp_carries_one_sensor_view_per_datagram_at_the_rate(world_run) -> None:
    views = []
    for datagram in world_run["datagrams"]:
        view = SensorView()
        view.ParseFromString(datagram)
        views.append(view)
    times = [v.timestamp.seconds + v.timestamp.nanos * 1e-9 for v in views]
    assert len(views) == round(DURATION * 50) + 1  # 50 Hz over 0.5 s of simulated time
    assert np.diff(times) == pytest.approx(np.full(len(times) - 1, 0.02), abs=1e-9)
    assert all(len(v.global_ground_truth.moving_object) == 2 for v in views)
    assert views[0].mounting_position.position.x > 3.0  # the front bumper, from the rear axle


@pytest.fixture(scope="module")
def lone_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("osi-lone")
    sim("--duration", "0.2", "--osi-trace", str(folder / "trace.osi"))
    return folder / "trace.osi"


def test_a_binary_osi_trace_is_length_prefixed_sensor_views(lone_run: Path) -> None:
    data = lone_run.read_bytes()
    at, views = 0, []
    while at < len(data):
        (length,) = struct.unpack_from("<I", data, at)
        view = SensorView()
        view.ParseFromString(data[at + 4 : at + 4 + length])
        views.append(view)
        at += 4 + length
    assert at == len(data)
    assert len(views) == round(0.2 * RATE) + 1
    assert [m.id.value for m in views[-1].global_ground_truth.moving_object] == [1]
    read_back = list(read_trace(lone_run))  # the package's reader: osi3trace underneath
    assert [v.SerializeToString() for v in read_back] == [v.SerializeToString() for v in views]
    shown = CliRunner().invoke(app, ["analyze", str(lone_run)])
    assert shown.exit_code == 0, shown.output
    assert "SensorView frames" in shown.output and "1 (ego)" in shown.output
    summary = summarize_trace(lone_run)
    assert summary.frames == len(views)
    assert summary.rate_hz == pytest.approx(RATE)
    assert summary.vehicles == {1: "ego"}


def test_a_ground_truth_has_a_box_of_the_collision_size() -> None:
    shape = Shape.of(Vehicle())
    assert shape.length > shape.width > 1.0
    assert shape.rear_axle[0] < 0 < shape.length / 2 + shape.centre_offset[0]


@pytest.mark.parametrize(
    ("text", "address"),
    [("udp://10.0.0.2:5000", ("10.0.0.2", 5000)), (":5000", ("127.0.0.1", 5000)),
     ("udp://127.0.0.1", ("127.0.0.1", 48198))],
)  # fmt: skip
def test_osi_addresses(text: str, address: tuple[str, int]) -> None:
    assert parse_udp_url(text) == address


def test_bad_osi_options_are_one_line_exit_2(tmp_path: Path) -> None:
    cases = [
        (["--osi", "tcp://127.0.0.1:5000"], "udp://HOST:PORT"),
        (["--osi", "udp://127.0.0.1:5000", "--osi-rate", "300"], "whole number"),
        (["--osi-trace", str(tmp_path / "trace.txt")], ".osi or .mcap"),
    ]
    for args, words in cases:
        result = CliRunner().invoke(app, ["sim", "--no-coupling", "--duration", "0.1", *args])
        assert result.exit_code == 2, result.output
        assert words in result.output
        assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("args", "extra", "modules"),
    [(["--osi", ":5000"], "osi", ("osi3", "osi3trace")),
     (["--foxglove", ":0"], "foxglove", ("foxglove",))],
)  # fmt: skip
def test_a_missing_extra_is_one_line_naming_pip_exit_2(
    monkeypatch: pytest.MonkeyPatch, args: list[str], extra: str, modules: tuple[str, ...]
) -> None:
    for name in modules:
        monkeypatch.setitem(sys.modules, name, None)
    result = CliRunner().invoke(app, ["sim", "--no-coupling", "--duration", "0.1", *args])
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, result.output
    assert f"`{extra}` extra" in errors[0]
    assert "pip install" in errors[0]
