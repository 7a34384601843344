"""An SSP of the closed loop (vehicle FMU + PI FMU), run by FMPy's SSP support."""

from __future__ import annotations

import zipfile

import numpy as np
import pytest
from fmpy.ssp.simulation import simulate_ssp

from vcosim.errors import ConfigError
from vcosim.fmi.ssp import write_ssp

LOOP = [
    ("vehicle.groundspeed", "pi.groundspeed"),
    ("pi.throttle", "vehicle.throttle"),
    ("pi.brake", "vehicle.brake"),
]


def test_fmpy_runs_the_closed_loop_package_at_15_m_s(vehicle_fmus, pi_fmu, tmp_path):
    package = write_ssp(
        tmp_path / "cruise.ssp",
        {"vehicle": vehicle_fmus[2], "pi": pi_fmu},
        LOOP,
        name="cruise",
        stop_time=30.0,
    )
    with zipfile.ZipFile(package) as ssp:
        assert set(ssp.namelist()) == {
            "SystemStructure.ssd",
            "resources/vehicle.fmu",
            "resources/pi.fmu",
        }
    result = simulate_ssp(str(package), stop_time=30.0, step_size=0.005)
    speed = result["vehicle.groundspeed"][result["time"] >= 20.0]
    assert len(speed) > 100
    assert np.all(np.abs(speed - 15.0) < 0.5), (speed.min(), speed.max())


def test_a_connection_the_fmus_do_not_have_is_refused_before_writing(vehicle_fmus, tmp_path):
    out = tmp_path / "bad.ssp"
    with pytest.raises(ConfigError) as refused:
        write_ssp(
            out,
            {"vehicle": vehicle_fmus[2]},
            [("vehicle.throttle", "vehicle.groundspeed"), ("vehicle.wiper", "vehicle.brake")],
        )
    assert refused.value.problems == [
        "vehicle.throttle: is an input, not an output",
        "vehicle.groundspeed: is an output, not an input",
        "vehicle.wiper: no such component variable",
    ]
    assert not out.exists()
