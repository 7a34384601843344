"""The FMUs under test, built once per session, and a thin fmpy master for FMI 2 and 3."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fmpy import extract, instantiate_fmu, read_model_description

from helpers.tiny_models import build_pi
from vcosim.fmi.build import build_coupling_fmu, build_vehicle_fmu

# fmpy's accessor suffix for each variable type of either version.
_ACCESSOR = {
    "Real": "Real",
    "Integer": "Integer",
    "Boolean": "Boolean",
    "String": "String",
    "Float64": "Float64",
    "Int32": "Int32",
}


class Instance:
    """One co-simulation instance under fmpy: variables by name, FMI 2 or 3 alike."""

    def __init__(self, path: Path, unzip: Path, name: str = "instance") -> None:
        description = read_model_description(str(path))
        self.version = int(description.fmiVersion[0])
        self.variables = {v.name: v for v in description.modelVariables}
        self.description = description
        self.fmu: Any = instantiate_fmu(
            extract(str(path), unzipdir=str(unzip)), description, fmi_type="CoSimulation"
        )
        self.time = 0.0

    def start(self, **parameters: object) -> Instance:
        if self.version == 2:
            self.fmu.setupExperiment(startTime=0.0)
        self.fmu.enterInitializationMode()
        self.set(**parameters)
        self.fmu.exitInitializationMode()
        return self

    def _accessor(self, verb: str, name: str) -> tuple[Any, int]:
        variable = self.variables[name]
        return getattr(self.fmu, verb + _ACCESSOR[variable.type]), variable.valueReference

    def set(self, **values: object) -> None:
        for name, value in values.items():
            setter, ref = self._accessor("set", name)
            setter([ref], [value])

    def get(self, *names: str) -> list[Any]:
        out = []
        for name in names:
            getter, ref = self._accessor("get", name)
            out.append(getter([ref])[0])
        return out

    def step(self, size: float) -> None:
        self.fmu.doStep(self.time, size)
        self.time += size

    def state(self) -> Any:
        return self.fmu.getFMUstate() if self.version == 2 else self.fmu.getFMUState()

    def restore(self, state: Any, time: float) -> None:
        (self.fmu.setFMUstate if self.version == 2 else self.fmu.setFMUState)(state)
        self.time = time

    def close(self) -> None:
        """Terminate and free (once: a second free would crash the process)."""
        if self.fmu is not None:
            self.fmu.terminate()
            self.fmu.freeInstance()
            self.fmu = None


@pytest.fixture(scope="session")
def fmu_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fmi")


@pytest.fixture(scope="session")
def vehicle_fmus(fmu_dir: Path) -> dict[int, Path]:
    """The vehicle FMU for FMI 2 and FMI 3 (default vehicle, automatic gearbox)."""
    return {v: build_vehicle_fmu(fmu_dir / f"vehicle{v}.fmu", fmi_version=v) for v in (2, 3)}


@pytest.fixture(scope="session")
def coupling_fmus(fmu_dir: Path) -> dict[int, Path]:
    """The coupling FMU for FMI 2 and FMI 3 (ext_time 5 ms, the fixed layout)."""
    return {
        v: build_coupling_fmu(fmu_dir / f"coupling{v}.fmu", ext_time=0.005, fmi_version=v)
        for v in (2, 3)
    }


@pytest.fixture(scope="session")
def coupling_fmu(coupling_fmus: dict[int, Path]) -> Path:
    return coupling_fmus[2]


@pytest.fixture(scope="session")
def pi_fmu(fmu_dir: Path) -> Path:
    """The PI speed controller FMU of the controller tests (throttle/brake from groundspeed)."""
    return build_pi(fmu_dir / "pi.fmu", "VcosimFmiTestPi")


@pytest.fixture
def open_fmu(tmp_path: Path):
    """Instantiate FMUs for a test; each is terminated and freed at its end."""
    opened: list[Instance] = []

    def make(path: Path) -> Instance:
        instance = Instance(path, tmp_path / f"unzip{len(opened)}")
        opened.append(instance)
        return instance

    yield make
    for instance in opened:
        instance.close()
