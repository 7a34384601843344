"""The native vehicle FMU: the compiled kernel behind the FMI C API, no Python in the host.

Bit for bit the in-process ``Vehicle`` over every preset and both gearboxes, under FMPy and
under a plain C master (``native/host2.c``, run with an empty environment); its binaries
need only the C library and libm; the Windows DLL is PE32+ x86-64.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import numpy as np
import pytest
from fmpy import extract, instantiate_fmu, read_model_description
from fmpy.fmi1 import FMICallException

from helpers.binaries import (
    elf_imports,
    elf_needed,
    fmi_functions,
    pe_exports,
    pe_header,
    pe_imports,
)
from vcosim.config import with_number_problems
from vcosim.errors import ConfigError
from vcosim.fmi.build import build_vehicle_fmu
from vcosim.fmi.metadata import INPUTS, OUTPUTS, PARAMETERS
from vcosim.fmi.native.hosts import build_host, run_host
from vcosim.fmi.native.vehicle import BODY_FIELDS, BRAKE_FIELDS, DIRECT_FIELDS
from vcosim.fmi.vehicle import parameter_value
from vcosim.vehicle import Vehicle
from vcosim.vehicle import layout as L
from vcosim.vehicle.params import PACKED_FIELDS, PRESET_DIR, VehicleParams
from vcosim.vehicle.terrain import Terrain, load_terrain

HERE = Path(__file__).parent
HILLS = HERE.parents[1] / "examples" / "terrain" / "hills.toml"
ROAD = (
    HERE.parents[1] / "examples" / "scenarios" / "public" / "esmini" / "xodr" / "two_plus_one.xodr"
)
PRESETS = sorted(p.stem for p in PRESET_DIR.glob("*.toml"))
CHANGES = {"tyres.friction": 0.8, "body.chassis_mass": 1500.0, "wheels.brake_torque_front": 2500.0}


@pytest.fixture(scope="module")
def native_fmus(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, int], Path]:
    """The vehicle FMU of every preset, FMI 2 and 3 (automatic gearbox built in)."""
    folder = tmp_path_factory.mktemp("native")
    return {
        (name, version): build_vehicle_fmu(
            folder / f"{name}-{version}.fmu", vehicle=name, fmi_version=version
        )
        for name in PRESETS
        for version in (2, 3)
    }


VERSIONS = pytest.mark.parametrize("version", [2, 3], ids=["fmi2", "fmi3"])


class Car:
    """An FMI 2 or 3 instance under FMPy, variables by name."""

    def __init__(self, path: Path, unzip: Path) -> None:
        description = read_model_description(str(path))
        self.version = int(description.fmiVersion[0])
        self.ref = {v.name: v.valueReference for v in description.modelVariables}
        self.kind = {v.name: v.type for v in description.modelVariables}
        self.fmu = instantiate_fmu(extract(str(path), unzipdir=str(unzip)), description)
        self.time = 0.0

    def start(self, **parameters: float) -> Car:
        if self.version == 2:
            self.fmu.setupExperiment(startTime=0.0)
        self.fmu.enterInitializationMode()
        self.set(**parameters)
        self.fmu.exitInitializationMode()
        return self

    def set(self, **values: float) -> None:
        for name, value in values.items():
            kind = self.kind[name]
            setter = getattr(self.fmu, f"set{kind}")
            setter([self.ref[name]], [bool(value) if kind == "Boolean" else value])

    def outputs(self) -> np.ndarray:
        getter = self.fmu.getReal if self.version == 2 else self.fmu.getFloat64
        return np.array(getter([self.ref[o.name] for o in OUTPUTS]))

    def step(self, size: float) -> None:
        self.fmu.doStep(self.time, size)
        self.time += size


def reference(params: VehicleParams, automatic: bool, terrain: Terrain | None = None) -> Vehicle:
    """The in-process vehicle as the FMU starts it: engine idling, its inputs' starts held."""
    vehicle = Vehicle(params, terrain, engine_running=True)
    vehicle.input_array[L.U_AUTOMATIC] = float(automatic)
    for i in INPUTS:
        vehicle.input_array[i.slot] = 1.0 if i.name == "gear" else i.start
    return vehicle


def drive(car: Car, vehicle: Vehicle) -> None:
    """Pull away, swerve and brake at changing communication steps; equal at every step."""
    expected = vehicle.outputs[[o.index for o in OUTPUTS]]
    assert np.array_equal(car.outputs(), expected)
    for k in range(600):
        inputs = {
            "throttle": 0.6 if k < 400 else 0.0,
            "steering": 0.4 * np.sin(k / 50.0),
            "brake": 0.5 if k >= 400 else 0.0,
        }
        car.set(**inputs)
        vehicle.set_inputs(**inputs)
        size = (0.001, 0.005, 0.0005)[k % 3]
        car.step(size)
        vehicle.run(round(size / vehicle.dt))
        assert np.array_equal(car.outputs(), vehicle.outputs[[o.index for o in OUTPUTS]]), k
    assert vehicle.signal("groundspeed") != 0.0  # it drove


@VERSIONS
@pytest.mark.parametrize("automatic", [True, False], ids=["automatic", "manual"])
@pytest.mark.parametrize("preset", PRESETS)
def test_every_preset_drives_bit_for_bit_as_the_in_process_vehicle(
    native_fmus, preset, automatic, version, tmp_path
):
    car = Car(native_fmus[preset, version], tmp_path).start(automatic=automatic)
    drive(car, reference(VehicleParams.preset(preset), automatic))
    car.fmu.terminate()
    car.fmu.freeInstance()


@VERSIONS
def test_parameters_a_master_sets_give_the_vehicle_those_parameters_make(
    native_fmus, version, tmp_path
):
    car = Car(native_fmus["nightrider", version], tmp_path).start(**CHANGES)
    drive(car, reference(VehicleParams.preset("nightrider").with_changes(**CHANGES), True))
    car.fmu.freeInstance()


@pytest.mark.parametrize(
    ("ground", "version"),
    [(HILLS, 2), (HILLS, 3), (ROAD, 2)],
    ids=["hills-fmi2", "hills-fmi3", "xodr-fmi2"],
)
def test_a_vehicle_fmu_built_with_a_terrain_drives_on_it_as_the_in_process_vehicle(
    ground, version, tmp_path
):
    """examples/terrain/hills.toml (hills, a road, grip off it) and an OpenDRIVE road on flat
    ground (its own friction): placed, settled and driven bit for bit as Vehicle(params,
    terrain). On the hills the masses are fixed (they place the car); on level ground a
    master may set them."""
    path = build_vehicle_fmu(tmp_path / "ground.fmu", fmi_version=version, terrain=ground)
    terrain = load_terrain(ground)
    masses = {"body.chassis_mass": 1500.0}
    changes = {"tyres.friction": 0.9, **({} if ground == HILLS else masses)}
    vehicle = reference(VehicleParams.preset("nightrider").with_changes(**changes), True, terrain)
    if ground == HILLS:
        assert vehicle.state[L.X_POS + 2] > 1.0  # on a hill: this is not the flat ground
    car = Car(path, tmp_path / "a").start(**changes)
    drive(car, vehicle)
    car.fmu.freeInstance()
    if ground == HILLS:
        refused = Car(path, tmp_path / "b")
        with pytest.raises(FMICallException, match="ExitInitializationMode failed"):
            refused.start(**masses)
        refused.fmu.freeInstance()


def test_a_terrain_too_large_for_an_fmu_is_refused_before_anything_is_built(tmp_path):
    big = tmp_path / "big.toml"
    picture = tmp_path / "big.png"
    from PIL import Image

    Image.new("RGB", (1100, 1000)).save(picture)
    big.write_text('height_map = "big.png"\n')
    with pytest.raises(ConfigError, match=r"1000 x 1100 samples; an FMU carries at most"):
        build_vehicle_fmu(tmp_path / "big.fmu", terrain=big)
    assert not (tmp_path / "big.fmu").exists()


@pytest.mark.parametrize("parameter", [p.key for p in PARAMETERS])
def test_each_parameter_changes_exactly_the_packed_fields_the_c_layer_writes(parameter):
    base = VehicleParams.preset("sedan")  # brake balance and inertias given: the odd cases
    current = parameter_value(base, parameter)
    value = 0.9 * current if current > 0.0 else 0.1  # within every parameter's range
    changed = base.with_changes(**{parameter: value}).pack()[0]
    moved = {f for f in PACKED_FIELDS if changed[f] != base.pack()[0][f]}
    if parameter in DIRECT_FIELDS:
        written = {DIRECT_FIELDS[parameter]}
    elif parameter.startswith("body."):
        written = set(BODY_FIELDS)
    else:
        written = set(BRAKE_FIELDS)
    assert moved and moved <= written


@VERSIONS
def test_a_refused_parameter_fails_leaving_initialization_with_pydantics_words(
    native_fmus, version, tmp_path, capfd
):
    """Read from FMPy's own logger (a logger of the test's would outlive its callback: FMPy's
    native proxy keeps the last one in a global and calls it for every FMU after)."""
    car = Car(native_fmus["nightrider", version], tmp_path)
    if version == 2:
        car.fmu.setupExperiment(startTime=0.0)
    car.fmu.enterInitializationMode()
    car.set(**{"engine.initial_fuel": 2.0, "body.chassis_mass": 0.0})
    with pytest.raises(FMICallException, match=f"fmi{version}ExitInitializationMode failed"):
        car.fmu.exitInitializationMode()
    said = capfd.readouterr().out.splitlines()
    assert said[-1] == (
        "[ERROR] parameters refused: body.chassis_mass: Input should be greater than 0; "
        "engine.initial_fuel: Input should be less than or equal to 1"
    )
    with pytest.raises(FMICallException, match=f"fmi{version}DoStep failed"):
        car.step(0.001)
    car.fmu.freeInstance()


@VERSIONS
@pytest.mark.parametrize(
    "changes",
    [
        {"body.engine_mass": 5e-324},  # issue 45, K: the FMU took it, the CLI refuses it
        {"body.chassis_mass": 1e13, "suspension.damper": -1e-13},
    ],
    ids=["subnormal", "huge-and-tiny"],
)
def test_the_fmu_refuses_the_numbers_a_parameter_file_may_not_give(
    native_fmus, version, changes, tmp_path, capfd
):
    """The same problems, in the same words, as the parameter file the CLI reads."""
    data: dict[str, dict[str, float]] = {}
    for key, value in changes.items():
        section, name = key.split(".")
        data.setdefault(section, {})[name] = value
    with pytest.raises(ConfigError) as refused:
        with_number_problems(data, "file", VehicleParams.from_dict)
    car = Car(native_fmus["nightrider", version], tmp_path)
    if version == 2:
        car.fmu.setupExperiment(startTime=0.0)
    car.fmu.enterInitializationMode()
    car.set(**changes)
    with pytest.raises(FMICallException, match=f"fmi{version}ExitInitializationMode failed"):
        car.fmu.exitInitializationMode()
    said = capfd.readouterr().out.splitlines()
    assert said[-1] == "[ERROR] parameters refused: " + "; ".join(refused.value.problems)
    car.fmu.freeInstance()


@VERSIONS
def test_the_state_serializes_and_a_fresh_instance_replays_from_it(native_fmus, version, tmp_path):
    path = native_fmus["nightrider", version]
    first = Car(path, tmp_path / "a").start()
    first.set(throttle=0.7)
    for _ in range(200):
        first.step(0.005)
    if version == 2:
        serialized = first.fmu.serializeFMUstate(first.fmu.getFMUstate())
    else:
        serialized = first.fmu.serializeFMUState(first.fmu.getFMUState())
    for _ in range(100):
        first.step(0.005)
    second = Car(path, tmp_path / "b").start()
    if version == 2:
        second.fmu.setFMUstate(second.fmu.deSerializeFMUstate(serialized))
    else:
        second.fmu.setFMUState(second.fmu.deserializeFMUState(serialized))
    for _ in range(100):
        second.step(0.005)
    assert np.array_equal(second.outputs(), first.outputs())
    call = "fmi2DeSerializeFMUstate" if version == 2 else "fmi3DeserializeFMUState"
    with pytest.raises(FMICallException, match=f"{call} failed"):
        getattr(second.fmu, call.replace("fmi2D", "d").replace("fmi3D", "d"))(serialized[:-1])
    for car in (first, second):
        car.fmu.freeInstance()


@VERSIONS
def test_the_fmu_carries_no_python_and_its_binaries_need_only_libc_and_libm(native_fmus, version):
    linux, windows = ("linux64", "win64") if version == 2 else ("x86_64-linux", "x86_64-windows")
    with zipfile.ZipFile(native_fmus["nightrider", version]) as fmu:
        names = fmu.namelist()
        so = fmu.read(f"binaries/{linux}/VcosimVehicleFmi{version}.so")
        dll = fmu.read(f"binaries/{windows}/VcosimVehicleFmi{version}.dll")
    assert not [n for n in names if n.endswith((".py", ".pyc"))]
    assert not [n for n in names if "python" in n.lower()]
    needed = elf_needed(so)
    assert set(needed) <= {"libc.so.6", "libm.so.6"}, needed
    # the kernel's sin, cos and log are the C library's, as the in-process kernel's are
    assert {"sincos", "cos", "log", "atan2"} <= elf_imports(so)
    machine, magic = pe_header(dll)
    assert (machine, magic) == (0x8664, 0x20B)  # x86-64, PE32+
    assert pe_exports(dll) >= fmi_functions(version)
    for library in pe_imports(dll):  # Windows itself and its Universal C Runtime only
        assert library == "KERNEL32.dll" or library.startswith("api-ms-win-crt-"), library


@VERSIONS
@pytest.mark.parametrize("kernel", ["best", "x86-64"])
def test_a_plain_c_master_with_no_python_gets_the_in_process_speed_to_the_last_bit(
    native_fmus, version, kernel, tmp_path
):
    """The C master of vcosim.fmi.native.hosts in an empty environment: 10 s at 1 ms steps
    with throttle 0.5, then 200 instantiate/step/free cycles with flat resident memory. With
    the kernel the CPU runs best (x86-64-v3 here), and with the generic one it falls back to."""
    host = build_host(version, tmp_path / f"host{version}")
    env = {} if kernel == "best" else {"VCOSIM_FMU_KERNEL": kernel}
    fmu = native_fmus["nightrider", version]
    said = run_host(host, fmu, seconds=10.0, cycles=200, env=env)
    vehicle = reference(VehicleParams.preset("nightrider"), True)
    vehicle.run(20000, throttle=0.5)
    assert said.speed == vehicle.signal("groundspeed")
    before, after = said.resident_kb
    assert after - before < 10_000, said  # kB: 200 cycles leak nothing worth the name
    print(f"C host FMI {version}, {kernel}: {said.physics_steps_per_s:.0f} physics steps/s")


def test_elf_needed_reads_what_the_dynamic_section_names():
    assert re.match(r"lib", elf_needed(Path("/bin/ls").read_bytes())[0])
