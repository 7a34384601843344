"""The native vehicle FMU: its variables, generated model header, model description, archive.

(Past 400 lines: the FMU's variables, its generated C header and its model description come from
one table of value references; split, a reference would be numbered apart from where it is
written.)

The FMU carries the kernel compiled for each platform (:mod:`vcosim.fmi.native.kernel`) and
the C layer of ``c/`` built around it with a header generated here: the built-in vehicle's
packed parameters, its state before settling, and the variables (value references, kinds,
starts, ranges). Everything the Python FMU (:mod:`vcosim.fmi.vehicle`) resolves when it is
instantiated is resolved here at build time, so the binary needs no file and no Python.

Value references, the same in FMI 2 and 3: 0 the time (FMI 3's independent variable only),
then the parameters, the two flags (``automatic``, ``start_engine_idling``), the inputs and
the outputs, each in the order of :mod:`vcosim.fmi.metadata`.
"""

from __future__ import annotations

import hashlib
import tempfile
import uuid
import zipfile
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any
from xml.etree.ElementTree import Element, SubElement, indent, tostring

import numpy as np
from annotated_types import Ge, Gt, Le

from vcosim.config import LARGEST_NUMBER, SMALLEST_NUMBER, TOO_LARGE, TOO_SMALL
from vcosim.errors import ConfigError
from vcosim.fmi.metadata import INPUTS, OUTPUTS, PARAMETERS, UNIT_DEFINITIONS, Variable
from vcosim.fmi.native.kernel import KernelObjects
from vcosim.fmi.native.toolchain import SUFFIX, link_library
from vcosim.fmi.vehicle import DESCRIPTION, STEP_TOLERANCE, parameter_value
from vcosim.vehicle import inputs as vehicle_inputs
from vcosim.vehicle import layout as L
from vcosim.vehicle.model import N_SCRATCH, initial_state
from vcosim.vehicle.params import DT, PACKED_FIELDS, VehicleParams
from vcosim.vehicle.terrain import Terrain
from vcosim.vehicle.vehicle import SETTLE_STEPS, Vehicle, VehicleView

PLATFORMS = ("x86_64-linux", "x86_64-windows")
FMI2_FOLDER = {"x86_64-linux": "linux64", "x86_64-windows": "win64"}
C_SOURCES = ("vehicle.c", "stubs.c")
FMI_SOURCES = {2: ("fmi2.c",), 3: ("fmi3.c", "fmi3_absent.c")}
"""The FMI layer of each version (FMI 3's absent features are shared with the coupling)."""

DIRECT_FIELDS = {
    "tyres.friction": "mu",
    "wheels.rolling_resistance": "f_roll",
    "wheels.steering_rate": "steer_rate",
    "resistance.a2": "a2",
    "driveline.final_drive": "final_drive",
    "driveline.clutch_capacity": "clutch_capacity",
    "engine.initial_fuel": "initial_fuel",
    "suspension.spring": "k_spring",
    "suspension.damper": "c_damper",
}
"""Parameters that are one packed field as they are (``VehicleParams.pack``)."""
BODY_FIELDS = ("mass", "a", "b", "Ixx", "Iyy", "Izz")
"""What ``params.body_properties`` gives, from the masses (``body.*_mass``)."""
BRAKE_FIELDS = ("brake_f", "brake_r")
"""What ``params.brake_torques`` gives, from ``wheels.brake_torque_*``."""
SPECIAL = {
    "body.chassis_mass": "CHASSIS_MASS",
    "body.engine_mass": "ENGINE_MASS",
    "wheels.brake_torque_front": "BRAKE_FRONT",
    "wheels.brake_torque_rear": "BRAKE_REAR",
}
"""Parameters the C layer passes through the compiled helpers, by their C names."""
FLAGS = (
    Variable(
        "automatic",
        "boolean",
        description="automatic gearbox (gear is the selector; a torque converter pulls away)",
    ),
    Variable(
        "start_engine_idling",
        "boolean",
        description="start with the engine idling (else off: crank it with ignition = 3)",
    ),
)


@dataclass(frozen=True)
class Bounds:
    """A parameter's range as ``VehicleParams`` checks it."""

    low: float
    high: float
    open_low: bool


def bounds(key: str) -> Bounds:
    """The range of a dotted parameter key, from the pydantic field's constraints."""
    section, name = key.split(".")
    model: Any = VehicleParams.model_fields[section].annotation
    low, high, open_low = -np.inf, np.inf, False
    for constraint in model.model_fields[name].metadata:
        if isinstance(constraint, Gt):
            low, open_low = float(constraint.gt), True  # type: ignore[arg-type]
        elif isinstance(constraint, Ge):
            low = float(constraint.ge)  # type: ignore[arg-type]
        elif isinstance(constraint, Le):
            high = float(constraint.le)  # type: ignore[arg-type]
    return Bounds(low, high, open_low)


# -- value references ----------------------------------------------------------------------
VR_TIME = 0
VR_PARAMETERS = 1
VR_FLAGS = VR_PARAMETERS + len(PARAMETERS)
VR_INPUTS = VR_FLAGS + len(FLAGS)
VR_OUTPUTS = VR_INPUTS + len(INPUTS)
VR_END = VR_OUTPUTS + len(OUTPUTS)


def _c(value: float) -> str:
    """A double as a C literal that reads back to the same bits."""
    return float(value).hex()


def c_array(kind: str, name: str, values: Iterable[Any], quote: bool = False) -> str:
    """A static const C array of ``values`` (quoted as strings with ``quote``), six a line."""
    items = [f'"{v}"' if quote else str(v) for v in values]
    rows = [", ".join(items[i : i + 6]) for i in range(0, len(items), 6)]
    body = ",\n    ".join(rows) if rows else "0"
    return f"static const {kind} {name}[] = {{\n    {body}\n}};\n"


def placed_state(params: VehicleParams, terrain: Terrain) -> np.ndarray:
    """The state a ``Vehicle`` settles from: released at rest, on the terrain at the origin."""
    packed = params.pack()
    state = initial_state(packed)
    view = VehicleView(params, terrain, state, vehicle_inputs.INITIAL.copy(), np.zeros(L.N_OUTPUTS))
    # The Vehicle's own placing (a private method): the FMU must start as a Vehicle does.
    ground, quat = view._pose_on_terrain(0.0, 0.0, 0.0)
    state[L.X_POS + 2] += ground
    state[L.X_QUAT : L.X_QUAT + 4] = quat
    return state


MAX_TERRAIN_SAMPLES = 1024 * 1024
"""The most samples of a terrain grid an FMU carries (its heights and friction factors are
compiled in as C arrays: 16 MB of them at this size)."""


def check_terrain(terrain: Terrain, source: str) -> None:
    """ConfigError if the grid is too large to compile into an FMU."""
    samples = terrain.height.size
    if samples > MAX_TERRAIN_SAMPLES:
        rows, cols = terrain.height.shape
        raise ConfigError(
            [
                f"its grid has {rows} x {cols} samples; an FMU carries at most "
                f"{MAX_TERRAIN_SAMPLES} (1024 x 1024): use smaller pictures, or a coarser "
                "road_cell for a road"
            ],
            f"terrain {source}",
        )


def model_header(
    params: VehicleParams, automatic: bool, guid: str, terrain: Terrain | None = None
) -> str:
    """``vcosim_model.h``: the built-in vehicle and the variables, for the C layer."""
    terrain = terrain if terrain is not None else Terrain.flat()
    # level at height 0 everywhere (a road on flat ground too): the car's pose on it does not
    # depend on where its wheels are, so a master may set the masses
    flat = bool(np.all(terrain.height == 0.0))
    packed = params.pack().view(np.float64)
    field = {name: i for i, name in enumerate(PACKED_FIELDS)}
    starts = [
        1.0 if automatic and i.name == "gear" else 0.0 if i.name == "gear" else i.start
        for i in INPUTS
    ]
    kinds = {"real": "VC_REAL", "integer": "VC_INTEGER", "boolean": "VC_BOOLEAN"}
    ranges = [bounds(p.key) for p in PARAMETERS]
    body = params.body
    share = params.brakes.front_share
    lines = [
        "/* Generated by vcosim.fmi.native.vehicle for one FMU build: do not edit. */",
        "#ifndef VCOSIM_MODEL_H",
        "#define VCOSIM_MODEL_H",
        f'#define VC_GUID "{guid}"',
        f"#define VC_N_STATES {L.N_STATES}",
        f"#define VC_N_INPUTS {L.N_INPUTS}",
        f"#define VC_N_OUTPUTS {L.N_OUTPUTS}",
        f"#define VC_N_SCRATCH {N_SCRATCH}",
        f"#define VC_N_PACKED {len(PACKED_FIELDS)}",
        f"#define VC_N_PARAMETERS {len(PARAMETERS)}",
        f"#define VC_N_FMU_INPUTS {len(INPUTS)}",
        f"#define VC_SETTLE_STEPS {SETTLE_STEPS}",
        f"#define VC_DT {_c(DT)}",
        f"#define VC_STEP_TOLERANCE {_c(STEP_TOLERANCE)}",
        f"#define VC_LARGEST_NUMBER {_c(LARGEST_NUMBER)}",
        f"#define VC_SMALLEST_NUMBER {_c(SMALLEST_NUMBER)}",
        f'#define VC_TOO_LARGE "{TOO_LARGE}"',
        f'#define VC_TOO_SMALL "{TOO_SMALL}"',
        f"#define VC_AUTOMATIC {int(automatic)}",
        f"#define VC_VR_TIME {VR_TIME}",
        f"#define VC_VR_PARAMETERS {VR_PARAMETERS}",
        f"#define VC_VR_FLAGS {VR_FLAGS}",
        f"#define VC_VR_INPUTS {VR_INPUTS}",
        f"#define VC_VR_OUTPUTS {VR_OUTPUTS}",
        f"#define VC_VR_END {VR_END}",
        *(
            f"#define VC_{name} {getattr(L, name)}"
            for name in (
                "U_BRAKE",
                "U_PARKINGBRAKE",
                "U_IGNITION",
                "U_AUTOMATIC",
                "X_POS",
                "X_STEP",
                "X_FUEL",
                "Y_TIME",
                "Y_WHEEL",
                "WHEEL_BLOCK",
            )
        ),
        f"#define VC_P_INITIAL_FUEL {field['initial_fuel']}",
        f"#define VC_P_BRAKE_F {field['brake_f']}",
        f"#define VC_P_BRAKE_R {field['brake_r']}",
        *(
            f"#define VC_PAR_{c_name} {[p.key for p in PARAMETERS].index(key)}"
            for key, c_name in SPECIAL.items()
        ),
        f"#define VC_BRAKE_SHARE {_c(-1.0 if share is None else share)}",
        f"#define VC_TERRAIN_FLAT {int(flat)}",
        f"#define VC_TERRAIN_ROWS {terrain.height.shape[0]}",
        f"#define VC_TERRAIN_COLS {terrain.height.shape[1]}",
        c_array("double", "VC_PACKED", map(_c, packed)),
        c_array("double", "VC_INITIAL_STATE", map(_c, placed_state(params, terrain))),
        c_array("double", "VC_INITIAL_INPUTS", map(_c, vehicle_inputs.INITIAL)),
        c_array("double", "VC_TERRAIN_HEIGHT", map(_c, terrain.height.ravel())),
        c_array("double", "VC_TERRAIN_FRICTION", map(_c, terrain.friction.ravel())),
        c_array("double", "VC_TERRAIN_GRID", map(_c, terrain.grid)),
        c_array(
            "double",
            "VC_BODY",
            map(
                _c,
                (
                    body.wheelbase,
                    body.track,
                    body.plate_height,
                    body.roll_inertia or 0.0,
                    body.pitch_inertia or 0.0,
                    body.yaw_inertia or 0.0,
                ),
            ),
        ),
        c_array("int", "VC_BODY_FIELD", (field[f] for f in BODY_FIELDS)),
        c_array("char *const", "VC_PARAMETER_NAMES", (p.name for p in PARAMETERS), quote=True),
        c_array(
            "double",
            "VC_PARAMETER_DEFAULT",
            (_c(parameter_value(params, p.key)) for p in PARAMETERS),
        ),
        c_array("double", "VC_PARAMETER_LOW", (_c(r.low) for r in ranges)),
        c_array("double", "VC_PARAMETER_HIGH", (_c(r.high) for r in ranges)),
        c_array("int", "VC_PARAMETER_OPEN_LOW", (int(r.open_low) for r in ranges)),
        c_array(
            "int",
            "VC_PARAMETER_FIELD",
            (field[DIRECT_FIELDS[p.key]] if p.key in DIRECT_FIELDS else -1 for p in PARAMETERS),
        ),
        c_array("char *const", "VC_INPUT_NAMES", (i.name for i in INPUTS), quote=True),
        c_array("int", "VC_INPUT_SLOT", (i.slot for i in INPUTS)),
        c_array("int", "VC_INPUT_KIND", (kinds[i.kind] for i in INPUTS)),
        c_array("double", "VC_INPUT_START", map(_c, starts)),
        c_array("int", "VC_OUTPUT_INDEX", (o.index for o in OUTPUTS)),
        "#endif",
    ]
    return "\n".join(lines) + "\n"


# -- model description ---------------------------------------------------------------------
def _number(value: float) -> str:
    """A float as the model description writes it: shortest, without a trailing ``.0``."""
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


def _start(kind: str, value: float | str) -> str:
    if isinstance(value, str):
        return value
    if kind == "boolean":
        return "true" if value else "false"
    return str(int(value)) if kind == "integer" else _number(value)


@dataclass(frozen=True)
class Declared:
    """One variable as the model description declares it."""

    meta: Variable
    vr: int
    causality: str
    start: float | str | None


def declared(params: VehicleParams, automatic: bool, version: int) -> list[Declared]:
    """Every variable with its value reference, in value-reference order."""
    out = []
    if version == 3:
        time = Variable("time", unit="s", description="the simulation time")
        out.append(Declared(time, VR_TIME, "independent", None))
    for k, p in enumerate(PARAMETERS):
        out.append(Declared(p, VR_PARAMETERS + k, "parameter", parameter_value(params, p.key)))
    for k, (flag, value) in enumerate(zip(FLAGS, (automatic, True), strict=True)):
        out.append(Declared(flag, VR_FLAGS + k, "parameter", float(value)))
    for k, i in enumerate(INPUTS):
        start = (1.0 if automatic else 0.0) if i.name == "gear" else i.start
        out.append(Declared(i, VR_INPUTS + k, "input", start))
    for k, o in enumerate(OUTPUTS):
        out.append(Declared(o, VR_OUTPUTS + k, "output", None))
    return out


FMI3_TYPES = {"real": "Float64", "integer": "Int32", "boolean": "Boolean", "string": "String"}
FMI2_TYPES = {"real": "Real", "integer": "Integer", "boolean": "Boolean", "string": "String"}


def _typed_attributes(d: Declared) -> dict[str, str]:
    meta = d.meta
    attributes: dict[str, str] = {}
    if d.start is not None:
        attributes["start"] = _start(meta.kind, d.start)
    if meta.kind == "real" and meta.unit is not None:
        attributes["unit"] = meta.unit
    for bound in ("min", "max"):
        value = getattr(meta, bound)
        if value is not None and meta.kind not in ("boolean", "string"):
            attributes[bound] = _start(meta.kind, value)
    return attributes


def _variability(d: Declared) -> str:
    if d.causality == "parameter":
        return "fixed"
    return "continuous" if d.meta.kind == "real" else "discrete"


def _units(root: Element, variables: list[Declared]) -> None:
    used = sorted({d.meta.unit for d in variables if d.meta.kind == "real" and d.meta.unit})
    if not used:  # the schema wants at least one unit in the element
        return
    units = SubElement(root, "UnitDefinitions")
    for name in used:
        definition = UNIT_DEFINITIONS[name]
        exponents, factor = definition if isinstance(definition, tuple) else (definition, 1.0)
        unit = SubElement(units, "Unit", name=name)
        base = SubElement(unit, "BaseUnit", {k: str(v) for k, v in exponents.items()})
        if factor != 1.0:
            base.set("factor", _number(factor))


def model_description(
    params: VehicleParams, automatic: bool, version: int, identifier: str, guid: str
) -> str:
    """The ``modelDescription.xml`` of the native vehicle FMU, FMI 2.0 or 3.0."""
    return describe(
        declared(params, automatic, version), version, identifier, guid, DESCRIPTION, state=True
    )


def describe(
    variables: list[Declared],
    version: int,
    identifier: str,
    guid: str,
    description: str,
    *,
    state: bool,
    step: float = 0.005,
) -> str:
    """A native FMU's ``modelDescription.xml``, FMI 2.0 or 3.0; ``state``: it has FMU states."""
    root = Element(
        "fmiModelDescription",
        {
            "fmiVersion": f"{version}.0",
            "modelName": identifier,
            ("guid" if version == 2 else "instantiationToken"): guid,
            "description": description,
            "generationTool": "vcosim (native)",
        },
    )
    if version == 2:
        root.set("numberOfEventIndicators", "0")
    get_set = "canGetAndSetFMUstate" if version == 2 else "canGetAndSetFMUState"
    serialize = "canSerializeFMUstate" if version == 2 else "canSerializeFMUState"
    cosim = {
        "modelIdentifier": identifier,
        "canHandleVariableCommunicationStepSize": "true",
        get_set: "true" if state else "false",
        serialize: "true" if state else "false",
    }
    if version == 2:
        cosim["canNotUseMemoryManagementFunctions"] = "true"
    SubElement(root, "CoSimulation", cosim)
    _units(root, variables)
    categories = SubElement(root, "LogCategories")
    for name, text in (
        ("logStatusWarning", "refused inputs"),
        ("logStatusError", "refused calls, parameters and steps"),
        ("logAll", "everything else"),
    ):
        SubElement(categories, "Category", name=name, description=text)
    SubElement(root, "DefaultExperiment", startTime="0", stepSize=_number(step))
    model_variables = SubElement(root, "ModelVariables")
    indices: dict[str, list[int]] = {"output": []}
    for position, d in enumerate(variables, start=1):
        attributes = {
            "name": d.meta.name,
            "valueReference": str(d.vr),
            "causality": d.causality,
            "variability": _variability(d),
        }
        if d.meta.description:
            attributes["description"] = d.meta.description
        typed = _typed_attributes(d)
        if version == 2:
            element = SubElement(model_variables, "ScalarVariable", attributes)
            SubElement(element, FMI2_TYPES[d.meta.kind], typed)
        elif d.meta.kind == "string":  # FMI 3: the start value is a child element
            element = SubElement(model_variables, "String", attributes)
            if "start" in typed:
                SubElement(element, "Start", value=typed["start"])
        else:
            SubElement(model_variables, FMI3_TYPES[d.meta.kind], attributes | typed)
        if d.causality == "output":
            indices["output"].append(position if version == 2 else d.vr)
    structure = SubElement(root, "ModelStructure")
    if version == 2:
        outputs = SubElement(structure, "Outputs")
        for index in indices["output"]:
            SubElement(outputs, "Unknown", index=str(index))
        initial = SubElement(structure, "InitialUnknowns")
        for index in indices["output"]:
            SubElement(initial, "Unknown", index=str(index))
    else:
        for vr in indices["output"]:
            SubElement(structure, "Output", valueReference=str(vr))
        for vr in indices["output"]:
            SubElement(structure, "InitialUnknown", valueReference=str(vr))
    indent(root, space=" ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + tostring(root, encoding="unicode") + "\n"


# -- building ------------------------------------------------------------------------------
def c_folder() -> Path:
    """The C layer's sources in the installed package."""
    return Path(str(resources.files("vcosim.fmi.native") / "c"))


def fmi_headers() -> Path:
    """The FMI 2 and 3 headers FMPy ships (the standard's, unchanged): included, not copied."""
    try:
        import fmpy
    except ImportError:
        raise ConfigError(
            ['building native FMUs needs fmpy (for the FMI headers): pip install -e ".[fmi]"'],
            "fmu",
        ) from None
    return Path(fmpy.__file__).parent / "c-code"


def link_each(link: Callable[[str], Path], platforms: tuple[str, ...]) -> list[Path]:
    """``link`` for every platform, side by side (each is a zig process), in their order."""
    with ThreadPoolExecutor(max_workers=len(platforms) or 1) as pool:
        return list(pool.map(link, platforms))


def write_fmu(out: Path, files: dict[str, bytes]) -> None:
    """The FMU archive: sorted names, fixed dates, so the same inputs give the same bytes."""
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".part")
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(files):
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, files[name])
    partial.replace(out)


def build_native_vehicle_fmu(
    out: Path,
    params: VehicleParams,
    *,
    fmi_version: int,
    automatic: bool,
    terrain: Terrain | None = None,
    platforms: tuple[str, ...] = PLATFORMS,
) -> Path:
    """Build the native vehicle FMU at ``out`` with binaries for ``platforms``.

    ``terrain`` (flat without one) is compiled in: the FMU drives on it as ``Vehicle(params,
    terrain)`` does, starting at rest at the origin. ``ConfigError`` before anything is
    written if the vehicle does not settle on its wheels there (the FMU settles it again
    when instantiated, and counts on it).
    """
    identifier = f"VcosimVehicleFmi{fmi_version}"
    c_dir = c_folder()
    sources = [c_dir / name for name in (*C_SOURCES, *FMI_SOURCES[fmi_version])]
    include = [c_dir, fmi_headers()]
    with tempfile.TemporaryDirectory(prefix="vcosim-native-") as scratch:
        folder = Path(scratch)
        compiling = KernelObjects(folder, platforms)  # child processes, while this one
        try:  # compiles its own kernel to settle the vehicle: ConfigError if it cannot stand
            Vehicle(params, terrain, engine_running=True)
        except BaseException:
            compiling.cancel()
            raise
        objects = compiling.wait()
        digest = hashlib.sha256()
        for part in (
            model_header(params, automatic, "", terrain),
            model_description(params, automatic, fmi_version, identifier, ""),
        ):
            digest.update(part.encode())
        for path in (*sources, *(c_dir / h for h in ("vehicle.h", "registry.h"))):
            digest.update(path.read_bytes())
        for platform in sorted(objects):
            for path in objects[platform]:
                digest.update(path.read_bytes())
        guid = "{" + str(uuid.UUID(digest.hexdigest()[:32])) + "}"
        (folder / "vcosim_model.h").write_text(model_header(params, automatic, guid, terrain))
        files = {
            "modelDescription.xml": model_description(
                params, automatic, fmi_version, identifier, guid
            ).encode()
        }

        def link(platform: str) -> Path:
            built = folder / platform / f"{identifier}{SUFFIX[platform]}"
            built.parent.mkdir()
            return link_library(platform, built, sources, objects[platform], [folder, *include])

        for platform, built in zip(platforms, link_each(link, platforms), strict=True):
            place = FMI2_FOLDER[platform] if fmi_version == 2 else platform
            files[f"binaries/{place}/{built.name}"] = built.read_bytes()
        write_fmu(out, files)
    return out
