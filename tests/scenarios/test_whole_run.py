"""The builder is the whole run, and a run reads each of its files once.

``build_simulation(RunSpec(...))`` attaches everything ``vcosim sim`` attaches (OSI, Foxglove,
the pacer's ``on_late``) and gives the same outputs; the spec left beside a recording is the
one used, defaults written out, and repeats the run byte for byte; a scenario run parses its
``.xosc``, its ``.xodr`` and a world run its world file once.
"""

from __future__ import annotations

import shutil
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest
from typer.testing import CliRunner

from vcosim import filecache
from vcosim.app import app
from vcosim.scenarios import PacingSpec, RecordingSpec, RunSpec, build_simulation
from vcosim.scenarios.spec import FoxgloveFaceSpec, OsiFaceSpec, StoryboardFaceSpec
from vcosim.sim.face import Face
from vcosim.sim.pacing import OnLate
from vcosim.sim.simulation import Simulation

ROOT = Path(__file__).parents[2]
CUT_IN = ROOT / "examples" / "scenarios" / "cut_in.xosc"
TWO_CARS = ROOT / "examples" / "worlds" / "two-cars.toml"
DURATION, OSI_RATE = 0.2, 100.0
FRAMES = round(DURATION * OSI_RATE) + 1
FRAME_RATE = 100.0
F = TypeVar("F", bound=Callable[..., object])


def sim_cli(*args: str) -> str:
    result = CliRunner().invoke(app, ["sim", *args])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture
def receiver() -> Iterator[socket.socket]:
    """A UDP socket on loopback, on a free port, that the run's OSI datagrams reach."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    yield sock
    sock.close()


def drain(sock: socket.socket) -> list[bytes]:
    """Everything queued on ``sock`` (the run is over: all it sent has arrived on loopback)."""
    sock.settimeout(0.0)
    out = []
    while True:
        try:
            out.append(sock.recv(65536))
        except BlockingIOError:
            return out


def test_the_api_attaches_osi_foxglove_and_on_late_as_the_cli_does(
    tmp_path: Path, receiver: socket.socket
) -> None:
    pytest.importorskip("osi3")
    pytest.importorskip("foxglove")
    port = receiver.getsockname()[1]
    lines: list[str] = []
    spec = RunSpec(
        duration=DURATION,
        pacing=PacingSpec(mode="fast", on_late="stop"),
        recording=RecordingSpec(path=tmp_path / "api.mcap"),
        faces=[
            OsiFaceSpec(udp_host="127.0.0.1", udp_port=port, trace=tmp_path / "api.osi"),
            FoxgloveFaceSpec(port=0),
        ],
    )
    sim = build_simulation(spec, note=lines.append)
    assert sim.pacer.on_late is OnLate.stop
    assert list(sim.faces) == ["recording", "osi", "foxglove", "foxglove_recording"]
    assert [line.partition(":")[0] for line in lines] == ["osi", "foxglove", "recording"]
    report = sim.run(DURATION)
    assert report.sim_time == pytest.approx(DURATION)
    assert len(drain(receiver)) == FRAMES  # one SensorView per datagram at 100 Hz

    # The command line with the same options: the same faces, the same OSI trace.
    output = sim_cli(
        "--no-coupling", "--pacing", "fast", "--on-late", "stop", "--duration", str(DURATION),
        "--record", str(tmp_path / "cli.mcap"), "--osi-trace", str(tmp_path / "cli.osi"),
        "--osi", f"udp://127.0.0.1:{port}", "--foxglove", "127.0.0.1:0",
    )  # fmt: skip
    assert len(drain(receiver)) == FRAMES
    assert (tmp_path / "cli.osi").read_bytes() == (tmp_path / "api.osi").read_bytes()
    said = " ".join(output.split())
    assert "osi: the ego's SensorView at 100 Hz" in said and "foxglove: the run at 50 Hz" in said
    saved = RunSpec.from_toml(tmp_path / "cli.spec.toml")
    assert [face.kind for face in saved.faces] == ["osi", "foxglove"]
    assert saved.pacing.on_late is OnLate.stop


class _SlowFrames(Face):
    """Each frame takes longer than five frame periods: every frame ends late."""

    def on_frame(self, sim: Simulation) -> None:
        time.sleep(5 / FRAME_RATE)


@pytest.mark.parametrize(("on_late", "stops"), [("stop", True), ("slow", False)])
def test_on_late_from_the_spec_reaches_the_pacer(on_late: str, stops: bool) -> None:
    spec = RunSpec(
        duration=0.1, pacing=PacingSpec(mode="realtime", frame_rate=FRAME_RATE, on_late=on_late)
    )
    sim = build_simulation(spec)
    sim.attach("slow", _SlowFrames())
    report = sim.run(spec.duration)
    assert report.frames["stopped_late"] is stops
    assert (report.sim_time < 0.1 - 1e-9) is stops


def test_the_saved_spec_is_the_one_used_and_repeats_the_run(tmp_path: Path) -> None:
    pytest.importorskip("osi3")
    first, again = tmp_path / "first.csv", tmp_path / "again.csv"
    sim_cli(
        "--pacing", "lockstep", "--no-coupling", "--duration", str(DURATION),
        "--start-speed", "5", "--record", str(first), "--osi-trace", str(tmp_path / "t.osi"),
    )  # fmt: skip
    text = (tmp_path / "first.spec.toml").read_text()
    for resolved in ('vehicle = "nightrider"', 'gearbox = "automatic"', 'on_late = "slow"'):
        assert resolved in text  # defaults written out, not left to a later version's
    assert 'kind = "osi"' in text and "rate = 100.0" in text
    trace = (tmp_path / "t.osi").read_bytes()
    (tmp_path / "t.osi").unlink()
    sim_cli("--spec", str(tmp_path / "first.spec.toml"), "--record", str(again))
    assert again.read_bytes() == first.read_bytes()
    assert (tmp_path / "t.osi").read_bytes() == trace  # the OSI face came back from the spec


def counted(monkeypatch: pytest.MonkeyPatch, module: object, name: str) -> list[object]:
    """Count the calls of ``module.name`` (each call's first argument), forgetting kept parses."""
    calls: list[object] = []
    real = getattr(module, name)

    def counting(*args: object, **kwargs: object) -> object:
        calls.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counting)
    filecache.forget()
    return calls


def test_a_scenario_run_parses_its_xosc_and_its_xodr_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vcosim.openscenario import reader
    from vcosim.roads import opendrive

    xosc = counted(monkeypatch, reader, "read_xosc")
    xodr = counted(monkeypatch, opendrive, "read_xodr")
    sim_cli(
        "--scenario", str(CUT_IN), "--no-coupling", "--pacing", "fast", "--duration", "0.1",
        "--record", str(tmp_path / "run.csv"),
    )  # fmt: skip
    assert len(xosc) == 1 and Path(str(xosc[0])).name == "cut_in.xosc"
    assert len(xodr) == 1 and Path(str(xodr[0])).name == "straight.xodr"
    saved = RunSpec.from_toml(tmp_path / "run.spec.toml")
    assert [face for face in saved.faces if isinstance(face, StoryboardFaceSpec)] == [
        StoryboardFaceSpec(scenario=CUT_IN)
    ]


def test_an_edited_file_is_parsed_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from vcosim.roads import load_road, opendrive

    road = tmp_path / "road.xodr"
    shutil.copy(ROOT / "examples" / "scenarios" / "straight.xodr", road)
    reads = counted(monkeypatch, opendrive, "read_xodr")
    assert load_road(road) is load_road(road) and len(reads) == 1
    road.write_text(road.read_text() + "\n")  # another size: another parse
    load_road(road)
    assert len(reads) == 2


def test_a_world_run_loads_its_world_file_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vcosim.world.spec import WorldFile

    loads = counted(monkeypatch, WorldFile, "_read")
    sim = build_simulation(
        RunSpec(
            world=TWO_CARS,
            pacing=PacingSpec(mode="fast"),
            recording=RecordingSpec(path=tmp_path / "run.csv"),
        )
    )
    sim.close()
    assert loads == [TWO_CARS]
