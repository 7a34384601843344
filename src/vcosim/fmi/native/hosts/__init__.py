"""Plain C masters for the native FMUs: dlopen, the FMI C API, no Python in their process.

``host2.c`` (FMI 2) and ``host3.c`` (FMI 3) step the vehicle FMU at 1 ms with throttle 0.5,
print its speed to the last bit and the physics steps per second, then instantiate and free
it a number of times and print the resident memory before and after. The tests check the
speed against the in-process vehicle; ``vcosim bench fmi`` times them.
"""

from __future__ import annotations

import subprocess
import tempfile
import zipfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from xml.etree import ElementTree

from vcosim.errors import VcosimError
from vcosim.fmi.native.toolchain import zig_cc


class HostError(VcosimError):
    """A C master failed: an FMI call did not return OK, or the FMU did not load."""


@dataclass(frozen=True)
class HostRun:
    """What a C master printed."""

    speed: float
    physics_steps_per_s: float
    resident_kb: tuple[int, int]
    physics_steps_per_cpu_s: float = 0.0
    """Per second of the stepping thread's CPU time: the cost, much less moved by load."""


def build_host(version: int, out: Path) -> Path:
    """Compile the C master for FMI ``version`` (2 or 3) at ``out`` with zig's compiler."""
    from vcosim.fmi.native.vehicle import fmi_headers

    source = Path(str(resources.files("vcosim.fmi.native.hosts") / f"host{version}.c"))
    zig_cc("x86_64-linux", ["-O2", f"-I{fmi_headers()}", "-o", str(out), str(source)])
    return out


def run_host(
    host: Path, fmu: Path, seconds: float, cycles: int = 0, env: dict[str, str] | None = None
) -> HostRun:
    """Run ``host`` on the Linux binary of ``fmu`` in an empty environment (or ``env``)."""
    with tempfile.TemporaryDirectory(prefix="vcosim-host-") as scratch:
        with zipfile.ZipFile(fmu) as archive:
            archive.extractall(scratch)
            root = ElementTree.fromstring(archive.read("modelDescription.xml"))
        version = int(root.get("fmiVersion", "2")[0])
        identifier = root.find("CoSimulation").get("modelIdentifier")  # type: ignore[union-attr]
        token = root.get("guid" if version == 2 else "instantiationToken", "")
        refs = {v.get("name"): v.get("valueReference") for v in root.find("ModelVariables") or []}
        platform = "linux64" if version == 2 else "x86_64-linux"
        library = Path(scratch) / "binaries" / platform / f"{identifier}.so"
        args = [str(host), str(library), token, str(refs["throttle"]), str(refs["groundspeed"])]
        args += [repr(float(seconds)), str(cycles)]
        done = subprocess.run(args, env=env or {}, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise HostError(f"{host.name} failed ({done.returncode}): {done.stderr[-2000:]}")
    said = dict(line.split(" ", 1) for line in done.stdout.splitlines())
    before, after = (int(v) for v in said["resident_kb"].split())
    return HostRun(
        float.fromhex(said["speed"]),
        float(said["physics_steps_per_s"]),
        (before, after),
        float(said["physics_steps_per_cpu_s"]),
    )
