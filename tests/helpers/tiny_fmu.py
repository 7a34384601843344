"""Small native FMUs for the tests, FMI 2 or 3, built with zig from C written here.

A model is its variables (name, type, causality, start) and a few lines of C for its hooks
(``tinyfmu/tiny.c`` says which); ``build_tiny_fmu`` writes the model description with
vcosim's own writer, generates ``tiny_model.h`` (value references, types, starts and a
``V_<name>`` macro per variable whose name is a C identifier, ``V(name)`` otherwise by
position) and links a Linux library with the toolchain the vehicle FMU uses. No Python runs
in the FMU: a master loads it as it loads any other.
"""

from __future__ import annotations

import hashlib
import re
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path

from vcosim.fmi.metadata import Kind, Variable
from vcosim.fmi.native.toolchain import link_library
from vcosim.fmi.native.vehicle import Declared, c_array, describe, fmi_headers, write_fmu

HERE = Path(__file__).parent / "tinyfmu"
_KIND_CODE = {"real": 0, "integer": 1, "boolean": 2, "string": 3}


@dataclass(frozen=True)
class Var:
    """One variable of a tiny FMU; its value reference is its position in the model."""

    name: str
    causality: str  # input, output, parameter, local, independent
    kind: Kind = "real"
    start: float | str | None = None


def header(variables: list[Var], version: int, guid: str) -> str:
    """``tiny_model.h``: what tiny.c needs to know of the variables."""
    lines = [
        f"#define TINY_FMI {version}",
        f'#define TINY_GUID "{guid}"',
        f"#define TINY_NV {len(variables)}",
        c_array("int", "TINY_KIND", (_KIND_CODE[v.kind] for v in variables)),
        c_array(
            "double",
            "TINY_START",
            (
                float(v.start).hex() if isinstance(v.start, int | float) else "0.0"
                for v in variables
            ),
        ),
        c_array(
            "char *",
            "TINY_SSTART",
            (v.start if isinstance(v.start, str) else "" for v in variables),
            quote=True,
        ),
    ]
    for vr, v in enumerate(variables):
        macro = re.sub(r"\W", "_", v.name)
        lines.append(f"#define V_{macro} {vr}")
    return "\n".join(lines) + "\n"


def declared(variables: list[Var]) -> list[Declared]:
    """The variables as vcosim's model-description writer takes them."""
    out = []
    for vr, v in enumerate(variables):
        start = v.start if v.causality in ("input", "parameter") else None
        if start is None and v.causality in ("input", "parameter"):
            start = "" if v.kind == "string" else 0.0
        out.append(Declared(Variable(v.name, v.kind), vr, v.causality, start))
    return out


def build_tiny_fmu(
    out: Path,
    identifier: str,
    variables: list[Var],
    model_c: str,
    *,
    version: int = 2,
    step: float = 0.005,
    description: str = "a test FMU",
) -> Path:
    """Build the FMU ``out`` (Linux x86-64 binary only) and return its path."""
    digest = hashlib.sha256(repr((identifier, variables, model_c, version)).encode())
    digest.update((HERE / "tiny.c").read_bytes())
    guid = "{" + str(uuid.UUID(digest.hexdigest()[:32])) + "}"
    xml = describe(
        declared(variables), version, identifier, guid, description, state=False, step=step
    )
    with tempfile.TemporaryDirectory(prefix="tiny-fmu-") as scratch:
        folder = Path(scratch)
        (folder / "tiny_model.h").write_text(header(variables, version, guid))
        (folder / "model.c").write_text(model_c)
        library = folder / f"{identifier}.so"
        sources = [HERE / "tiny.c"]
        if version == 3:
            sources.append(Path(str(_c_folder())) / "fmi3_absent.c")
        link_library(
            "x86_64-linux",
            library,
            sources,
            [],
            [folder, fmi_headers()],
            extra=('-DTINY_MODEL="model.c"',),
        )
        place = "linux64" if version == 2 else "x86_64-linux"
        write_fmu(
            out,
            {
                "modelDescription.xml": xml.encode(),
                f"binaries/{place}/{identifier}.so": library.read_bytes(),
            },
        )
    return out


def _c_folder() -> Path:
    from vcosim.fmi.native.vehicle import c_folder

    return c_folder()
