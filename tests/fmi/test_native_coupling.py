"""The native coupling FMU: what it carries and what its binaries need.

Its behaviour against a simulator is test_coupling_fmu.py's (the coupling FMUs the tests
build for FMI 2 and 3 are these).
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from fmpy import read_model_description
from fmpy.validation import validate_fmu

from helpers.binaries import elf_needed, fmi_functions, pe_exports, pe_header, pe_imports
from vcosim.fmi.build import build_coupling_fmu
from vcosim.fmi.coupling import BANKS, INPUTS, PARAMETERS, STATUS


def test_the_native_coupling_fmu_has_the_python_ones_variables_and_needs_no_python(tmp_path):
    path = build_coupling_fmu(tmp_path / "link.fmu", ext_time=0.01)
    assert validate_fmu(str(path)) == []
    description = read_model_description(str(path))
    assert description.coSimulation.modelIdentifier == "VcosimCouplingFmi2"
    names = {v.causality: set() for v in description.modelVariables}
    for v in description.modelVariables:
        names[v.causality].add(v.name)
    assert names["input"] == {v.name for v in INPUTS}
    assert names["output"] == {o.name for o in BANKS} | {s.name for s in STATUS}
    assert names["parameter"] == {p.name for p in PARAMETERS}
    assert description.defaultExperiment.stepSize == "0.01"
    with zipfile.ZipFile(path) as fmu:
        listed = fmu.namelist()
        so = fmu.read("binaries/linux64/VcosimCouplingFmi2.so")
        dll = fmu.read("binaries/win64/VcosimCouplingFmi2.dll")
    assert not [n for n in listed if n.endswith((".py", ".pyc"))]
    assert set(elf_needed(so)) <= {"libc.so.6", "libm.so.6"}
    assert pe_header(dll) == (0x8664, 0x20B)  # x86-64, PE32+
    assert pe_exports(dll) >= fmi_functions(2)
    imports = pe_imports(dll)
    assert "WS2_32.dll" in imports  # Winsock: the wire
    for library in imports - {"WS2_32.dll"}:
        assert library == "KERNEL32.dll" or library.startswith("api-ms-win-crt-"), library


def test_fmi3_is_native_too_and_so_is_one_for_an_interface_csv(tmp_path):
    path = build_coupling_fmu(tmp_path / "link3.fmu", fmi_version=3)
    assert validate_fmu(str(path)) == []
    with zipfile.ZipFile(path) as fmu:
        assert not [n for n in fmu.namelist() if n.endswith(".py")]
        assert "binaries/x86_64-linux/VcosimCouplingFmi3.so" in fmu.namelist()
        dll = fmu.read("binaries/x86_64-windows/VcosimCouplingFmi3.dll")
    assert pe_exports(dll) >= fmi_functions(3)
    interface = Path(__file__).parents[2] / "examples" / "beamng" / "throttle.csv"
    for version, folder in ((2, "linux64"), (3, "x86_64-linux")):
        csv = build_coupling_fmu(
            tmp_path / f"csv{version}.fmu", interface=interface, fmi_version=version
        )
        assert validate_fmu(str(csv)) == []
        with zipfile.ZipFile(csv) as fmu:
            listed = fmu.namelist()
            shipped = fmu.read("resources/vcosim_interface.csv")
            so = fmu.read(f"binaries/{folder}/VcosimCouplingFmi{version}.so")
        assert not [n for n in listed if n.endswith((".py", ".pyc"))]
        assert shipped == interface.read_bytes()  # for the reader: the layout is compiled in
        assert set(elf_needed(so)) <= {"libc.so.6", "libm.so.6"}
