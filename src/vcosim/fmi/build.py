"""Building the FMUs: a two-line model script, the build options, pythonfmu(3)'s builder.

The script only names a class that mixes vcosim's slave into the library's; everything else
(the model, its variables) comes from the installed ``vcosim`` when the FMU is instantiated.
The build options (vehicle parameters, gearbox, coupling step, interface CSV) travel in the
FMU's resources as ``vcosim_fmu.json``.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from vcosim.errors import ConfigError
from vcosim.fmi.slave import CONFIG_FILE
from vcosim.vehicle.vehicle import resolve_params

_SCRIPT = """\
from {library} import {base}

from vcosim.fmi.{module} import {mixin}

_namespace = globals()  # see vcosim.fmi.slave._PINNED


class {name}({mixin}, {base}):
    fmi_version = {version}
"""


def _build(
    out: Path,
    *,
    name: str,
    module: str,
    mixin: str,
    version: int,
    config: dict[str, Any],
    extra_files: tuple[Path, ...] = (),
    options: dict[str, bool] | None = None,
) -> Path:
    """Write the script and options into a scratch folder, build there, move to ``out``."""
    if version not in (2, 3):
        raise ConfigError([f"--fmi {version}: 2 or 3"], "fmu")
    if out.suffix != ".fmu":
        raise ConfigError([f"{out}: the FMU's file name must end in .fmu"], "fmu")
    if version == 2:
        from pythonfmu import FmuBuilder
    else:
        from pythonfmu3 import FmuBuilder
    library, base = ("pythonfmu", "Fmi2Slave") if version == 2 else ("pythonfmu3", "Fmi3Slave")
    source = _SCRIPT.format(
        library=library, base=base, module=module, mixin=mixin, name=name, version=version
    )
    with tempfile.TemporaryDirectory(prefix="vcosim-fmu-") as scratch:
        folder = Path(scratch)
        script = folder / f"{name}.py"
        script.write_text(source)
        (folder / CONFIG_FILE).write_text(json.dumps(config, indent=1))
        files = [folder / CONFIG_FILE, *extra_files]
        flags = {
            ("canGetAndSetFMUstate" if version == 2 else "canGetAndSetFMUState"): value
            for value in [(options or {}).get("state", False)]
        }
        built = Path(
            FmuBuilder.build_FMU(script, dest=folder / "out", project_files=files, **flags)
        )
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(built), out)
    return out


NATIVE_VERSIONS = (2, 3)
"""FMI versions whose vehicle FMU is native (vcosim.fmi.native): no Python in the host."""


def build_vehicle_fmu(
    out: str | Path,
    *,
    vehicle: str | Path | None = None,
    fmi_version: int = 2,
    automatic: bool = True,
    native: bool = True,
) -> Path:
    """Build the vehicle FMU at ``out`` (a preset name or parameter TOML for ``vehicle``).

    The parameters are resolved now and shipped whole, so the FMU does not depend on the
    TOML file later. ``ConfigError`` for a bad vehicle or version, before anything is written.
    ``native``: the kernel compiled into the FMU's binaries (linux64, win64), which need no
    Python; else (and for FMI versions not yet native) PythonFMU's binary over the host's
    Python with vcosim.
    """
    params = resolve_params(vehicle)
    if fmi_version not in (2, 3):
        raise ConfigError([f"--fmi {fmi_version}: 2 or 3"], "fmu")
    if Path(out).suffix != ".fmu":
        raise ConfigError([f"{out}: the FMU's file name must end in .fmu"], "fmu")
    if native and fmi_version in NATIVE_VERSIONS:
        from vcosim.fmi.native.vehicle import build_native_vehicle_fmu

        return build_native_vehicle_fmu(
            Path(out), params, fmi_version=fmi_version, automatic=automatic
        )
    return _build(
        Path(out),
        name=f"VcosimVehicleFmi{fmi_version}",
        module="vehicle",
        mixin="VehicleSlave",
        version=fmi_version,
        config={"params": params.model_dump(mode="json"), "automatic": automatic},
        options={"state": True},
    )


def build_coupling_fmu(
    out: str | Path,
    *,
    ext_time: float | None = None,
    interface: str | Path | None = None,
    fmi_version: int = 2,
    native: bool = True,
) -> Path:
    """Build the coupling FMU at ``out``: the controller side, one message per step.

    ``ext_time`` is the simulator's T_ext and the master's communication step (default: the
    interface CSV's, else 5 ms); the CSV is checked now and shipped in the FMU. ``native``:
    the FMU of the fixed layout is C (``vcosim.fmi.native.coupling``), needing no Python; an
    interface CSV still takes PythonFMU's.
    """
    from vcosim.fmi.coupling import INTERFACE_FILE
    from vcosim.tight.config import ControllerConfig

    explicit = {"step": ext_time} if ext_time is not None else {}
    config = (
        ControllerConfig.for_interface(interface, **explicit)
        if interface is not None
        else ControllerConfig(**explicit)
    )
    if native and fmi_version in (2, 3) and interface is None:
        if Path(out).suffix != ".fmu":
            raise ConfigError([f"{out}: the FMU's file name must end in .fmu"], "fmu")
        from vcosim.fmi.native.coupling import build_native_coupling_fmu

        return build_native_coupling_fmu(Path(out), step=config.step, fmi_version=fmi_version)
    with tempfile.TemporaryDirectory(prefix="vcosim-csv-") as scratch:
        extra: tuple[Path, ...] = ()
        if interface is not None:
            extra = (Path(scratch) / INTERFACE_FILE,)
            shutil.copyfile(interface, extra[0])
        return _build(
            Path(out),
            name=f"VcosimCouplingFmi{fmi_version}",
            module="coupling",
            mixin="CouplingSlave",
            version=fmi_version,
            config={"step": config.step, "interface": INTERFACE_FILE if interface else None},
            extra_files=extra,
        )
