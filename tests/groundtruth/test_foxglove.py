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
from typing import Any

import pytest
from typer.testing import CliRunner

pytest.importorskip("foxglove")
from mcap.reader import make_reader  # noqa: E402
from mcap_protobuf.decoder import DecoderFactory  # noqa: E402
from websockets.exceptions import InvalidStatus  # noqa: E402
from websockets.sync.client import connect  # noqa: E402

from vcosim.app import app  # noqa: E402
from vcosim.groundtruth.foxglove import SUBPROTOCOL, FoxgloveLive  # noqa: E402
from vcosim.groundtruth.gate import CLASSIC_SUBPROTOCOL  # noqa: E402
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


def subscribe_scene(ws: Any) -> list[str]:
    """What a naive client does: read text frames up to the advertisement, then subscribe to
    /scene (id 7); the ops it read. Fails on a binary frame before the channels."""
    ops: list[str] = []
    channels: dict[str, dict] = {}
    while "/scene" not in channels:
        frame = ws.recv(timeout=30)
        assert isinstance(frame, str), f"binary data before the channels, after {ops}"
        message = json.loads(frame)
        ops.append(message["op"])
        if message["op"] == "advertise":
            channels.update({c["topic"]: c for c in message["channels"]})
    subscription = {"id": 7, "channelId": channels["/scene"]["id"]}
    ws.send(json.dumps({"op": "subscribe", "subscriptions": [subscription]}))
    return ops


def scenes(ws: Any, wanted: int) -> dict[int, bytes]:
    """The next ``wanted`` /scene messages, by timestamp."""
    got: dict[int, bytes] = {}
    while len(got) < wanted:
        frame = ws.recv(timeout=30)
        if isinstance(frame, bytes) and frame[0] == MESSAGE_DATA:
            subscription, stamp = struct.unpack_from("<IQ", frame, 1)
            assert subscription == 7
            got[stamp] = frame[13:]
    return got


def test_a_classic_and_an_sdk_client_get_the_same_scene_channels_first(live) -> None:
    _, (host, port) = live
    url = f"ws://{host}:{port}"
    with (
        connect(url, subprotocols=[CLASSIC_SUBPROTOCOL], open_timeout=30) as classic,
        connect(url, subprotocols=[SUBPROTOCOL], open_timeout=30) as sdk,
    ):
        assert (classic.subprotocol, sdk.subprotocol) == (CLASSIC_SUBPROTOCOL, SUBPROTOCOL)
        ops = subscribe_scene(classic), subscribe_scene(sdk)
        classic_scenes, sdk_scenes = scenes(classic, 2 * WANTED), scenes(sdk, 2 * WANTED)
    assert ops[0][0] == ops[1][0] == "serverInfo"
    shared = classic_scenes.keys() & sdk_scenes.keys()
    assert shared  # the same samples, byte for byte
    assert all(classic_scenes[stamp] == sdk_scenes[stamp] for stamp in shared)
    assert b"ego" in classic_scenes[max(shared)]


def test_a_classic_client_from_a_foreign_origin_is_refused(live) -> None:
    face, (host, port) = live
    before = face.report().refused.get("origin", 0)
    with pytest.raises(InvalidStatus) as refused:
        connect(
            f"ws://{host}:{port}",
            subprotocols=[CLASSIC_SUBPROTOCOL],
            origin="http://evil.example",
            open_timeout=30,
        )
    assert refused.value.response.status_code == 403
    assert face.report().refused["origin"] == before + 1


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


def test_the_gate_holds_the_servers_clock_back_until_the_channels_are_advertised() -> None:
    from websockets.sync.server import serve

    from vcosim.groundtruth.gate import OriginGate
    from vcosim.modules.viewer.gate import Gate

    clock = struct.pack("<BQ", TIME, 123)

    def upstream_server(ws: Any) -> None:  # a server whose clock ticks before it advertises
        ws.send(json.dumps({"op": "serverInfo", "name": "early", "capabilities": ["time"]}))
        ws.send(clock)
        ws.send(json.dumps({"op": "advertise", "channels": []}))
        ws.send(clock)
        ws.recv(timeout=30)  # until the client goes

    with serve(upstream_server, "127.0.0.1", 0, subprotocols=[SUBPROTOCOL]) as upstream:
        serving = threading.Thread(target=upstream.serve_forever, daemon=True)
        serving.start()
        gate = OriginGate("127.0.0.1", 0, upstream.socket.getsockname()[1])
        try:
            gate.gate = Gate.serving("127.0.0.1", ("127.0.0.1", gate.bind()))
            url = f"ws://127.0.0.1:{gate.port}"
            with connect(url, subprotocols=[CLASSIC_SUBPROTOCOL], open_timeout=30) as ws:
                frames = [ws.recv(timeout=30) for _ in range(4)]
        finally:
            gate.close()
            upstream.shutdown()
    assert [json.loads(f)["op"] for f in frames[:2]] == ["serverInfo", "advertise"]
    assert frames[2:] == [clock, clock]  # the held tick right after, then the next


def test_the_gate_closes_a_client_whose_frame_is_too_big_before_reading_it() -> None:
    """Issue 45, E: the gate read frames of any size (a 512 MB one took the simulator to
    2.1 GB). A client's message over the bound closes it (1009) and never reaches the server;
    the next client is served."""
    from websockets.exceptions import ConnectionClosed
    from websockets.sync.server import serve

    from vcosim.groundtruth.gate import MAX_CLIENT_MESSAGE, OriginGate
    from vcosim.modules.viewer.gate import Gate

    sizes: list[int] = []

    def upstream_server(ws: Any) -> None:  # records what reaches it
        ws.send(json.dumps({"op": "serverInfo", "name": "stub", "capabilities": []}))
        ws.send(json.dumps({"op": "advertise", "channels": []}))
        for message in ws:
            sizes.append(len(message))

    with serve(upstream_server, "127.0.0.1", 0, subprotocols=[SUBPROTOCOL]) as upstream:
        threading.Thread(target=upstream.serve_forever, daemon=True).start()
        gate = OriginGate("127.0.0.1", 0, upstream.socket.getsockname()[1])
        try:
            gate.gate = Gate.serving("127.0.0.1", ("127.0.0.1", gate.bind()))
            url = f"ws://127.0.0.1:{gate.port}"
            with connect(url, subprotocols=[SUBPROTOCOL], open_timeout=30) as ws:
                assert json.loads(ws.recv(timeout=30))["op"] == "serverInfo"
                ws.send(bytes(MAX_CLIENT_MESSAGE + 1))
                with pytest.raises(ConnectionClosed) as closed:
                    while True:
                        ws.recv(timeout=30)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
            with connect(url, subprotocols=[SUBPROTOCOL], open_timeout=30) as ws:  # served
                assert json.loads(ws.recv(timeout=30))["op"] == "serverInfo"
                ws.send(json.dumps({"op": "subscribe", "subscriptions": []}))
                assert json.loads(ws.recv(timeout=30))["op"] == "advertise"
                ws.close()
        finally:
            gate.close()
            upstream.shutdown()
    assert MAX_CLIENT_MESSAGE + 1 not in sizes
