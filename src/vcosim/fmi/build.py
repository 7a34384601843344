"""Building the FMUs: the options checked here, the native builders (vcosim.fmi.native) after.

Both FMUs are native: their binaries need no Python where they run. The build options
(coupling step, interface CSV) travel in the FMU's resources as ``vcosim_fmu.json`` so that
``vcosim fmu`` can say what a file holds.
"""

from __future__ import annotations

from pathlib import Path

from vcosim.errors import ConfigError
from vcosim.fmi.metadata import CONFIG_FILE
from vcosim.vehicle.vehicle import resolve_params

__all__ = ["CONFIG_FILE", "NATIVE_VERSIONS", "build_coupling_fmu", "build_vehicle_fmu"]

NATIVE_VERSIONS = (2, 3)
"""FMI versions vcosim builds (both native: no Python in the host)."""


def _check(out: str | Path, fmi_version: int) -> Path:
    """The output path, once the version and the file name are ones an FMU can have."""
    problems = []
    if fmi_version not in NATIVE_VERSIONS:
        problems.append(f"--fmi {fmi_version}: 2 or 3")
    if Path(out).suffix != ".fmu":
        problems.append(f"{out}: the FMU's file name must end in .fmu")
    if problems:
        raise ConfigError(problems, "fmu")
    return Path(out)


def build_vehicle_fmu(
    out: str | Path,
    *,
    vehicle: str | Path | None = None,
    fmi_version: int = 2,
    automatic: bool = True,
    terrain: str | Path | None = None,
) -> Path:
    """Build the vehicle FMU at ``out`` (a preset name or parameter TOML for ``vehicle``).

    The parameters are resolved now and shipped whole, so the FMU does not depend on the
    TOML file later; so is the terrain (a file as ``vcosim sim --terrain`` takes; flat
    without one). ``ConfigError`` for a bad vehicle, terrain or version, before anything is
    written. The kernel is compiled into the FMU's binaries (linux64, win64), which need no
    Python.
    """
    params = resolve_params(vehicle)
    path = _check(out, fmi_version)
    from vcosim.fmi.native.vehicle import build_native_vehicle_fmu, check_terrain
    from vcosim.vehicle.terrain import load_terrain

    ground = load_terrain(terrain)
    check_terrain(ground, str(terrain))
    return build_native_vehicle_fmu(
        path, params, fmi_version=fmi_version, automatic=automatic, terrain=ground
    )


def build_coupling_fmu(
    out: str | Path,
    *,
    ext_time: float | None = None,
    interface: str | Path | None = None,
    fmi_version: int = 2,
) -> Path:
    """Build the coupling FMU at ``out``: the controller side, one message per step.

    ``ext_time`` is the simulator's T_ext and the master's communication step (default: the
    interface CSV's, else 5 ms); the CSV is checked now, its layout compiled into the FMU
    and the file shipped in it.
    """
    from vcosim.tight.config import ControllerConfig

    explicit = {"step": ext_time} if ext_time is not None else {}
    config = (
        ControllerConfig.for_interface(interface, **explicit)
        if interface is not None
        else ControllerConfig(**explicit)
    )
    path = _check(out, fmi_version)
    from vcosim.fmi.native.coupling import build_native_coupling_fmu

    return build_native_coupling_fmu(path, config=config, fmi_version=fmi_version)
