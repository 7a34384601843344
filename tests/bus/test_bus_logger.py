"""The logger: MCAP recording with a schema per type, CSV export, replay onto the bus."""

from __future__ import annotations

import csv
import json
import shutil
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("mcap")

from mcap.reader import make_reader  # noqa: E402

from vcosim.bus.catalogue import (  # noqa: E402
    FMLM,
    FMVM,
    IMFM,
    VMFM,
    ForceFeedback,
    ModuleId,
    Shutdown,
    SoundCont,
    SoundOnce,
)
from vcosim.bus.router import Router  # noqa: E402
from vcosim.modules.logger import (  # noqa: E402
    Logger,
    McapRecorder,
    Recorded,
    export_csv,
    read_recording,
    replay,
)

SCRIPT = [  # (sender, message): what the modules of a short drive say
    (17, IMFM(100, 150, 156, 0, to=16)),
    (16, FMVM(1.5, -2.25, 0.3, 0.01, -0.02, 1.0471975511965976, 12.5, to=18)),
    (16, FMLM(120, 30000, 0, 100, to=19)),
    (17, SoundOnce("horn.wav", 200, to=19)),
    (16, ForceFeedback(-0.125, 0.03, to=17)),
    (18, VMFM(0.1, 0.1, 0.0, 0.0, 0.9, 0.9, 0.5, 0.5, to=16)),
    (16, SoundCont("engine.wav", 22050, 90, to=42)),  # to nobody: still recorded
    (17, IMFM(0, 255, 64, -1, to=16)),
]


class LoggerThread:
    """A Logger running in a thread, joined to ``router``."""

    def __init__(self, router: Router, path: Path) -> None:
        self.logger = Logger(path, port=router.address[1])
        self.logger.connect(timeout=2.0)
        self.report: dict[str, object] = {}
        self._thread = threading.Thread(
            target=lambda: self.report.update(self.logger.run()), daemon=True
        )
        self._thread.start()

    def finish(self) -> dict[str, object]:
        self.logger.stop()
        self._thread.join(5.0)
        assert not self._thread.is_alive()
        return self.report


def play(router: Router, connect, script) -> None:
    """Each module sends its part; each message is routed (or dropped) before the next."""
    clients = {i: connect(i) for i in (16, 17, 18, 19)}
    stats = router.stats
    for n, (sender, message) in enumerate(script, 1):
        clients[sender].send(message)
        assert router.wait_until(lambda n=n: stats.routed + stats.unknown_destination >= n, 2.0)


def test_every_message_is_recorded_with_a_schema_per_type(router: Router, connect, tmp_path):
    path = tmp_path / "drive.mcap"
    recorder = LoggerThread(router, path)
    play(router, connect, SCRIPT)
    assert router.stats.copies == len(SCRIPT)
    report = recorder.finish()
    assert report["messages"] == len(SCRIPT)

    recording = list(read_recording(path))
    assert [(r.sender, r.message) for r in recording] == SCRIPT
    times = [r.time_ns for r in recording]
    assert times == sorted(times) and abs(times[0] / 1e9 - time.time()) < 60

    with open(path, "rb") as stream:
        reader = make_reader(stream)
        summary = reader.get_summary()
        assert summary is not None
        schemas = {s.name: s for s in summary.schemas.values()}
        channels = {c.topic: c for c in summary.channels.values()}
        assert set(channels) == {
            "/bus/IMFM",
            "/bus/FMVM",
            "/bus/FMLM",
            "/bus/SoundOnce",
            "/bus/ForceFeedback",
            "/bus/VMFM",
            "/bus/SoundCont",
        }
        assert all(c.message_encoding == "json" for c in channels.values())
        imfm = schemas["vcosim.bus.IMFM"]
        assert imfm.encoding == "jsonschema"
        schema = json.loads(imfm.data)
        assert schema["properties"]["throttle"] == {"type": "integer", "minimum": 0, "maximum": 255}
        assert schema["required"] == [
            "sender",
            "to",
            "enqueue",
            "throttle",
            "brake",
            "steering",
            "shift",
        ]
        first = next(reader.iter_messages(topics=["/bus/IMFM"]))[2]
        assert json.loads(first.data) == {
            "sender": 17,
            "to": 16,
            "enqueue": False,
            "throttle": 100,
            "brake": 150,
            "steering": 156,
            "shift": 0,
        }


def test_a_replayed_recording_reproduces_the_same_messages_in_order(tmp_path):
    original = tmp_path / "original.mcap"
    with Router("127.0.0.1", 0).start() as first:
        recorder = LoggerThread(first, original)
        stats = first.stats
        clients = {}
        for i in (16, 17, 18, 19):
            clients[i] = first_client = _client(first, i)
            assert first_client.connected
        for n, (sender, message) in enumerate(SCRIPT, 1):
            clients[sender].send(message)
            assert first.wait_until(lambda n=n: stats.routed + stats.unknown_destination >= n, 2.0)
        assert first.stats.copies == len(SCRIPT)
        recorder.finish()
        for client in clients.values():
            client.close()

    again = tmp_path / "again.mcap"
    with Router("127.0.0.1", 0).start() as second:
        recorder = LoggerThread(second, again)
        receivers = [_client(second, i) for i in (16, 17, 18, 19)]
        sent = replay(original, port=second.address[1], speed=0)
        assert sent["sent"] == len(SCRIPT)
        assert second.wait_until(
            lambda: second.stats.copies == len(SCRIPT) and second.stats.routed == len(SCRIPT) - 1,
            2.0,
        )
        recorder.finish()
        received = {r.module_id: [] for r in receivers}
        for r in receivers:
            while (m := r.next_message()) is not None:
                received[r.module_id].append(m)
            r.close()

    replayed = list(read_recording(again))
    assert [r.message for r in replayed] == [m for _, m in SCRIPT]  # same content, same order
    assert {r.sender for r in replayed} == {21}  # sent by the replayer, in its own name
    assert received[16] == [SCRIPT[7][1], SCRIPT[5][1]]  # the latest IMFM in the first's place
    assert received[19] == [SCRIPT[2][1], SCRIPT[3][1]]


def _client(router: Router, module_id: int):
    from vcosim.bus.client import BusClient

    return BusClient(module_id, port=router.address[1]).connect(timeout=2.0)


def synthetic(path: Path, spacing_ns: int, n: int) -> list[Recorded]:
    records = [
        Recorded(
            1_700_000_000_000_000_000 + i * spacing_ns, 17, IMFM(i, 0, 128, 0, to=16, enqueue=True)
        )
        for i in range(n)
    ]
    with McapRecorder(path) as recorder:
        for record in records:
            recorder.write(record)
    return records


def test_replay_keeps_the_recorded_pace_or_a_multiple(router: Router, connect, tmp_path):
    path = tmp_path / "paced.mcap"
    synthetic(path, spacing_ns=40_000_000, n=6)  # 0.2 s from first to last
    vehicle = connect(16)
    slow = replay(path, port=router.address[1], speed=1.0)
    fast = replay(path, port=router.address[1], speed=4.0)
    assert slow["wall_time"] >= 0.2 and fast["wall_time"] >= 0.05
    assert fast["wall_time"] < slow["wall_time"]
    received = []
    while (m := vehicle.next_message(timeout=1.0)) is not None and len(received) < 12:
        received.append(m.throttle)
    assert received == [0, 1, 2, 3, 4, 5] * 2


def test_replay_filters_and_stops_on_shutdown(router: Router, connect, tmp_path):
    path = tmp_path / "with-shutdown.mcap"
    with McapRecorder(path) as recorder:
        for i, (sender, message) in enumerate(
            [*SCRIPT, (17, Shutdown(to=0)), (17, IMFM(1, 1, 1, 0, to=16))]
        ):
            recorder.write(Recorded(i, sender, message))
    vehicle = connect(16)
    only = replay(path, port=router.address[1], speed=0, only=["IMFM"], skip=["Shutdown"])
    assert only["by_type"] == {"IMFM": 3}
    # the first replay's goodbye reaches the router on another socket than the next hello
    assert router.wait_until(lambda: ModuleId.REPLAY not in router.modules, 5.0)
    everything = replay(path, port=router.address[1], speed=0)
    assert everything["stopped_by_shutdown"] and everything["sent"] == len(SCRIPT) + 1
    assert router.stopped.wait(2.0)
    assert vehicle.next_message(timeout=2.0) is not None


def test_csv_export_has_a_column_per_parameter(tmp_path):
    path = tmp_path / "drive.mcap"
    with McapRecorder(path) as recorder:
        for i, (sender, message) in enumerate(SCRIPT):
            recorder.write(Recorded(1_000_000_000 + i * 10_000_000, sender, message))
    rows = export_csv(path, tmp_path / "drive.csv")
    assert rows == len(SCRIPT)
    with open(tmp_path / "drive.csv", newline="") as f:
        table = list(csv.DictReader(f))
    assert list(table[0])[:7] == ["time", "log_time_ns", "sender", "to", "type", "name", "enqueue"]
    assert "FMVM.yaw" in table[0] and "IMVM.x" not in table[0]  # only types in the recording
    assert table[0]["IMFM.throttle"] == "100" and table[0]["FMVM.x"] == ""
    assert table[1]["time"] == "0.010000" and float(table[1]["FMVM.yaw"]) == 1.0471975511965976
    assert table[6]["name"] == "SoundCont" and table[6]["to"] == "42"


def test_a_recording_cut_short_reads_up_to_its_last_flush(tmp_path):
    path = tmp_path / "cut.mcap"
    recorder = McapRecorder(path)
    for i, (sender, message) in enumerate(SCRIPT):
        recorder.write(Recorded(i, sender, message))
    recorder.flush()
    shutil.copy(path, tmp_path / "crashed.mcap")  # as a crash would leave it: no summary
    recorder.close()
    assert [r.message for r in read_recording(tmp_path / "crashed.mcap")] == [m for _, m in SCRIPT]


def test_unreadable_recordings_are_clear_errors(tmp_path):
    from vcosim.errors import ConfigError, ProtocolError

    with pytest.raises(ConfigError, match="no such file"):
        list(read_recording(tmp_path / "missing.mcap"))
    (tmp_path / "text.mcap").write_text("not mcap")
    with pytest.raises(ProtocolError, match="is not a readable MCAP recording"):
        list(read_recording(tmp_path / "text.mcap"))


def test_a_worlds_poses_are_recorded_a_topic_per_vehicle(router: Router, tmp_path):
    from vcosim.bus.catalogue import WorldPose, WorldVehicle
    from vcosim.bus.world_module import BusWorld
    from vcosim.sim.mcapfile import recover
    from vcosim.sim.pacing import Pacer
    from vcosim.sim.simulation import Simulation
    from vcosim.world import World

    path = tmp_path / "world.mcap"
    recording = LoggerThread(router, path)
    world = World(Path(__file__).parents[2] / "examples" / "worlds" / "follow.toml")
    sim = Simulation(world, Pacer("fast", frame_rate=20))
    sim.attach("bus_world", BusWorld(port=router.address[1]))
    sim.run(0.5)  # poses at 0, 50, ..., 500 ms: 11 per vehicle
    expected = 11 * len(world) + len(world)  # and one announcement
    assert router.wait_until(lambda: router.stats.copies >= expected, 5.0)
    report = recording.finish()
    assert report["messages"] == expected, report

    with path.open("rb") as f:
        summary = make_reader(f).get_summary()
    assert summary is not None
    topics = {
        c.topic: summary.statistics.channel_message_counts[i] for i, c in summary.channels.items()
    }
    assert topics == {
        "/bus/WorldVehicle": len(world),
        **{f"/world/{name}/pose": 11 for name in world.names},
    }
    records = list(read_recording(path))
    poses = [r.message for r in records if isinstance(r.message, WorldPose)]
    assert [sum(p.row == row for p in poses) for row in range(len(world))] == [11] * len(world)
    assert {r.message.name for r in records if isinstance(r.message, WorldVehicle)} == set(
        world.names
    )

    cut = tmp_path / "cut.mcap"  # a crash inside the file's summary: --recover rewrites it
    cut.write_bytes(path.read_bytes()[:-200])
    assert recover(cut).messages == expected
    assert [r.message for r in read_recording(cut)] == [r.message for r in records]
