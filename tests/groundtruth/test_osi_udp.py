"""OSI over UDP at any size: esmini's numbered fragments, on loopback, read back whole."""

from __future__ import annotations

import re
import socket
import struct
import threading
from pathlib import Path

import pytest

pytest.importorskip("osi3")

from osi3.osi_groundtruth_pb2 import GroundTruth  # noqa: E402
from osi3.osi_sensorview_pb2 import SensorView  # noqa: E402

from vcosim.groundtruth.osi import OsiOutput, parse_udp_url, udp_framing  # noqa: E402
from vcosim.groundtruth.osi_io import FRAGMENT_DATA, EsminiReceiver, OsiUdp  # noqa: E402
from vcosim.sim import Pacer, Simulation  # noqa: E402
from vcosim.world import World  # noqa: E402

PLATOON = Path(__file__).parents[2] / "examples" / "worlds" / "platoon.toml"


def city_frame(time: float, cars: int = 1000, heads: int = 1300) -> SensorView:
    """A frame the size of a city's: ``cars`` moving objects and ``heads`` traffic lights."""
    view = SensorView()
    truth = view.global_ground_truth
    truth.timestamp.seconds, truth.timestamp.nanos = int(time), round(time % 1 * 1e9)
    for i in range(cars):
        car = truth.moving_object.add()
        car.id.value = (1 << 24) + i
        car.base.position.x, car.base.position.y = 1.25 * i, -1.6
        car.base.position.z = car.base.dimension.height = 1.5
        car.base.orientation.yaw = 0.001 * i
        car.base.velocity.x, car.base.velocity.y = 13.9, 0.01 * i
        car.base.acceleration.x, car.base.orientation_rate.yaw = -0.5, 0.002
        car.base.dimension.length, car.base.dimension.width = 5.0, 1.8
        car.type = car.TYPE_VEHICLE
        car.vehicle_classification.type = car.VehicleClassification.TYPE_CAR
        car.vehicle_classification.light_state.brake_light_state = 2
        car.source_reference.add(type="net.vcosim.object").identifier.append(f"v{i}")
    for i in range(heads):
        light = truth.traffic_light.add()
        light.id.value = (1 << 31) + i
        light.base.position.x, light.base.position.y, light.base.position.z = 0.5 * i, 7.2, 3.0
        light.base.orientation.yaw = 1.5707963
        light.base.dimension.length = light.base.dimension.width = light.base.dimension.height = 0.3
        light.classification.color, light.classification.mode = 2, 3
        light.source_reference.add(type="net.vcosim.object").identifier.append(f"J{i}.0")
    return view


def test_frames_of_a_city_arrive_whole_in_esminis_fragments() -> None:
    frames = [city_frame(0.05 * k) for k in range(20)]  # a second at 20 Hz
    received: list[GroundTruth] = []
    # at most two frames on their way, as at 20 Hz: UDP has no flow control of its own, and a
    # burst of every frame at once could outgrow the receive buffer of a busy machine
    in_flight = threading.Semaphore(2)
    with EsminiReceiver(0) as receiver:

        def receive() -> None:  # as a receiver does: reading while the frames come
            for _ in frames:
                received.append(GroundTruth.FromString(receiver.receive(timeout=10.0)))
                in_flight.release()

        reading = threading.Thread(target=receive)
        reading.start()
        sender = OsiUdp(*receiver.address, framing="esmini")
        try:
            for view in frames:
                assert in_flight.acquire(timeout=30.0)
                sender.put(view, b"")
        finally:
            sender.close()
        reading.join(timeout=30.0)
        assert receiver.broken == 0
    sizes = [view.global_ground_truth.ByteSize() for view in frames]
    assert min(sizes) > 250_000  # far past one datagram's 65,507 bytes
    assert received == [view.global_ground_truth for view in frames]
    counts = sender.counts
    assert (counts.sent, counts.send_errors, counts.too_large) == (20, 0, 0)
    assert counts.fragments == sum(-(-size // FRAGMENT_DATA) for size in sizes)
    assert counts.largest_bytes == max(sizes)


def test_a_fragment_is_esminis_counter_and_size_then_the_data() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as raw:
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
        raw.bind(("127.0.0.1", 0))
        raw.settimeout(5.0)
        sender = OsiUdp(*raw.getsockname(), framing="esmini")
        big, small = city_frame(1.0, cars=200, heads=0), city_frame(2.0, cars=1, heads=0)
        sender.put(big, b"")
        sender.put(small, b"")
        sender.close()
        message = big.global_ground_truth.SerializeToString()
        parts = -(-len(message) // FRAGMENT_DATA)
        datagrams = [raw.recv(65536) for _ in range(parts + 1)]
    headers = [struct.unpack_from("<iI", d) for d in datagrams]
    assert [counter for counter, _ in headers] == [*range(1, parts), -parts, -1]
    lengths = [len(d) - 8 for d in datagrams]
    assert [size for _, size in headers] == lengths and max(lengths) == FRAGMENT_DATA
    assert b"".join(d[8:] for d in datagrams[:parts]) == message
    assert GroundTruth.FromString(datagrams[-1][8:]) == small.global_ground_truth


def test_a_fragment_out_of_turn_drops_its_frame_and_the_next_arrives() -> None:
    with EsminiReceiver(0) as receiver, socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as out:
        truth = city_frame(3.0, cars=1, heads=0).global_ground_truth.SerializeToString()
        for datagram in (
            struct.pack("<iI", 1, 3) + b"abc",
            struct.pack("<iI", -3, 3) + b"xyz",  # the second is missing
            struct.pack("<iI", -1, len(truth)) + truth,
        ):
            out.sendto(datagram, receiver.address)
        assert GroundTruth.FromString(receiver.receive(timeout=5.0)).timestamp.seconds == 3
        assert receiver.broken == 1


@pytest.mark.parametrize(
    ("text", "address", "framing"),
    [("esmini://127.0.0.1:48198", ("127.0.0.1", 48198), "esmini"),
     ("udp://10.0.0.2:5000", ("10.0.0.2", 5000), "datagram"),
     (":5000", ("127.0.0.1", 5000), "datagram")],
)  # fmt: skip
def test_esmini_addresses(text: str, address: tuple[str, int], framing: str) -> None:
    assert (parse_udp_url(text), udp_framing(text)) == (address, framing)


def test_a_run_sends_every_frame_to_an_esmini_receiver() -> None:
    with EsminiReceiver(0) as receiver:
        sim = Simulation(World(PLATOON), Pacer("fast"))
        output = OsiOutput(40, udp=receiver.address, udp_framing="esmini")  # 50 Hz
        sim.attach("osi", output)
        sim.run(0.5)
        report = output.report()
        truths = [GroundTruth.FromString(receiver.receive(timeout=5.0)) for _ in range(26)]
    assert report.udp is not None and report.udp.sent == report.frames == 26
    assert report.destinations == [f"esmini://{receiver.address[0]}:{receiver.address[1]}"]
    assert [len(t.moving_object) for t in truths] == [3] * 26
    assert truths[-1].timestamp.nanos == 500_000_000


def test_vcosim_sim_sends_esmini_fragments_when_asked_by_the_address() -> None:
    from typer.testing import CliRunner

    from vcosim.app import app

    received: list[GroundTruth] = []
    with EsminiReceiver(0) as receiver:

        def receive() -> None:
            for _ in range(11):  # 0.1 s at 100 Hz, and the first frame
                received.append(GroundTruth.FromString(receiver.receive(timeout=30.0)))

        reading = threading.Thread(target=receive)
        reading.start()
        host, port = receiver.address
        result = CliRunner().invoke(
            app,
            ["sim", "--world", str(PLATOON), "--no-coupling", "--pacing", "fast",
             "--duration", "0.1", "--osi", f"esmini://{host}:{port}"],
        )  # fmt: skip
        reading.join(timeout=60.0)
    assert result.exit_code == 0, result.output
    assert "in esmini's fragments" in result.output
    assert "osi: udp dropped" in result.output and "osi: udp largest bytes" in result.output
    assert re.search(r"osi: udp sent\s+│ 11 ", result.output), result.output
    assert re.search(rf"osi: sent to\s+│ esmini://{host}:{port} ", result.output), result.output
    assert len(received) == 11 and len(received[-1].moving_object) == 3
