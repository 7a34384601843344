"""Foxglove: a client speaking foxglove-sdk's websocket protocol gets the scene and the signals
at the configured rate of simulated time; a page from a foreign origin is refused; a recording
lists the Foxglove schemas and reads with the mcap package's default reader."""

from __future__ import annotations

import json
import socket
import struct
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

pytest.importorskip("foxglove")
from mcap.reader import make_reader  # noqa: E402
from mcap_protobuf.decoder import DecoderFactory  # noqa: E402
from websockets.exceptions import InvalidStatus  # noqa: E402
from websockets.sync.client import connect  # noqa: E402

from vcosim.app import app  # noqa: E402
from vcosim.groundtruth.foxglove import SUBPROTOCOL, FoxgloveLive  # noqa: E402
from vcosim.groundtruth.layout import layout, layout_topics  # noqa: E402
from vcosim.groundtruth.objects import Shape  # noqa: E402
from vcosim.scenarios import build_simulation  # noqa: E402
from vcosim.scenarios.spec import PacingSpec, RunSpec  # noqa: E402
from vcosim.sim.pacing import PacingMode  # noqa: E402
from vcosim.vehicle import Vehicle  # noqa: E402

ROOT = Path(__file__).parents[2]
TWO_CARS = ROOT / "examples" / "worlds" / "two-cars.toml"
LAYOUT = ROOT / "examples" / "foxglove" / "vcosim.json"
RATE, EVERY = 50.0, 40  # Hz, physics steps: 2000 Hz / 50
MESSAGE_DATA, TIME = 0x01, 0x02  # the server's binary opcodes
WANTED = 5  # messages per topic


@pytest.fixture(scope="module")
def live() -> Iterator[tuple[FoxgloveLive, tuple[str, int]]]:
    """Two cars in real time with the live face on a free port, until the tests are done."""
    sim = build_simulation(RunSpec(world=TWO_CARS, pacing=PacingSpec(mode=PacingMode.realtime)))
    face = sim.attach("foxglove", FoxgloveLive(EVERY, port=0))
    address = face.listen()
    runner = threading.Thread(target=sim.run, daemon=True)
    runner.start()
    yield face, address
    sim.stop()
    runner.join(timeout=30)
    assert not runner.is_alive()


def test_a_client_gets_the_scene_and_every_signal_at_the_rate(live) -> None:
    _, (host, port) = live
    with connect(f"ws://{host}:{port}", subprotocols=[SUBPROTOCOL], open_timeout=30) as ws:
        assert json.loads(ws.recv(timeout=30))["op"] == "serverInfo"
        channels: dict[str, dict] = {}
        while not {"/scene", "/tf", "/vehicle/signals", "/vehicles/side/signals"} <= set(channels):
            message = json.loads(ws.recv(timeout=30))
            if message["op"] == "advertise":
                channels.update({c["topic"]: c for c in message["channels"]})
        assert channels["/scene"]["schemaName"] == "foxglove.SceneUpdate"
        assert channels["/tf"]["schemaName"] == "foxglove.FrameTransforms"
        assert channels["/vehicle/signals"]["encoding"] == "json"
        topics = ["/scene", "/tf", "/vehicle/signals"]
        subscriptions = [{"id": i, "channelId": channels[t]["id"]} for i, t in enumerate(topics)]
        ws.send(json.dumps({"op": "subscribe", "subscriptions": subscriptions}))
        got: dict[int, list[tuple[int, bytes]]] = {i: [] for i in range(len(topics))}
        while min(len(v) for v in got.values()) < WANTED:
            frame = ws.recv(timeout=30)
            if isinstance(frame, bytes) and frame[0] == MESSAGE_DATA:
                subscription, stamp = struct.unpack_from("<IQ", frame, 1)
                got[subscription].append((stamp, frame[13:]))
    for messages in got.values():  # one message a sample, a sample every 20 ms of sim time
        stamps = [stamp for stamp, _ in messages]
        assert all(b - a == round(1e9 / RATE) for a, b in zip(stamps, stamps[1:], strict=False))
    scene = got[0][-1][1]
    assert b"ego" in scene and b"side" in scene and b"world" in scene
    signals = json.loads(got[2][-1][1])
    assert {"speed", "posX", "rpm", "time"} <= set(signals)
    assert round(signals["time"] * 1e9) == got[2][-1][0]


def test_a_page_from_a_foreign_origin_is_refused(live) -> None:
    face, (host, port) = live
    with pytest.raises(InvalidStatus) as refused:
        connect(
            f"ws://{host}:{port}",
            subprotocols=[SUBPROTOCOL],
            origin="http://evil.example",
            open_timeout=30,
        )
    assert refused.value.response.status_code == 403
    assert face.report().refused["origin"] >= 1
    for origin in (f"http://127.0.0.1:{port}", "https://app.foxglove.dev"):
        with connect(
            f"ws://{host}:{port}", subprotocols=[SUBPROTOCOL], origin=origin, open_timeout=30
        ) as ws:
            assert json.loads(ws.recv(timeout=30))["op"] == "serverInfo"


def test_a_port_in_use_is_one_line_exit_2() -> None:
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    result = CliRunner().invoke(
        app, ["sim", "--no-coupling", "--duration", "0.1", "--foxglove", f"127.0.0.1:{port}"]
    )
    taken.close()
    assert result.exit_code == 2, result.output
    assert f"--foxglove 127.0.0.1:{port}: cannot listen there" in result.output
    assert "Traceback" not in result.output


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("foxglove") / "run.mcap"
    result = CliRunner().invoke(
        app,
        ["sim", "--no-coupling", "--pacing", "fast", "--duration", "0.3", "--record", str(path)],
    )
    assert result.exit_code == 0, result.output
    return path


def test_a_recording_lists_the_foxglove_schemas_and_reads_by_default(recording: Path) -> None:
    with recording.open("rb") as stream:
        reader = make_reader(stream)
        schemas = {s.name: s.encoding for s in reader.get_summary().schemas.values()}
        counts: dict[str, int] = {}
        for _, channel, _ in reader.iter_messages():
            counts[channel.topic] = counts.get(channel.topic, 0) + 1
    assert schemas == {
        "vcosim.vehicle.signals": "jsonschema",
        "foxglove.SceneUpdate": "protobuf",
        "foxglove.FrameTransforms": "protobuf",
    }
    rows = round(0.3 * 100) + 1
    assert counts == {"/vehicle/signals": rows, "/scene": rows, "/tf": rows}
    shape = Shape.of(Vehicle())
    with recording.open("rb") as stream:
        reader = make_reader(stream, decoder_factories=[DecoderFactory()])
        scenes = [m for _, _, _, m in reader.iter_decoded_messages(topics=["/scene"])]
    cube = scenes[-1].entities[0].cubes[0]
    assert scenes[-1].entities[0].id == "ego"
    assert cube.size.x == pytest.approx(shape.length)
    assert cube.size.y == pytest.approx(shape.width)


def test_the_shipped_layout_is_the_one_vcosim_makes_and_reads_its_topics() -> None:
    shipped = LAYOUT.read_text()
    assert shipped == layout(), "regenerate examples/foxglove/vcosim.json (docs/foxglove.md)"
    panels = json.dumps(json.loads(shipped))
    for topic in layout_topics():
        assert f'"{topic}' in panels
