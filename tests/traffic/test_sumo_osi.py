"""SUMO's cars in ASAM OSI ground truth: a trace read back has every car where the world had it."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

pytest.importorskip("libsumo")
pytest.importorskip("osi3trace")

from vcosim.groundtruth.osi import OBJECT_REFERENCE, OsiOutput  # noqa: E402
from vcosim.groundtruth.osi_io import read_trace  # noqa: E402
from vcosim.sim import Pacer, Simulation  # noqa: E402
from vcosim.traffic.sumo import SumoTraffic  # noqa: E402
from vcosim.world import World  # noqa: E402

JUNCTION = Path(__file__).parents[2] / "examples" / "worlds" / "sumo-junction.toml"


def test_an_osi_trace_has_every_sumo_car_at_the_pose_of_sumos_trace(tmp_path: Path) -> None:
    world = World(JUNCTION)
    traffic = world.objects
    assert isinstance(traffic, SumoTraffic)
    try:
        traffic.trace(tmp_path / "sumo.csv")
        sim = Simulation(world, Pacer("fast"))
        sim.attach("osi", OsiOutput(200, trace=tmp_path / "run.osi"))  # 10 Hz
        sim.run(3.0)
    finally:
        traffic.close()
    with (tmp_path / "sumo.csv").open() as file:
        sumo = {(row["time"], row["id"]): row for row in csv.DictReader(file)}
    compared = 0
    for view in read_trace(tmp_path / "run.osi"):
        truth = view.global_ground_truth
        time = f"{truth.timestamp.seconds + truth.timestamp.nanos * 1e-9:.4f}"
        cars = [m for m in truth.moving_object if m.source_reference[0].type == OBJECT_REFERENCE]
        ids = [m.id.value for m in truth.moving_object]
        assert ids[:2] == [1, 2] and len(set(ids)) == len(ids)  # the world's cars first
        for car in cars:
            name = car.source_reference[0].identifier[0]
            row = sumo[(time, name)]
            assert car.base.position.x == pytest.approx(float(row["x"]), abs=1e-4)
            assert car.base.position.y == pytest.approx(float(row["y"]), abs=1e-4)
            assert car.base.orientation.yaw == pytest.approx(float(row["yaw"]), abs=1e-6)
            compared += 1
    assert compared > 30  # 30 frames, with two SUMO cars or more in most
